// Layout properties: scale layouts and the AITER weight preshuffle as bijections (the
// reference's layout code, reference/scale_layout.h and weight_shuffle.h) read back right by the
// built-in kernels' own index code (gpu/kernels), and an
// implementation's preshuffle ops (family preshuffle) bit-exact against the reference's shuffle.
// Not GEMM properties: they run no GEMM.
#include <rapidcheck.h>

#include <random>
#include <string>
#include <vector>

#include "gpu/kernels/fp4_bits.h"
#include "gpu/kernels/gemm.h"
#include "gpu/kernels/preshuffle.h"
#include "impl/calls.h"
#include "impl/harness.h"
#include "properties/gemm_operands.h"
#include "properties/props.h"
#include "reference/format.h"
#include "reference/scale_layout.h"
#include "reference/weight_shuffle.h"

namespace mxgate::properties {

namespace {

// ---- layouts.round_trip ---------------------------------------------------------------------

rc::Gen<Case> gen_round_trip(const Context&, const Ops&) {
  std::vector<std::string> names;
  for (ScaleLayout l : all_scale_layouts()) names.emplace_back(to_string(l));
  names.emplace_back("aiter_preshuffle");
  return rc::gen::apply(
      [](const std::string& layout, std::size_t rows, std::size_t cols) {
        Case c("layouts.round_trip");
        c.set("layout", layout).set("rows", rows).set("cols", cols);
        return c;
      },
      pick(names), range(1, 300), range(1, 40));
}

// The built-in kernels' own readers of a layout (gpu/kernels: the MX GEMMs' mx_scale_index under
// the context's kernel faults, the FP4 kernels' swizzle_128x4_offset, the weight's
// preshuffled_offset; code of the implementation, never shared with reference/) must find each
// logical element where the reference's pack put it. A reader that disagrees fails here on the
// smallest grid it misreads, without a GEMM around it.
std::optional<Failure> check_kernel_readers(const Context& ctx, const std::string& name,
                                            std::size_t rows, std::size_t cols,
                                            const std::vector<uint32_t>& packed) {
  const auto fail = [&](const char* reader, std::size_t r, std::size_t c2, uint64_t off) {
    return Failure{name + ": the built-in kernels' " + reader + " reads element (" +
                       std::to_string(r) + ", " + std::to_string(c2) + ") at slot " +
                       std::to_string(off) + ", where the reference's pack put " +
                       (off < packed.size() && packed[off] != 0xFFFFFFFFu
                            ? "element " + std::to_string(packed[off])
                            : std::string("padding")),
                   {},
                   {},
                   {}};
  };
  const bool swizzled = name == "nv_swizzle_128x4";
  if (!swizzled && name != "row_major") return std::nullopt;
  gpu::GemmParams p;
  p.k = cols * kMxBlock;
  p.mx_scales_swizzled = swizzled;
  p.faults = dispatch::kernel_fault_bits(ctx.faults);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c2 = 0; c2 < cols; ++c2) {
      const uint64_t want = r * cols + c2;
      const uint64_t off = gpu::mx_scale_index(p, r, c2, 0);
      if (off >= packed.size() || packed[off] != want) return fail("mx_scale_index", r, c2, off);
      if (swizzled) {
        const uint64_t off4 = gpu::fp4::swizzle_128x4_offset(r, c2, cols);
        if (off4 >= packed.size() || packed[off4] != want) {
          return fail("swizzle_128x4_offset", r, c2, off4);
        }
      }
    }
  }
  return std::nullopt;
}

