// Properties of the detection work (docs/bug_classes.md §2, Z21-Z30; docs/invariants.md §3):
//   quantize_block.bit_exact   block quantizers (fp32 scales of the contract's block shape, UE8M0
//                              where the contract says so) bit-exact against reference/
//   gemm.default_scale         an MX GEMM that may take no B scales treats them as the unit scale
//   dequantize.large_offsets   one dequantize past 2^31 elements (4 GiB of bf16 output) on a
//                              device; not applicable on the host backend
// Expected bytes come from reference/ (block_quant.h, gemm_oracle.h, format.h). The run-twice
// property of the same work is props_determinism.cpp.
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "impl/calls.h"
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

template <class T>
std::vector<T> values_of(const std::vector<uint8_t>& raw) {
  std::vector<T> out(raw.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), raw.data(), out.size() * sizeof(T));
  return out;
}

// ---- quantize_block.bit_exact -----------------------------------------------------------------

bool block_convention(const std::string& name, Format element, bool ue8m0) {
  const Convention* c = find_convention(name);
  return c != nullptr && block_policy(*c, element, ue8m0).has_value();
}

// fp32 or bf16 in, FP8 codes out, fp32 scales of a fixed block shape, a claimed convention with a
// block quantizer in the reference for the op's element format.
bool quantize_block_accepts(const Op& op) {
  const impl::Contract& c = op.contract;
  if ((c.a_dtypes & (dtype_bit(Dtype::kF32) | dtype_bit(Dtype::kBf16))) == 0) return false;
  const auto out = first_fp8(c.out_dtypes);
  if (!out || c.scale_dtype != Dtype::kF32 || c.a_block_cols == 0) return false;
  if (c.conventions.empty()) return false;
  for (const std::string& n : c.conventions) {
    if (!block_convention(n, *fp8_format(*out), c.ue8m0_scales)) return false;
  }
  return true;
}

rc::Gen<Case> gen_quantize_block(const Context&, const Ops& ops) {
  using V = ValueClass;
  return gen_over_ops(ops, [](const Op* op) {
    const impl::Contract& ct = op->contract;
    const bool f32 = (ct.a_dtypes & dtype_bit(Dtype::kF32)) != 0;
    const bool bf16 = (ct.a_dtypes & dtype_bit(Dtype::kBf16)) != 0;
    return rc::gen::apply(
        [op](const std::string& conv, const std::string& input, std::size_t rows, std::size_t cols,
             ValueClass vc, const std::string& max_at, uint64_t seed) {
          Case c("quantize_block.bit_exact");
          c.set("op", op->name).set("conv", conv).set("input", input);
          c.set("rows", fit_dim(rows, op->contract.m)).set("cols", cols);
          c.set("values", to_string(vc)).set("max_at", max_at).set("seed", seed);
          return c;
        },
        pick(ct.conventions),
        f32 && bf16 ? pick<std::string>({"fp32", "fp32", "bf16"})
                    : rc::gen::just<std::string>(f32 ? "fp32" : "bf16"),
        range(1, 4), gen_k(ct.k, 2),
        pick<V>({V::kInts, V::kNormal, V::kZero, V::kTiny, V::kSubnormal, V::kSaturation,
                 V::kNanInf, V::kPow2Ratio, V::kWide, V::kTies, V::kZero, V::kTiny}),
        pick<std::string>({"first", "last", "middle"}), gen_seed());
  });
}

