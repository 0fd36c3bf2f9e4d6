// Quantization properties over the ops of families quantize_mx, dequantize and upcast_e8m0: the
// MX quantizer, the dequantizer and the e8m0 upcast bit-exact against reference/ under the
// convention each op claims, and the metamorphic block-scaling property. Value classes:
// properties/values.h. Expected bytes come from reference/mx_quant.h and dequant.h (the spec,
// docs/formats.md §2-§3), never from the op. Inputs, dtypes, scale layouts and shapes come
// from each op's contract.
#include <rapidcheck.h>

#include <cmath>
#include <cstring>
#include <string>

#include "impl/calls.h"
#include "impl/harness.h"
#include "properties/cast_values.h"
#include "properties/extreme_scales.h"
#include "properties/gemm_operands.h"
#include "properties/props.h"
#include "properties/scale_io.h"
#include "properties/values.h"
#include "reference/block_quant.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/fp_encode.h"
#include "reference/mx_quant.h"
#include "reference/quant_conventions.h"

namespace mxgate::properties {

namespace {

// The FP8 element formats an op writes (quantizers) or reads (dequantizers) among `mask`.
std::vector<Dtype> fp8_dtypes(impl::DtypeMask mask) {
  std::vector<Dtype> out;
  for (Dtype d : impl::dtypes_in(mask)) {
    if (fp8_format(d)) out.push_back(d);
  }
  return out;
}

Dtype dtype_field(const Case& c, const Op& op, impl::DtypeMask mask) {
  if (!c.has("format")) {
    const auto all = fp8_dtypes(mask);
    if (all.empty()) throw impl::Unsupported(op.name + " has no FP8 element format");
    return all.front();
  }
  const auto d = impl::parse_dtype(c.text("format"));
  if (!d || !fp8_format(*d)) {
    throw CaseError("case field 'format' has unknown value '" + c.text("format") + "'");
  }
  return *d;
}

// The scale layout of a quantizer's / dequantizer's scales: row-major when the op takes it, else
// its first.
Layout scale_layout(const Op& op) {
  const auto all = impl::layouts_in(op.contract.a_scale_layouts);
  for (Layout l : all) {
    if (l == Layout::kRowMajor) return l;
  }
  return all.empty() ? Layout::kRowMajor : all.front();
}

bool convention_has_mx_policy(const std::string& name) {
  const Convention* c = find_convention(name);
  return c != nullptr && mx_policy(*c).has_value();
}

// A quantize_mx op the property can check: fp32 or bf16 input, an FP8 element output, e8m0
// scales of 1 x 32 blocks, a claimed convention with an MX quantizer in the reference. Returns
// the first clause `op` misses, "" when it has them all.
std::string quantize_declines(const Op& op) {
  const impl::Contract& c = op.contract;
  if ((c.a_dtypes & (impl::dtype_bit(Dtype::kF32) | impl::dtype_bit(Dtype::kBf16))) == 0) {
    return "fp32 or bf16 input";
  }
  if (fp8_dtypes(c.out_dtypes).empty()) {
    return "FP8 elements (FP4 / FP6 quantizers are the fp4 properties')";
  }
  if (c.scale_dtype != Dtype::kE8m0) return "e8m0 scales";
  if (c.a_block_rows > 1 || c.a_block_cols != 32) {
    return c.a_block_rows > 1 ? "1 x 32 blocks (2D blocks are quantize_2d.bit_exact's)"
                              : "1 x 32 blocks";
  }
  if (c.conventions.empty()) return "a claimed convention";
  for (const std::string& n : c.conventions) {
    if (!convention_has_mx_policy(n)) return "a convention with an MX quantizer (" + n + ")";
  }
  if (!c.element_convention.empty() && find_convention(c.element_convention) == nullptr) {
    return "a known element convention (" + c.element_convention + ")";
  }
  return "";
}

bool quantize_accepts(const Op& op) { return quantize_declines(op).empty(); }

// The reference policy of a quantizer: the claimed convention's MX policy, the element cast of
// the contract's element convention where it names one (the hardware satfinite cast of
// quantize_mx_hw: RNE, Inf -> +-max, canonical NaN; docs/formats.md §1.2.1).
// MXINT8 takes the convention's own MXINT8 policy (an element convention's cast defines no
// MXINT8); the FP8 formats keep the convention's FP8 policy, as before MXINT8.
MxPolicy reference_policy(const Op& op, std::string_view conv, Format element) {
  const Convention& c = *find_convention(conv);
  const std::optional<MxPolicy> own =
      is_twos_complement(element) ? mx_policy(c, element) : mx_policy(c);
  if (!own) {
    throw impl::Unsupported("convention " + std::string(conv) + " has no MX quantizer of " +
                            std::string(info(element).name) + " in the reference");
  }
  MxPolicy p = *own;
  if (!op.contract.element_convention.empty() && !is_twos_complement(element)) {
    p.element = find_convention(op.contract.element_convention)->element;
  }
  return p;
}

rc::Gen<ValueClass> gen_value_class() {
  using V = ValueClass;
  // Hazard classes appear more often; shrinking moves toward plain integers.
  return pick<V>({V::kInts,       V::kNormal,     V::kNarrow,     V::kWide,      V::kSubnormal,
                  V::kTies,       V::kSaturation, V::kZero,       V::kNanInf,    V::kLog2Hazard,
                  V::kBf16Carry,  V::kTiny,       V::kSubnormal,  V::kTies,      V::kSaturation,
                  V::kLog2Hazard, V::kBf16Carry,  V::kLog2Hazard, V::kBf16Carry, V::kTiny,
                  V::kNormal,     V::kInts,       V::kPow2Ratio,  V::kPow2Ratio});
}

// Where each block's maximum goes (first shrinks toward the plain layout of the classes).
rc::Gen<std::string> gen_max_at() { return pick<std::string>({"first", "last", "middle"}); }

struct QuantInput {
  std::vector<float> x;        // what the reference quantizes (bf16-rounded for bf16 input)
  std::vector<uint16_t> bf16;  // the bf16 bits uploaded for bf16 input
};

QuantInput quant_input(const Case& c, std::size_t rows, std::size_t cols, bool bf16,
                       std::size_t block = 32) {
  QuantInput in;
  const ValueClass vc = enum_field<ValueClass>(c, "values", parse_value_class);
  // Cases written before `max_at` existed keep the classes' own placement.
  in.x = c.has("max_at") ? make_values(vc, rows, cols, c.num("seed"),
                                       enum_field<MaxAt>(c, "max_at", parse_max_at), block)
                         : make_values(vc, rows, cols, c.num("seed"));
  if (bf16) {
    in.bf16.resize(in.x.size());
    for (std::size_t i = 0; i < in.x.size(); ++i) {
      in.bf16[i] = static_cast<uint16_t>(encode(Format::kBF16, in.x[i], kIeeeDefault));
      in.x[i] = float_of(static_cast<uint32_t>(in.bf16[i]) << 16);
    }
  }
  return in;
}

// One call of quantizer `op`: codes of `element` and the e8m0 scales, read back in logical
// row-major order.
MxQuantized run_quantize(const Context& ctx, const Op& op, const std::string& conv, bool bf16,
                         Dtype element, const QuantInput& in, std::size_t rows, std::size_t cols) {
  impl::Invocation inv(op, ctx.run());
  const std::size_t kb = (cols + 31) / 32;
  const Layout sl = scale_layout(op);
  const uint32_t ld_align = op.contract.a_scale_ld_align;
  uint64_t ld = 0;
  const std::size_t scale_bytes = stored_size(sl, rows, kb, ld_align, &ld);
  if (bf16) {
    inv.input(&impl::Call::a, bytes_of(in.bf16), rows, cols, cols, Dtype::kBf16, Layout::kRowMajor);
  } else {
    inv.input(&impl::Call::a, bytes_of(in.x), rows, cols, cols, Dtype::kF32, Layout::kRowMajor);
  }
  impl::Call call =
      impl::quantize_call(inv, rows, cols, element, {kb, ld, scale_bytes, Dtype::kE8m0, sl});
  call.convention = conv;
  return {rows, cols, *fp8_format(element), inv.run_and_read(call, &impl::Call::out),
          load_scales<uint8_t>(sl, rows, kb, inv.read(&impl::Call::out_scale), ld_align)};
}

// MXINT8 codes at +-127 (saturated) and inputs where ties-to-even and ties-away differ.
void tag_quantized_int(const Context& ctx, const std::vector<float>& x, const MxQuantized& q) {
  bool sat = false, tie = false;
  const std::size_t kb = q.scale_cols();
  for (std::size_t i = 0; i < q.data.size(); ++i) {
    sat = sat || std::fabs(decode(q.element, q.data[i])) == max_finite(q.element);
    const uint8_t s = q.scales[(i / q.cols) * kb + (i % q.cols) / 32];
    if (!tie && s != 0xFF && std::isfinite(x[i])) {
      const float v = x[i] * decode_e8m0(static_cast<uint8_t>(254 - s), E8m0Decode::kOcp);
      EncodePolicy rne{Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kToPosZero};
      EncodePolicy rna = rne;
      rna.rounding = Rounding::kNearestAway;
      tie = std::isfinite(v) && encode(q.element, v, rne) != encode(q.element, v, rna);
    }
  }
  if (sat) ctx.tag("mxint8:saturated");
  if (tie) ctx.tag("mxint8:tie");
}

void tag_quantized(const Context& ctx, const std::vector<float>& x, const MxQuantized& q) {
  if (ctx.coverage == nullptr) return;
  tag_e8m0(ctx, q.scales);
  bool sub = false, sat = false, tie = false;
  const std::size_t kb = q.scale_cols();
  if (is_twos_complement(q.element)) {  // MXINT8: its own saturation and ties
    tag_quantized_int(ctx, x, q);
    return;
  }
  for (std::size_t i = 0; i < q.data.size(); ++i) {
    const uint8_t c = q.data[i] & 0x7F;
    if (c != 0 && (c & 0x78) == 0) sub = true;
    if (c == 0x7E) sat = true;
    const uint8_t s = q.scales[(i / q.cols) * kb + (i % q.cols) / 32];
    if (!tie && s != 0xFF && std::isfinite(x[i])) {
      const float v = x[i] * decode_e8m0(static_cast<uint8_t>(254 - s), E8m0Decode::kOcp);
      const EncodePolicy rne{Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kCanonical};
      const EncodePolicy rna{Rounding::kNearestAway, Overflow::kSaturate, NanPolicy::kCanonical};
      tie = std::isfinite(v) && encode(Format::kE4M3FN, v, rne) != encode(Format::kE4M3FN, v, rna);
    }
  }
  if (sub) ctx.tag("out:subnormal");
  if (sat) ctx.tag("out:saturated");
  if (tie) ctx.tag("in:tie");
  for (std::size_t r = 0; r < q.rows; ++r) {
    for (std::size_t b = 0; b < kb; ++b) {
      bool zero = true, special = false;
      for (std::size_t j = b * 32; j < std::min(q.cols, b * 32 + 32); ++j) {
        const float v = x[r * q.cols + j];
        zero = zero && v == 0.0f;
        special = special || !std::isfinite(v);
      }
      if (zero) ctx.tag("block:zero");
      if (special) ctx.tag("block:nan_inf");
    }
  }
}

// The value class and the block maximum's position (required coverage: properties/property.cpp).
void tag_values(const Context& ctx, const Case& c) {
  ctx.tag("values:" + c.text("values"));
  if (c.has("max_at")) ctx.tag("max_at:" + c.text("max_at"));
}

// The input dtypes a case picks from: fp32 three times as often as bf16 (where both exist).
rc::Gen<std::string> gen_input(const Op& op) {
  const bool f32 = (op.contract.a_dtypes & impl::dtype_bit(Dtype::kF32)) != 0;
  const bool bf16 = (op.contract.a_dtypes & impl::dtype_bit(Dtype::kBf16)) != 0;
  if (f32 && bf16) return pick<std::string>({"fp32", "fp32", "fp32", "bf16"});
  return rc::gen::just<std::string>(f32 ? "fp32" : "bf16");
}

// Sets `format` when the op offers more than one FP8 element format.
rc::Gen<std::string> gen_format(impl::DtypeMask mask) {
  std::vector<std::string> names;
  for (Dtype d : fp8_dtypes(mask)) names.emplace_back(impl::to_string(d));
  if (names.size() <= 1) return rc::gen::just<std::string>("");
  return pick(names);
}

bool bf16_input(const Case& c) {
  const std::string& in = c.text("input");
  if (in != "fp32" && in != "bf16") throw CaseError("case field 'input' must be fp32 or bf16");
  return in == "bf16";
}

// ---- quantize.bit_exact ---------------------------------------------------------------------

rc::Gen<Case> gen_quantize(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    const impl::Contract& ct = op->contract;
    return rc::gen::apply(
        [op](const std::string& conv, const std::string& format, const std::string& input,
             std::size_t rows, std::size_t cols, ValueClass vc, const std::string& max_at,
             uint64_t seed) {
          Case c("quantize.bit_exact");
          c.set("op", op->name);
          c.set("conv", conv);
          if (!format.empty()) c.set("format", format);
          c.set("input", input);
          c.set("rows", fit_dim(rows, op->contract.m)).set("cols", cols);
          c.set("values", to_string(vc)).set("max_at", max_at).set("seed", seed);
          return c;
        },
        pick(ct.conventions), gen_format(ct.out_dtypes), gen_input(*op), range(1, 4),
        gen_k(ct.k, 2), gen_value_class(), gen_max_at(), gen_seed());
  });
}

