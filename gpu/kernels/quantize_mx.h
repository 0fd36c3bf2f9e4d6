// MX quantization of one (row, 32-block): the body every backend runs (host model loop, one
// device thread per block). Conventions: params.h; semantics research/formats.md §3.1, §3.3.
#pragma once

#include "gpu/kernels/bits.h"
#include "gpu/kernels/params.h"

namespace mxgate::gpu {

MXGATE_HD inline float load_input(const void* in, InputDtype dtype, uint64_t i) {
  if (dtype == InputDtype::kBf16) return bits::bf16_to_f32(static_cast<const uint16_t*>(in)[i]);
  return static_cast<const float*>(in)[i];
}

// Software element cast of each convention.
struct SoftwareE4m3 {
  QuantConvention convention;
  MXGATE_HD uint8_t operator()(float x) const {
    return convention == QuantConvention::kOcpMx ? bits::encode_e4m3fn(x, true, true)
                                                 : bits::encode_e4m3fn(x, false, true);
  }
};

// amax over the block (NaN propagates: both conventions), scale byte by the convention's rule,
// then every element cast once after multiplying by the exact reciprocal 2^(127 - byte). A NaN
// scale (0xFF) makes every element of the block NaN. `encode` is the element cast.
template <class Encode>
MXGATE_HD inline void quantize_mx_block(const QuantizeParams& p, const void* in, uint8_t* codes,
                                        uint8_t* scales, uint64_t row, uint64_t blk,
                                        Encode encode) {
  const uint64_t scale_cols = (p.cols + 31) / 32;
  const uint64_t k0 = blk * 32;
  const uint64_t k1 = k0 + 32 < p.cols ? k0 + 32 : p.cols;
  float amax = 0.0f;
  bool nan = false;
  for (uint64_t k = k0; k < k1; ++k) {
    const float v = load_input(in, p.input, row * p.cols + k);
    nan = nan || bits::is_nan(v);
    amax = bits::max_num(amax, bits::abs_f32(v));
  }
  if (nan) amax = bits::f32_from(bits::kQuietNan);
  const uint8_t byte = p.convention == QuantConvention::kOcpMx ? bits::mx_scale_floor(amax)
                                                               : bits::mx_scale_rceil(amax);
  scales[row * scale_cols + blk] = byte;
  const float rcp = bits::e8m0_reciprocal(byte);
  for (uint64_t k = k0; k < k1; ++k) {
    const float v = load_input(in, p.input, row * p.cols + k);
    // A NaN scale gives the canonical positive NaN, as GPU arithmetic does.
    codes[row * p.cols + k] = byte == 0xFFu ? 0x7Fu : encode(bits::mul(v, rcp));
  }
}

}  // namespace mxgate::gpu