// The op's codes and scales equal reference/block_quant.h's quantize_block under the claimed
// convention (UE8M0 scales where the contract declares them), block shape from the contract.
std::optional<Failure> check_quantize_block(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const impl::Contract& ct = op.contract;
  const std::string& conv = c.text("conv");
  const Dtype element = *first_fp8(ct.out_dtypes);
  const Format format = *fp8_format(element);
  const Convention* convention = find_convention(conv);
  if (convention == nullptr || !block_convention(conv, format, ct.ue8m0_scales)) {
    throw CaseError("case field 'conv': " + conv + " has no block quantizer in the reference");
  }
  const std::string& input = c.text("input");
  if (input != "fp32" && input != "bf16")
    throw CaseError("case field 'input' must be fp32 or bf16");
  const bool bf16 = input == "bf16";
  const std::size_t rows = c.num("rows"), cols = c.num("cols");
  const std::size_t br = ct.a_block_rows == 0 ? rows : ct.a_block_rows;
  const std::size_t bc = ct.a_block_cols;
  std::vector<float> x =
      make_values(enum_field<ValueClass>(c, "values", parse_value_class), rows, cols, c.num("seed"),
                  enum_field<MaxAt>(c, "max_at", parse_max_at), bc);
  std::vector<uint16_t> x16;
  if (bf16) {
    for (float& v : x) {
      x16.push_back(static_cast<uint16_t>(encode(Format::kBF16, v, kIeeeDefault)));
      v = float_of(static_cast<uint32_t>(x16.back()) << 16);
    }
  }
  const BlockQuantized want = quantize_block(x, rows, cols, br, bc, format,
                                             *block_policy(*convention, format, ct.ue8m0_scales));
  ctx.tag("op:" + op.name);
  ctx.tag("values:" + c.text("values"));
  ctx.tag("max_at:" + c.text("max_at"));
  if (ct.ue8m0_scales) ctx.tag("scale:ue8m0");
  tag_shape(ctx, rows, 0, cols);
  impl::Invocation inv(op, ctx.run());
  if (bf16) {
    inv.input(&impl::Call::a, bytes_of(x16), rows, cols, cols, Dtype::kBf16, Layout::kRowMajor);
  } else {
    inv.input(&impl::Call::a, bytes_of(x), rows, cols, cols, Dtype::kF32, Layout::kRowMajor);
  }
  const Layout sl = first_scale_layout(ct.a_scale_layouts);
  uint64_t ld = 0;
  const std::size_t srows = want.scale_rows(), scols = want.scale_cols();
  const std::size_t stored = stored_size(sl, srows, scols, ct.a_scale_ld_align, &ld);
  inv.output(&impl::Call::out, rows * cols, rows, cols, cols, element, Layout::kRowMajor);
  inv.output(&impl::Call::out_scale, stored * 4, srows, scols, ld, Dtype::kF32, sl);
  impl::Call call;
  call.m = rows;
  call.k = cols;
  call.convention = conv;
  inv.run(call);
  const std::vector<float> got_scales = load_scales<float>(
      sl, srows, scols, values_of<float>(inv.read(&impl::Call::out_scale)), ct.a_scale_ld_align);
  GemmOutput ws{srows, scols, OutputFormat::kFp32, want.scales, {}};
  GemmOutput gs{srows, scols, OutputFormat::kFp32, got_scales, {}};
  if (auto f = compare_outputs("fp32 block scales", ws, gs)) return f;
  return compare_codes(std::string(impl::to_string(element)) + " codes", format, rows, cols,
                       want.data, inv.read(&impl::Call::out));
}

// ---- gemm.default_scale -----------------------------------------------------------------------

// An MX GEMM on E4M3FN codes, e8m0 1x32 scales, fp32 out, row-major B, that may take no B scales.
bool default_scale_accepts(const Op& op) {
  const impl::Contract& c = op.contract;
  return c.b_scale_optional && (c.a_dtypes & dtype_bit(Dtype::kE4m3fn)) != 0 &&
         (c.b_dtypes & dtype_bit(Dtype::kE4m3fn)) != 0 &&
         (c.out_dtypes & dtype_bit(Dtype::kF32)) != 0 && c.scale_dtype == Dtype::kE8m0 &&
         c.a_block_cols == 32 && (c.b_layouts & impl::layout_bit(Layout::kRowMajor)) != 0;
}

rc::Gen<Case> gen_default_scale(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    const impl::Contract& c = op->contract;
    return rc::gen::apply(
        [op](std::size_t m, std::size_t n, std::size_t k, uint64_t seed) {
          Case cs("gemm.default_scale");
          cs.set("op", op->name).set("m", m).set("n", n).set("k", k).set("seed", seed);
          return cs;
        },
        gen_m(c.m), gen_n(c.n), gen_k(c.k, 2), gen_seed());
  });
}

// B given without scales must be read at the unit scale (E8M0 127, tl.dot_scaled rhs_scale=None):
// the output equals exact_gemm of the same A (with its fingerprint scales) and B scales of 1.
std::optional<Failure> check_default_scale(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t m = c.num("m"), n = c.num("n"), k = c.num("k");
  Operands o = exact_operands(op, m, n, k, c.num("seed"), true);
  std::fill(o.b_e8m0.begin(), o.b_e8m0.end(), uint8_t{127});
  std::fill(o.problem.b_scale.begin(), o.problem.b_scale.end(), 1.0f);
  OpLayout layout;
  layout.omit_b_scale = true;
  ctx.tag("op:" + op.name);
  ctx.tag("scale:absent");
  tag_shape(ctx, m, n, k);
  return compare_outputs(op.name + " with B scales absent vs exact_gemm (B scale 1)",
                         exact_gemm(o.problem, OutputFormat::kFp32),
                         run_gemm_op(ctx.run(), op, o, OutputFormat::kFp32, layout));
}

// ---- dequantize.large_offsets -----------------------------------------------------------------

// The one shape: 65537 x 32768 codes, 2^31 + 32768 elements (2 GiB of codes, 4 GiB of bf16
// output): row 65536 lies wholly past 2^31, the first element index a signed 32-bit offset cannot
// hold (AITER's 32-bit offsets: ROCm/aiter PR #2355).
constexpr std::size_t kLargeRows = 65537, kLargeCols = 32768;

