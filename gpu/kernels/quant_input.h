// The input side every quantizer body shares (MX, 1x128, MXFP4, NVFP4): element i of the fp32 or
// bf16 input, the end of a block (a short last one), and the block's NaN-propagating amax.
#pragma once

#include "gpu/kernels/bits.h"
#include "gpu/kernels/params.h"

namespace mxgate::gpu {

MXGATE_HD inline float load_input(const void* in, InputDtype dtype, uint64_t i) {
  if (dtype == InputDtype::kBf16) return bits::bf16_to_f32(static_cast<const uint16_t*>(in)[i]);
  return static_cast<const float*>(in)[i];
}

// One past the last column of the block of `size` starting at k0: a row's last block may be short.
MXGATE_HD inline uint64_t block_end(uint64_t k0, uint64_t size, uint64_t cols) {
  return k0 + size < cols ? k0 + size : cols;
}

// max|x| over columns [k0, k1) of `row`; a NaN element makes it the canonical quiet NaN (torch.amax
// propagates NaN; docs/formats.md §3.1).
MXGATE_HD inline float input_amax(const void* in, InputDtype dtype, uint64_t cols, uint64_t row,
                                  uint64_t k0, uint64_t k1) {
  float amax = 0.0f;
  bool nan = false;
  for (uint64_t k = k0; k < k1; ++k) {
    const float v = load_input(in, dtype, row * cols + k);
    nan = nan || bits::is_nan(v);
    amax = bits::max_num(amax, bits::abs_f32(v));
  }
  return nan ? bits::f32_from(bits::kQuietNan) : amax;
}

}  // namespace mxgate::gpu
