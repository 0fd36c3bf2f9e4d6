// MX dequantization to bf16 and the E8M0 upcast: per-element bodies shared by every backend.
#pragma once

#include "common/blocks.h"
#include "gpu/kernels/bits.h"
#include "gpu/kernels/params.h"

namespace mxgate::gpu {

// decode(code) * decode(scale) as one fp32 multiply, then one RNE to bf16 (docs/formats.md §3.5).
MXGATE_HD inline void dequant_mx_element(const DequantParams& p, const uint8_t* codes,
                                         const uint8_t* scales, uint16_t* out, uint64_t i) {
  const uint64_t row = i / p.cols;
  const uint64_t col = i % p.cols;
  const uint64_t scale_cols = ceil_div(p.cols, kMxBlock);
  const float s =
      bits::decode_e8m0(scales[row * scale_cols + col / kMxBlock], p.upcast == E8m0Upcast::kShift);
  out[i] = bits::bf16_rne(bits::mul(bits::decode_e4m3fn(codes[i]), s));
}

MXGATE_HD inline void upcast_e8m0_element(const UpcastParams& p, const uint8_t* in, float* out,
                                          uint64_t i) {
  out[i] = bits::decode_e8m0(in[i], p.upcast == E8m0Upcast::kShift);
}

}  // namespace mxgate::gpu
