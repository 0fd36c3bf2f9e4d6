// Covers reference/gemm_oracle's exact mode (gemm_oracle_exact.cpp and its engine,
// gemm_oracle_engine.cpp / gemm_oracle_dot.cpp): hand-derived problems (MX 1x1x32, a trailing
// partial K block, row-major scale indexing, bf16 output rounding, NaN/Inf, signed zero,
// validation) and the fast path against the general path on every available dot engine.
// Does not cover: the other modes and their agreement (test_gemm_oracle_modes.cpp), threads
// (test_gemm_threads.cpp), decoding fp8/e8m0 bytes (format codecs), physical scale layouts, GPU
// kernels, or the speed of the exact path (bench/).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/exact_sum.h"
#include "reference/gemm_oracle.h"
#include "tests/gemm_oracle_problems.h"

namespace mxgate {
namespace {

using test_support::bits;
using test_support::kInf;
using test_support::kNan;
using test_support::random_mixed_bf16_problem;
using test_support::random_problem;
using test_support::Scales;

// ---- Exact mode: hand-derived problems
// -----------------------------------------------------------

// Guards against a wrong MX element/scale product or a block that is summed twice or not at all.
TEST(ExactGemm, Mx1x1x32HandDerived) {
  GemmProblem p = make_gemm_problem(1, 1, 32, kMxfp8Blocks, true);
  // a[k] = (k % 4) + 1 - 2 * (k >= 16): 1,2,3,4 (x4) then -1,0,1,2 (x4); b[k] = 0.5 for all k.
  for (size_t kk = 0; kk < 32; ++kk) {
    p.a_at(0, kk) = static_cast<float>(kk % 4 + 1) - (kk >= 16 ? 2.0f : 0.0f);
    p.b_at(0, kk) = 0.5f;
  }
  p.a_scale = {0x1p-3f};  // e8m0 124
  p.b_scale = {4.0f};     // e8m0 129
  // sum a = 4 * (1+2+3+4) + 4 * (-1+0+1+2) = 40 + 8 = 48; * 0.5 = 24; * 2^-3 * 4 = 12.
  const GemmOutput c = exact_gemm(p, OutputFormat::kFp32);
  ASSERT_EQ(c.fp32.size(), 1u);
  EXPECT_EQ(c.fp32[0], 12.0f);
  EXPECT_EQ(exact_gemm(p, OutputFormat::kBf16).bf16[0], 0x4140);  // 12 = 1.5 * 2^3
}

// Guards against the "trailing block dropped" bug class (Z9): K = 160 with 128-blocks leaves a
// 32-element tail that must be counted, with its own scales.
TEST(ExactGemm, TrailingPartialBlockIsCounted) {
  GemmProblem p = make_gemm_problem(1, 1, 160, kDeepSeekBlocks, true);
  std::fill(p.a.begin(), p.a.end(), 1.0f);
  std::fill(p.b.begin(), p.b.end(), 1.0f);
  p.a_scale = {1.0f, 2.0f};  // blocks [0,128) and [128,160)
  p.b_scale = {1.0f, 4.0f};
  // 128 * 1 * 1 + 32 * 2 * 4 = 128 + 256 = 384 (dropping the tail gives 128).
  EXPECT_EQ(exact_gemm(p, OutputFormat::kFp32).fp32[0], 384.0f);
  EXPECT_EQ(ordered_gemm(p, OrderModel{}).fp32[0], 384.0f);

  // Same with MX 32-blocks: K = 160 is five whole blocks, the last with scale 8 on A.
  GemmProblem q = make_gemm_problem(1, 1, 160, kMxfp8Blocks, true);
  std::fill(q.a.begin(), q.a.end(), 1.0f);
  std::fill(q.b.begin(), q.b.end(), 1.0f);
  q.a_scale = {1.0f, 1.0f, 1.0f, 1.0f, 8.0f};
  // 4 * 32 + 32 * 8 = 128 + 256 = 384.
  EXPECT_EQ(exact_gemm(q, OutputFormat::kFp32).fp32[0], 384.0f);
}

// Guards against reading the logical scale grid transposed (the Z2 class): with distinct
// per-block scales the transposed index gives a different, wrong answer.
TEST(ExactGemm, ScaleGridIsRowMajorNotTransposed) {
  // M = 2, N = 2, K = 256, A scales 1x128 -> a 2x2 grid [[1, 2], [4, 8]] (row-major:
  // index r*2 + c); B scales 128x128 -> a 1x2 grid [1, 1]. A = all ones; B row 0 = ones,
  // row 1 = twos.
  GemmProblem p = make_gemm_problem(2, 2, 256, kDeepSeekBlocks, true);
  std::fill(p.a.begin(), p.a.end(), 1.0f);
  for (size_t kk = 0; kk < 256; ++kk) {
    p.b_at(0, kk) = 1.0f;
    p.b_at(1, kk) = 2.0f;
  }
  p.a_scale = {1.0f, 2.0f, 4.0f, 8.0f};
  p.b_scale = {1.0f, 1.0f};
  // C[0][0] = 128 * 1 + 128 * 2 = 384   C[0][1] = 2 * 384 = 768
  // C[1][0] = 128 * 4 + 128 * 8 = 1536  C[1][1] = 2 * 1536 = 3072
  const std::vector<float> expected{384.0f, 768.0f, 1536.0f, 3072.0f};
  EXPECT_EQ(exact_gemm(p, OutputFormat::kFp32).fp32, expected);
  // Read transposed, scale (r, c) would come from index c*2 + r: row 0 gets [1, 4] and row 1
  // gets [2, 8]: C[0][0] = 128 + 512 = 640. The oracle must not give that.
  GemmProblem transposed = p;
  transposed.a_scale = {1.0f, 4.0f, 2.0f, 8.0f};
  EXPECT_EQ(exact_gemm(transposed, OutputFormat::kFp32).fp32[0], 640.0f);
  EXPECT_NE(exact_gemm(transposed, OutputFormat::kFp32).fp32, expected);
}

// Guards against bf16 outputs produced by rounding an fp32 result (double rounding).
TEST(ExactGemm, Bf16OutputRoundsOnceFromTheExactSum) {
  // No scales. a = [256, 1, 2^-20], b = [1, 1, 1]: exact 257 + 2^-20.
  GemmProblem p = make_gemm_problem(1, 1, 3, kMxfp8Blocks, false);
  p.a = {256.0f, 1.0f, 0x1p-20f};
  p.b = {1.0f, 1.0f, 1.0f};
  // bf16 near 256 has ulp 2: 257 is the tie between 256 (0x4380) and 258 (0x4381); the 2^-20
  // puts the exact sum above the tie, so RNE gives 258 = 0x4381.
  EXPECT_EQ(exact_gemm(p, OutputFormat::kBf16).bf16[0], 0x4381);
  // Through fp32 first: 257 + 2^-20 needs 29 bits, fp32 rounds it to 257 (a bf16 tie) and bf16
  // then picks 256 = 0x4380. That is what an fp32-accumulating kernel does, and what the ordered
  // emulation reproduces.
  EXPECT_EQ(exact_gemm(p, OutputFormat::kFp32).fp32[0], 257.0f);
  OrderModel order;
  order.output = OutputFormat::kBf16;
  EXPECT_EQ(ordered_gemm(p, order).bf16[0], 0x4380);
  // Without the 2^-20 the exact sum is the tie itself: even -> 256.
  p.a[2] = 0.0f;
  EXPECT_EQ(exact_gemm(p, OutputFormat::kBf16).bf16[0], 0x4380);
}

// Guards against NaN/Inf being lost, or 0 * Inf and Inf - Inf producing numbers.
TEST(ExactGemm, NanAndInfPropagate) {
  // M = 2, N = 4, K = 2, no scales.
  GemmProblem p = make_gemm_problem(2, 4, 2, kMxfp8Blocks, false);
  p.a = {1.0f, 2.0f,    // row 0
         0.0f, 1.0f};   // row 1
  p.b = {kNan,  1.0f,   // col 0: NaN in B
         kInf,  1.0f,   // col 1: 1*Inf + 2 = +Inf;  row 1: 0*Inf = NaN
         kInf,  -kInf,  // col 2: Inf - 2*Inf = NaN; row 1: 0*Inf - Inf = NaN
         -kInf, 3.0f};  // col 3: -Inf + 6 = -Inf;  row 1: 0*(-Inf) = NaN
  const GemmOutput c = exact_gemm(p, OutputFormat::kFp32);
  EXPECT_TRUE(std::isnan(c.fp32[0]));
  EXPECT_EQ(c.fp32[1], kInf);
  EXPECT_TRUE(std::isnan(c.fp32[2]));
  EXPECT_EQ(c.fp32[3], -kInf);
  for (int j = 0; j < 4; ++j) {
    EXPECT_TRUE(std::isnan(c.fp32[4 + j])) << "row 1, col " << j;
  }
  const GemmOutput h = exact_gemm(p, OutputFormat::kBf16);
  EXPECT_EQ(h.bf16[1], 0x7F80);
  EXPECT_EQ(h.bf16[3], 0xFF80);
  EXPECT_EQ(h.bf16[0] & 0x7FFF, 0x7FC0);

  // An e8m0 NaN scale (byte 0xFF) poisons its block; a zero scale times an Inf value is NaN.
  GemmProblem q = make_gemm_problem(1, 1, 64, kMxfp8Blocks, true);
  std::fill(q.a.begin(), q.a.end(), 1.0f);
  std::fill(q.b.begin(), q.b.end(), 1.0f);
  q.a_scale = {1.0f, kNan};
  EXPECT_TRUE(std::isnan(exact_gemm(q, OutputFormat::kFp32).fp32[0]));
  q.a_scale = {1.0f, 0.0f};
  EXPECT_EQ(exact_gemm(q, OutputFormat::kFp32).fp32[0], 32.0f);  // zero scale: block is 0
  q.a[40] = kInf;
  EXPECT_TRUE(std::isnan(exact_gemm(q, OutputFormat::kFp32).fp32[0]));
}

// Guards against -0.0 results where every kernel (accumulator initialised to +0) gives +0.
TEST(ExactGemm, ZeroResultsArePositiveZero) {
  // M = 1, N = 2, K = 32, MX scales 1. a = 0; column 0 of B = -3: every term is 0 * -3 = -0.
  // Column 1 alternates +5, -5.
  GemmProblem p = make_gemm_problem(1, 2, 32, kMxfp8Blocks, true);
  for (size_t kk = 0; kk < 32; ++kk) {
    p.b_at(0, kk) = -3.0f;
    p.b_at(1, kk) = kk % 2 == 0 ? 5.0f : -5.0f;
  }
  const ExactOptions general{true, nullptr};
  EXPECT_EQ(bits(exact_gemm(p, OutputFormat::kFp32).fp32[0]), 0u);
  EXPECT_EQ(bits(exact_gemm(p, OutputFormat::kFp32, general).fp32[0]), 0u);
  EXPECT_EQ(exact_gemm(p, OutputFormat::kBf16).bf16[0], 0u);
  EXPECT_EQ(exact_gemm(p, OutputFormat::kBf16, general).bf16[0], 0u);
  // a = 1: column 1 cancels exactly (16 * 5 - 16 * 5): +0 on both engine paths.
  std::fill(p.a.begin(), p.a.end(), 1.0f);
  EXPECT_EQ(bits(exact_gemm(p, OutputFormat::kFp32).fp32[1]), 0u);
  EXPECT_EQ(bits(exact_gemm(p, OutputFormat::kFp32, general).fp32[1]), 0u);
  EXPECT_EQ(exact_gemm(p, OutputFormat::kFp32).fp32[0], -96.0f);  // 32 * -3
}

// Guards against malformed problems being computed instead of rejected with a clear message.
TEST(ExactGemm, ValidationNamesTheProblem) {
  auto message = [](const GemmProblem& p) {
    try {
      validate_gemm_problem(p);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  GemmProblem p = make_gemm_problem(2, 3, 64, kMxfp8Blocks, true);
  GemmProblem bad = p;
  bad.a.pop_back();
  EXPECT_NE(message(bad).find("A has 127 values"), std::string::npos) << message(bad);
  bad = p;
  bad.b.push_back(0);
  EXPECT_NE(message(bad).find("B has 193 values"), std::string::npos) << message(bad);
  bad = p;
  bad.a_scale.resize(3);  // expected ceil(2/1) * ceil(64/32) = 4
  EXPECT_NE(message(bad).find("A scales have 3 entries"), std::string::npos) << message(bad);
  bad = p;
  bad.b_scale.resize(7);
  EXPECT_NE(message(bad).find("B scales have 7 entries"), std::string::npos) << message(bad);
  bad = p;
  bad.k = 0;
  EXPECT_NE(message(bad).find("K is 0"), std::string::npos) << message(bad);
  bad = p;
  bad.blocks.b_k = 0;
  EXPECT_NE(message(bad).find("B scale block"), std::string::npos) << message(bad);
  EXPECT_THROW(make_gemm_problem(0, 1, 1, kMxfp8Blocks, true), std::invalid_argument);
  EXPECT_THROW(exact_gemm(bad, OutputFormat::kFp32), std::invalid_argument);
  EXPECT_THROW(ordered_gemm(bad, OrderModel{}), std::invalid_argument);
  EXPECT_THROW(compute_bounds(bad, AccumModel{}), std::invalid_argument);
  EXPECT_EQ(message(p), "no exception");
}

// ---- Exact mode: the fast path is the general path
// ------------------------------------------------

// Every available dot engine of the fast path must give the general path's bits (fp32, bf16,
// fp64).
void expect_fast_equals_general(const GemmProblem& p, const char* what, ExactStats* fast_stats) {
  SCOPED_TRACE(what);
  ExactStats general_stats;
  const ExactOptions general{true, &general_stats};
  const GemmOutput g32 = exact_gemm(p, OutputFormat::kFp32, general);
  EXPECT_EQ(general_stats.general_products, p.m * p.n * p.k);
  const GemmOutput g16 = exact_gemm(p, OutputFormat::kBf16, general);
  const std::vector<double> g64 = exact_gemm_fp64(p, general);
  for (DotEngine engine :
       {DotEngine::kAuto, DotEngine::kPortable, DotEngine::kAvx2, DotEngine::kAvx512}) {
    if (!dot_engine_available(engine)) {
      continue;
    }
    SCOPED_TRACE("dot engine " + std::to_string(static_cast<int>(engine)));
    const ExactOptions fast{false, fast_stats, engine};
    const BitExactVerdict v =
        compare_fp32(p.m, p.n, g32.fp32, exact_gemm(p, OutputFormat::kFp32, fast).fp32);
    EXPECT_TRUE(v.ok()) << v.summary();
    EXPECT_TRUE(
        compare_bf16(p.m, p.n, g16.bf16, exact_gemm(p, OutputFormat::kBf16, fast).bf16).ok());
    const std::vector<double> f64 = exact_gemm_fp64(p, fast);
    for (size_t e = 0; e < f64.size(); ++e) {
      ASSERT_EQ(std::bit_cast<uint64_t>(f64[e]), std::bit_cast<uint64_t>(g64[e]))
          << "element " << e;
    }
  }
}

// Guards against the fast path (double range sums) being inexact or mis-scaled on any of its
// branches: whole-K direct sums, range sums times unfolded fp32 scales, split ranges, atoms
// falling back to the general path, and NaN/Inf atoms.
TEST(ExactGemm, FastPathEqualsGeneralPath) {
  ExactStats s;
  // MX with quantized-like scales, ragged tiles (M, N not multiples of the 8x16 tile): every
  // element is one whole-K exact double sum.
  expect_fast_equals_general(random_problem(13, 37, 160, kMxfp8Blocks, Scales::kPow2Narrow, 11),
                             "mx", &s);
  EXPECT_EQ(s.direct_elements, 13u * 37u);
  // MX with scales 2^[-8, 8]: ranges are cut where the exponents spread too far.
  expect_fast_equals_general(random_problem(9, 20, 256, kMxfp8Blocks, Scales::kPow2Wide, 16),
                             "mx wide scales", &s);
  EXPECT_GT(s.range_sums, 0u);
  // DeepSeek blocks with arbitrary fp32 scales: ranges end at each 128-block and are multiplied
  // by the scales exactly. N = 150 crosses a 128-row weight block.
  expect_fast_equals_general(random_problem(9, 150, 300, kDeepSeekBlocks, Scales::kFp32, 12),
                             "deepseek", &s);
  EXPECT_GT(s.range_sums, 0u);
  EXPECT_EQ(s.direct_elements, 0u);
  // BF16 with one wide atom in some rows: all three paths.
  expect_fast_equals_general(random_mixed_bf16_problem(20, 40, 13), "mixed bf16", &s);
  EXPECT_GT(s.direct_elements, 0u);
  EXPECT_GT(s.range_sums, 0u);
  EXPECT_GT(s.general_products, 0u);
  // NaN and Inf sprinkled into MX data: those atoms go through the general path.
  GemmProblem sp = random_problem(8, 16, 96, kMxfp8Blocks, Scales::kPow2Narrow, 14);
  sp.a[3 * 96 + 40] = kInf;
  sp.b[5 * 96 + 40] = -kInf;
  sp.b[7 * 96 + 3] = kNan;
  sp.a_scale[2 * 3 + 2] = kInf;
  expect_fast_equals_general(sp, "specials", &s);
  EXPECT_GT(s.general_products, 0u);
  // Extreme but finite scales: products near both ends of fp32, results under/overflowing.
  GemmProblem ex = random_problem(8, 16, 64, kMxfp8Blocks, Scales::kPow2Narrow, 15);
  for (size_t e = 0; e < ex.a_scale.size(); ++e) {
    ex.a_scale[e] = e % 2 ? 0x1p-127f : 0x1p120f;
  }
  for (size_t e = 0; e < ex.b_scale.size(); ++e) {
    ex.b_scale[e] = e % 3 ? 0x1p-60f : 0x1p-1f;
  }
  expect_fast_equals_general(ex, "extreme scales", &s);
}

}  // namespace
}  // namespace mxgate