std::optional<Failure> check_quantize(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::string& conv = c.text("conv");
  if (!convention_has_mx_policy(conv)) {
    throw CaseError("case field 'conv': " + conv + " has no MX quantizer in the reference");
  }
  const bool bf16 = bf16_input(c);
  const Dtype element = dtype_field(c, op, op.contract.out_dtypes);
  const std::size_t rows = c.num("rows"), cols = c.num("cols");
  const QuantInput in = quant_input(c, rows, cols, bf16);
  const MxQuantized want = quantize_mx(in.x, rows, cols, *fp8_format(element),
                                       reference_policy(op, conv, *fp8_format(element)));
  tag_quantized(ctx, in.x, want);
  tag_values(ctx, c);
  ctx.tag("op:" + op.name);
  tag_shape(ctx, rows, 0, cols);
  const MxQuantized got = run_quantize(ctx, op, conv, bf16, element, in, rows, cols);
  if (auto f = compare_codes("e8m0 scale bytes", Format::kE8M0, rows, want.scale_cols(),
                             want.scales, got.scales)) {
    return f;
  }
  return compare_codes(std::string(impl::to_string(element)) + " codes", *fp8_format(element), rows,
                       cols, want.data, got.data);
}

// ---- dequantize.bit_exact -------------------------------------------------------------------

