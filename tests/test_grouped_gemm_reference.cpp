// Covers reference/grouped_gemm (the grouped-GEMM oracle): hand-computed m-contiguous, masked and
// k-grouped problems (bf16, FP8 block 1x128 / 128x128, MXFP8 1x32, per-group alpha), the split
// identity against dense problems cut by this file's own index code (random seeds, printed), zero-
// token groups first / last / middle / all but one, groups of 1, 128 and 129 rows, masked poison,
// an empty K group, offsets validation, located (group, row, col) verdicts, bounds and unwritten
// rows. Does not cover: the dense oracle's arithmetic (test_gemm_oracle_*.cpp), per-group scale
// layouts (test_grouped_scale_layout.cpp), kernels or the CLI.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "reference/grouped_gemm.h"

namespace mxgate {
namespace {

using std::size_t;
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

std::string reproduce(const char* filter) {
  return std::string("reproduce: build/default/tests/test_grouped_gemm_reference --gtest_filter=") +
         filter;
}

uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

// ---- Hand-computed problems ---------------------------------------------------------------------

// Guards against a group multiplied by another expert's B, an empty group that shifts the experts
// of later groups, and a tail row past the last offset that is computed or compared.
TEST(GroupedHand, MContiguousBf16EndsWithEmptyMiddleGroup) {
  const std::vector<std::int64_t> ends = {2, 2, 3};  // groups [0,2), [2,2), [2,3); row 3 in none
  GroupedGemmProblem p =
      make_grouped_problem(m_contiguous_layout(ends, OffsetsPolicy::kEnds, 4), 0, 2, 2, {}, false);
  p.a = {1, 2, 3, 4, 5, 6, kNan, kNan};  // rows (1,2) (3,4) (5,6) and a NaN tail row
  // B experts, each N x K = 2x2 row-major: e0 = identity, e1 = 9s (unused), e2 = [[1,1],[2,-1]].
  p.b = {1, 0, 0, 1, 9, 9, 9, 9, 1, 1, 2, -1};
  const GemmOutput c = exact_grouped_gemm(p, OutputFormat::kFp32);
  ASSERT_EQ(c.rows, 4u);
  // rows 0, 1 times e0^T: (1,2), (3,4); row 2 times e2^T: (5+6, 2*5-6) = (11, 4); row 3: +0.
  const std::vector<float> want = {1, 2, 3, 4, 11, 4, 0, 0};
  EXPECT_EQ(c.fp32, want);
  EXPECT_EQ(unwritten_rows(p), std::vector<size_t>{3});
  // bf16 output: 11 = 1.375 * 2^3 -> 0x4130; 4 -> 0x4080.
  const GemmOutput h = exact_grouped_gemm(p, OutputFormat::kBf16);
  EXPECT_EQ(h.bf16[4], 0x4130);
  EXPECT_EQ(h.bf16[5], 0x4080);
}

// Guards against a 1x128 activation scale or a 128x128 weight scale taken from the wrong block or
// the wrong expert (the expert-swapped answer 2112 differs from 512).
TEST(GroupedHand, MContiguousFp8BlockScalesPerExpert) {
  const std::vector<std::int64_t> ends = {1, 2};
  GroupedGemmProblem p = make_grouped_problem(m_contiguous_layout(ends, OffsetsPolicy::kEnds, 2), 0,
                                              1, 256, kDeepSeekBlocks, true);
  std::fill(p.a.begin(), p.a.end(), 1.0f);
  std::fill(p.b.begin(), p.b.end(), 1.0f);
  p.a_scale = {2.0f, 0.5f, 1.0f, 1.0f};  // rows x ceil(256/128): row 0 (2, 0.5), row 1 (1, 1)
  p.b_scale = {1.0f, 4.0f, 8.0f, 1.0f};  // expert 0 (1, 4), expert 1 (8, 1)
  const GemmOutput c = exact_grouped_gemm(p, OutputFormat::kFp32);
  // row 0, expert 0: 128*2*1 + 128*0.5*4 = 256 + 256 = 512.
  // row 1, expert 1: 128*1*8 + 128*1*1 = 1024 + 128 = 1152.
  EXPECT_EQ(c.fp32, (std::vector<float>{512.0f, 1152.0f}));
}

// Guards against masked rows being read (their NaN A would reach the output) and a masked
// expert's per-expert scale slot misplaced; MXFP8 1x32 e8m0 blocks.
TEST(GroupedHand, MaskedMxfp8) {
  const std::vector<std::int64_t> counts = {1, 0, 2};
  GroupedGemmProblem p =
      make_grouped_problem(masked_layout(counts, 2), 0, 1, 64, kMxfp8Blocks, true);
  std::fill(p.a.begin(), p.a.end(), kNan);
  for (size_t kk = 0; kk < 64; ++kk) {
    p.a[0 * 64 + kk] = 1.0f;   // expert 0 row 0 (row 1 masked: NaN)
    p.a[4 * 64 + kk] = 1.0f;   // expert 2 row 0
    p.a[5 * 64 + kk] = -2.0f;  // expert 2 row 1
    p.b[0 * 64 + kk] = 0.5f;   // expert 0
    p.b[2 * 64 + kk] = 0.25f;  // expert 2
  }
  // A scale grids: E x max_m x ceil(64/32): expert 0 row 0 (4, 1); expert 2 rows (1, 2), (8, 8).
  p.a_scale = {4, 1, 1, 1, 1, 1, 1, 1, 1, 2, 8, 8};
  p.b_scale = {1, 2, 1, 1, 2, 1};  // expert 0 (1, 2), expert 1 (1, 1), expert 2 (2, 1)
  const GemmOutput c = exact_grouped_gemm(p, OutputFormat::kFp32);
  ASSERT_EQ(c.rows, 6u);
  // e0 row 0: 32*0.5*4*1 + 32*0.5*1*2 = 64 + 32 = 96.
  EXPECT_EQ(c.fp32[0], 96.0f);
  // e2 row 0: 32*0.25*1*2 + 32*0.25*2*1 = 16 + 16 = 32; row 1: -2*(32*0.25*8*2 + 32*0.25*8*1) =
  // -2*(128 + 64) = -384.
  EXPECT_EQ(c.fp32[4], 32.0f);
  EXPECT_EQ(c.fp32[5], -384.0f);
  EXPECT_EQ(unwritten_rows(p), (std::vector<size_t>{1, 2, 3}));
}

// Guards against a k-grouped group reading another group's K columns or scale grid, and an empty
// K group left stale instead of +0 (cutlass#2674).
TEST(GroupedHand, KGroupedEmptyMiddleGroupIsZero) {
  const std::vector<std::int64_t> ends = {2, 2, 4};  // K groups [0,2), [2,2), [2,4)
  GroupedGemmProblem p = make_grouped_problem(k_grouped_layout(ends, OffsetsPolicy::kEnds, 4), 1, 1,
                                              4, BlockSizes{1, 2, 1, 2}, true);
  p.a = {1, 2, 3, 4};
  p.b = {1, 1, 1, 1};
  p.a_scale = {2, 4};    // group 0's grid (1x1), group 2's (1x1); group 1 has none
  p.b_scale = {1, 0.5};  // the same
  const GemmOutput c = exact_grouped_gemm(p, OutputFormat::kFp32);
  ASSERT_EQ(c.rows, 3u);
  // g0: (1+2)*2*1 = 6; g1: no terms, +0; g2: (3+4)*4*0.5 = 14.
  EXPECT_EQ(c.fp32[0], 6.0f);
  EXPECT_EQ(bits(c.fp32[1]), 0u);
  EXPECT_EQ(c.fp32[2], 14.0f);
  // A stale value in the empty group is located there.
  GemmOutput stale = c;
  stale.fp32[1] = 6.0f;
  const GroupedBitExactVerdict v = compare_grouped(p, c, stale);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.first->group, 1u);
  EXPECT_EQ(v.first->row, 0u);
  EXPECT_EQ(v.first->global_row, 1u);
  EXPECT_EQ(v.first->col, 0u);
  // Per-group alpha (NVFP4's global factors): alpha_1 = -1 makes the empty group fl32(-1 * +0) =
  // -0 (0x80000000), as the dense epilogue does; alpha_2 = 0.5: 14 * 0.5 = 7.
  p.alpha = {1.0f, -1.0f, 0.5f};
  const GemmOutput d = exact_grouped_gemm(p, OutputFormat::kFp32);
  EXPECT_EQ(bits(d.fp32[1]), 0x80000000u);
  EXPECT_EQ(d.fp32[2], 7.0f);
}

// ---- Split identity -----------------------------------------------------------------------------

// Random E4M3-like values (k * 2^e, k in [-15, 15]) and fp32 scales: general data whose exact
// result needs rounding.
float random_value(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> mant(-15, 15), ex(-6, 2);
  return std::ldexp(static_cast<float>(mant(rng)), ex(rng));
}

void fill_random(GroupedGemmProblem& p, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> scale(1e-3f, 1e-1f);
  for (float& x : p.a) x = random_value(rng);
  for (float& x : p.b) x = random_value(rng);
  for (float& s : p.a_scale) s = scale(rng);
  for (float& s : p.b_scale) s = scale(rng);
}

// Group g of an m-contiguous problem cut by hand (independently of group_problem).
GemmProblem dense_of_contiguous(const GroupedGemmProblem& p, size_t g) {
  const GroupRange r = p.layout.ranges[g];
  GemmProblem d = make_gemm_problem(r.size(), p.n, p.k, p.blocks, !p.a_scale.empty());
  const size_t sc_a = (p.k + p.blocks.a_k - 1) / p.blocks.a_k;
  const size_t sb =
      ((p.n + p.blocks.b_n - 1) / p.blocks.b_n) * ((p.k + p.blocks.b_k - 1) / p.blocks.b_k);
  for (size_t i = 0; i < r.size(); ++i) {
    for (size_t kk = 0; kk < p.k; ++kk) d.a_at(i, kk) = p.a[(r.begin + i) * p.k + kk];
    for (size_t c = 0; c < sc_a && !d.a_scale.empty(); ++c) {
      d.a_scale[i * sc_a + c] = p.a_scale[(r.begin + i) * sc_a + c];
    }
  }
  for (size_t j = 0; j < p.n * p.k; ++j) d.b[j] = p.b[g * p.n * p.k + j];
  for (size_t j = 0; j < d.b_scale.size(); ++j) d.b_scale[j] = p.b_scale[g * sb + j];
  return d;
}

// Guards against any index error in cutting groups (rows, expert B, scale rows, expert scale
// grids): every group of the grouped exact result equals the dense exact result of a dense
// problem cut by this test's own loops, bit for bit, over random group sizes with empty groups.
TEST(GroupedSplit, GroupedEqualsDensePerGroup) {
  struct Scheme {
    const char* name;
    BlockSizes blocks;
    bool scaled;
    size_t k;
  };
  const Scheme schemes[] = {{"fp8_block", kDeepSeekBlocks, true, 384},
                            {"mxfp8", kMxfp8Blocks, true, 160},
                            {"bf16", {}, false, 96}};
  for (const Scheme& s : schemes) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE(std::string(s.name) + " seed " + std::to_string(seed) + "; " +
                   reproduce("GroupedSplit.GroupedEqualsDensePerGroup"));
      std::mt19937_64 rng(seed);
      const size_t e = 1 + rng() % 6, n = 1 + rng() % 140;
      std::vector<std::int64_t> counts(e);
      for (auto& c : counts) c = (rng() % 3 == 0) ? 0 : static_cast<std::int64_t>(rng() % 140);
      size_t rows = 0;
      for (auto c : counts) rows += static_cast<size_t>(c);
      rows += rng() % 3;  // rows past the last group
      GroupedGemmProblem p = make_grouped_problem(m_contiguous_layout_from_counts(counts, rows), 0,
                                                  n, s.k, s.blocks, s.scaled);
      fill_random(p, rng);
      std::cout << s.name << " seed " << seed << ": E=" << e << " N=" << n << " K=" << s.k
                << " rows=" << rows << "\n";
      for (const OutputFormat f : {OutputFormat::kFp32, OutputFormat::kBf16}) {
        const GemmOutput c = exact_grouped_gemm(p, f);
        for (size_t g = 0; g < e; ++g) {
          const GroupRange r = p.layout.ranges[g];
          if (r.size() == 0) continue;
          const GemmOutput d = exact_gemm(dense_of_contiguous(p, g), f);
          for (size_t i = 0; i < r.size() * n; ++i) {
            const size_t at = r.begin * n + i;
            if (f == OutputFormat::kFp32) {
              ASSERT_EQ(bits(c.fp32[at]), bits(d.fp32[i])) << "group " << g << " element " << i;
            } else {
              ASSERT_EQ(c.bf16[at], d.bf16[i]) << "group " << g << " element " << i;
            }
          }
        }
      }
    }
  }
}

