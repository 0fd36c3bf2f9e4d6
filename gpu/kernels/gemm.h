// Per-output-element bodies of every GEMM (host model loop; one device thread per element).
// C (m x n) = A (m x k) * B (n x k)^T, fp32 accumulation. Each body's comment DECLARES its
// summation order, bit for bit, as reference/gemm_oracle.h's ordered_gemm emulates it; the
// same order is published as data in contract.cpp. Every operation is rounded separately
// (bits::mul / bits::add, no FMA); acc and every partial start at +0.0.
#pragma once

#include "gpu/kernels/bits.h"
#include "gpu/kernels/params.h"
#include "gpu/kernels/preshuffle.h"

namespace mxgate::gpu {

MXGATE_HD inline void store_output(const GemmParams& p, void* out, uint64_t i, float acc) {
  if (p.out == OutDtype::kBf16) {
    static_cast<uint16_t*>(out)[i] = bits::bf16_rne(acc);
  } else {
    static_cast<float*>(out)[i] = acc;
  }
}

// gemm_mx_dot_scaled (tl.dot_scaled-style MXFP8 x MXFP8, formats.md §4): A, B E4M3FN codes
// row-major; scales E8M0 row-major (m x K/32), (n x K/32), decoded correctly. K is walked in
// UNMASKED tiles of 128 (the Triton BLOCK_K), so K % 128 != 0 reads past K exactly as the
// original does. Order: for each 32-block kb of each tile, in order:
//   part = sum_{k in kb, increasing} fl(a*b);  acc = fl(acc + fl(fl(part*sa)*sb))
// == ordered_gemm OrderModel{32, kPerPartial}.
MXGATE_HD inline float gemm_mx_dot_scaled_element(const GemmParams& p, const uint8_t* a,
                                                  const uint8_t* sa, const uint8_t* b,
                                                  const uint8_t* sb, uint64_t m, uint64_t n) {
  const uint64_t scale_cols = (p.k + 31) / 32;
  float acc = 0.0f;
  for (uint64_t k0 = 0; k0 < p.k; k0 += 128) {
    for (uint64_t kb = k0 / 32; kb < k0 / 32 + 4; ++kb) {
      float part = 0.0f;
      for (uint64_t k = kb * 32; k < kb * 32 + 32; ++k) {
        part = bits::add(part, bits::mul(bits::decode_e4m3fn(a[m * p.k + k]),
                                         bits::decode_e4m3fn(b[n * p.k + k])));
      }
      const float s_a = bits::decode_e8m0(sa[m * scale_cols + kb], false);
      const float s_b = bits::decode_e8m0(sb[n * scale_cols + kb], false);
      acc = bits::add(acc, bits::mul(bits::mul(part, s_a), s_b));
    }
  }
  return acc;
}

// gemm_mx_dequant (the MXFP8 path for any K % 32 == 0): same operands as dot_scaled, K masked.
// Order: every product scaled on its own, t = fl(fl(fl(a*b)*sa)*sb); for each 32-block in order:
//   part = sum_{k increasing} t;  acc = fl(acc + part)
// == ordered_gemm OrderModel{32, kPerProduct}.
MXGATE_HD inline float gemm_mx_dequant_element(const GemmParams& p, const uint8_t* a,
                                               const uint8_t* sa, const uint8_t* b,
                                               const uint8_t* sb, uint64_t m, uint64_t n) {
  const uint64_t scale_cols = (p.k + 31) / 32;
  float acc = 0.0f;
  for (uint64_t k0 = 0; k0 < p.k; k0 += 32) {
    const float s_a = bits::decode_e8m0(sa[m * scale_cols + k0 / 32], false);
    const float s_b = bits::decode_e8m0(sb[n * scale_cols + k0 / 32], false);
    const uint64_t k1 = k0 + 32 < p.k ? k0 + 32 : p.k;
    float part = 0.0f;
    for (uint64_t k = k0; k < k1; ++k) {
      const float ab =
          bits::mul(bits::decode_e4m3fn(a[m * p.k + k]), bits::decode_e4m3fn(b[n * p.k + k]));
      part = bits::add(part, bits::mul(bits::mul(ab, s_a), s_b));
    }
    acc = bits::add(acc, part);
  }
  return acc;
}

// The two DeepSeek-style block-scale GEMMs (research/layouts.md §2): A E4M3FN (m x K) row-major,
// Bs fp32 (ceil(n/128) x Kb) row-major, Kb = ceil(K/128), K masked. They differ only in where
// As[m, kb] and B[n, k] live:
//   gemm_blockscale:             As row-major (m*Kb + kb), B plain row-major (n*K + k)
//   gemm_blockscale_bpreshuffle: As column-major (kb*M + m), B AITER (16,16) preshuffled
// Order: for each 128-block kb in order:
//   part = sum_{k increasing} fl(a*b);  acc = fl(acc + fl(fl(part*As)*Bs))
// == ordered_gemm OrderModel{128, kPerPartial} (fp8 products are exact in fp32).
template <bool kPreshuffled>
MXGATE_HD inline float gemm_blockscale_element(const GemmParams& p, const uint8_t* a,
                                               const float* as, const uint8_t* b, const float* bs,
                                               uint64_t m, uint64_t n) {
  const uint64_t kb_count = (p.k + 127) / 128;
  float acc = 0.0f;
  for (uint64_t kb = 0; kb < kb_count; ++kb) {
    const uint64_t k1 = kb * 128 + 128 < p.k ? kb * 128 + 128 : p.k;
    float part = 0.0f;
    for (uint64_t k = kb * 128; k < k1; ++k) {
      const uint8_t bc = kPreshuffled ? b[preshuffled_offset(p.k, n, k)] : b[n * p.k + k];
      part =
          bits::add(part, bits::mul(bits::decode_e4m3fn(a[m * p.k + k]), bits::decode_e4m3fn(bc)));
    }
    const float s_a = kPreshuffled ? as[kb * p.m + m] : as[m * kb_count + kb];
    const float s_b = bs[(n / 128) * kb_count + kb];
    acc = bits::add(acc, bits::mul(bits::mul(part, s_a), s_b));
  }
  return acc;
}

// gemm_bf16: A, B bf16 bits row-major. Order: one partial over all K, increasing k,
//   part = sum fl(a*b) (bf16 products are exact in fp32);  acc = fl(+0 + part)
// == ordered_gemm OrderModel{0, kPerPartial} without scales.
MXGATE_HD inline float gemm_bf16_element(const GemmParams& p, const uint16_t* a, const uint16_t* b,
                                         uint64_t m, uint64_t n) {
  float part = 0.0f;
  for (uint64_t k = 0; k < p.k; ++k) {
    part = bits::add(
        part, bits::mul(bits::bf16_to_f32(a[m * p.k + k]), bits::bf16_to_f32(b[n * p.k + k])));
  }
  return bits::add(0.0f, part);
}

}  // namespace mxgate::gpu