std::vector<uint8_t> scale_bytes(std::string_view cls, std::size_t count, std::mt19937_64& rng) {
  static constexpr uint8_t kExtreme[] = {0x00, 0x01, 0xFE, 0xFF, 0x7F, 0x80, 0x7E};
  std::vector<uint8_t> out(count);
  for (uint8_t& b : out) {
    if (cls == "extreme") {
      b = (rng() & 1) ? kExtreme[rng() % 7] : static_cast<uint8_t>(rng());
    } else {
      b = static_cast<uint8_t>(118 + rng() % 19);
    }
  }
  return out;
}

const std::string& scale_class(const Case& c) {
  const std::string& cls = c.text("scales");
  if (cls != "extreme" && cls != "normal") {
    throw CaseError("case field 'scales' must be extreme or normal");
  }
  return cls;
}

E8m0Decode decode_rule(const Op& op) {
  const std::string conv = op.contract.conventions.empty() ? "ocp_mx" : op.contract.conventions[0];
  return find_convention(conv)->e8m0_decode;
}

// A dequantizer of FP8 codes with e8m0 1 x 32 scales writing bf16 or fp32.
bool dequantize_accepts(const Op& op) {
  const impl::Contract& c = op.contract;
  return !fp8_dtypes(c.a_dtypes).empty() && c.scale_dtype == Dtype::kE8m0 && c.a_block_rows <= 1 &&
         c.a_block_cols == 32 &&
         (c.out_dtypes & (impl::dtype_bit(Dtype::kBf16) | impl::dtype_bit(Dtype::kF32))) != 0;
}

