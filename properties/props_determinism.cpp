// determinism.run_twice: every op of every family run twice on the same inputs gives the same
// output bits (docs/invariants.md I8; docs/bug_classes.md §2). It compares the op with itself
// only, which is its point (the other properties compare with the reference).
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "impl/harness.h"
#include "properties/cast_values.h"
#include "properties/fp4_operands.h"
#include "properties/gemm_operands.h"
#include "properties/props.h"
#include "properties/scale_io.h"
#include "properties/values.h"
#include "reference/block_quant.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/fp4_pack.h"
#include "reference/quant_conventions.h"

namespace mxgate::properties {

namespace {

// ---- determinism.run_twice --------------------------------------------------------------------

constexpr impl::FamilyMask kAllFamilies =
    family_bit(Family::kCast) | family_bit(Family::kQuantizeMx) |
    family_bit(Family::kQuantizeBlock) | family_bit(Family::kDequantize) |
    family_bit(Family::kUpcastE8m0) | family_bit(Family::kPreshuffle) |
    family_bit(Family::kGemmMx) | family_bit(Family::kGemmBlock) | family_bit(Family::kGemmBf16) |
    family_bit(Family::kQuantizeNvfp4) | family_bit(Family::kDequantizeNvfp4) |
    family_bit(Family::kGemmNvfp4);

constexpr impl::DtypeMask kE2m1Bit = dtype_bit(Dtype::kE2m1);
constexpr impl::DtypeMask kFloatBits = dtype_bit(Dtype::kF32) | dtype_bit(Dtype::kBf16);

// An FP4 quantizer (E2M1 out: MXFP4 quantize_mx, NVFP4) or dequantizer (E2M1 in), docs/fp4.md §12.
bool fp4_quantizer(const Op& op) {
  return (op.family == Family::kQuantizeMx || op.family == Family::kQuantizeNvfp4) &&
         (op.contract.out_dtypes & kE2m1Bit) != 0;
}
bool fp4_dequantizer(const Op& op) {
  return (op.family == Family::kDequantize || op.family == Family::kDequantizeNvfp4) &&
         (op.contract.a_dtypes & kE2m1Bit) != 0;
}
// The dtype of an NVFP4 op's 1 x 1 global tensor: fp32 where it takes fp32.
Dtype global_dtype_of(const Op& op) {
  return (op.contract.global_dtypes & dtype_bit(Dtype::kF32)) != 0 ? Dtype::kF32 : Dtype::kBf16;
}

// What the run-twice property can feed: an input dtype the family's call form allows, an output
// it can allocate.
bool run_twice_accepts(const Op& op) {
  const impl::Contract& c = op.contract;
  const bool float_in = (c.a_dtypes & (dtype_bit(Dtype::kF32) | dtype_bit(Dtype::kBf16))) != 0;
  if (fp4_quantizer(op)) return float_in && c.scale_dtype != Dtype::kNone && c.a_block_cols != 0;
  if (fp4_dequantizer(op)) {
    return c.scale_dtype != Dtype::kNone && c.a_block_cols != 0 && (c.out_dtypes & kFloatBits) != 0;
  }
  if (is_fp4_gemm(op)) return (c.out_dtypes & kFloatBits) != 0;
  switch (op.family) {
    case Family::kCast:
      return (c.a_dtypes & dtype_bit(Dtype::kF32)) != 0 && c.out_dtypes != 0;
    case Family::kQuantizeMx:
    case Family::kQuantizeBlock:
      return float_in && first_fp8(c.out_dtypes).has_value() && c.scale_dtype != Dtype::kNone;
    case Family::kDequantize:
      return first_fp8(c.a_dtypes).has_value() && c.scale_dtype == Dtype::kE8m0 &&
             (c.out_dtypes & (dtype_bit(Dtype::kF32) | dtype_bit(Dtype::kBf16))) != 0;
    case Family::kUpcastE8m0:
      return (c.a_dtypes & dtype_bit(Dtype::kE8m0)) != 0 &&
             (c.out_dtypes & dtype_bit(Dtype::kF32)) != 0;
    case Family::kPreshuffle:
      return (c.a_dtypes & c.out_dtypes) != 0;
    case Family::kGemmMx:
    case Family::kGemmBlock:
    case Family::kGemmBf16: {
      // bf16, or an FP8 type of each operand (the first the properties generate: E4M3FN first).
      const bool bf16 = op.family == Family::kGemmBf16;
      const bool in_ok =
          bf16 ? (c.a_dtypes & c.b_dtypes & dtype_bit(Dtype::kBf16)) != 0
               : !fp8_element_types(c.a_dtypes).empty() && !fp8_element_types(c.b_dtypes).empty();
      const bool b_ok = (c.b_layouts & (impl::layout_bit(Layout::kRowMajor) |
                                        impl::layout_bit(Layout::kAiterShuffle16x16))) != 0;
      return in_ok && b_ok &&
             (c.out_dtypes & (dtype_bit(Dtype::kF32) | dtype_bit(Dtype::kBf16))) != 0;
    }
    case Family::kQuantizeNvfp4:  // FP4: above
    case Family::kDequantizeNvfp4:
    case Family::kGemmNvfp4:
    case Family::kGroupedGemmBlock:  // grouped.determinism (props_grouped.cpp)
    case Family::kGroupedGemmMx:
      return false;
  }
  return false;
}

rc::Gen<Case> gen_run_twice(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    const impl::Contract& c = op->contract;
    const bool gemm = impl::is_gemm(op->family);
    return rc::gen::apply(
        [op, gemm](std::size_t m, std::size_t n, std::size_t k, uint64_t seed) {
          Case cs("determinism.run_twice");
          cs.set("op", op->name).set("m", m);
          if (gemm) cs.set("n", n);
          cs.set("k", k).set("seed", seed);
          return cs;
        },
        gemm ? gen_m(c.m)
             : rc::gen::map(range(1, 4), [c](std::size_t r) { return fit_dim(r, c.m); }),
        gen_n(c.n), gen_k(c.k, 2), gen_seed());
  });
}