bool large_offsets_accepts(const Op& op) {
  const impl::Contract& c = op.contract;
  return (c.a_dtypes & dtype_bit(Dtype::kE4m3fn)) != 0 && c.scale_dtype == Dtype::kE8m0 &&
         c.a_block_cols == 32 && (c.out_dtypes & dtype_bit(Dtype::kBf16)) != 0 &&
         (c.a_scale_layouts & impl::layout_bit(Layout::kRowMajor)) != 0 && c.m.admits(kLargeRows) &&
         c.k.admits(kLargeCols);
}

rc::Gen<Case> gen_large_offsets(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    Case c("dequantize.large_offsets");
    c.set("op", op->name).set("rows", kLargeRows).set("cols", kLargeCols);
    return rc::gen::just(c);
  });
}

// The code and scale byte of element (row, col): cheap to regenerate for the rows checked.
uint8_t large_code(uint64_t i) { return static_cast<uint8_t>((i * 2654435761u) >> 13) & 0x7Eu; }
uint8_t large_scale(uint64_t row, uint64_t blk) {
  return static_cast<uint8_t>(120 + (row * 7 + blk) % 15);
}

// The rows around 2^31 (the last below, the first past it), the first and the last row equal
// the reference (decode x scale, one RNE to bf16). Device backends only: the host models index in
// 64 bits and a 6 GiB case is not a host test.
std::optional<Failure> check_large_offsets(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t rows = c.num("rows"), cols = c.num("cols");
  if (rows * cols <= (uint64_t{1} << 31)) {
    throw CaseError("dequantize.large_offsets needs rows x cols > 2^31");
  }
  if (ctx.be->memory() == impl::Memory::kHost) {
    throw impl::Unsupported(
        "dequantize.large_offsets: not applicable on the host backend (device backends only: "
        "2^31 + 32768 elements, 6 GiB of buffers)");
  }
  const std::size_t kb = cols / 32;
  std::vector<uint8_t> codes(rows * cols), scales(rows * kb);
  for (uint64_t i = 0; i < codes.size(); ++i) codes[i] = large_code(i);
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t b = 0; b < kb; ++b) scales[r * kb + b] = large_scale(r, b);
  }
  ctx.tag("op:" + op.name);
  ctx.tag("offsets:past_2^31");
  impl::Invocation inv(op, ctx.run());
  inv.input(&impl::Call::a, codes, rows, cols, cols, Dtype::kE4m3fn, Layout::kRowMajor);
  inv.input(&impl::Call::a_scale, scales, rows, kb, kb, Dtype::kE8m0, Layout::kRowMajor);
  std::vector<uint8_t>().swap(codes);
  std::vector<uint8_t>().swap(scales);
  const impl::Call call = impl::rows_call(inv, rows, cols, Dtype::kBf16);
  const std::vector<uint8_t> got = inv.run_and_read(call, &impl::Call::out);  // 4 GiB
  const std::size_t boundary = (std::size_t{1} << 31) / cols;  // the first row past 2^31
  for (std::size_t r : {std::size_t{0}, boundary - 1, boundary, rows - 1}) {
    MxQuantized q{1, cols, Format::kE4M3FN, {}, {}};
    for (std::size_t j = 0; j < cols; ++j) q.data.push_back(large_code(r * cols + j));
    for (std::size_t b = 0; b < kb; ++b) q.scales.push_back(large_scale(r, b));
    GemmOutput want{1, cols, OutputFormat::kBf16, {}, dequantize_mx_bf16(q, E8m0Decode::kOcp)};
    GemmOutput row{1, cols, OutputFormat::kBf16, {}, std::vector<uint16_t>(cols)};
    std::memcpy(row.bf16.data(), got.data() + r * cols * 2, cols * 2);
    if (auto f =
            compare_outputs("row " + std::to_string(r) + " of " + std::to_string(rows) +
                                " (element offset " + std::to_string(r * cols) + ") vs reference",
                            want, row)) {
      if (f->where) f->where->row = r;
      return f;
    }
  }
  return std::nullopt;
}

}  // namespace

void add_detect_properties(std::vector<Property>& out) {
  out.push_back({"quantize_block.bit_exact",
                 "a block quantizer whose fp32 scales or codes differ from its convention's "
                 "reference (a min-scale clamp after power-of-two rounding, a wrong eps, the "
                 "maximum missed at the end of a group)",
                 family_bit(Family::kQuantizeBlock), quantize_block_accepts, gen_quantize_block,
                 check_quantize_block});
  out.push_back({"gemm.default_scale",
                 "an absent scale operand (tl.dot_scaled rhs_scale=None) read as anything but the "
                 "unit scale E8M0 127",
                 family_bit(Family::kGemmMx), default_scale_accepts, gen_default_scale,
                 check_default_scale});
  out.push_back({"dequantize.large_offsets",
                 "32-bit element offsets: wrong or unwritten output past 2^31 elements / 2 GiB "
                 "(device backends only)",
                 family_bit(Family::kDequantize), large_offsets_accepts, gen_large_offsets,
                 check_large_offsets, 1});
}

}  // namespace mxgate::properties