// pack then unpack is the identity, every slot of the storage is one logical element or
// padding (scale_inverse), and the padding count is storage - rows x cols. The weight
// preshuffle (rows x 16, cols x 32 bytes) must be a bijection with unshuffle as its inverse.
// The built-in kernels' readers of the row-major and swizzled MX scales and of the preshuffled
// weight agree with the reference's layouts (check_kernel_readers).
std::optional<Failure> check_round_trip(const Context& ctx, const Case& c) {
  const std::string& name = c.text("layout");
  const std::size_t rows = c.num("rows"), cols = c.num("cols");
  ctx.tag("layout:" + name);
  if (name == "aiter_preshuffle") {
    const std::size_t n = rows * 16, k = cols * 32;
    std::vector<uint8_t> w(n * k);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(i * 131 + i / 251);
    const std::vector<uint8_t> shuffled = shuffle_weight(w, n, k, 1);
    const std::vector<uint8_t> back = unshuffle_weight(shuffled, n, k, 1);
    if (auto f = compare_codes("unshuffle(shuffle(w))", Format::kE4M3FN, n, k, w, back)) return f;
    std::vector<uint8_t> read(n * k);
    for (std::size_t i = 0; i < n * k; ++i)
      read[i] = shuffled[gpu::preshuffled_offset(k, i / k, i % k)];
    return compare_codes("the built-in kernels' preshuffled_offset read of shuffle(w)",
                         Format::kE4M3FN, n, k, w, read);
  }
  const auto layout = parse_scale_layout(name);
  if (!layout) throw CaseError("case field 'layout' has unknown value '" + name + "'");
  std::vector<uint32_t> logical(rows * cols);
  for (std::size_t i = 0; i < logical.size(); ++i) logical[i] = static_cast<uint32_t>(i);
  const auto packed = pack_scales<uint32_t>(*layout, rows, cols, logical, 0xFFFFFFFFu);
  const auto back = unpack_scales<uint32_t>(*layout, rows, cols, packed);
  if (back != logical) return Failure{name + ": unpack(pack(x)) != x", {}, {}, {}};
  if (auto f = check_kernel_readers(ctx, name, rows, cols, packed)) return f;
  std::size_t pads = 0;
  for (std::size_t off = 0; off < packed.size(); ++off) {
    const auto rc_ = scale_inverse(*layout, rows, cols, off);
    if (!rc_) {
      ++pads;
      if (packed[off] != 0xFFFFFFFFu) {
        return Failure{
            name + ": padding slot " + std::to_string(off) + " holds an element", {}, {}, {}};
      }
    } else if (packed[off] != rc_->first * cols + rc_->second) {
      return Failure{
          name + ": scale_inverse(" + std::to_string(off) + ") disagrees with pack", {}, {}, {}};
    }
  }
  if (pads != packed.size() - rows * cols) return Failure{name + ": padding count", {}, {}, {}};
  return std::nullopt;
}

// ---- preshuffle.bit_exact -------------------------------------------------------------------

// A 1-byte element type the op shuffles.
std::optional<impl::Dtype> byte_dtype(const Op& op) {
  for (impl::Dtype d : impl::dtypes_in(op.contract.a_dtypes)) {
    if (impl::dtype_bytes(d) == 1 && (op.contract.out_dtypes & impl::dtype_bit(d))) return d;
  }
  return std::nullopt;
}

bool preshuffle_accepts(const Op& op) { return byte_dtype(op).has_value(); }

rc::Gen<Case> gen_preshuffle(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    return rc::gen::apply(
        [op](std::size_t n, std::size_t k, uint64_t seed) {
          Case c("preshuffle.bit_exact");
          c.set("op", op->name).set("n", n).set("k", k).set("seed", seed);
          return c;
        },
        gen_n(op->contract.m), gen_k(op->contract.k, 2), gen_seed());
  });
}

// The op's shuffle of a random N x K weight (rows = N) equals AITER's shuffle_weight (16,16).
std::optional<Failure> check_preshuffle(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t n = c.num("n"), k = c.num("k");
  const auto dtype = byte_dtype(op);
  if (!dtype) throw impl::Unsupported(op.name + " shuffles no 1-byte element type");
  std::mt19937_64 rng(c.num("seed"));
  const Bytes w = random_codes(n * k, rng);
  impl::Invocation inv(op, ctx.run());
  inv.input(&impl::Call::a, w, n, k, k, *dtype, Layout::kRowMajor);
  const impl::Call call = impl::rows_call(inv, n, k, *dtype, Layout::kAiterShuffle16x16);
  ctx.tag("op:" + op.name);
  ctx.tag("layout:aiter_preshuffle");
  return compare_codes("preshuffled weight", Format::kE4M3FN, n, k, shuffle_weight(w, n, k, 1),
                       inv.run_and_read(call, &impl::Call::out));
}

}  // namespace

void add_layout_properties(std::vector<Property>& out) {
  out.push_back({"layouts.round_trip",
                 "a scale layout or weight shuffle that is not a bijection (lost or duplicated "
                 "elements, padding holding data), or a built-in kernel's reader of the MX scale "
                 "grid or the preshuffled weight that disagrees with it (another swizzle)",
                 0, nullptr, gen_round_trip, check_round_trip});
  out.push_back({"preshuffle.bit_exact",
                 "a device weight preshuffle that differs from AITER's shuffle_weight (16,16)",
                 impl::family_bit(Family::kPreshuffle), preshuffle_accepts, gen_preshuffle,
                 check_preshuffle});
}

}  // namespace mxgate::properties