// The outputs of one call, in a fixed order.
using Outputs = std::vector<std::vector<uint8_t>>;

// One call of a non-GEMM op on inputs drawn from `seed` (the same bytes on every call).
Outputs run_elementwise(const Context& ctx, const Op& op, std::size_t rows, std::size_t cols,
                        uint64_t seed) {
  const impl::Contract& ct = op.contract;
  std::mt19937_64 rng(seed);
  impl::Invocation inv(op, ctx.run());
  impl::Call call;
  call.m = rows;
  call.k = cols;
  if (!ct.conventions.empty()) call.convention = ct.conventions.front();
  const auto float_input = [&] {
    std::vector<float> x = make_values(ValueClass::kNormal, rows, cols, seed);
    if ((ct.a_dtypes & dtype_bit(Dtype::kF32)) != 0) {
      inv.input(&impl::Call::a, bytes_of(x), rows, cols, cols, Dtype::kF32, Layout::kRowMajor);
    } else {
      std::vector<uint16_t> h;
      for (float v : x) h.push_back(static_cast<uint16_t>(encode(Format::kBF16, v, kIeeeDefault)));
      inv.input(&impl::Call::a, bytes_of(h), rows, cols, cols, Dtype::kBf16, Layout::kRowMajor);
    }
  };
  std::vector<impl::Tensor impl::Call::*> outs = {&impl::Call::out};
  const bool nvfp4 = op.family == Family::kQuantizeNvfp4 || op.family == Family::kDequantizeNvfp4;
  const std::size_t fp4_scols =
      ct.a_block_cols == 0 ? 0 : (cols + ct.a_block_cols - 1) / ct.a_block_cols;
  if (fp4_quantizer(op)) {
    // Packed E2M1 codes and one scale byte per block; NVFP4 reads the global amax (the input's).
    float_input();
    if (nvfp4) {
      float amax = 0.0f;
      for (float v : make_values(ValueClass::kNormal, rows, cols, seed))
        amax = std::max(amax, std::fabs(v));
      inv.input(&impl::Call::a_global, global_bytes(amax, global_dtype_of(op)), 1, 1, 1,
                global_dtype_of(op), Layout::kRowMajor);
    }
    const Layout sl = first_scale_layout(ct.a_scale_layouts);
    uint64_t ld = 0;
    const std::size_t stored = stored_size(sl, rows, fp4_scols, ct.a_scale_ld_align, &ld);
    inv.output(&impl::Call::out, impl::tensor_bytes(Dtype::kE2m1, rows, cols), rows, cols, cols,
               Dtype::kE2m1, Layout::kRowMajor);
    inv.output(&impl::Call::out_scale, stored, rows, fp4_scols, ld, ct.scale_dtype, sl);
    outs.push_back(&impl::Call::out_scale);
    inv.run(call);
    return {inv.read(&impl::Call::out), inv.read(&impl::Call::out_scale)};
  }
  if (fp4_dequantizer(op)) {
    // Random E2M1 codes (every nibble), scale bytes of moderate size (E8M0 118..136, E4M3
    // 0x30..0x50), an NVFP4 global decode scale of 1.
    std::vector<uint8_t> codes(rows * cols);
    for (uint8_t& b : codes) b = static_cast<uint8_t>(rng() & 0xF);
    std::vector<uint8_t> scales(rows * fp4_scols);
    for (uint8_t& b : scales) {
      b = static_cast<uint8_t>(nvfp4 ? 0x30 + rng() % 0x21 : 118 + rng() % 19);
    }
    const Layout sl = first_scale_layout(ct.a_scale_layouts);
    const StoredScales<uint8_t> st =
        store_scales<uint8_t>(sl, rows, fp4_scols, scales, ct.a_scale_ld_align, 0);
    inv.input(&impl::Call::a, pack_fp4(codes, rows, cols, NibbleOrder::kLowFirst, 0xF), rows, cols,
              cols, Dtype::kE2m1, Layout::kRowMajor);
    inv.input(&impl::Call::a_scale, st.values, rows, fp4_scols, st.ld, ct.scale_dtype, sl);
    if (nvfp4) {
      inv.input(&impl::Call::a_global, global_bytes(1.0f, global_dtype_of(op)), 1, 1, 1,
                global_dtype_of(op), Layout::kRowMajor);
    }
    const Dtype out = (ct.out_dtypes & dtype_bit(Dtype::kBf16)) ? Dtype::kBf16 : Dtype::kF32;
    inv.output(&impl::Call::out, rows * cols * impl::dtype_bytes(out), rows, cols, cols, out,
               Layout::kRowMajor);
    inv.run(call);
    return {inv.read(&impl::Call::out)};
  }
  switch (op.family) {
    case Family::kCast: {
      const Dtype out = impl::dtypes_in(ct.out_dtypes).front();
      std::vector<float> x = make_values(ValueClass::kWide, 1, rows * cols, seed);
      inv.input(&impl::Call::a, bytes_of(x), 1, rows * cols, rows * cols, Dtype::kF32,
                Layout::kRowMajor);
      inv.output(&impl::Call::out, rows * cols * impl::dtype_bytes(out), 1, rows * cols,
                 rows * cols, out, Layout::kRowMajor);
      call.m = 1;
      call.k = rows * cols;
      break;
    }
    case Family::kQuantizeMx:
    case Family::kQuantizeBlock: {
      float_input();
      const Dtype out = *first_fp8(ct.out_dtypes);
      const std::size_t srows = impl::scale_grid(rows, ct.a_block_rows);
      const std::size_t scols = impl::scale_grid(cols, ct.a_block_cols);
      const Layout sl = first_scale_layout(ct.a_scale_layouts);
      uint64_t ld = 0;
      const std::size_t stored = stored_size(sl, srows, scols, ct.a_scale_ld_align, &ld);
      inv.output(&impl::Call::out, rows * cols, rows, cols, cols, out, Layout::kRowMajor);
      inv.output(&impl::Call::out_scale, stored * impl::dtype_bytes(ct.scale_dtype), srows, scols,
                 ld, ct.scale_dtype, sl);
      outs.push_back(&impl::Call::out_scale);
      break;
    }
    case Family::kDequantize: {
      const Dtype in = *first_fp8(ct.a_dtypes);
      std::vector<uint8_t> codes(rows * cols);
      for (uint8_t& b : codes) b = static_cast<uint8_t>(rng());
      const std::size_t kb = (cols + 31) / 32;
      std::vector<uint8_t> scales(rows * kb);
      for (uint8_t& b : scales) b = static_cast<uint8_t>(118 + rng() % 19);
      const Layout sl = first_scale_layout(ct.a_scale_layouts);
      const StoredScales<uint8_t> st =
          store_scales<uint8_t>(sl, rows, kb, scales, ct.a_scale_ld_align, 0);
      inv.input(&impl::Call::a, codes, rows, cols, cols, in, Layout::kRowMajor);
      inv.input(&impl::Call::a_scale, st.values, rows, kb, st.ld, Dtype::kE8m0, sl);
      const Dtype out = (ct.out_dtypes & dtype_bit(Dtype::kBf16)) ? Dtype::kBf16 : Dtype::kF32;
      inv.output(&impl::Call::out, rows * cols * impl::dtype_bytes(out), rows, cols, cols, out,
                 Layout::kRowMajor);
      break;
    }
    case Family::kUpcastE8m0: {
      std::vector<uint8_t> bytes(rows * cols);
      for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
      inv.input(&impl::Call::a, bytes, 1, rows * cols, rows * cols, Dtype::kE8m0,
                Layout::kRowMajor);
      inv.output(&impl::Call::out, rows * cols * 4, 1, rows * cols, rows * cols, Dtype::kF32,
                 Layout::kRowMajor);
      call.m = 1;
      call.k = rows * cols;
      break;
    }
    case Family::kPreshuffle: {
      const Dtype d = impl::dtypes_in(ct.a_dtypes & ct.out_dtypes).front();
      std::vector<uint8_t> w(rows * cols * impl::dtype_bytes(d));
      for (uint8_t& b : w) b = static_cast<uint8_t>(rng());
      inv.input(&impl::Call::a, w, rows, cols, cols, d, Layout::kRowMajor);
      inv.output(&impl::Call::out, w.size(), rows, cols, 0, d, Layout::kAiterShuffle16x16);
      break;
    }
    default:
      throw std::logic_error("run_elementwise: a GEMM family");
  }
  inv.run(call);
  Outputs got;
  for (impl::Tensor impl::Call::*slot : outs) got.push_back(inv.read(slot));
  return got;
}