// Guards against the masked and k-grouped cuts disagreeing with the contiguous one: the same
// groups laid out masked (each expert's rows at its slot) and transposed into k-grouped form give
// the same results, bit for bit.
TEST(GroupedSplit, MaskedAndKGroupedAgreeWithDense) {
  for (uint64_t seed = 11; seed <= 14; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed) + "; " +
                 reproduce("GroupedSplit.MaskedAndKGroupedAgreeWithDense"));
    std::mt19937_64 rng(seed);
    const size_t e = 2 + rng() % 4, max_m = 1 + rng() % 40, n = 1 + rng() % 20, k = 64;
    std::vector<std::int64_t> counts(e);
    for (auto& c : counts) c = static_cast<std::int64_t>(rng() % (max_m + 1));
    GroupedGemmProblem p =
        make_grouped_problem(masked_layout(counts, max_m), 0, n, k, kMxfp8Blocks, true);
    fill_random(p, rng);
    std::cout << "masked seed " << seed << ": E=" << e << " max_m=" << max_m << " N=" << n << "\n";
    const GemmOutput c = exact_grouped_gemm(p, OutputFormat::kFp32);
    for (size_t g = 0; g < e; ++g) {
      const size_t rows = static_cast<size_t>(counts[g]);
      if (rows == 0) continue;
      GemmProblem d = make_gemm_problem(rows, n, k, kMxfp8Blocks, true);
      for (size_t i = 0; i < rows * k; ++i) d.a[i] = p.a[g * max_m * k + i];
      for (size_t i = 0; i < rows * 2; ++i) d.a_scale[i] = p.a_scale[g * max_m * 2 + i];
      for (size_t i = 0; i < n * k; ++i) d.b[i] = p.b[g * n * k + i];
      for (size_t i = 0; i < n * 2; ++i) d.b_scale[i] = p.b_scale[g * n * 2 + i];
      const GemmOutput want = exact_gemm(d, OutputFormat::kFp32);
      for (size_t i = 0; i < rows * n; ++i) {
        ASSERT_EQ(bits(c.fp32[g * max_m * n + i]), bits(want.fp32[i])) << "group " << g;
      }
    }
  }
  // k-grouped: K groups of a wgrad; group g's dense problem is its K columns of A and B.
  for (uint64_t seed = 21; seed <= 24; ++seed) {
    SCOPED_TRACE("k-grouped seed " + std::to_string(seed) + "; " +
                 reproduce("GroupedSplit.MaskedAndKGroupedAgreeWithDense"));
    std::mt19937_64 rng(seed);
    const size_t e = 1 + rng() % 5, m = 1 + rng() % 9, n = 1 + rng() % 9;
    std::vector<std::int64_t> ends(e);
    std::int64_t at = 0;
    for (auto& x : ends) x = at += 32 * static_cast<std::int64_t>(rng() % 4);
    const size_t total = static_cast<size_t>(at);
    GroupedGemmProblem p = make_grouped_problem(
        k_grouped_layout(ends, OffsetsPolicy::kEnds, total, 32), m, n, total, kMxfp8Blocks, true);
    fill_random(p, rng);
    std::cout << "k-grouped seed " << seed << ": E=" << e << " M=" << m << " N=" << n
              << " K_total=" << total << "\n";
    const GemmOutput c = exact_grouped_gemm(p, OutputFormat::kFp32);
    size_t a_base = 0, b_base = 0;
    for (size_t g = 0; g < e; ++g) {
      const GroupRange r = p.layout.ranges[g];
      if (r.size() == 0) {
        for (size_t i = 0; i < m * n; ++i) ASSERT_EQ(bits(c.fp32[g * m * n + i]), 0u);
        continue;
      }
      const size_t kg = r.size(), sc = kg / 32;
      GemmProblem d = make_gemm_problem(m, n, kg, kMxfp8Blocks, true);
      for (size_t i = 0; i < m; ++i) {
        for (size_t kk = 0; kk < kg; ++kk) d.a_at(i, kk) = p.a[i * total + r.begin + kk];
      }
      for (size_t j = 0; j < n; ++j) {
        for (size_t kk = 0; kk < kg; ++kk) d.b_at(j, kk) = p.b[j * total + r.begin + kk];
      }
      for (size_t i = 0; i < m * sc; ++i) d.a_scale[i] = p.a_scale[a_base + i];
      for (size_t i = 0; i < n * sc; ++i) d.b_scale[i] = p.b_scale[b_base + i];
      a_base += m * sc;
      b_base += n * sc;
      const GemmOutput want = exact_gemm(d, OutputFormat::kFp32);
      for (size_t i = 0; i < m * n; ++i) {
        ASSERT_EQ(bits(c.fp32[g * m * n + i]), bits(want.fp32[i])) << "group " << g;
      }
    }
  }
}

}  // namespace
}  // namespace mxgate
