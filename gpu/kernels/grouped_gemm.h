// Per-output-element bodies of the grouped (mixture-of-experts) GEMMs: a group is a dense GEMM on
// a row range, so each body finds the group of its output row and runs the dense body of
// kernels/gemm.h on that group's rows of A (and their scales) and its expert's rows of B (and
// theirs), the pointers moved to the group's first row and the expert's first row. The summation
// order is therefore the dense kernel's, bit for bit (the contracts declare the same orders). The
// k-grouped body (the MoE wgrad) runs it on a group's K range instead, with one output per group.
// An element whose row belongs to no group (contiguous: past the last group; masked: past the
// expert's count) is never written: the body returns false. The host model loops over every
// element (gpu/host/models_grouped.cpp); a device thread would run one.
#pragma once

#include "gpu/kernels/gemm.h"
#include "gpu/kernels/params.h"

namespace mxgate::gpu {

// Rows [r0, r1) of A and out that group e owns.
struct GroupRows {
  uint64_t r0 = 0, r1 = 0;
};

MXGATE_HD inline GroupRows group_rows(const GroupedGemmParams& p, const uint32_t* offs,
                                      uint64_t e) {
  if (p.offsets == GroupedOffsets::kMaskedCounts) {
    const uint64_t max_m = p.g.m / p.groups;
    return {e * max_m, e * max_m + offs[e]};
  }
  if (p.offsets == GroupedOffsets::kStarts) {
    return {offs[e], e + 1 < p.groups ? offs[e + 1] : p.g.m};
  }
  return {e == 0 ? 0 : offs[e - 1], offs[e]};
}

// The group owning row r, or p.groups when none does.
MXGATE_HD inline uint64_t group_of_row(const GroupedGemmParams& p, const uint32_t* offs,
                                       uint64_t r) {
  for (uint64_t e = 0; e < p.groups; ++e) {
    const GroupRows g = group_rows(p, offs, e);
    if (r >= g.r0 && r < g.r1) return e;
  }
  return p.groups;
}

// The dense block GEMM of rows [r0, r0 + rows) of A with expert e's B: element (i, n).
MXGATE_HD inline float block_group_element(const GroupedGemmParams& p, const uint8_t* a,
                                           const float* as, const uint8_t* b, const float* bs,
                                           uint64_t r0, uint64_t rows, uint64_t e, uint64_t i,
                                           uint64_t n) {
  GemmParams q = p.g;
  q.m = rows;
  const uint64_t kb = ceil_div(q.k, kBlockK);
  const uint64_t a_ld = scale_row_ld(q, q.sa_ld, kb);
  const uint64_t b_ld = scale_row_ld(q, q.sb_ld, kb);
  return gemm_blockscale_element<false>(q, a + r0 * q.k, as + r0 * a_ld, b + e * q.n * q.k,
                                        bs + e * ceil_div(q.n, kBlockK) * b_ld, i, n);
}

// Rows of the grouped output: k-grouped E * m (one m x n slice per group), else m.
MXGATE_HD inline uint64_t grouped_out_rows(const GroupedGemmParams& p) {
  return p.offsets == GroupedOffsets::kKEnds ? p.groups * p.g.m : p.g.m;
}

// The dense block GEMM of group e's K range [k0, k1) (k-grouped): element (i, n). A (m x K_total)
// and B (n x K_total) moved k0 columns on, their rows K_total long (a_ld, b_ld); A's scales the
// group's m x (K_e / 128) grid after the grids of the groups before it (each K_j a multiple of
// 128, the contract's alignment: m * k0 / 128 floats before it), B's ceil(n / 128) x (K_e / 128)
// grid likewise.
MXGATE_HD inline float kgrouped_block_element(const GroupedGemmParams& p, const uint8_t* a,
                                              const float* as, const uint8_t* b, const float* bs,
                                              uint64_t k0, uint64_t k1, uint64_t i, uint64_t n) {
  GemmParams q = p.g;
  q.k = k1 - k0;
  q.a_ld = q.b_ld = p.g.k;
  q.sa_ld = q.sb_ld = 0;  // each group's grid is packed: its ld is its column count K_e / 128
  const uint64_t kb0 = k0 / kBlockK;
  return gemm_blockscale_element<false>(q, a + k0, as + q.m * kb0, b + k0,
                                        bs + ceil_div(q.n, kBlockK) * kb0, i, n);
}

// grouped_gemm_blockscale_kgrouped (the MoE weight gradient, K = tokens): out row r is row
// i = r % m of group e = r / m, whose K range is [ends[e-1], ends[e]) (0 for e = 0); the dense
// block body on that range. An empty group (no K) is the sum of no terms, +0, and is written.
// Planted:
//   Z59 (NVIDIA/cutlass#2674, pytorch/pytorch#172439: a group whose k_tile_count is 0 skips the
//       mainloop and its epilogue stores the accumulator registers as they are): an empty group
//       stores the element the nearest non-empty group before it left in the accumulator (+0
//       when there is none).
MXGATE_HD inline bool kgrouped_block_element_at(const GroupedGemmParams& p, const uint8_t* a,
                                                const float* as, const uint8_t* b, const float* bs,
                                                const uint32_t* offs, uint64_t r, uint64_t n,
                                                float* v) {
  const uint64_t e = r / p.g.m, i = r % p.g.m;
  const uint64_t k0 = e == 0 ? 0 : offs[e - 1], k1 = offs[e];
  if (k1 > k0) {
    *v = kgrouped_block_element(p, a, as, b, bs, k0, k1, i, n);
    return true;
  }
  *v = 0.0f;
  if (p.g.faults & kernel_fault::kKGroupedStaleAcc) {
    for (uint64_t j = e; j-- > 0;) {
      const uint64_t j0 = j == 0 ? 0 : offs[j - 1];
      if (offs[j] > j0) {
        *v = kgrouped_block_element(p, a, as, b, bs, j0, offs[j], i, n);
        break;
      }
    }
  }
  return true;
}

// grouped_gemm_blockscale_contiguous and grouped_gemm_blockscale_masked (FP8 block, DeepSeek
// 1x128 / 128x128 fp32 scales, row-major): out[r, n] of the group owning r. Planted:
//   Z52 (masked; a model of NVIDIA/cutlass#2674: a group with no tile to compute stores the
//       accumulator it holds): an expert with count 0 stores its first tile (rows below
//       min(max_m, 128)) from the accumulator the previous expert left, +0 for expert 0 or rows
//       past the previous expert's count.
//   Z53 (contiguous; the class of meta-pytorch/MSLK#158, zero-token experts skipped and their
//       outputs left as allocated): the walk over the experts stops at the first zero-token one,
//       so the rows of every later expert are never written.
//   Z54 (contiguous; deepseek-ai/DeepGEMM#450's layout, whose tiles take their expert from the
//       first row): each 128-row M tile multiplies every row by the expert of its first row, so a
//       group boundary off 128 uses the previous expert's B for the rows after it.
//   Z56 (masked; deepseek-ai/DeepGEMM#268, max_m < 64): rows are stored in blocks of 64, so the
//       rows from the count up to the next multiple of 64 (within max_m) are computed from the
//       unread rows of A and written.
MXGATE_HD inline bool grouped_block_element(const GroupedGemmParams& p, const uint8_t* a,
                                            const float* as, const uint8_t* b, const float* bs,
                                            const uint32_t* offs, uint64_t r, uint64_t n,
                                            float* v) {
  if (p.offsets == GroupedOffsets::kKEnds) {
    return kgrouped_block_element_at(p, a, as, b, bs, offs, r, n, v);
  }
  const uint64_t f = p.g.faults;
  if (p.offsets == GroupedOffsets::kMaskedCounts) {
    const uint64_t max_m = p.g.m / p.groups;
    const uint64_t e = r / max_m, i = r % max_m, count = offs[e];
    if (i < count) {
      *v = block_group_element(p, a, as, b, bs, e * max_m, max_m, e, i, n);
      return true;
    }
    if ((f & kernel_fault::kGroupedStaleEmpty) && count == 0 && i < kGemmWaveRows) {
      const bool stale = e > 0 && i < offs[e - 1];
      *v = stale ? block_group_element(p, a, as, b, bs, (e - 1) * max_m, max_m, e - 1, i, n) : 0.0f;
      return true;
    }
    if ((f & kernel_fault::kMaskedRowsPastCount) && count > 0 && i < (count + 63) / 64 * 64) {
      *v = block_group_element(p, a, as, b, bs, e * max_m, max_m, e, i, n);
      return true;
    }
    return false;
  }
  const uint64_t g = group_of_row(p, offs, r);
  if (g == p.groups) return false;
  if (f & kernel_fault::kGroupedStopAtEmpty) {
    for (uint64_t e = 0; e < g; ++e) {
      const GroupRows rows = group_rows(p, offs, e);
      if (rows.r1 == rows.r0) return false;
    }
  }
  const GroupRows rows = group_rows(p, offs, g);
  uint64_t expert = g;
  if (f & kernel_fault::kGroupedTileFirstRowExpert) {
    expert = group_of_row(p, offs, r / kGemmWaveRows * kGemmWaveRows);
  }
  *v = block_group_element(p, a, as, b, bs, rows.r0, rows.r1 - rows.r0, expert, r - rows.r0, n);
  return true;
}

// Scale rows of the per-group swizzle before group e: each group's rows padded to 128.
MXGATE_HD inline uint64_t swizzled_rows_before(const GroupedGemmParams& p, const uint32_t* offs,
                                               uint64_t e) {
  uint64_t rows = 0;
  for (uint64_t j = 0; j < e; ++j) {
    const GroupRows g = group_rows(p, offs, j);
    rows += ceil_div(g.r1 - g.r0, uint64_t{128}) * 128;
  }
  return rows;
}

// grouped_gemm_mx_contiguous (MXFP8, E8M0 1x32 scales, start offsets): the dense
// gemm_mx_dequant body on the group's rows. Scales row-major (A's rows stacked as A's, B's per
// expert) or in the per-group 128x4 swizzle: each group's A scales a swizzled grid of its own,
// rows padded to 128 and scale columns to 4, one after another; each expert's B scales likewise.
// Planted:
//   Z55 (tile-ai/TileOPs PR #1952): a 128-row M tile straddling two groups computes only the
//       group of its first row; the rows of the next group inside it are never written.
//   Z57 (NVIDIA/TransformerEngine PR #2924): the per-group swizzle read as one swizzle over all M
//       rows, without each group's padding to 128 (right only while every group before is a
//       multiple of 128 rows).
//   Z58 (flashinfer-ai/flashinfer#5438, a descriptor updated while a scale load is in flight):
//       the K blocks of the last 128-wide K tile read the next expert's B scales (K > 128; the
//       last expert keeps its own). Invisible when every expert has the same scales.
MXGATE_HD inline bool grouped_mx_element(const GroupedGemmParams& p, const uint8_t* a,
                                         const uint8_t* sa, const uint8_t* b, const uint8_t* sb,
                                         const uint32_t* offs, uint64_t r, uint64_t n, float* v) {
  const uint64_t f = p.g.faults;
  const uint64_t g = group_of_row(p, offs, r);
  if (g == p.groups) return false;
  if ((f & kernel_fault::kGroupedTileFirstGroupOnly) &&
      group_of_row(p, offs, r / kGemmWaveRows * kGemmWaveRows) != g) {
    return false;
  }
  const GroupRows rows = group_rows(p, offs, g);
  GemmParams q = p.g;
  q.m = rows.r1 - rows.r0;
  const uint64_t kb = ceil_div(q.k, kMxBlock);
  const uint64_t pc = (kb + 3) / 4 * 4;
  const uint64_t b_rows_per_expert =
      q.mx_scales_swizzled ? ceil_div(q.n, uint64_t{128}) * 128 : q.n;
  const uint64_t b_ld = q.mx_scales_swizzled ? pc : scale_row_ld(q, q.sb_ld, kb);
  const uint8_t* sb_e = sb + g * b_rows_per_expert * b_ld;
  const uint8_t* tail = (f & kernel_fault::kNextExpertTailScales) && g + 1 < p.groups
                            ? sb_e + b_rows_per_expert * b_ld
                            : nullptr;
  const uint8_t* b_e = b + g * q.n * q.k;
  if (q.mx_scales_swizzled && (f & kernel_fault::kGroupedSwizzleUnpadded)) {
    GemmParams all = p.g;  // one swizzled grid over every row of A
    *v = gemm_mx_dequant_element(all, a, sa, b_e, sb_e, r, n, tail);
    return true;
  }
  const uint64_t a_base = q.mx_scales_swizzled ? swizzled_rows_before(p, offs, g) * pc
                                               : rows.r0 * scale_row_ld(q, q.sa_ld, kb);
  *v = gemm_mx_dequant_element(q, a + rows.r0 * q.k, sa + a_base, b_e, sb_e, r - rows.r0, n, tail);
  return true;
}

}  // namespace mxgate::gpu
