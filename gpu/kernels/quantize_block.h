// DeepGEMM-style 1x128 activation quantization with UE8M0 scales (per_token_cast_to_fp8 with
// use_ue8m0, docs/formats.md §5.2): one (row, 128-group) per work item, the body every backend
// runs. amax = max|x| over the group (NaN propagates), clamped below at 1e-4; sf = amax / 448
// rounded up to a power of two on the bits (exponent + (mantissa != 0), clamped to [1, 254]);
// elements x * fl32(1 / sf), one satfinite E4M3FN cast (docs/conventions.md §2.15).
#pragma once

#include "common/blocks.h"
#include "gpu/kernels/bits.h"
#include "gpu/kernels/params.h"
#include "gpu/kernels/quant_input.h"

namespace mxgate::gpu {

// DeepGEMM ceil_to_ue8m0: the power of two at or above |s| with exponent byte in [1, 254].
MXGATE_HD inline float ceil_to_ue8m0(float s) {
  const uint32_t a = bits::f32_bits(s) & 0x7FFFFFFFu;
  uint32_t e = (a >> 23) + ((a & 0x7FFFFFu) != 0 ? 1u : 0u);
  e = e < 1u ? 1u : (e > 254u ? 254u : e);
  return bits::f32_from(e << 23);
}

MXGATE_HD inline void quantize_block_group(const QuantizeBlockParams& p, const void* in,
                                           uint8_t* codes, float* scales, uint64_t row,
                                           uint64_t group) {
  const uint64_t groups = ceil_div(p.cols, kBlockK);
  const uint64_t k0 = group * kBlockK;
  const uint64_t k1 = block_end(k0, kBlockK, p.cols);
  const float amax = input_amax(in, p.input, p.cols, row, k0, k1);
  const bool nan = bits::is_nan(amax);
  const float kEps = 1e-4f;
  float sf;
  if (p.faults & kernel_fault::kMinClampAfterPow2) {
    // Z21 (planted): the minimum applied after the power-of-two rounding (vLLM #58032): a zero or
    // tiny group gets the minimum itself, 1e-4 / 448, which is not a power of two.
    sf = ceil_to_ue8m0(nan ? amax : amax / 448.0f);
    sf = bits::max_num(sf, kEps / 448.0f);
  } else {
    // Z42 (planted, ROCm/aiter #3212): the scale sized for the FNUZ maximum 240 while the codes
    // are E4M3FN (maximum 448), so blocks use a scale up to twice too large and half the range.
    const float fp8_max = (p.faults & kernel_fault::kScaleFnuzMax) ? 240.0f : 448.0f;
    const float a = nan ? amax : bits::max_num(amax, kEps);
    sf = ceil_to_ue8m0(a / fp8_max);
  }
  scales[row * groups + group] = sf;
  const float rcp = 1.0f / sf;
  for (uint64_t k = k0; k < k1; ++k) {
    const float v = load_input(in, p.input, row * p.cols + k);
    codes[row * p.cols + k] = bits::encode_e4m3fn(bits::mul(v, rcp), false, false);
  }
}

}  // namespace mxgate::gpu
