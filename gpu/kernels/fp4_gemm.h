// Per-output-element bodies of the FP4 GEMMs (host model loop; one device thread per element).
// C (m x n) = A (m x k) * B (n x k)^T with fp32 accumulation. Each body's comment DECLARES its
// summation order bit for bit, as reference/gemm_oracle.h ordered_gemm emulates it and the kernel
// table publishes it (DeclaredOrder); every operation is rounded separately (no FMA), acc and
// every partial start at +0.0. Products of E2M1 x E2M1 and E4M3 x E2M1 codes are exact in fp32.
#pragma once

#include "common/blocks.h"
#include "gpu/kernels/bits.h"
#include "gpu/kernels/fp4_bits.h"
#include "gpu/kernels/params.h"

namespace mxgate::gpu {

// Element (row, k) of an operand: packed E2M1 (ceil(K/2) bytes per row) or E4M3FN (K bytes).
MXGATE_HD inline float fp4_operand(const Fp4GemmParams& p, const uint8_t* x, Fp4Operand format,
                                   uint64_t row, uint64_t k) {
  if (format == Fp4Operand::kE4m3fn) return bits::decode_e4m3fn(x[row * p.k + k]);
  return fp4::decode_e2m1(fp4::nibble(x + row * ((p.k + 1) / 2), k));
}

// Where scale (row r, K block c) of a grid with `cols` columns lives: row-major at leading
// dimension `ld` (the operand's sa_ld / sb_ld; 0: cols), or the 128x4 swizzle (docs/fp4.md §7.1)
// for both A's and B's grid.
MXGATE_HD inline uint64_t fp4_scale_index(const Fp4GemmParams& p, uint64_t r, uint64_t c,
                                          uint64_t cols, uint64_t ld) {
  return p.swizzled_scales ? fp4::swizzle_128x4_offset(r, c, cols) : r * (ld != 0 ? ld : cols) + c;
}

MXGATE_HD inline void fp4_store_output(const Fp4GemmParams& p, void* out, uint64_t i, float acc) {
  if (p.out == OutDtype::kBf16) {
    static_cast<uint16_t*>(out)[i] = bits::bf16_rne(acc);
  } else {
    static_cast<float*>(out)[i] = acc;
  }
}

// gemm_mxfp4 (MXFP4 x MXFP4, or MXFP8 x MXFP4 with A in E4M3FN): E8M0 scales of 1 x 32 decoded
// by the OCP rule. K is walked in tiles of 128 (four scale columns, a Triton BLOCK_K), the data
// masked at K. Order: for each 32-block kb in increasing kb:
//   part = sum_{k in kb, increasing} fl(a*b);  acc = fl(acc + fl(fl(part*sa)*sb))
// == ordered_gemm OrderModel{32, kPerPartial}. Z37 (planted, triton-lang/triton #10772): the
// scale columns of the last tile are read unmasked, so a tile past ceil(K/32) applies padding
// (0 * NaN where the swizzle's padding holds poison).
MXGATE_HD inline float gemm_mxfp4_element(const Fp4GemmParams& p, const uint8_t* a,
                                          const uint8_t* sa, const uint8_t* b, const uint8_t* sb,
                                          uint64_t m, uint64_t n) {
  const uint64_t kb_count = ceil_div(p.k, kMxBlock);
  const bool unmasked = (p.faults & kernel_fault::kScaleTailUnmasked) != 0;
  float acc = 0.0f;
  for (uint64_t k0 = 0; k0 < p.k; k0 += kBlockK) {
    for (uint64_t kb = k0 / kMxBlock; kb < (k0 + kBlockK) / kMxBlock; ++kb) {
      if (kb >= kb_count && !unmasked) break;
      float part = 0.0f;
      for (uint64_t k = kb * kMxBlock; k < (kb + 1) * kMxBlock && k < p.k; ++k) {
        part = bits::add(part, bits::mul(fp4_operand(p, a, p.a_format, m, k),
                                         fp4_operand(p, b, Fp4Operand::kE2m1, n, k)));
      }
      const float s_a = bits::decode_e8m0(sa[fp4_scale_index(p, m, kb, kb_count, p.sa_ld)], false);
      const float s_b = bits::decode_e8m0(sb[fp4_scale_index(p, n, kb, kb_count, p.sb_ld)], false);
      acc = bits::add(acc, bits::mul(bits::mul(part, s_a), s_b));
    }
  }
  return acc;
}

// gemm_nvfp4: A, B packed E2M1; E4M3 scales of 1 x 16 (fp4::decode_e4m3_scale; Z33 planted, b12x
// #388, decodes a subnormal byte with the normal formula); the global decode scales ga, gb (fp32)
// enter as the epilogue's alpha = fl(ga * gb) (docs/fp4.md §8). K masked. Order: for each
// 16-block kb in increasing kb:
//   part = sum_{k in kb, increasing} fl(a*b);  acc = fl(acc + fl(fl(part*sa)*sb))
// then C = fl(alpha * acc) == ordered_gemm OrderModel{16, kPerPartial} with problem.alpha.
MXGATE_HD inline float gemm_nvfp4_element(const Fp4GemmParams& p, const uint8_t* a,
                                          const uint8_t* sa, const uint8_t* b, const uint8_t* sb,
                                          const float* ga, const float* gb, uint64_t m,
                                          uint64_t n) {
  const uint64_t kb_count = ceil_div(p.k, kNvfp4Block);
  const bool normal = (p.faults & kernel_fault::kE4m3SubnormalAsNormal) != 0;
  // Z48 (planted, the defect of NVIDIA/cutlass #3602 on the UE4M3 scale): exponent field 15
  // decoded as Inf / NaN, so the largest scales (256 .. 448) poison their blocks.
  const bool top = (p.faults & kernel_fault::kUe4m3TopBinade) != 0;
  float acc = 0.0f;
  for (uint64_t kb = 0; kb < kb_count; ++kb) {
    float part = 0.0f;
    for (uint64_t k = kb * kNvfp4Block; k < (kb + 1) * kNvfp4Block && k < p.k; ++k) {
      part = bits::add(part, bits::mul(fp4_operand(p, a, Fp4Operand::kE2m1, m, k),
                                       fp4_operand(p, b, Fp4Operand::kE2m1, n, k)));
    }
    const float s_a =
        fp4::decode_e4m3_scale(sa[fp4_scale_index(p, m, kb, kb_count, p.sa_ld)], normal, top);
    const float s_b =
        fp4::decode_e4m3_scale(sb[fp4_scale_index(p, n, kb, kb_count, p.sb_ld)], normal, top);
    acc = bits::add(acc, bits::mul(bits::mul(part, s_a), s_b));
  }
  return bits::mul(bits::mul(ga[0], gb[0]), acc);
}

}  // namespace mxgate::gpu