// I8: two calls with the same inputs give the same output bytes (every byte: NaN payloads
// included). Inputs are general data (rounding products and sums), so an order that depends on
// anything but the inputs shows.
std::optional<Failure> check_run_twice(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t m = c.num("m"), k = c.num("k");
  const uint64_t seed = c.num("seed");
  ctx.tag("op:" + op.name);
  ctx.tag("determinism:run_twice");
  if (is_fp4_gemm(op)) {
    // General FP4 data (random codes, every scale code), random NVFP4 global scales.
    const std::size_t n = c.num("n");
    const Dtype a = (op.contract.a_dtypes & kE2m1Bit) != 0 ? Dtype::kE2m1 : Dtype::kE4m3fn;
    const Dtype g = global_dtype_of(op);
    const Fp4Operands o = fp4_general_operands(op, a, m, n, k, seed, "random", g);
    const OutputFormat fmt = (op.contract.out_dtypes & dtype_bit(Dtype::kF32)) != 0
                                 ? OutputFormat::kFp32
                                 : OutputFormat::kBf16;
    const Layout sl = first_scale_layout(op.contract.a_scale_layouts);
    const GemmOutput first = run_fp4_gemm_op(ctx.run(), op, o, fmt, sl, g);
    const GemmOutput second = run_fp4_gemm_op(ctx.run(), op, o, fmt, sl, g);
    if (fmt == OutputFormat::kFp32 ? bytes_of(first.fp32) == bytes_of(second.fp32)
                                   : bytes_of(first.bf16) == bytes_of(second.bf16)) {
      return std::nullopt;
    }
    return compare_outputs("I8: " + op.name + " run twice on the same inputs (second vs first)",
                           first, second)
        .value_or(Failure{"I8: " + op.name + " gave other NaN bits on the second run", {}, {}, {}});
  }
  if (impl::is_gemm(op.family)) {
    const std::size_t n = c.num("n");
    ElementTypes types;
    if (op.family != Family::kGemmBf16) {
      types = {fp8_element_types(op.contract.a_dtypes).at(0),
               fp8_element_types(op.contract.b_dtypes).at(0)};
    }
    const Operands o = general_operands(op, m, n, k, seed, types);
    const OutputFormat fmt = (op.contract.out_dtypes & dtype_bit(Dtype::kF32)) != 0
                                 ? OutputFormat::kFp32
                                 : OutputFormat::kBf16;
    OpLayout layout;
    if (op.family != Family::kGemmBf16)
      layout.scales = first_scale_layout(op.contract.a_scale_layouts);
    const GemmOutput first = run_gemm_op(ctx.run(), op, o, fmt, layout);
    const GemmOutput second = run_gemm_op(ctx.run(), op, o, fmt, layout);
    const std::vector<uint8_t> a =
        fmt == OutputFormat::kFp32 ? bytes_of(first.fp32) : bytes_of(first.bf16);
    const std::vector<uint8_t> b =
        fmt == OutputFormat::kFp32 ? bytes_of(second.fp32) : bytes_of(second.bf16);
    if (a == b) return std::nullopt;
    return compare_outputs("I8: " + op.name + " run twice on the same inputs (second vs first)",
                           first, second)
        .value_or(Failure{"I8: " + op.name + " gave other NaN bits on the second run", {}, {}, {}});
  }
  const Outputs first = run_elementwise(ctx, op, m, k, seed);
  const Outputs second = run_elementwise(ctx, op, m, k, seed);
  for (std::size_t i = 0; i < first.size(); ++i) {
    if (first[i] == second[i]) continue;
    return compare_codes("I8: " + op.name + " output " + std::to_string(i) +
                             " run twice on the same inputs (second vs first)",
                         Format::kE4M3FN, 1, first[i].size(), first[i], second[i]);
  }
  return std::nullopt;
}

}  // namespace

void add_determinism_properties(std::vector<Property>& out) {
  out.push_back({"determinism.run_twice",
                 "an op whose output bits change between two calls on the same inputs (a "
                 "schedule- or counter-dependent reduction order, a race) (I8)",
                 kAllFamilies, run_twice_accepts, gen_run_twice, check_run_twice});
}

}  // namespace mxgate::properties