// The output dtype: bf16 where the op writes it (the field `out` only when it writes both).
rc::Gen<std::string> gen_dequant_out(const Op& op) {
  const bool f32 = (op.contract.out_dtypes & impl::dtype_bit(Dtype::kF32)) != 0;
  const bool bf16 = (op.contract.out_dtypes & impl::dtype_bit(Dtype::kBf16)) != 0;
  if (f32 && bf16) return pick<std::string>({"bf16", "fp32"});
  return rc::gen::just<std::string>("");
}

rc::Gen<Case> gen_dequantize(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    const impl::Contract& ct = op->contract;
    return rc::gen::apply(
        [op](const std::string& format, const std::string& out, std::size_t rows, std::size_t cols,
             const std::string& scales, uint64_t seed, int ld_extra, bool every) {
          Case c("dequantize.bit_exact");
          c.set("op", op->name);
          if (!format.empty()) c.set("format", format);
          if (!out.empty()) c.set("out", out);
          c.set("rows", fit_dim(rows, op->contract.m)).set("cols", cols);
          c.set("scales", scales).set("seed", seed);
          if (ld_extra != 0 && strided(first_scale_layout(op->contract.a_scale_layouts))) {
            c.set("scale_ld", ld_extra);
          }
          if (every) c.set("elements", "every");
          return c;
        },
        gen_format(ct.a_dtypes), gen_dequant_out(*op), range(1, 4), gen_k(ct.k, 2),
        pick<std::string>({"extreme", "normal"}), gen_seed(), gen_scale_ld(*op),
        pick<bool>({false, false, true}));
  });
}

