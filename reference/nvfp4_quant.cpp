#include "reference/nvfp4_quant.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "reference/e8m0.h"
#include "reference/format.h"

namespace mxgate {
namespace {

constexpr float kFltMax = std::numeric_limits<float>::max();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kE4m3Max = 448.0f;
constexpr float kE4m3Tiny = 0x1p-6f;  // torch.finfo(float8_e4m3fn).tiny, torchao's clamp floor
constexpr float kFp4Max = 6.0f;

// fl32 arithmetic made explicit (the compiler must not fuse or widen; -ffp-contract is off for
// these separate statements since each result is stored to a float first).
float mul(float a, float b) { return a * b; }
float div(float a, float b) { return a / b; }

// torch.min(x, FLT_MAX) / fminf(x, FLT_MAX): NaN propagates in torch.min; kept as is.
float min_flt_max(float x) { return std::isnan(x) ? x : std::min(x, kFltMax); }

// torch.clamp(x, lo, hi): NaN stays NaN.
float clamp(float x, float lo, float hi) {
  if (std::isnan(x)) return x;
  return std::min(std::max(x, lo), hi);
}

// rcp.approx.ftz.f32 modelled as the correctly rounded reciprocal with flush-to-zero of subnormal
// inputs and outputs (docs/fp4.md §6.4: unmeasured on sm_100; the measurement script probes it).
float rcp_approx_ftz(float a) {
  if (std::fpclassify(a) == FP_SUBNORMAL) a = std::copysign(0.0f, a);
  const float r = 1.0f / a;
  return std::fpclassify(r) == FP_SUBNORMAL ? std::copysign(0.0f, r) : r;
}

// torch .to(float8_e4m3fn) (RNE; the callers clamp to 448 first, NaN -> 0x7F) and CUDA
// __nv_fp8_e4m3(float) (RNE, SATFINITE, NaN -> 0x7F): equal on the clamped inputs used here.
uint8_t to_e4m3(float v) {
  constexpr EncodePolicy kPolicy{Rounding::kNearestEven, Overflow::kSaturate,
                                 NanPolicy::kCanonical};
  return static_cast<uint8_t>(encode(Format::kE4M3FN, v, kPolicy));
}

// TE cast_to_e8 (pow_2_scales): 2^clamp(ceil(log2(v)), -127, 127) through torch.log2, modelled as
// a correctly rounded log2f (kCeilViaLog2f): v = 0 -> -inf -> -127 (byte 0), Inf -> 127 (254),
// NaN -> 0xFF.
uint8_t te_pow2_byte(float v) {
  if (std::isnan(v)) return 0xFF;
  if (std::isinf(v)) return 254;
  const uint8_t b = encode_e8m0(v, E8m0Encode::kCeilViaLog2f);
  return b == 0xFF ? 254 : b;
}

struct BlockScale {
  uint8_t byte;
  float multiplier;  // the fp32 factor the elements of the block are multiplied by
};

}  // namespace

std::string_view name(NvFp4Recipe r) {
  switch (r) {
    case NvFp4Recipe::kTeReference:
      return "te_reference";
    case NvFp4Recipe::kTorchao:
      return "torchao";
    case NvFp4Recipe::kFlashInferPrecise:
      return "flashinfer_precise";
    case NvFp4Recipe::kFlashInferFast:
      return "flashinfer_fast";
  }
  return "?";
}

std::optional<NvFp4Policy> nvfp4_policy(const Convention& c) {
  NvFp4Policy p;
  p.element = c.sub_byte;
  p.truncate_below_one_to_2m23 = c.truncate_below_one_to_2m23;
  const std::string_view n = c.name;
  if (n == "te_nvfp4_ref") {
    p.recipe = NvFp4Recipe::kTeReference;
  } else if (n == "torchao_nvfp4") {
    p.recipe = NvFp4Recipe::kTorchao;
  } else if (n == "flashinfer_nvfp4") {
    p.recipe = NvFp4Recipe::kFlashInferFast;
  } else {
    return std::nullopt;
  }
  return p;
}

float nvfp4_scale_value(uint8_t byte, bool pow2_scales) {
  return pow2_scales ? decode_e8m0(byte, E8m0Decode::kOcp) : decode(Format::kE4M3FN, byte);
}

NvFp4Quantized quantize_nvfp4(std::span<const float> x, std::size_t rows, std::size_t cols,
                              const NvFp4Policy& policy, std::optional<float> global_amax) {
  if ((rows != 0 && x.size() / rows != cols) || x.size() != rows * cols) {
    throw std::invalid_argument("quantize_nvfp4: input has " + std::to_string(x.size()) +
                                " values, shape needs " + std::to_string(rows) + " x " +
                                std::to_string(cols));
  }
  if (policy.pow2_scales && policy.recipe != NvFp4Recipe::kTeReference) {
    throw std::invalid_argument("quantize_nvfp4: pow2 scales are TE's option (te_nvfp4_ref) only");
  }
  if (policy.tile_16x16 && policy.recipe != NvFp4Recipe::kTeReference) {
    throw std::invalid_argument("quantize_nvfp4: 16x16 tiles are TE's option (te_nvfp4_ref) only");
  }
  NvFp4Quantized q;
  q.rows = rows;
  q.cols = cols;
  q.pow2_scales = policy.pow2_scales;
  q.data.resize(rows * cols);
  q.scales.resize(rows * q.scale_cols());
  const auto at = [&](std::size_t r, std::size_t k) {
    return (r < rows && k < cols) ? x[r * cols + k] : 0.0f;  // zero padding of short blocks
  };

  float amax_t = 0.0f;
  if (global_amax) {
    amax_t = *global_amax;
  } else {
    for (float v : x) {
      if (std::isnan(v)) {
        amax_t = kNaN;  // torch.max propagates NaN
        break;
      }
      amax_t = std::max(amax_t, std::fabs(v));
    }
  }

  // The per-tensor factors of each recipe.
  float ge = 1.0f;   // TE / FlashInfer: global encode scale; torchao: 1 / per_tensor_scale
  float gd = 1.0f;   // global decode scale
  float pts = 1.0f;  // torchao per_tensor_scale
  if (!policy.pow2_scales && policy.global_scale) {
    switch (policy.recipe) {
      case NvFp4Recipe::kTeReference:
        // ge = min(448 * 6 / amax, FLT_MAX); ge == 0 (amax Inf) -> 1; gd = 1 / ge.
        ge = min_flt_max(div(kE4m3Max * kFp4Max, amax_t));
        if (ge == 0.0f) ge = 1.0f;
        gd = div(1.0f, ge);
        break;
      case NvFp4Recipe::kTorchao:
        pts = div(amax_t, kE4m3Max * kFp4Max);  // per_tensor_amax_to_scale
        gd = pts;
        ge = div(1.0f, pts);
        break;
      case NvFp4Recipe::kFlashInferPrecise:
      case NvFp4Recipe::kFlashInferFast:
        // The caller's global_sf = (448 * 6) / amax (fp32); 1 / global_sf dequantizes.
        ge = div(kE4m3Max * kFp4Max, amax_t);
        gd = div(1.0f, ge);
        break;
    }
  }
  q.global_encode = ge;
  q.global_decode = gd;

  const float inv6 = div(1.0f, kFp4Max);  // fl32(1/6) = torch.reciprocal(6.0), 1.0f / 6.0f
  const auto block_scale = [&](float vec_max) -> BlockScale {
    if (policy.pow2_scales) {
      const uint8_t b = te_pow2_byte(div(vec_max, kFp4Max));
      const float s = decode_e8m0(b, E8m0Decode::kOcp);
      return {b, div(1.0f, s)};
    }
    switch (policy.recipe) {
      case NvFp4Recipe::kTeReference: {
        // decode = clamp(min(vec_max * (ge * (1/6)), FLT_MAX), 448) -> E4M3; encode = min(1 /
        // (fp32(E4M3) * gd), FLT_MAX) (a zero block: 1/0 = Inf -> FLT_MAX).
        const float dec = clamp(min_flt_max(mul(vec_max, mul(ge, inv6))), -kE4m3Max, kE4m3Max);
        const uint8_t b = to_e4m3(dec);
        return {b, min_flt_max(div(1.0f, mul(decode(Format::kE4M3FN, b), gd)))};
      }
      case NvFp4Recipe::kTorchao: {
        const float block = div(vec_max, kFp4Max);
        if (!policy.global_scale) {
          const uint8_t b = to_e4m3(clamp(block, kE4m3Tiny, kE4m3Max));
          return {b, div(1.0f, decode(Format::kE4M3FN, b))};
        }
        // scaled = block / per_tensor_scale (0 / 0 = NaN for a zero tensor: the clamp keeps it);
        // reciprocal = (1 / per_tensor_scale) / fp32(E4M3).
        const uint8_t b = to_e4m3(clamp(div(block, pts), kE4m3Tiny, kE4m3Max));
        return {b, div(div(1.0f, pts), decode(Format::kE4M3FN, b))};
      }
      case NvFp4Recipe::kFlashInferPrecise: {
        const float sf = vec_max != 0.0f ? mul(vec_max, mul(ge, inv6)) : 0.0f;
        const uint8_t b = to_e4m3(sf);
        const float s = decode(Format::kE4M3FN, b);
        const float out =
            vec_max != 0.0f ? std::fmin(div(1.0f, mul(s, div(1.0f, ge))), kFltMax) : 0.0f;
        return {b, out};
      }
      case NvFp4Recipe::kFlashInferFast: {
        const float sf = mul(ge, mul(vec_max, rcp_approx_ftz(kFp4Max)));
        const uint8_t b = to_e4m3(sf);
        const float s = decode(Format::kE4M3FN, b);
        const float out = vec_max != 0.0f ? rcp_approx_ftz(mul(s, rcp_approx_ftz(ge))) : 0.0f;
        return {b, out};
      }
    }
    return {0, 0.0f};
  };

  const std::size_t sc = q.scale_cols();
  const std::size_t tile_rows = policy.tile_16x16 ? kNvfp4Block : 1;
  for (std::size_t r0 = 0; r0 < rows; r0 += tile_rows) {
    for (std::size_t g = 0; g < sc; ++g) {
      float vec_max = 0.0f;
      bool nan = false;
      for (std::size_t r = r0; r < r0 + tile_rows; ++r) {
        for (std::size_t k = g * kNvfp4Block; k < (g + 1) * kNvfp4Block; ++k) {
          const float v = at(r, k);
          nan = nan || std::isnan(v);
          vec_max = std::max(vec_max, std::fabs(v));
        }
      }
      // torch.amax (TE, torchao) propagates NaN; FlashInfer's cuda_max is fmaxf-like and ignores
      // it.
      if (nan &&
          (policy.recipe == NvFp4Recipe::kTeReference || policy.recipe == NvFp4Recipe::kTorchao)) {
        vec_max = kNaN;
      }
      const BlockScale s = block_scale(vec_max);
      for (std::size_t r = r0; r < std::min(rows, r0 + tile_rows); ++r) {
        q.scales[r * sc + g] = s.byte;
        for (std::size_t k = g * kNvfp4Block; k < std::min(cols, (g + 1) * kNvfp4Block); ++k) {
          float scaled = mul(x[r * cols + k], s.multiplier);
          // TE and torchao clamp to +-6 before the cast (NaN passes); FlashInfer's cvt saturates.
          scaled = clamp(scaled, -kFp4Max, kFp4Max);
          if (policy.truncate_below_one_to_2m23) scaled = truncate_below_one_to_2m23(scaled);
          q.data[r * cols + k] =
              static_cast<uint8_t>(encode(Format::kE2M1, scaled, policy.element));
        }
      }
    }
  }
  return q;
}

std::vector<float> dequantize_nvfp4(const NvFp4Quantized& q) {
  if (q.data.size() != q.rows * q.cols || q.scales.size() != q.rows * q.scale_cols()) {
    throw std::invalid_argument("dequantize_nvfp4: data has " + std::to_string(q.data.size()) +
                                " codes and " + std::to_string(q.scales.size()) +
                                " scales, shape needs " + std::to_string(q.rows * q.cols) +
                                " and " + std::to_string(q.rows * q.scale_cols()));
  }
  std::vector<float> out(q.data.size());
  for (std::size_t r = 0; r < q.rows; ++r) {
    for (std::size_t k = 0; k < q.cols; ++k) {
      const float s =
          nvfp4_scale_value(q.scales[r * q.scale_cols() + k / kNvfp4Block], q.pow2_scales);
      // code * s * global_decode has at most 2 + 4 + 24 significant bits: exact in double, then
      // rounded once to fp32 (what an fp32 (code * s) * gd computes whenever code * s is an fp32).
      const double exact = static_cast<double>(decode(Format::kE2M1, q.data[r * q.cols + k])) * s;
      out[r * q.cols + k] = static_cast<float>(exact * static_cast<double>(q.global_decode));
    }
  }
  return out;
}

std::vector<uint16_t> dequantize_nvfp4_bf16(const NvFp4Quantized& q) {
  const std::vector<float> f = dequantize_nvfp4(q);
  std::vector<uint16_t> out(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) {
    out[i] = static_cast<uint16_t>(encode(Format::kBF16, f[i], kIeeeDefault));
  }
  return out;
}

}  // namespace mxgate
