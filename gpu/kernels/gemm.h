// Per-output-element bodies of every GEMM (host model loop; one device thread per element).
// C (m x n) = A (m x k) * B (n x k)^T, fp32 accumulation. Each body's comment DECLARES its
// summation order, bit for bit, as reference/gemm_oracle.h's ordered_gemm emulates it; the
// same order is published as data in contract.cpp. Every operation is rounded separately
// (bits::mul / bits::add, no FMA); acc and every partial start at +0.0.
#pragma once

#include "common/blocks.h"
#include "gpu/kernels/bits.h"
#include "gpu/kernels/mfma_cdna3.h"
#include "gpu/kernels/params.h"
#include "gpu/kernels/preshuffle.h"

namespace mxgate::gpu {

// The output conversion of every GEMM: fp32 as is, bf16 RNE, or FP8 (plugin.h revision 4, the
// torch._scaled_mm / cuBLASLt epilogue): fl32(acc * scale_result), scale_result the 1 x 1 fp32
// out_scale, cast to E4M3FN with RNE, finite overflow and Inf saturating to +-448 and NaN to
// 0x7F (cuda_satfinite, the contract's element_convention). Z45 (planted,
// pytorch/pytorch#190449: the FP8-output path of torch._scaled_mm ignored scale_result): the
// scale is never read, cast(acc) is written.
MXGATE_HD inline void store_output(const GemmParams& p, void* out, uint64_t i, float acc) {
  if (p.out == OutDtype::kBf16) {
    static_cast<uint16_t*>(out)[i] = bits::bf16_rne(acc);
  } else if (p.out == OutDtype::kE4m3fn) {
    const float v =
        (p.faults & kernel_fault::kScaleResultDropped) ? acc : bits::mul(acc, *p.out_scale);
    static_cast<uint8_t*>(out)[i] = bits::encode_e4m3fn(v, false, false);
  } else {
    static_cast<float*>(out)[i] = acc;
  }
}

// The leading dimension of a row-major scale grid with `cols` columns whose tensor says `ld`
// (0: cols). Z46 (planted, vllm-project/vllm #54521): the layout inferred from the shape, the
// tensor's stride ignored, so a padded or strided view is read as if it were contiguous.
MXGATE_HD inline uint64_t scale_row_ld(const GemmParams& p, uint64_t ld, uint64_t cols) {
  return ld == 0 || (p.faults & kernel_fault::kScaleLdIgnored) ? cols : ld;
}

// Where an MX GEMM finds scale (row r, 32-block c) of A or B: row-major (r * ld + c, ld the
// operand's sa_ld / sb_ld, ceil(K/32) unless set), or the NVIDIA 128x4 swizzle (docs/layouts.md
// §4): 512-byte tiles of 128 rows x 4 columns, tiles row-major over the padded grid; inside a tile
// row r sits in lane r % 32 (16 bytes apart) and sub-block r / 32 (4 bytes apart). Z13 (planted)
// reads a swizzled buffer as row-major. Z47 (planted, vllm-project/vllm #50084: a writer and a
// reader of one scale tensor that disagree on the layout per architecture) reads the tile with
// another architecture's order, lane and sub-block strides exchanged (row r at (r % 32) * 4 +
// ((r % 128) / 32) * 128 + c % 4): row 0 reads right, every other row reads another row's bytes.
MXGATE_HD inline uint64_t mx_scale_index(const GemmParams& p, uint64_t r, uint64_t c, uint64_t ld) {
  const uint64_t cols = ceil_div(p.k, kMxBlock);
  if (!p.mx_scales_swizzled || (p.faults & kernel_fault::kSwizzleReadLinear)) {
    return r * (p.mx_scales_swizzled ? cols : scale_row_ld(p, ld, cols)) + c;
  }
  const uint64_t tiles_per_row = (cols + 3) / 4;
  const uint64_t tile = (r / 128) * tiles_per_row + c / 4;
  const uint64_t lane = r % 32;
  const uint64_t sub = (r % 128) / 32;
  if (p.faults & kernel_fault::kSwizzleOtherArch) return tile * 512 + lane * 4 + sub * 128 + c % 4;
  return tile * 512 + lane * 16 + sub * 4 + c % 4;
}

// The E8M0 byte of an absent scale operand (tl.dot_scaled with rhs_scale=None): 127 = 2^0, the
// unit scale. Z27 (planted): byte 1 (2^-126), the default triton-ascend #2280 wrote.
MXGATE_HD inline uint8_t default_mx_scale_byte(const GemmParams& p) {
  return (p.faults & kernel_fault::kDefaultScaleByteOne) ? 1u : 127u;
}

// The value of an MX GEMM's E8M0 scale byte (OCP MX: 2^(byte - 127), 0xFF NaN), the one decode
// both MX GEMMs use. Z50 (planted, llvm/llvm-project#214919): 0xFF decoded as +Inf (the exponent
// field read as fp32's, where all ones with a zero mantissa is Inf). Z51 (planted): 0xFF decoded
// as 2^127, the largest finite scale (a decode that clamps the byte to 0xFE).
MXGATE_HD inline float decode_mx_scale(const GemmParams& p, uint8_t byte) {
  if (byte == 0xFFu && (p.faults & kernel_fault::kE8m0NanAsInf)) return bits::f32_from(0x7F800000u);
  if (byte == 0xFFu && (p.faults & kernel_fault::kE8m0NanAsMax)) return bits::f32_from(0x7F000000u);
  return bits::decode_e8m0(byte, false);
}

// gemm_mx_dot_scaled (tl.dot_scaled-style MXFP8 x MXFP8, docs/formats.md §4): A, B E4M3FN codes
// row-major; scales E8M0 row-major (m x K/32), (n x K/32), decoded correctly. K is walked in
// UNMASKED tiles of 128 (the Triton BLOCK_K), so K % 128 != 0 reads past K exactly as the
// original does. Order: for each 32-block kb of each tile, in order:
//   part = sum_{k in kb, increasing} fl(a*b);  acc = fl(acc + fl(fl(part*sa)*sb))
// == ordered_gemm OrderModel{32, kPerPartial}.
MXGATE_HD inline float gemm_mx_dot_scaled_element(const GemmParams& p, const uint8_t* a,
                                                  const uint8_t* sa, const uint8_t* b,
                                                  const uint8_t* sb, uint64_t m, uint64_t n) {
  float acc = 0.0f;
  for (uint64_t k0 = 0; k0 < p.k; k0 += kBlockK) {
    for (uint64_t kb = k0 / kMxBlock; kb < (k0 + kBlockK) / kMxBlock; ++kb) {
      float part = 0.0f;
      for (uint64_t k = kb * kMxBlock; k < (kb + 1) * kMxBlock; ++k) {
        part = bits::add(part, bits::mul(bits::decode_e4m3fn(a[m * p.k + k]),
                                         bits::decode_e4m3fn(b[n * p.k + k])));
      }
      const float s_a = decode_mx_scale(p, sa[mx_scale_index(p, m, kb, p.sa_ld)]);
      const float s_b = decode_mx_scale(
          p, sb != nullptr ? sb[mx_scale_index(p, n, kb, p.sb_ld)] : default_mx_scale_byte(p));
      acc = bits::add(acc, bits::mul(bits::mul(part, s_a), s_b));
    }
  }
  return acc;
}

// gemm_mx_dequant (the MXFP8 path for any K % 32 == 0): same operands as dot_scaled, K masked.
// Order: every product scaled on its own, t = fl(fl(fl(a*b)*sa)*sb); for each 32-block in order:
//   part = sum_{k increasing} t;  acc = fl(acc + part)
// == ordered_gemm OrderModel{32, kPerProduct}.
// sb_tail (grouped_gemm_mx_contiguous under Z58, else nullptr): the B scales the K blocks of the
// last 128-wide K tile read instead of sb, when K spans more than one tile.
MXGATE_HD inline float gemm_mx_dequant_element(const GemmParams& p, const uint8_t* a,
                                               const uint8_t* sa, const uint8_t* b,
                                               const uint8_t* sb, uint64_t m, uint64_t n,
                                               const uint8_t* sb_tail = nullptr) {
  const uint64_t scale_cols = ceil_div(p.k, kMxBlock);
  // Z10 (planted): with swizzled scales, K is walked to the padded scale width (4 columns) with
  // masked (zero) data but unmasked scales, so a padded scale byte reaches the sum (0 * NaN).
  // Z28 (planted): the same walk in K tiles of 128 (4 scale columns) in every layout: the K-tail
  // tile's scale loads are unmasked and read past the row (the next row, or whatever the
  // allocator left after the tensor: Triton #10772, vLLM #47323).
  const bool pad = (p.mx_scales_swizzled && (p.faults & kernel_fault::kReadScalePadding)) ||
                   (p.faults & kernel_fault::kKTailScaleUnmasked);
  // Z40 (planted, AMD-AGI/Primus-Turbo #383): K padded to the 256-wide K tile of a scaled MFMA,
  // the padded data read as they lie (unmasked: the rest of the row, the next row, or whatever
  // follows the tensor) and the padded E8M0 scale bytes filled with 127 (1.0) where the
  // quantizer's padding is 0x00 (2^-127, which flushes any finite padded product to zero): wrong
  // whenever K is not a multiple of 256.
  const bool pad256 = (p.faults & kernel_fault::kScalePad127) != 0;
  const uint64_t kb_end =
      pad256 ? (scale_cols + 7) / 8 * 8 : (pad ? (scale_cols + 3) / 4 * 4 : scale_cols);
  // Z39 (planted, triton-lang/triton #11624): an E8M0 0x00 scale decoded as +0, not 2^-127.
  const auto scale = [&p](uint8_t byte) {
    return byte == 0 && (p.faults & kernel_fault::kE8m0ZeroAsZero) ? 0.0f
                                                                   : decode_mx_scale(p, byte);
  };
  const uint64_t tail_from = sb_tail != nullptr && scale_cols > kBlockK / kMxBlock
                                 ? (scale_cols - 1) / (kBlockK / kMxBlock) * (kBlockK / kMxBlock)
                                 : kb_end;
  float acc = 0.0f;
  for (uint64_t kb = 0; kb < kb_end; ++kb) {
    const bool padded = pad256 && kb >= scale_cols;
    const uint8_t* sbk = kb >= tail_from ? sb_tail : sb;
    const float s_a = padded ? 1.0f : scale(sa[mx_scale_index(p, m, kb, p.sa_ld)]);
    const float s_b = padded ? 1.0f : scale(sbk[mx_scale_index(p, n, kb, p.sb_ld)]);
    const uint64_t k0 = kb * kMxBlock;
    const uint64_t k1 = pad || pad256 || k0 + kMxBlock < p.k ? k0 + kMxBlock : p.k;
    float part = 0.0f;
    for (uint64_t k = k0; k < k1; ++k) {
      const float ab = k < p.k || pad256 ? bits::mul(bits::decode_e4m3fn(a[m * p.k + k]),
                                                     bits::decode_e4m3fn(b[n * p.k + k]))
                                         : 0.0f;
      part = bits::add(part, bits::mul(bits::mul(ab, s_a), s_b));
    }
    acc = bits::add(acc, part);
  }
  return acc;
}

// The DeepSeek-style block-scale GEMMs (docs/layouts.md §2.1): A E4M3FN (m x K) row-major,
// Bs fp32 (ceil(n/128) x Kb) row-major, Kb = ceil(K/128), K masked. They differ only in where
// As[m, kb] and B[n, k] live:
//   gemm_blockscale:             As row-major (m*Kb + kb), B plain row-major (n*K + k)
//   gemm_blockscale_bpreshuffle: As column-major (kb*M + m), B AITER (16,16) preshuffled
//   gemm_blockscale_ue8m0:       as gemm_blockscale, scales through ue8m0_scale above
//   gemm_blockscale_fnuz, gemm_blockscale_fnuz_bpreshuffle: as gemm_blockscale and
//                                gemm_blockscale_bpreshuffle, FNUZ codes and MFMA steps (below)
// Order: for each 128-block kb in order:
//   part = sum_{k increasing} fl(a*b);  acc = fl(acc + fl(fl(part*As)*Bs))
// == ordered_gemm OrderModel{128, kPerPartial} (fp8 products are exact in fp32).
// The FNUZ GEMMs (AITER's MI300 path): as the E4M3FN ones with A and B FNUZ codes
// (E4M3FNUZ or E5M2FNUZ, p.a_format / p.b_format), and part of each 128-block summed by the CDNA3
// MFMA: from part = +0, one mfma_cdna3.h step per 16 consecutive k (the last one shorter) ==
// simulate_gemm with cdna3_fp8_mfma:chunk_k=128; acc as above.
// gemm_blockscale_ue8m0 (DeepGEMM's SM100 recipe, docs/formats.md §5.2): as gemm_blockscale,
// but its fp32 scales are consumed as UE8M0, four to a 32-bit word along K: each scale is the
// E8M0 value of its exponent byte ((bits >> 23) & 0xFF; sign and mantissa dropped, 0xFF NaN).
// Z22 (planted): the word packed by shift-and-OR without masking (DeepGEMM #337), so the mantissa
// bits of scale j + 1.. leak into byte j.
MXGATE_HD inline float ue8m0_scale(const float* row, uint64_t count, uint64_t kb, bool leak) {
  if (!leak) {
    return bits::decode_e8m0(static_cast<uint8_t>((bits::f32_bits(row[kb]) >> 23) & 0xFFu), false);
  }
  const uint64_t w0 = kb / 4 * 4;
  uint32_t v[4];
  for (uint64_t j = 0; j < 4; ++j) v[j] = w0 + j < count ? bits::f32_bits(row[w0 + j]) : 0u;
  const uint32_t packed = (v[0] >> 23) | (v[1] >> 15) | (v[2] >> 7) | (v[3] << 1);
  return bits::decode_e8m0(static_cast<uint8_t>((packed >> (8 * (kb % 4))) & 0xFFu), false);
}

// Rows per M wave of the block GEMMs (their contracts' m_tile): CUTLASS / CK process M in 128-row
// tiles, one wave after another.
inline constexpr uint64_t kGemmWaveRows = 128;

// One FNUZ operand code (exact). Z38 (planted): decoded as the OCP format of the same widths
// (E4M3FN, E5M2: bias 7 and 15 for 8 and 16), so every value is doubled and 0x80 reads as -0.
MXGATE_HD inline float decode_fnuz_operand(const GemmParams& p, Fp8Format f, uint8_t c) {
  const bool e5m2 = f == Fp8Format::kE5m2fnuz;
  if (p.faults & kernel_fault::kFnuzDecodedAsOcp) {
    return e5m2 ? bits::decode_e5m2(c) : bits::decode_e4m3fn(c);
  }
  return bits::decode_fnuz(c, e5m2);
}

template <bool kPreshuffled, bool kUe8m0 = false, bool kFnuzMfma = false>
MXGATE_HD inline float gemm_blockscale_element(const GemmParams& p, const uint8_t* a,
                                               const float* as, const uint8_t* b, const float* bs,
                                               uint64_t m, uint64_t n) {
  const uint64_t kb_count = ceil_div(p.k, kBlockK);
  // Z9 (planted): the loop runs over floor(K/128) blocks and drops the partial last one.
  const uint64_t kb_end = (p.faults & kernel_fault::kDropTailBlock) ? p.k / kBlockK : kb_count;
  // Z12 (planted): a TMA-aligned column-major As (leading dimension as_ld) read with stride M.
  const uint64_t as_ld = p.as_ld == 0 || (p.faults & kernel_fault::kIgnoreAsStride) ? p.m : p.as_ld;
  // Row of bs: the global 128-row block of this shard's row n, relative to the shard's first
  // block. Z16 (planted): n / 128, the block index as if the shard started on a block boundary.
  const uint64_t b_row = (p.faults & kernel_fault::kShardBlockIndex)
                             ? n / kBlockK
                             : (p.n_offset + n) / kBlockK - p.n_offset / kBlockK;
  // Code rows of A and B at their leading dimensions (k unless set: a k-grouped group's K range).
  const uint64_t lda = p.a_ld == 0 ? p.k : p.a_ld;
  const uint64_t ldb = p.b_ld == 0 ? p.k : p.b_ld;
  float acc = 0.0f;
  for (uint64_t kb = 0; kb < kb_end; ++kb) {
    const uint64_t k1 = (kb + 1) * kBlockK < p.k ? (kb + 1) * kBlockK : p.k;
    const auto b_code = [&](uint64_t k) {
      return kPreshuffled ? b[preshuffled_offset(p.k, n, k)] : b[n * ldb + k];
    };
    float part = 0.0f;
    if constexpr (kFnuzMfma) {
      for (uint64_t k0 = kb * kBlockK; k0 < k1; k0 += cdna3::kStepK) {
        float t[cdna3::kStepK];
        int count = 0;
        for (uint64_t k = k0; k < k1 && count < cdna3::kStepK; ++k) {
          t[count++] = bits::mul(decode_fnuz_operand(p, p.a_format, a[m * lda + k]),
                                 decode_fnuz_operand(p, p.b_format, b_code(k)));
        }
        part = cdna3::mfma_step(part, t, count);
      }
    } else {
      for (uint64_t k = kb * kBlockK; k < k1; ++k) {
        part = bits::add(
            part, bits::mul(bits::decode_e4m3fn(a[m * lda + k]), bits::decode_e4m3fn(b_code(k))));
      }
    }
    // Z17 (planted, gemm_blockscale_bpreshuffle): split-K in slices of one 128-block whose scale
    // lookup uses the slice-local block index, so every slice applies slice 0's scales (CUTLASS
    // #3537, #3615).
    const bool slice0 =
        kPreshuffled && !kFnuzMfma && (p.faults & kernel_fault::kSplitKSlice0Scales);
    // Z43 (planted, the row-major block GEMMs): the scale pointers are set once per output tile
    // and never advanced per 128-K block, so every K block applies block 0's A and B scales.
    const bool fixed = !kPreshuffled && (p.faults & kernel_fault::kScaleSliceFixed);
    const uint64_t ks = slice0 || fixed ? 0 : kb;
    const bool leak = (p.faults & kernel_fault::kUe8m0PackLeak) != 0;
    // A's scale of row r for this block, as this kernel reads it (row-major As and Bs at their
    // leading dimensions sa_ld / sb_ld, kb_count unless set).
    const uint64_t a_ld = scale_row_ld(p, p.sa_ld, kb_count);
    const uint64_t b_ld = scale_row_ld(p, p.sb_ld, kb_count);
    const auto a_scale = [&](uint64_t r) {
      if (kUe8m0) return ue8m0_scale(as + r * a_ld, kb_count, ks, leak);
      return kPreshuffled ? as[ks * as_ld + r] : as[r * a_ld + ks];
    };
    float s_a = a_scale(m);
    float s_b = kUe8m0 ? ue8m0_scale(bs + b_row * b_ld, kb_count, ks, leak) : bs[b_row * b_ld + ks];
    // Z44 (planted, every block GEMM): a MODEL of deepseek-ai/DeepGEMM #365, whose mechanism is not
    // public (the report gives the symptom: an expert with exactly 128 tokens, one all-zero
    // channel whose block scale is the placeholder 1e-30, a wrong result for the expert). The
    // model: a fast path for K == 128 (a single 128-K tile) folds the tile's scale product through
    // the smallest A scale of the rows of its 128-row M tile; when that scale is a placeholder
    // below 2^-64, every row of the tile is scaled by it instead of its own, so the rows that are
    // not zero come out ~1e-30 times their value. Deterministic here; the reported bug is not.
    if ((p.faults & kernel_fault::kOneTileMinScale) && p.k == kBlockK) {
      const uint64_t r0 = m / kGemmWaveRows * kGemmWaveRows;
      const uint64_t r1 = r0 + kGemmWaveRows < p.m ? r0 + kGemmWaveRows : p.m;
      float s_min = s_a;
      for (uint64_t r = r0; r < r1; ++r) {
        const float s = a_scale(r);
        if (s < s_min) s_min = s;
      }
      if (s_min < 0x1p-64f) s_a = s_min;
    }
    // Z49 (planted, every block GEMM but the UE8M0 one, which reads exponent bytes): fp32 scales
    // loaded with denormals-are-zero, so a subnormal scale (2^-127, the smallest E8M0 value as an
    // fp32) reads as +0 and its block contributes nothing.
    if (!kUe8m0 && (p.faults & kernel_fault::kFp32ScaleDaz)) {
      if ((bits::f32_bits(s_a) & 0x7F800000u) == 0) s_a = 0.0f;
      if ((bits::f32_bits(s_b) & 0x7F800000u) == 0) s_b = 0.0f;
    }
    // Z20 (planted, gemm_blockscale): a kernel that takes arbitrary fp32 scales keeps only each
    // one's exponent (the UE8M0 transform without its power-of-two precondition: SGLang #39193,
    // vLLM #49784).
    if (!kPreshuffled && !kUe8m0 && !kFnuzMfma &&
        (p.faults & kernel_fault::kTruncateScaleExponent)) {
      s_a = bits::f32_from(bits::f32_bits(s_a) & 0x7F800000u);
      s_b = bits::f32_from(bits::f32_bits(s_b) & 0x7F800000u);
    }
    // Z18 (planted, every block GEMM): the B-scale register is multiplied in place by the A scale
    // of each M wave, so a row of wave w > 0 gets the previous wave's A scale once more (CUTLASS
    // #3596).
    if ((p.faults & kernel_fault::kWaveReappliesAScale) && m >= kGemmWaveRows) {
      s_b = bits::mul(s_b, a_scale(m - kGemmWaveRows));
    }
    acc = bits::add(acc, bits::mul(bits::mul(part, s_a), s_b));
  }
  return acc;
}

// gemm_bf16: A, B bf16 bits row-major. Order: one partial over all K, increasing k,
//   part = sum fl(a*b) (bf16 products are exact in fp32);  acc = fl(+0 + part)
// == ordered_gemm OrderModel{0, kPerPartial} without scales.
// Z30 (planted): every other launch walks K downwards, so the same inputs give other bits on the
// next run (a schedule-dependent reduction order: DeepGEMM #365, #430; AITER #3261).
MXGATE_HD inline float gemm_bf16_element(const GemmParams& p, const uint16_t* a, const uint16_t* b,
                                         uint64_t m, uint64_t n) {
  const bool down = (p.faults & kernel_fault::kLaunchCounterOrder) && (p.launch_index & 1u);
  float part = 0.0f;
  for (uint64_t i = 0; i < p.k; ++i) {
    const uint64_t k = down ? p.k - 1 - i : i;
    part = bits::add(
        part, bits::mul(bits::bf16_to_f32(a[m * p.k + k]), bits::bf16_to_f32(b[n * p.k + k])));
  }
  return bits::add(0.0f, part);
}

}  // namespace mxgate::gpu
