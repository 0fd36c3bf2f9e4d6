// MXFP4 / NVFP4 quantization of one (row, block) and dequantization of one element: the bodies
// every backend runs (host model loops, one device thread per block or element). Every fp32
// rounding is one bits:: / fp4:: operation, in the order of the recipe's source
// (docs/fp4.md §4.1, §6.1, §6.6); the kernels' planted faults are the kernel_fault bits.
#pragma once

#include "common/blocks.h"
#include "gpu/kernels/bits.h"
#include "gpu/kernels/fp4_bits.h"
#include "gpu/kernels/params.h"
#include "gpu/kernels/quant_input.h"

namespace mxgate::gpu {

// The global amax of an NVFP4 quantizer: one fp32 or bf16 element. Z35 (planted, FlashInfer
// #3398 / #3497): the buffer read as fp32 whatever its dtype, so a bf16 scale is misread (its two
// bytes and the two after them).
MXGATE_HD inline float fp4_global_amax(const Fp4QuantizeParams& p, const void* global) {
  if (p.global_dtype == GlobalDtype::kBf16 && (p.faults & kernel_fault::kGlobalReadAsFp32) == 0) {
    return bits::bf16_to_f32(*static_cast<const uint16_t*>(global));
  }
  const uint8_t* b = static_cast<const uint8_t*>(global);
  const uint32_t u = static_cast<uint32_t>(b[0]) | (static_cast<uint32_t>(b[1]) << 8) |
                     (static_cast<uint32_t>(b[2]) << 16) | (static_cast<uint32_t>(b[3]) << 24);
  return bits::f32_from(u);
}

// Byte k / 2 of a packed row (k even): elements k and k + 1 (the padding nibble of an odd row's
// last byte is 0). Z31 swaps the nibbles of every byte.
MXGATE_HD inline void fp4_store_pair(uint8_t* codes, uint64_t cols, uint64_t row, uint64_t k,
                                     uint8_t even, uint8_t odd, uint64_t faults) {
  codes[row * ((cols + 1) / 2) + k / 2] =
      fp4::pack_pair(even, odd, (faults & kernel_fault::kNibbleSwap) != 0);
}

// MXFP4, ocp_mx (docs/fp4.md §4.1): amax over the 32-block (a NaN makes it NaN), FLOOR scale with
// emax 2 (non-finite amax -> 0xFF), every element x * 2^(127 - byte) cast to E2M1 by RNE with
// saturation; a 0xFF block's codes are 0 (nan_block_code). A short last block is padded with 0.
MXGATE_HD inline void quantize_mxfp4_block(const Fp4QuantizeParams& p, const void* in,
                                           uint8_t* codes, uint8_t* scales, uint64_t row,
                                           uint64_t blk) {
  const uint64_t k0 = blk * kMxBlock;
  const uint64_t k1 = block_end(k0, kMxBlock, p.cols);
  const float amax = input_amax(in, p.input, p.cols, row, k0, k1);
  const uint8_t byte = fp4::mx_scale_floor_e2m1(amax);
  // Z41 (planted, vllm-project/compressed-tensors #538): the scale stored with bias 125 (127 +
  // floor(log2(scale)) - 2), a quarter of the scale the payload was quantized with, to every
  // reader of standard E8M0; the NaN byte kept, the bottom two clamped at 0.
  const bool bias125 = (p.faults & kernel_fault::kE8m0Bias125) != 0 && byte != 0xFFu;
  scales[row * ceil_div(p.cols, kMxBlock) + blk] =
      bias125 ? static_cast<uint8_t>(byte >= 2u ? byte - 2u : 0u) : byte;
  const float rcp = bits::e8m0_reciprocal(byte);
  const bool ties_away = (p.faults & kernel_fault::kE2m1TiesAway) != 0;  // Z32
  for (uint64_t k = k0; k < k1; k += 2) {
    uint8_t pair[2] = {0, 0};
    for (uint64_t j = 0; j < 2 && k + j < k1 && byte != 0xFFu; ++j) {
      const float v = load_input(in, p.input, row * p.cols + k + j);
      pair[j] = fp4::encode_e2m1(bits::mul(v, rcp), ties_away, false);
    }
    fp4_store_pair(codes, p.cols, row, k, pair[0], pair[1], p.faults);
  }
}

// E4M3 of a block-scale value: RNE, saturating, NaN -> 0x7F (torch .to(float8_e4m3fn) after
// TE's clamp). Z36 (planted): without the 448 clamp, as torch casts an unclamped value: above 464
// it rounds onto the NaN code 0x7F (NVIDIA/Model-Optimizer #1397).
MXGATE_HD inline uint8_t nvfp4_scale_byte(float dec, bool unclamped) {
  if (unclamped && !bits::is_nan(dec) && bits::abs_f32(dec) > 464.0f) return 0x7Fu;
  return bits::encode_e4m3fn(dec, false, false);
}

// NVFP4, TE's reference quantizer 1x16 (te_nvfp4_ref; docs/fp4.md §6.1), every fp32 rounding:
//   ge = min(fl(2688 / amax_t), FLT_MAX), 1 when 0;  gd = fl(1 / ge)
//   dec = E4M3(clamp(min(fl(vec_max * fl(ge * fl(1/6))), FLT_MAX), 448))
//   enc = min(fl(1 / fl(decode(dec) * gd)), FLT_MAX)
//   q = E2M1(clamp(fl(x * enc), 6)), RNE, NaN -> +0, -0.0 -> +0
// vec_max is the amax of the 16-block, NaN-propagating (torch.amax). Planted: Z34 takes vec_max
// over the 32 elements around the block (MLX #3557); Z36 replaces a zero vec_max by 1 and casts
// without the clamp (Model-Optimizer #1397).
MXGATE_HD inline void quantize_nvfp4_block(const Fp4QuantizeParams& p, const void* in,
                                           const void* global, uint8_t* codes, uint8_t* scales,
                                           uint64_t row, uint64_t blk) {
  const float amax_t = fp4_global_amax(p, global);
  float ge = fp4::min_flt_max(fp4::div(fp4::kE4m3Max * fp4::kE2m1Max, amax_t));
  if (ge == 0.0f) ge = 1.0f;
  const float gd = fp4::div(1.0f, ge);
  const float inv6 = fp4::div(1.0f, fp4::kE2m1Max);
  const uint64_t k0 = blk * kNvfp4Block;
  const uint64_t k1 = block_end(k0, kNvfp4Block, p.cols);
  const bool amax32 = (p.faults & kernel_fault::kNvfp4Amax32) != 0;
  const uint64_t a0 = amax32 ? k0 / kMxBlock * kMxBlock : k0;
  const uint64_t a1 = amax32 ? block_end(a0, kMxBlock, p.cols) : k1;
  float vec_max = input_amax(in, p.input, p.cols, row, a0, a1);
  const bool zero_fault = (p.faults & kernel_fault::kZeroAmaxNanScale) != 0;
  if (zero_fault && vec_max == 0.0f) vec_max = 1.0f;
  float dec = fp4::min_flt_max(bits::mul(vec_max, bits::mul(ge, inv6)));
  if (!zero_fault) dec = fp4::clamp(dec, -fp4::kE4m3Max, fp4::kE4m3Max);
  const uint8_t byte = nvfp4_scale_byte(dec, zero_fault);
  const uint64_t scale_cols = ceil_div(p.cols, kNvfp4Block);
  scales[p.swizzled_scales ? fp4::swizzle_128x4_offset(row, blk, scale_cols)
                           : row * scale_cols + blk] = byte;
  const float enc = fp4::min_flt_max(fp4::div(1.0f, bits::mul(bits::decode_e4m3fn(byte), gd)));
  for (uint64_t k = k0; k < k1; k += 2) {
    uint8_t pair[2] = {0, 0};
    for (uint64_t j = 0; j < 2 && k + j < k1; ++j) {
      const float v = load_input(in, p.input, row * p.cols + k + j);
      const float q = fp4::clamp(bits::mul(v, enc), -fp4::kE2m1Max, fp4::kE2m1Max);
      pair[j] = fp4::encode_e2m1(q, false, true);
    }
    fp4_store_pair(codes, p.cols, row, k, pair[0], pair[1], p.faults);
  }
}

// Element i of an FP4 dequantization (row-major scales): MXFP4 fl(code * 2^(byte - 127)) with the
// OCP E8M0 rule; NVFP4 fl(fl(code * scale) * global) (code * scale is exact). bf16: that fp32
// rounded once more (docs/fp4.md §6.6).
template <bool kNvfp4>
MXGATE_HD inline void dequant_fp4_element(const Fp4DequantParams& p, const uint8_t* codes,
                                          const uint8_t* scales, const float* global, void* out,
                                          uint64_t i) {
  const uint64_t row = i / p.cols;
  const uint64_t col = i % p.cols;
  const float x = fp4::decode_e2m1(fp4::nibble(codes + row * ((p.cols + 1) / 2), col));
  float y;
  const uint64_t ld = p.scales_ld;  // 0: the grid's column count
  if (!kNvfp4) {
    const uint8_t s = scales[row * (ld != 0 ? ld : ceil_div(p.cols, kMxBlock)) + col / kMxBlock];
    y = bits::mul(x, bits::decode_e8m0(s, false));
  } else {
    const uint8_t s =
        scales[row * (ld != 0 ? ld : ceil_div(p.cols, kNvfp4Block)) + col / kNvfp4Block];
    y = bits::mul(bits::mul(x, bits::decode_e4m3fn(s)), global[0]);
  }
  if (p.out == OutDtype::kBf16) {
    static_cast<uint16_t*>(out)[i] = bits::bf16_rne(y);
  } else {
    static_cast<float*>(out)[i] = y;
  }
}

}  // namespace mxgate::gpu