std::optional<Failure> check_dequantize(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t rows = c.num("rows"), cols = c.num("cols");
  const std::string& cls = scale_class(c);
  const Dtype element = dtype_field(c, op, op.contract.a_dtypes);
  const bool bf16_out = c.has("out")
                            ? c.text("out") == "bf16"
                            : (op.contract.out_dtypes & impl::dtype_bit(Dtype::kBf16)) != 0;
  if (c.has("out") && c.text("out") != "bf16" && c.text("out") != "fp32") {
    throw CaseError("case field 'out' must be bf16 or fp32");
  }
  std::mt19937_64 rng(c.num("seed"));
  MxQuantized q{rows, cols, *fp8_format(element), {}, {}};
  for (std::size_t i = 0; i < rows * cols; ++i) q.data.push_back(static_cast<uint8_t>(rng()));
  q.scales = scale_bytes(cls, rows * q.scale_cols(), rng);
  // Field elements=every: the codes at the ends of the format's range first, then every other
  // code (extreme_scales.h); absent, the random codes above (earlier cases read as before).
  if (c.has("elements")) {
    if (c.text("elements") != "every") throw CaseError("case field 'elements' must be every");
    q.data = every_element_code(*fp8_format(element), rows * cols, c.num("seed"));
  }
  ctx.tag("op:" + op.name);
  ctx.tag("format:" + std::string(impl::to_string(element)));
  if (ctx.coverage != nullptr) {
    for (const std::string& cls : element_classes_present(*fp8_format(element), q.data)) {
      ctx.tag("dequantize:" + cls);
    }
  }
  tag_e8m0(ctx, q.scales, "dequantize");
  tag_shape(ctx, rows, 0, cols);
  impl::Invocation inv(op, ctx.run());
  const Layout sl = scale_layout(op);
  const StoredScales<uint8_t> stored = store_scales<uint8_t>(
      sl, rows, q.scale_cols(), q.scales, op.contract.a_scale_ld_align, 0, scale_ld_field(ctx, c));
  inv.input(&impl::Call::a, q.data, rows, cols, cols, element, Layout::kRowMajor);
  inv.input(&impl::Call::a_scale, stored.values, rows, q.scale_cols(), stored.ld, Dtype::kE8m0, sl);
  const OutputFormat format = bf16_out ? OutputFormat::kBf16 : OutputFormat::kFp32;
  const impl::Call call = impl::rows_call(inv, rows, cols, out_dtype(format));
  const GemmOutput got =
      gemm_output_of(inv.run_and_read(call, &impl::Call::out), rows, cols, format);
  GemmOutput want{rows, cols, format, {}, {}};
  if (bf16_out) {
    want.bf16 = dequantize_mx_bf16(q, decode_rule(op));
  } else {
    want.fp32 = dequantize_mx(q, decode_rule(op));
  }
  return compare_outputs(bf16_out ? "dequantized bf16" : "dequantized fp32", want, got);
}

