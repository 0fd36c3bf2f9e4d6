// MX quantization of one (row, 32-block): the body every backend runs (host model loop, one
// device thread per block). Conventions: params.h; semantics docs/formats.md §3.1, §3.3.
#pragma once

#include "common/blocks.h"
#include "gpu/kernels/bits.h"
#include "gpu/kernels/params.h"
#include "gpu/kernels/quant_input.h"

namespace mxgate::gpu {

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
  const uint64_t scale_cols = ceil_div(p.cols, kMxBlock);
  const uint64_t k0 = blk * kMxBlock;
  const uint64_t k1 = block_end(k0, kMxBlock, p.cols);
  float amax = input_amax(in, p.input, p.cols, row, k0, k1);
  // Z15 (planted): amax rounded to bf16 before the scale is chosen (double rounding).
  if (p.faults & kernel_fault::kBf16Amax) amax = bits::bf16_to_f32(bits::bf16_rne(amax));
  uint8_t byte;
  if (p.convention == QuantConvention::kOcpMx) {
    byte = bits::mx_scale_floor(amax);
  } else {
    byte = (p.faults & kernel_fault::kLog2Ceil) ? bits::mx_scale_rceil_log2(amax)  // Z8
                                                : bits::mx_scale_rceil(amax);
  }
  scales[row * scale_cols + blk] = byte;
  const float rcp = bits::e8m0_reciprocal(byte);
  // Z14 (planted): the payload divided by the unrounded scale amax/448, not requantized with the
  // power-of-two scale that is stored.
  const uint32_t amax_bits = bits::f32_bits(amax) & 0x7FFFFFFFu;
  const bool unrounded = (p.faults & kernel_fault::kUnroundedScalePayload) && amax_bits != 0 &&
                         amax_bits < 0x7F800000u;
  const float s_unrounded = bits::mul(amax, 1.0f / 448.0f);
  for (uint64_t k = k0; k < k1; ++k) {
    const float v = load_input(in, p.input, row * p.cols + k);
    float x = unrounded ? v / s_unrounded : bits::mul(v, rcp);
    // Z11 (planted): the FNUZ max 240 used as the clamp of an OCP E4M3FN cast.
    if (p.faults & kernel_fault::kFnuzMax) x = x > 240.0f ? 240.0f : (x < -240.0f ? -240.0f : x);
    // A NaN scale gives the canonical positive NaN, as GPU arithmetic does.
    codes[row * p.cols + k] = byte == 0xFFu ? 0x7Fu : encode(x);
  }
}

}  // namespace mxgate::gpu
