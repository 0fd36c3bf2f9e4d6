// Bit-level pieces of the FP4 kernels, shared by the host models (g++) and the device kernels
// (hipcc, nvcc): E2M1 decode / encode, nibble packing, E4M3 block-scale decode, the OCP FLOOR
// scale with the E2M1 emax, the 128x4 scale swizzle, and fp32 min / clamp with torch's NaN rules.
// Written from docs/fp4.md §1, §4.1, §5.1, §6.1, §7.1; no code from reference/.
#pragma once

#include <stdint.h>

#include "common/blocks.h"
#include "gpu/kernels/bits.h"

namespace mxgate::gpu::fp4 {

inline constexpr float kFltMax = 3.40282346638528859812e+38f;
inline constexpr float kE2m1Max = 6.0f;
inline constexpr float kE4m3Max = 448.0f;

// E2M1 s.ee.m, bias 1 (docs/fp4.md §1): exponent 0 is m * 0.5, else (2 + m) * 2^(e - 2).
MXGATE_HD inline float decode_e2m1(uint8_t code) {
  const uint32_t e = (code >> 1) & 3u;
  const uint32_t m = code & 1u;
  const float mag = e == 0 ? (m != 0 ? 0.5f : 0.0f)
                           : static_cast<float>(2u + m) * (e == 1 ? 0.5f : (e == 2 ? 1.0f : 2.0f));
  return (code & 8u) != 0 ? -mag : mag;
}

// fp32 -> E2M1, saturating at 6. Round to nearest on the exact value: the seven midpoints between
// the magnitudes 0 .5 1 1.5 2 3 4 6 are fp32 values, so comparing with them rounds correctly.
// Nearest-even sends a midpoint to the even code (0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2,
// 2.5 -> 2, 3.5 -> 4, 5 -> 4); `ties_away` (Z32, AITER before ROCm/aiter#3992) sends every one
// up. NaN gives +0 (no comparison holds: TE's cast_to_fp4x2, docs/fp4.md §2.2; the MX kernel never
// casts a NaN). `neg_zero_to_pos`: an exactly -0.0 input gives +0 (TE's reference); other inputs
// keep their sign, so a negative value that rounds to zero gives 0x8.
MXGATE_HD inline uint8_t encode_e2m1(float x, bool ties_away, bool neg_zero_to_pos) {
  if (bits::is_nan(x)) return 0;
  const uint8_t sign = static_cast<uint8_t>((bits::f32_bits(x) >> 31) << 3);
  const float a = bits::abs_f32(x);
  if (a == 0.0f && neg_zero_to_pos) return 0;
  // Midpoint i lies between codes i and i + 1; the tie goes up when code i is odd (RNE) or always.
  const float mid[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  uint8_t code = 0;
  for (int i = 0; i < 7; ++i) {
    const bool up_on_tie = ties_away || (i & 1) != 0;
    if (a > mid[i] || (up_on_tie && a == mid[i])) code = static_cast<uint8_t>(i + 1);
  }
  return static_cast<uint8_t>(sign | code);
}

// The code of element k of a packed row (element 2i in the low nibble, docs/fp4.md §5.1).
MXGATE_HD inline uint8_t nibble(const uint8_t* row, uint64_t k) {
  const uint8_t b = row[k / 2];
  return (k & 1u) != 0 ? static_cast<uint8_t>(b >> 4) : static_cast<uint8_t>(b & 0xFu);
}

// One packed byte of elements (2i, 2i+1). Z31 (planted): the two nibbles swapped.
MXGATE_HD inline uint8_t pack_pair(uint8_t even, uint8_t odd, bool swapped) {
  return swapped ? static_cast<uint8_t>((even << 4) | (odd & 0xFu))
                 : static_cast<uint8_t>((odd << 4) | (even & 0xFu));
}

// E4M3 block scale (NVFP4, used as unsigned: docs/fp4.md §6). An exponent field of 0 is a
// subnormal m * 2^-9 (0x01 = 2^-9, 0x07 = 7 * 2^-9). Z33 (planted, b12x #388): the normal formula
// (1 + m/8) * 2^(0 - 7) applied to it as well.
MXGATE_HD inline float decode_e4m3_scale(uint8_t b, bool subnormal_as_normal,
                                         bool top_binade_special = false) {
  if (top_binade_special && ((b >> 3) & 0xFu) == 0xFu) {
    // Z48 (planted): IEEE semantics on the top exponent field (Inf for mantissa 0, NaN else),
    // which the finite-only E4M3FN / UE4M3 does not have: 256 .. 448 read as Inf or NaN.
    const float v = (b & 7u) == 0 ? bits::f32_from(0x7F800000u) : bits::f32_from(0x7FC00000u);
    return (b & 0x80u) != 0 ? -v : v;
  }
  if (subnormal_as_normal && ((b >> 3) & 0xFu) == 0) {
    const float v = static_cast<float>(8u + (b & 7u)) * 0.0009765625f;  // (8 + m) * 2^-10
    return (b & 0x80u) != 0 ? -v : v;
  }
  return bits::decode_e4m3fn(b);
}

// OCP MX FLOOR for E2M1 (emax 2, docs/fp4.md §4.1).
MXGATE_HD inline uint8_t mx_scale_floor_e2m1(float amax) {
  return bits::mx_scale_floor_emax(amax, 2);
}

// Offset of scale (r, c) of a grid with `cols` columns in the NVIDIA 128x4 swizzle
// (docs/fp4.md §7.1): 512-byte tiles of 128 rows x 4 columns, tile-row major over the padded
// grid; inside a tile row r sits in lane r % 32 (16 bytes apart) and sub-block (r % 128) / 32.
MXGATE_HD inline uint64_t swizzle_128x4_offset(uint64_t r, uint64_t c, uint64_t cols) {
  const uint64_t tile = (r / 128) * ((cols + 3) / 4) + c / 4;
  return tile * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4;
}

// Bytes of a rows x cols grid in the 128x4 swizzle: rows padded to 128, columns to 4.
MXGATE_HD inline uint64_t swizzle_128x4_bytes(uint64_t rows, uint64_t cols) {
  return (rows + 127) / 128 * 128 * ((cols + 3) / 4 * 4);
}

// fl32(a / b), correctly rounded on every compiler (nvcc's __fdiv_rn is never approximated).
MXGATE_HD inline float div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// torch.min(x, FLT_MAX): NaN propagates.
MXGATE_HD inline float min_flt_max(float x) { return bits::is_nan(x) || x < kFltMax ? x : kFltMax; }

// torch.clamp(x, lo, hi): NaN stays NaN.
MXGATE_HD inline float clamp(float x, float lo, float hi) {
  if (bits::is_nan(x)) return x;
  return x < lo ? lo : (x > hi ? hi : x);
}

}  // namespace mxgate::gpu::fp4