// ---- upcast_e8m0.bit_exact ------------------------------------------------------------------

bool upcast_accepts(const Op& op) {
  return (op.contract.a_dtypes & impl::dtype_bit(Dtype::kE8m0)) != 0 &&
         (op.contract.out_dtypes & impl::dtype_bit(Dtype::kF32)) != 0;
}

rc::Gen<Case> gen_upcast(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    return rc::gen::apply(
        [op](std::size_t count, const std::string& scales, uint64_t seed) {
          Case c("upcast_e8m0.bit_exact");
          c.set("op", op->name);
          c.set("count", fit_dim(count, op->contract.k)).set("scales", scales).set("seed", seed);
          return c;
        },
        range(1, 300), pick<std::string>({"extreme", "normal"}), gen_seed());
  });
}

std::optional<Failure> check_upcast(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t count = c.num("count");
  const std::string& cls = scale_class(c);
  std::mt19937_64 rng(c.num("seed"));
  const std::vector<uint8_t> bytes = scale_bytes(cls, count, rng);
  ctx.tag("op:" + op.name);
  tag_e8m0(ctx, bytes);
  impl::Invocation inv(op, ctx.run());
  inv.input(&impl::Call::a, bytes, 1, count, count, Dtype::kE8m0, Layout::kRowMajor);
  const impl::Call call = impl::rows_call(inv, 1, count, Dtype::kF32);
  const GemmOutput got =
      gemm_output_of(inv.run_and_read(call, &impl::Call::out), 1, count, OutputFormat::kFp32);
  GemmOutput want{1, count, OutputFormat::kFp32, {}, {}};
  for (uint8_t b : bytes) want.fp32.push_back(decode_e8m0(b, decode_rule(op)));
  return compare_outputs("upcast fp32", want, got);
}

// ---- metamorphic.block_scale_shift ----------------------------------------------------------

rc::Gen<Case> gen_shift(const Context&, const Ops& ops) {
  using V = ValueClass;
  return gen_over_ops(ops, [](const Op* op) {
    const impl::Contract& ct = op->contract;
    const impl::Dim k32{std::max<uint64_t>(32, ct.k.align), ct.k.min, ct.k.max};
    return rc::gen::apply(
        [op](const std::string& conv, std::size_t rows, std::size_t cols, ValueClass vc,
             const std::string& max_at, uint64_t seed, std::size_t row, std::size_t block,
             int shift) {
          Case c("metamorphic.block_scale_shift");
          rows = fit_dim(rows, op->contract.m);
          c.set("op", op->name).set("conv", conv).set("rows", rows).set("cols", cols);
          c.set("values", to_string(vc)).set("max_at", max_at).set("seed", seed);
          c.set("row", row % rows).set("block", block % ((cols + 31) / 32));
          c.set("shift", std::to_string(shift));
          return c;
        },
        pick(ct.conventions), range(1, 4), gen_k(k32, 2),
        pick<V>({V::kInts, V::kNormal, V::kNarrow, V::kTies, V::kSaturation, V::kLog2Hazard,
                 V::kBf16Carry, V::kPow2Ratio}),
        gen_max_at(), gen_seed(), range(0, 4), range(0, 8), pick<int>({1, -1, 2, -3, 5, -7}));
  });
}

std::string shift_declines(const Op& op) {
  if (std::string why = quantize_declines(op); !why.empty()) return why;
  return (op.contract.a_dtypes & impl::dtype_bit(Dtype::kF32)) != 0 ? "" : "fp32 input";
}

bool shift_accepts(const Op& op) { return shift_declines(op).empty(); }

