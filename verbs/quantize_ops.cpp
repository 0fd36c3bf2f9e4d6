// The verbs quantize and dequantize (verbs/tensor_ops.h): the MX, NVFP4 and block FP8 recipes of
// the reference on arrays in memory, with the CLI's option checks and error texts.
#include <optional>
#include <string>
#include <vector>

#include "common/blocks.h"
#include "reference/dequant.h"
#include "reference/quant_conventions.h"
#include "verbs/tensor_arrays.h"
#include "verbs/tensor_ops.h"
#include "verbs/tensor_options.h"

namespace mxgate::verbs {

namespace {

void read_scheme(const Args& a, SchemeSpec& spec) {
  std::optional<Format> implied;
  spec.scheme = quant_scheme(a, &implied);
  spec.format = scheme_format(a, spec.scheme, implied);
  spec.convention = &convention(a, nullptr);
  // MXINT8 (docs/formats.md §1.5) has an MX quantizer (ocp_mx) but no convention casts single
  // values to it: quantize_spec asks mx_policy, which names the conventions that have one.
  if (spec.scheme == QuantScheme::kMx && is_twos_complement(spec.format)) return;
  require_defines(*spec.convention, spec.format);
}

}  // namespace

// ---- quantize -----------------------------------------------------------------------------------

const std::set<std::string>& quantize_options() {
  static const std::set<std::string> options = {"scheme",       "format",      "convention", "in",
                                                "scale-layout", "global-amax", "tile"};
  return options;
}

const std::set<std::string>& quantize_flags() {
  static const std::set<std::string> flags = {"ue8m0", "pow2-scales"};
  return flags;
}

QuantizeSpec quantize_spec(const Args& a) {
  QuantizeSpec spec;
  read_scheme(a, spec);
  spec.layout = scale_layout_option(a);
  const bool ue8m0 = a.flag("ue8m0");
  if (ue8m0 && (spec.scheme == QuantScheme::kMx || spec.scheme == QuantScheme::kNvfp4)) {
    throw UsageError("--ue8m0 applies to --scheme act1x128 and w128x128 only (MX scales are e8m0)");
  }
  if (spec.scheme != QuantScheme::kNvfp4) {
    reject_options(a, {"global-amax", "tile"}, "applies to --scheme nvfp4 only");
    if (a.flag("pow2-scales")) throw UsageError("--pow2-scales applies to --scheme nvfp4 only");
  }
  const Convention& c = *spec.convention;
  if (spec.scheme == QuantScheme::kMx) {
    spec.mx = mx_policy(c, spec.format);
    if (!spec.mx) {
      const Format f = spec.format;
      const std::string which = info(f).bits == 8 ? "" : " for " + std::string(info(f).name);
      throw UsageError("--convention: '" + std::string(c.name) + "' has no MX quantizer" + which +
                       " (conventions with one: " + conventions_with_quantizer(true, f) + ")");
    }
  } else if (spec.scheme == QuantScheme::kNvfp4) {
    spec.nvfp4 = nvfp4_recipe(a, c);
  } else {
    spec.block = block_policy(c, spec.format, ue8m0);
    if (!spec.block) {
      throw UsageError("--convention: '" + std::string(c.name) +
                       "' has no block FP8 quantizer (conventions with one: " +
                       conventions_with_quantizer(false) + ")");
    }
  }
  if (const std::optional<std::string> g = a.get("global-amax")) spec.global_amax = parse_value(*g);
  return spec;
}

QuantizeResult quantize(const QuantizeSpec& spec, const ArrayReader& read) {
  const NpyArray in = read("in");
  if (in.rank() != 2 || (in.dtype != NpyDtype::kFloat32 && in.dtype != NpyDtype::kFloat64)) {
    throw UsageError("--in: expected float32 or float64 (M, K), got " +
                     std::string(npy_dtype_name(in.dtype)) + " " + npy_shape_string(in.shape) +
                     (in.dtype == NpyDtype::kUint16 ? " (bf16 bits? convert them to float32 "
                                                      "first: that is exact)"
                                                    : ""));
  }
  require_nonempty(in, "--in", "M and K");
  const std::size_t m = in.shape[0], k = in.shape[1];
  std::vector<float> x;
  if (in.dtype == NpyDtype::kFloat32) {
    x = in.values<float>();
  } else {
    // float64 -> fp32: one round-to-nearest-even conversion (the default floating-point mode).
    for (double v : in.values<double>()) x.push_back(static_cast<float>(v));
  }
  QuantizeResult r;
  try {
    if (spec.mx) {
      const MxQuantized q = quantize_mx(x, m, k, spec.format, *spec.mx);
      r.data = codes_array(spec.format, m, k, q.data);
      r.scales = scales_array(spec.layout, m, q.scale_cols(), q.scales);
    } else if (spec.nvfp4) {
      const NvFp4Quantized q = quantize_nvfp4(x, m, k, *spec.nvfp4, spec.global_amax);
      r.data = codes_array(spec.format, m, k, q.data);
      r.scales = scales_array(spec.layout, m, q.scale_cols(), q.scales);
      r.global = NpyArray({1}, std::vector<float>{q.global_decode});
    } else {
      const std::size_t block_rows = spec.scheme == QuantScheme::kW128x128 ? kBlockK : 1;
      const BlockQuantized q =
          quantize_block(x, m, k, block_rows, kBlockK, spec.format, *spec.block);
      r.data = NpyArray({m, k}, q.data);
      r.scales = scales_array(spec.layout, q.scale_rows(), q.scale_cols(), q.scales);
    }
  } catch (const UndefinedEncoding& e) {
    throw UsageError(std::string("--in: ") + e.what() + " under convention '" +
                     std::string(spec.convention->name) + "'");
  }
  return r;
}

// ---- dequantize ---------------------------------------------------------------------------------

const std::set<std::string>& dequantize_options() {
  static const std::set<std::string> options = {"scheme", "format", "convention", "data",
                                                "scales", "dtype",  "k",          "global"};
  return options;
}

const std::set<std::string>& dequantize_flags() {
  static const std::set<std::string> flags = {"pow2-scales"};
  return flags;
}

DequantizeSpec dequantize_spec(const Args& a) {
  DequantizeSpec spec;
  read_scheme(a, spec);
  spec.dtype = output_dtype(a);
  a.require("data");
  a.require("scales");
  if (spec.scheme != QuantScheme::kNvfp4) {
    reject_options(a, {"global"}, "applies to --scheme nvfp4 only");
    if (a.flag("pow2-scales")) throw UsageError("--pow2-scales applies to --scheme nvfp4 only");
  } else {
    a.require("global");
  }
  if (spec.format != Format::kE2M1) reject_options(a, {"k"}, "applies to packed e2m1 data only");
  spec.k = k_option(a);
  spec.pow2_scales = a.flag("pow2-scales");
  return spec;
}

NpyArray dequantize(const DequantizeSpec& spec, const ArrayReader& read) {
  const NpyArray data = read("data");
  if (data.rank() != 2) {
    throw UsageError("--data: expected a 2-D uint8 array, got " + npy_shape_string(data.shape));
  }
  require_nonempty(data, "--data", "M and K");
  const std::size_t m = data.shape[0], k = operand_k(spec.k, data, spec.format);
  const std::vector<uint8_t> codes = read_codes(data, "--data", spec.format, m, k);
  const NpyArray scales = read("scales");
  const bool fp32 = spec.dtype == OutputFormat::kFp32;
  if (spec.scheme == QuantScheme::kNvfp4) {
    expect(scales, "--scales", NpyDtype::kUint8,
           {NpyDim("M", m), NpyDim("ceil(K/16)", ceil_div(k, kNvfp4Block))});
    const NvFp4Quantized q{.rows = m,
                           .cols = k,
                           .pow2_scales = spec.pow2_scales,
                           .data = codes,
                           .scales = scales.values<uint8_t>(),
                           .global_decode = scalar_input(read, "global")};
    return fp32 ? NpyArray({m, k}, dequantize_nvfp4(q))
                : NpyArray({m, k}, dequantize_nvfp4_bf16(q));
  }
  if (spec.scheme == QuantScheme::kMx) {
    expect(scales, "--scales", NpyDtype::kUint8,
           {NpyDim("M", m), NpyDim("ceil(K/32)", ceil_div(k, kMxBlock))});
    const MxQuantized q{m, k, spec.format, codes, scales.values<uint8_t>()};
    const E8m0Decode decode = spec.convention->e8m0_decode;
    return fp32 ? NpyArray({m, k}, dequantize_mx(q, decode))
                : NpyArray({m, k}, dequantize_mx_bf16(q, decode));
  }
  const std::size_t block_rows = spec.scheme == QuantScheme::kW128x128 ? kBlockK : 1;
  if (block_rows == 1) {
    expect(scales, "--scales", NpyDtype::kFloat32,
           {NpyDim("M", m), NpyDim("ceil(K/128)", ceil_div(k, kBlockK))});
  } else {
    expect(
        scales, "--scales", NpyDtype::kFloat32,
        {NpyDim("ceil(M/128)", ceil_div(m, kBlockK)), NpyDim("ceil(K/128)", ceil_div(k, kBlockK))});
  }
  const BlockQuantized q{m, k, block_rows, kBlockK, spec.format, codes, scales.values<float>()};
  return fp32 ? NpyArray({m, k}, dequantize_block(q)) : NpyArray({m, k}, dequantize_block_bf16(q));
}

}  // namespace mxgate::verbs
