// Quantization properties: the MX quantizer, the dequantizer and the e8m0 upcast bit-exact
// against reference/ per convention, and the metamorphic block-scaling property. Value classes:
// properties/values.h. Expected bytes come from reference/mx_quant.h and dequant.h (the spec,
// docs/formats.md §2-§3), never from the kernel.
#include <rapidcheck.h>

#include <cmath>
#include <cstring>
#include <string>

#include "gpu/kernel.h"
#include "properties/gemm_operands.h"
#include "properties/props.h"
#include "properties/values.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/fp_encode.h"
#include "reference/mx_quant.h"
#include "reference/quant_conventions.h"

namespace mxgate::properties {

namespace {

using gpu::Kernel;
using gpu::QuantConvention;

std::optional<QuantConvention> parse_conv(std::string_view s) {
  if (s == "ocp_mx") return QuantConvention::kOcpMx;
  if (s == "torchao_rceil") return QuantConvention::kTorchaoRceil;
  return std::nullopt;
}

std::optional<gpu::InputDtype> parse_input(std::string_view s) {
  if (s == "fp32") return gpu::InputDtype::kFp32;
  if (s == "bf16") return gpu::InputDtype::kBf16;
  return std::nullopt;
}

// The reference policy of a quantizer kernel: the convention's MX policy; the hardware cast
// saturates (Inf -> +-448) and makes NaN canonical (CUDA satfinite, docs/formats.md §1.2.1).
MxPolicy reference_policy(Kernel kernel, std::string_view conv) {
  MxPolicy p = require_mx_policy(require_convention(conv));
  if (kernel == Kernel::kQuantizeMxHw) {
    p.element = {Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kCanonical};
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
                  V::kNormal,     V::kInts});
}

struct QuantInput {
  std::vector<float> x;        // what the reference quantizes (bf16-rounded for bf16 input)
  std::vector<uint16_t> bf16;  // the bf16 bits uploaded for bf16 input
};

QuantInput quant_input(const Case& c, std::size_t rows, std::size_t cols, bool bf16) {
  QuantInput in;
  in.x = make_values(enum_field<ValueClass>(c, "values", parse_value_class), rows, cols,
                     c.num("seed"));
  if (bf16) {
    in.bf16.resize(in.x.size());
    for (std::size_t i = 0; i < in.x.size(); ++i) {
      in.bf16[i] = static_cast<uint16_t>(encode(Format::kBF16, in.x[i], kIeeeDefault));
      in.x[i] = float_of(static_cast<uint32_t>(in.bf16[i]) << 16);
    }
  }
  return in;
}

MxQuantized run_quantize(const Context& ctx, Kernel kernel, QuantConvention conv, bool bf16,
                         const QuantInput& in, std::size_t rows, std::size_t cols) {
  gpu::Backend& be = *ctx.be;
  gpu::ScopedBuffers buffers(be);
  gpu::QuantizeArgs q;
  q.in = bf16 ? buffers.make(in.bf16, "x") : buffers.make(in.x, "x");
  q.codes = buffers.allocate(rows * cols, "codes");
  q.scales = buffers.allocate(rows * ((cols + 31) / 32), "scales");
  q.p = {rows, cols, bf16 ? gpu::InputDtype::kBf16 : gpu::InputDtype::kFp32, conv};
  q.p.faults = ctx.kernel_faults();
  be.run({kernel, q});
  return {rows, cols, Format::kE4M3FN, be.download(q.codes), be.download(q.scales)};
}

void tag_quantized(const Context& ctx, const std::vector<float>& x, const MxQuantized& q) {
  if (ctx.coverage == nullptr) return;
  tag_e8m0(ctx, q.scales);
  bool sub = false, sat = false, tie = false;
  const std::size_t kb = q.scale_cols();
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

// ---- quantize.bit_exact ---------------------------------------------------------------------

rc::Gen<Case> gen_quantize(const Context& ctx) {
  const rc::Gen<std::string> kernels =
      ctx.be->supports(Kernel::kQuantizeMxHw)
          ? pick<std::string>({"quantize_mx", "quantize_mx", "quantize_mx", "quantize_mx_hw"})
          : rc::gen::just<std::string>("quantize_mx");
  return rc::gen::apply(
      [](const std::string& kernel, const std::string& conv, const std::string& input,
         std::size_t rows, std::size_t cols, ValueClass vc, uint64_t seed) {
        Case c("quantize.bit_exact");
        c.set("kernel", kernel);
        // The hardware cast is the satfinite convention: RCEIL scales only.
        c.set("conv", kernel == "quantize_mx_hw" ? "torchao_rceil" : conv);
        c.set("input", input);
        c.set("rows", rows).set("cols", cols);
        c.set("values", to_string(vc)).set("seed", seed);
        return c;
      },
      kernels, pick<std::string>({"ocp_mx", "torchao_rceil"}),
      pick<std::string>({"fp32", "fp32", "fp32", "bf16"}), range(1, 4), gen_k(1, 2),
      gen_value_class(), gen_seed());
}

std::optional<Failure> check_quantize(const Context& ctx, const Case& c) {
  const Kernel kernel = enum_field<Kernel>(c, "kernel", gpu::parse_kernel);
  const std::string& conv_name = c.text("conv");
  const QuantConvention conv = enum_field<QuantConvention>(c, "conv", parse_conv);
  const bool bf16 = enum_field<gpu::InputDtype>(c, "input", parse_input) == gpu::InputDtype::kBf16;
  const std::size_t rows = c.num("rows"), cols = c.num("cols");
  const QuantInput in = quant_input(c, rows, cols, bf16);
  const MxQuantized want =
      quantize_mx(in.x, rows, cols, Format::kE4M3FN, reference_policy(kernel, conv_name));
  const MxQuantized got = run_quantize(ctx, kernel, conv, bf16, in, rows, cols);
  ctx.tag("kernel:" + std::string(gpu::kernel_name(kernel)));
  tag_shape(ctx, rows, 0, cols);
  tag_quantized(ctx, in.x, want);
  if (auto f = compare_codes("e8m0 scale bytes", Format::kE8M0, rows, want.scale_cols(),
                             want.scales, got.scales)) {
    return f;
  }
  return compare_codes("E4M3FN codes", Format::kE4M3FN, rows, cols, want.data, got.data);
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

rc::Gen<Case> gen_dequantize(const Context&) {
  return rc::gen::apply(
      [](std::size_t rows, std::size_t cols, const std::string& scales, uint64_t seed) {
        Case c("dequantize.bit_exact");
        c.set("rows", rows).set("cols", cols).set("scales", scales).set("seed", seed);
        return c;
      },
      range(1, 4), gen_k(1, 2), pick<std::string>({"extreme", "normal"}), gen_seed());
}

std::optional<Failure> check_dequantize(const Context& ctx, const Case& c) {
  const std::size_t rows = c.num("rows"), cols = c.num("cols");
  const std::string& cls = c.text("scales");
  if (cls != "extreme" && cls != "normal")
    throw CaseError("case field 'scales' must be extreme or normal");
  std::mt19937_64 rng(c.num("seed"));
  MxQuantized q{rows, cols, Format::kE4M3FN, {}, {}};
  for (std::size_t i = 0; i < rows * cols; ++i) q.data.push_back(static_cast<uint8_t>(rng()));
  q.scales = scale_bytes(cls, rows * q.scale_cols(), rng);
  gpu::Backend& be = *ctx.be;
  gpu::ScopedBuffers buffers(be);
  gpu::DequantArgs a;
  a.codes = buffers.make(q.data, "codes");
  a.scales = buffers.make(q.scales, "scales");
  a.out = buffers.allocate(rows * cols * 2, "out");
  a.p = {rows, cols, gpu::E8m0Upcast::kCorrect};
  be.run({Kernel::kDequantMxToBf16, a});
  const GemmOutput got{rows, cols, OutputFormat::kBf16, {}, be.download_as<uint16_t>(a.out)};
  GemmOutput want{rows, cols, OutputFormat::kBf16, {}, dequantize_mx_bf16(q, E8m0Decode::kOcp)};
  ctx.tag("kernel:dequant_mx_to_bf16");
  tag_e8m0(ctx, q.scales);
  tag_shape(ctx, rows, 0, cols);
  return compare_outputs("dequantized bf16", want, got);
}

// ---- upcast_e8m0.bit_exact ------------------------------------------------------------------

rc::Gen<Case> gen_upcast(const Context&) {
  return rc::gen::apply(
      [](std::size_t count, const std::string& scales, uint64_t seed) {
        Case c("upcast_e8m0.bit_exact");
        c.set("count", count).set("scales", scales).set("seed", seed);
        return c;
      },
      range(1, 300), pick<std::string>({"extreme", "normal"}), gen_seed());
}

std::optional<Failure> check_upcast(const Context& ctx, const Case& c) {
  const std::size_t count = c.num("count");
  const std::string& cls = c.text("scales");
  if (cls != "extreme" && cls != "normal")
    throw CaseError("case field 'scales' must be extreme or normal");
  std::mt19937_64 rng(c.num("seed"));
  const std::vector<uint8_t> bytes = scale_bytes(cls, count, rng);
  gpu::Backend& be = *ctx.be;
  gpu::ScopedBuffers buffers(be);
  gpu::UpcastArgs a;
  a.in = buffers.make(bytes, "e8m0");
  a.out = buffers.allocate(count * 4, "fp32");
  a.p = {count, gpu::E8m0Upcast::kCorrect};
  be.run({Kernel::kUpcastE8m0, a});
  const GemmOutput got{1, count, OutputFormat::kFp32, be.download_as<float>(a.out), {}};
  GemmOutput want{1, count, OutputFormat::kFp32, {}, {}};
  for (uint8_t b : bytes) want.fp32.push_back(decode_e8m0(b, E8m0Decode::kOcp));
  ctx.tag("kernel:upcast_e8m0");
  tag_e8m0(ctx, bytes);
  return compare_outputs("upcast fp32", want, got);
}

// ---- metamorphic.block_scale_shift ----------------------------------------------------------

rc::Gen<Case> gen_shift(const Context&) {
  using V = ValueClass;
  return rc::gen::apply(
      [](const std::string& conv, std::size_t rows, std::size_t cols, ValueClass vc, uint64_t seed,
         std::size_t row, std::size_t block, int shift) {
        Case c("metamorphic.block_scale_shift");
        c.set("kernel", "quantize_mx").set("conv", conv).set("rows", rows).set("cols", cols);
        c.set("values", to_string(vc)).set("seed", seed);
        c.set("row", row % rows).set("block", block % ((cols + 31) / 32));
        c.set("shift", std::to_string(shift));
        return c;
      },
      pick<std::string>({"ocp_mx", "torchao_rceil"}), range(1, 4), gen_k(32, 2),
      pick<V>({V::kInts, V::kNormal, V::kNarrow, V::kTies, V::kSaturation, V::kLog2Hazard,
               V::kBf16Carry}),
      gen_seed(), range(0, 4), range(0, 8), pick<int>({1, -1, 2, -3, 5, -7}));
}

// Multiplying every element of block (r, b) by 2^j must add j to its e8m0 byte and leave every
// code (and every other scale) unchanged: the scale is a power of two chosen from the exponent
// of amax (FLOOR) or of amax/448 rounded up (RCEIL), both shift-equivariant. Vacuous when the
// shifted block leaves the normal range or the byte leaves [1, 254].
std::optional<Failure> check_shift(const Context& ctx, const Case& c) {
  const std::size_t rows = c.num("rows"), cols = c.num("cols");
  const std::size_t r = c.num("row"), b = c.num("block");
  const int j = static_cast<int>(c.snum("shift"));
  const QuantConvention conv = enum_field<QuantConvention>(c, "conv", parse_conv);
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
  const MxQuantized q0 = run_quantize(ctx, Kernel::kQuantizeMx, conv, false, in, rows, cols);
  const MxQuantized q1 = run_quantize(ctx, Kernel::kQuantizeMx, conv, false, shifted, rows, cols);
  const int s0 = q0.scales[r * kb + b];
  if (s0 + j < 1 || s0 + j > 254 || s0 == 0 || s0 == 0xFF) return std::nullopt;  // clamped
  ctx.tag("meta:block_scale_shift");
  MxQuantized want = q0;
  want.scales[r * kb + b] = static_cast<uint8_t>(s0 + j);
  if (auto f = compare_codes("shifted block's e8m0 bytes (2^" + std::to_string(j) + ")",
                             Format::kE8M0, rows, kb, want.scales, q1.scales)) {
    return f;
  }
  return compare_codes("codes after a 2^" + std::to_string(j) + " block shift", Format::kE4M3FN,
                       rows, cols, want.data, q1.data);
}

}  // namespace

void add_quant_properties(std::vector<Property>& out) {
  out.push_back({"quantize.bit_exact",
                 "a quantizer whose scale bytes or codes differ from its convention's reference "
                 "(log2-based ceil, wrong fp8 max, payload not requantized, bf16 double rounding)",
                 gen_quantize, check_quantize});
  out.push_back({"dequantize.bit_exact",
                 "a dequantizer that rounds twice, decodes e8m0 0x00 / 0xFF wrongly or reads the "
                 "wrong block's scale",
                 gen_dequantize, check_dequantize});
  out.push_back({"upcast_e8m0.bit_exact",
                 "an e8m0 -> fp32 upcast by shift: 0x00 -> 0 instead of 2^-127, 0xFF -> Inf "
                 "instead of NaN",
                 gen_upcast, check_upcast});
  out.push_back({"metamorphic.block_scale_shift",
                 "a scale choice that is not a function of the block's binade (log2f rounding, "
                 "bf16 rounding of amax), or a payload that depends on more than the scale",
                 gen_shift, check_shift});
}

}  // namespace mxgate::properties