// Multiplying every element of block (r, b) by 2^j must add j to its e8m0 byte and leave every
// code (and every other scale) unchanged: the scale is a power of two chosen from the exponent
// of amax (FLOOR) or of amax/448 rounded up (RCEIL), both shift-equivariant. Vacuous when the
// shifted block leaves the normal range or the byte leaves [1, 254].
std::optional<Failure> check_shift(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t rows = c.num("rows"), cols = c.num("cols");
  const std::size_t r = c.num("row"), b = c.num("block");
  const int j = static_cast<int>(c.snum("shift"));
  const std::string& conv = c.text("conv");
  const Dtype element = dtype_field(c, op, op.contract.out_dtypes);
  const std::size_t kb = (cols + 31) / 32;
  if (r >= rows || b >= kb) throw CaseError("case field 'row' or 'block' is outside the tensor");
  const QuantInput in = quant_input(c, rows, cols, false);
  QuantInput shifted = in;
  for (std::size_t i = b * 32; i < std::min(cols, b * 32 + 32); ++i) {
    const float v = in.x[r * cols + i];
    const float s = std::ldexp(v, j);
    const bool exact = v == 0.0f || (std::isnormal(v) && std::isnormal(s));
    if (!exact) return std::nullopt;  // vacuous: 2^j is not exact on this block
    shifted.x[r * cols + i] = s;
  }
  const MxQuantized q0 = run_quantize(ctx, op, conv, false, element, in, rows, cols);
  const MxQuantized q1 = run_quantize(ctx, op, conv, false, element, shifted, rows, cols);
  // The unshifted run against the reference first: two runs that agree with each other (an
  // unwritten output, the same poison twice) prove nothing on their own.
  const MxQuantized ref = quantize_mx(in.x, rows, cols, *fp8_format(element),
                                      reference_policy(op, conv, *fp8_format(element)));
  if (auto f = compare_codes("unshifted e8m0 scale bytes vs reference", Format::kE8M0, rows, kb,
                             ref.scales, q0.scales)) {
    return f;
  }
  if (auto f = compare_codes("unshifted codes vs reference", *fp8_format(element), rows, cols,
                             ref.data, q0.data)) {
    return f;
  }
  const int s0 = q0.scales[r * kb + b];
  if (s0 + j < 1 || s0 + j > 254 || s0 == 0 || s0 == 0xFF) return std::nullopt;  // clamped
  ctx.tag("meta:block_scale_shift");
  MxQuantized want = q0;
  want.scales[r * kb + b] = static_cast<uint8_t>(s0 + j);
  if (auto f = compare_codes("shifted block's e8m0 bytes (2^" + std::to_string(j) + ")",
                             Format::kE8M0, rows, kb, want.scales, q1.scales)) {
    return f;
  }
  return compare_codes("codes after a 2^" + std::to_string(j) + " block shift",
                       *fp8_format(element), rows, cols, want.data, q1.data);
}

}  // namespace

void add_quant_properties(std::vector<Property>& out) {
  out.push_back({"quantize.bit_exact",
                 "a quantizer whose scale bytes or codes differ from its convention's reference "
                 "(log2-based ceil, wrong fp8 max, payload not requantized, bf16 double rounding)",
                 family_bit(Family::kQuantizeMx), quantize_accepts, gen_quantize, check_quantize, 0,
                 quantize_declines});
  out.push_back({"dequantize.bit_exact",
                 "a dequantizer that rounds twice, decodes e8m0 0x00 / 0xFF or an element code at "
                 "an end of its format (max, the smallest normal, subnormals, -0, NaN, Inf) "
                 "wrongly, or reads the wrong block's scale",
                 family_bit(Family::kDequantize), dequantize_accepts, gen_dequantize,
                 check_dequantize});
  out.push_back({"upcast_e8m0.bit_exact",
                 "an e8m0 -> fp32 upcast by shift: 0x00 -> 0 instead of 2^-127, 0xFF -> Inf "
                 "instead of NaN",
                 family_bit(Family::kUpcastE8m0), upcast_accepts, gen_upcast, check_upcast});
  out.push_back({"metamorphic.block_scale_shift",
                 "a scale choice that is not a function of the block's binade (log2f rounding, "
                 "bf16 rounding of amax), or a payload that depends on more than the scale",
                 family_bit(Family::kQuantizeMx), shift_accepts, gen_shift, check_shift, 0,
                 shift_declines});
}

}  // namespace mxgate::properties
