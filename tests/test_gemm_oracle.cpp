// Covers reference/gemm_oracle: the exact block-scaled GEMM oracle on hand-derived problems
// (MX 1x1x32, a trailing partial K block, row-major scale indexing, bf16 output rounding,
// NaN/Inf, signed zero, validation), its fast path against the general path, the ordered fp32
// emulation (declared order, no FMA, scale placement), the rigorous bound (hand value, overflow,
// a planted bug), the exact-mode operand generator and checker, and the agreements between modes
// that must hold: on exact-mode operands exact == ordered == any summation order, inside the
// bound; on general data the ordered result lies inside the bound (many seeds, printed).
// Does not cover: decoding fp8/e8m0 bytes (format codecs), physical scale layouts, GPU kernels,
// or the speed of the exact path (bench/).
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

namespace mxgate {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

// E4M3FN decoded by its defining formula (test-local, independent of the format codecs):
// exponent field e, mantissa m: e = 0 -> m * 2^-9, else (8 + m) * 2^(e - 10); 0x7F/0xFF = NaN.
float e4m3_value(uint8_t byte) {
  const int e = (byte >> 3) & 15, m = byte & 7;
  if (e == 15 && m == 7) {
    return kNan;
  }
  const float mag = e == 0 ? std::ldexp(static_cast<float>(m), -9)
                           : std::ldexp(static_cast<float>(8 + m), e - 10);
  return (byte & 0x80) != 0 ? -mag : mag;
}

float random_e4m3(std::mt19937_64& rng) {
  for (;;) {
    const float v = e4m3_value(static_cast<uint8_t>(rng()));
    if (!std::isnan(v)) {
      return v;
    }
  }
}

// General (not exact-mode) data: random finite E4M3 values and scales of one of three kinds.
enum class Scales {
  kPow2Narrow,  // e8m0-like 2^[-1, 1]: like quantized data, blocks of a row share a magnitude
  kPow2Wide,    // e8m0-like 2^[-8, 8]
  kFp32,        // arbitrary positive fp32 in [1e-3, 1e-1] (DeepSeek fp32 scales)
};

GemmProblem random_problem(size_t m, size_t n, size_t k, BlockSizes blocks, Scales scales,
                           uint64_t seed) {
  std::mt19937_64 rng(seed);
  GemmProblem p = make_gemm_problem(m, n, k, blocks, true);
  for (float& x : p.a) {
    x = random_e4m3(rng);
  }
  for (float& x : p.b) {
    x = random_e4m3(rng);
  }
  std::uniform_int_distribution<int> narrow(-1, 1), wide(-8, 8);
  std::uniform_real_distribution<float> real(1e-3f, 1e-1f);
  for (auto* grid : {&p.a_scale, &p.b_scale}) {
    for (float& s : *grid) {
      s = scales == Scales::kFp32       ? real(rng)
          : scales == Scales::kPow2Wide ? std::ldexp(1.0f, wide(rng))
                                        : std::ldexp(1.0f, narrow(rng));
    }
  }
  return p;
}

// BF16 x BF16 (no scales), K = 384 (three 128-atoms of the engine): values 2^[-3, 3] with 8-bit
// significands, except rows i % 10 == 3 of A whose last atom spreads over 2^[-40, 40]. Tiles
// without such a row sum all of K in one exact double; tiles with one sum atoms 0-1 as a range
// and must add atom 2 product by product (general path).
GemmProblem random_mixed_bf16_problem(size_t m, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  GemmProblem p = make_gemm_problem(m, n, 384, kMxfp8Blocks, false);
  std::uniform_int_distribution<int> narrow(-3, 3), wide(-40, 40), mant(128, 255);
  auto value = [&](std::uniform_int_distribution<int>& exp) {
    const float sign = (rng() & 1) != 0 ? -1.0f : 1.0f;
    return sign * std::ldexp(static_cast<float>(mant(rng)), exp(rng) - 7);
  };
  for (size_t i = 0; i < m; ++i) {
    for (size_t kk = 0; kk < 384; ++kk) {
      p.a_at(i, kk) = value(i % 10 == 3 && kk >= 256 ? wide : narrow);
    }
  }
  for (float& x : p.b) {
    x = value(narrow);
  }
  return p;
}

// A kernel with an arbitrary summation order: dequantize (fp32), multiply, accumulate in the
// order of a random permutation of k.
std::vector<float> shuffled_naive_gemm(const GemmProblem& p, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<size_t> order(p.k);
  std::iota(order.begin(), order.end(), size_t{0});
  std::vector<float> c(p.m * p.n);
  for (size_t i = 0; i < p.m; ++i) {
    for (size_t j = 0; j < p.n; ++j) {
      std::shuffle(order.begin(), order.end(), rng);
      float acc = 0.0f;
      for (size_t kk : order) {
        const float x = p.a[i * p.k + kk] * p.scale_a(i, kk);
        const float y = p.b[j * p.k + kk] * p.scale_b(j, kk);
        acc += x * y;
      }
      c[i * p.n + j] = acc;
    }
  }
  return c;
}

std::vector<uint16_t> to_bf16(const std::vector<float>& x) {
  std::vector<uint16_t> out(x.size());
  for (size_t e = 0; e < x.size(); ++e) {
    out[e] = round_to_bf16_bits(x[e]);
  }
  return out;
}

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

// ---- Ordered emulation
// ---------------------------------------------------------------------------

// Guards against an emulation that sums in another order (or exactly) instead of the declared one.
TEST(OrderedGemm, FollowsTheDeclaredOrder) {
  // No scales, a = [2^24, 1, 1], b = [1, 1, 1], one block: acc = fl(fl(2^24 + 1) + 1);
  // 2^24 + 1 is a tie (fp32 ulp at 2^24 is 2) -> 2^24 (even), twice. Exact: 2^24 + 2.
  GemmProblem p = make_gemm_problem(1, 1, 3, kMxfp8Blocks, false);
  p.a = {0x1p24f, 1.0f, 1.0f};
  p.b = {1.0f, 1.0f, 1.0f};
  OrderModel order;
  order.block_k = 0;
  EXPECT_EQ(ordered_gemm(p, order).fp32[0], 0x1p24f);
  EXPECT_EQ(exact_gemm(p, OutputFormat::kFp32).fp32[0], 0x1p24f + 2.0f);
  // Blocks of 2 ([2^24, 1] then [1]) round the same way: part = 2^24, acc = fl(2^24 + 1) = 2^24.
  order.block_k = 2;
  EXPECT_EQ(ordered_gemm(p, order).fp32[0], 0x1p24f);
  // Reversed data [1, 1, 2^24] in one block: fl(1 + 1) = 2, fl(2 + 2^24) = 2^24 + 2, exact.
  p.a = {1.0f, 1.0f, 0x1p24f};
  order.block_k = 0;
  EXPECT_EQ(ordered_gemm(p, order).fp32[0], 0x1p24f + 2.0f);
}

// Guards against the compiler fusing part + a*b into an FMA (one rounding instead of two).
TEST(OrderedGemm, NeverFusesIntoFma) {
  // a = [1, 1 + 2^-12], b = [-1, 1 + 2^-12], one block, no scales.
  // k=0: part = fl(0 + fl(-1)) = -1.
  // k=1: fl((1 + 2^-12)^2) = fl(1 + 2^-11 + 2^-24): 2^-24 is half an ulp, tie -> even:
  //      1 + 2^-11. part = fl(-1 + 1 + 2^-11) = 2^-11.
  // Fused, fma(a, b, part) = -1 + 1 + 2^-11 + 2^-24 = 2^-11 + 2^-24 (exact): different.
  GemmProblem p = make_gemm_problem(1, 1, 2, kMxfp8Blocks, false);
  const float x = 1.0f + 0x1p-12f;
  p.a = {1.0f, x};
  p.b = {-1.0f, x};
  OrderModel order;
  order.block_k = 0;
  EXPECT_EQ(ordered_gemm(p, order).fp32[0], 0x1p-11f);
  order.scale_application = ScaleApplication::kPerProduct;
  EXPECT_EQ(ordered_gemm(p, order).fp32[0], 0x1p-11f);
  EXPECT_EQ(exact_gemm(p, OutputFormat::kFp32).fp32[0], 0x1p-11f + 0x1p-24f);
}

// Guards against an emulation whose per-partial scaling is fl(part * fl(sa*sb)) (or exact)
// instead of the declared fl(fl(part*sa)*sb): one rounding fewer changes the result.
TEST(OrderedGemm, PartialIsScaledByAThenByB) {
  // K = 1, a = [3], b = [1], sa = sb = 1 + 2^-23 (fp32 block scales). part = 3.
  // fl(3 * (1 + 2^-23)) = fl(3 + 1.5 * 2^-22): ulp in [2, 4) is 2^-22, a tie between 3 + 2^-22
  //   (odd) and 3 + 2^-21 (even) -> 3 + 2^-21.
  // fl((3 + 2^-21)(1 + 2^-23)) = fl(3 + 3.5 * 2^-22 + 2^-44) -> 3 + 4 * 2^-22 = 3 + 2^-20.
  // Scales combined first: fl(sa*sb) = fl(1 + 2^-22 + 2^-46) = 1 + 2^-22; 3 * that = 3 + 3*2^-22
  //   exactly; the exact product 3 + 3*2^-22 + 3*2^-46 also rounds to 3 + 3*2^-22.
  GemmProblem p = make_gemm_problem(1, 1, 1, kDeepSeekBlocks, true);
  p.a = {3.0f};
  p.b = {1.0f};
  p.a_scale = {1.0f + 0x1p-23f};
  p.b_scale = {1.0f + 0x1p-23f};
  EXPECT_EQ(ordered_gemm(p, OrderModel{}).fp32[0], 3.0f + 0x1p-20f);
  EXPECT_EQ(exact_gemm(p, OutputFormat::kFp32).fp32[0], 3.0f + 0x3p-22f);
  // Per product the same two roundings happen to the single product: 3 + 2^-20 again.
  OrderModel per_product;
  per_product.scale_application = ScaleApplication::kPerProduct;
  EXPECT_EQ(ordered_gemm(p, per_product).fp32[0], 3.0f + 0x1p-20f);

  // On random data the declared order is replayed here with every rounding forced through a
  // volatile store (test-local, not the oracle's code) and must match bit for bit.
  const GemmProblem r = random_problem(3, 5, 256, kDeepSeekBlocks, Scales::kFp32, 22);
  const GemmOutput c = ordered_gemm(r, OrderModel{});  // kPerPartial, 128-blocks
  for (size_t i = 0; i < r.m; ++i) {
    for (size_t j = 0; j < r.n; ++j) {
      volatile float acc = 0.0f;
      for (size_t k0 = 0; k0 < r.k; k0 += 128) {
        volatile float part = 0.0f;
        for (size_t kk = k0; kk < k0 + 128; ++kk) {
          volatile float prod = r.a[i * r.k + kk] * r.b[j * r.k + kk];
          part = part + prod;
        }
        volatile float by_a = part * r.scale_a(i, k0);
        volatile float by_b = by_a * r.scale_b(j, k0);
        acc = acc + by_b;
      }
      EXPECT_EQ(bits(c.fp32[i * r.n + j]), bits(acc)) << "(" << i << "," << j << ")";
    }
  }
}

// Guards against kPerPartial silently using one scale for a partial that spans two scale blocks.
TEST(OrderedGemm, PerPartialRejectsBlocksCrossingScaleBlocks) {
  // MX, K = 64, a = b = ones, A scales [1, 2^-30]. kPerProduct may span both blocks:
  // products 1 (x32) then 2^-30 (x32); part reaches 32, and fl(32 + 2^-30) = 32 (ulp 2^-18): 32.
  GemmProblem p = make_gemm_problem(1, 1, 64, kMxfp8Blocks, true);
  std::fill(p.a.begin(), p.a.end(), 1.0f);
  std::fill(p.b.begin(), p.b.end(), 1.0f);
  p.a_scale = {1.0f, 0x1p-30f};
  OrderModel order{64, ScaleApplication::kPerProduct, OutputFormat::kFp32};
  EXPECT_EQ(ordered_gemm(p, order).fp32[0], 32.0f);
  order.scale_application = ScaleApplication::kPerPartial;
  try {
    ordered_gemm(p, order);
    ADD_FAILURE() << "kPerPartial accepted a 64-block over 32-element scale blocks";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("an A scale block"), std::string::npos) << e.what();
  }
  // Exact keeps the small half: 32 + 32 * 2^-30 = 32 + 2^-25 (a double).
  EXPECT_EQ(exact_gemm_fp64(p)[0], 32.0 + 0x1p-25);
}

// ---- Bound mode
// ------------------------------------------------------------------------------------

// Guards against a bound formula that differs from the documented derivation.
TEST(Bounds, HandDerivedValue) {
  // K = 2, no scales, a = b = [1, 1]; model: one block (block_k = 0), r = 1 product rounding,
  // s = 0 partial roundings, u = 2^-24, eta = 0, fp32 output (no final rounding).
  // N = r + (L - 1) + s + (B - 1) = 1 + 1 + 0 + 0 = 2; gamma_2 = 2u / (1 - 2u);
  // sum |t| = 2, so bound = 2 * gamma_2 = 4u / (1 - 2u) = 2^-22 / (1 - 2^-23).
  GemmProblem p = make_gemm_problem(1, 1, 2, kMxfp8Blocks, false);
  p.a = {1.0f, 1.0f};
  p.b = {1.0f, 1.0f};
  AccumModel model;
  model.block_k = 0;
  model.product_roundings = 1;
  model.partial_roundings = 0;
  model.underflow_eta = 0;
  const GemmBounds b = compute_bounds(p, model);
  EXPECT_EQ(b.exact[0], 2.0);
  EXPECT_EQ(b.abs_sum[0], 2.0);
  const double expected = 0x1p-22 / (1 - 0x1p-23);
  EXPECT_NEAR(b.bound[0], expected, expected * 1e-9);
  // bf16 output adds the final rounding: u_out (|c| + E) + eta_out = 2^-8 (2 + E) + 2^-134
  // (bf16 has 8 significant bits: unit roundoff 2^-8).
  model.output = OutputFormat::kBf16;
  const double e_bf16 = expected + 0x1p-8 * (2 + expected) + 0x1p-134;
  EXPECT_NEAR(compute_bounds(p, model).bound[0], e_bf16, e_bf16 * 1e-9);
}

// Guards against finite bounds where some summation order may overflow (the model excludes it).
TEST(Bounds, InfiniteWhereOverflowIsPossible) {
  // a = [2^127, -2^127], b = [4, 4]: exact 0, but sum |t| = 2^130 exceeds fp32's range, so an
  // order that adds 2^129 first overflows: the bound is +Inf and anything is accepted.
  GemmProblem p = make_gemm_problem(1, 1, 2, kMxfp8Blocks, false);
  p.a = {0x1p127f, -0x1p127f};
  p.b = {4.0f, 4.0f};
  const GemmBounds b = compute_bounds(p, AccumModel{});
  EXPECT_EQ(b.exact[0], 0.0);
  EXPECT_EQ(b.bound[0], std::numeric_limits<double>::infinity());
  GemmOutput inf_out{1, 1, OutputFormat::kFp32, {kInf}, {}};
  EXPECT_TRUE(check_bound(b, inf_out).ok());
}

// Guards against a bound so loose (or a check so lax) that it misses a real structural bug: a
// kernel that drops the trailing partial K block (Z9) on general data.
TEST(Bounds, FlagsADroppedTrailingBlock) {
  GemmProblem p = random_problem(4, 6, 160, kDeepSeekBlocks, Scales::kFp32, 31);
  AccumModel model;  // vLLM Triton: 128-blocks, fl(a*b), (part*sa)*sb
  const GemmBounds bounds = compute_bounds(p, model);
  GemmProblem dropped = p;  // the buggy kernel never reads k >= 128
  for (size_t i = 0; i < p.m; ++i) {
    std::fill_n(&dropped.a[i * p.k + 128], 32, 0.0f);
  }
  const BoundVerdict bad = check_bound(bounds, ordered_gemm(dropped, OrderModel{}));
  EXPECT_EQ(bad.outside, p.m * p.n) << bad.summary();
  EXPECT_TRUE(check_bound(bounds, ordered_gemm(p, OrderModel{})).ok());
  // A single element perturbed by many ulps is located.
  GemmOutput planted = ordered_gemm(p, OrderModel{});
  planted.fp32[2 * p.n + 3] *= 1.001f;
  const BoundVerdict one = check_bound(bounds, planted);
  ASSERT_EQ(one.outside, 1u) << one.summary();
  EXPECT_EQ(one.violations[0].row, 2u);
  EXPECT_EQ(one.violations[0].col, 3u);
}

// Guards against comparing an output of the wrong shape or format against bounds.
TEST(Bounds, CheckRejectsMismatchedOutputs) {
  GemmProblem p = random_problem(2, 3, 32, kMxfp8Blocks, Scales::kPow2Wide, 41);
  const GemmBounds b = compute_bounds(p, AccumModel{});
  EXPECT_THROW(check_bound(b, exact_gemm(p, OutputFormat::kBf16)), std::invalid_argument);
  GemmOutput wrong = exact_gemm(p, OutputFormat::kFp32);
  wrong.cols = 2;
  EXPECT_THROW(check_bound(b, wrong), std::invalid_argument);
}

// Guards against a bound that is not rigorous for the emulated orders on general data (any
// element outside is a bound bug, not a kernel bug). Seeds and tightness are printed.
TEST(Bounds, OrderedResultsLieWithinTheBoundOnRandomData) {
  struct Case {
    const char* name;
    BlockSizes blocks;
    Scales scales;
    size_t m, n, k;
    OrderModel order;
    AccumModel model;
  };
  AccumModel mx_model;
  mx_model.block_k = 32;
  AccumModel per_product;
  per_product.product_roundings = 3;
  per_product.partial_roundings = 0;
  AccumModel bf16_out;
  bf16_out.output = OutputFormat::kBf16;
  const std::vector<Case> cases{
      {"mx e8m0",
       kMxfp8Blocks,
       Scales::kPow2Wide,
       6,
       10,
       160,
       {32, ScaleApplication::kPerPartial},
       mx_model},
      {"deepseek fp32-scales", kDeepSeekBlocks, Scales::kFp32, 5, 9, 300, {}, AccumModel{}},
      {"deepseek per-product",
       kDeepSeekBlocks,
       Scales::kFp32,
       5,
       9,
       300,
       {128, ScaleApplication::kPerProduct},
       per_product},
      {"deepseek bf16 out",
       kDeepSeekBlocks,
       Scales::kFp32,
       5,
       9,
       256,
       {128, ScaleApplication::kPerPartial, OutputFormat::kBf16},
       bf16_out},
  };
  for (const Case& c : cases) {
    double worst_ratio = 0;
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      SCOPED_TRACE(std::string(c.name) + " seed " + std::to_string(seed));
      const GemmProblem p = random_problem(c.m, c.n, c.k, c.blocks, c.scales, seed);
      const GemmBounds bounds = compute_bounds(p, c.model);
      const GemmOutput out = ordered_gemm(p, c.order);
      const BoundVerdict v = check_bound(bounds, out);
      EXPECT_TRUE(v.ok()) << v.summary();
      for (size_t e = 0; e < bounds.exact.size(); ++e) {
        const double actual =
            out.format == OutputFormat::kFp32 ? out.fp32[e] : bf16_bits_to_double(out.bf16[e]);
        if (bounds.bound[e] > 0) {
          worst_ratio =
              std::max(worst_ratio, std::fabs(actual - bounds.exact[e]) / bounds.bound[e]);
        }
      }
    }
    std::cout << "[ bound    ] " << c.name
              << ": seeds 1..12, worst |ordered-exact|/bound = " << worst_ratio << "\n";
  }
}

// ---- Exact-mode operands and agreement between modes
// ---------------------------------------------

// Guards against generated exact-mode operands that do not meet the exact-mode condition, and a
// checker that accepts a violation.
TEST(ExactMode, GeneratorMeetsTheConditionAndCheckerRejectsViolations) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    const ExactModeOperands g = make_exact_mode_operands(7, 19, 2304, kMxfp8Blocks, true, seed);
    EXPECT_EQ(g.seed, seed);
    std::string why;
    EXPECT_TRUE(is_exact_mode(g.problem, &why)) << why;
    for (float x : g.problem.a) {
      ASSERT_TRUE(x == std::trunc(x) && std::fabs(x) <= 8) << x;  // small E4M3 integers
    }
  }
  // Same seed, same operands (the seed reproduces the problem).
  EXPECT_EQ(make_exact_mode_operands(3, 3, 64, kDeepSeekBlocks, true, 9).problem.a,
            make_exact_mode_operands(3, 3, 64, kDeepSeekBlocks, true, 9).problem.a);
  EXPECT_TRUE(is_exact_mode(make_exact_mode_operands(3, 4, 96, kMxfp8Blocks, false, 5).problem));

  // Crafted violation: a = [1, 1, 1], b = [1, 2^-24, 2^-24] (no scales): e0 = -24 and
  // sum |t| = 2^24 + 2 units > 2^24. In k order an fp32 accumulator computes fl(1 + 2^-24) = 1
  // (tie, even) twice: 1, while the exact sum 1 + 2^-23 is an fp32 value.
  GemmProblem v = make_gemm_problem(1, 1, 3, kMxfp8Blocks, false);
  v.a = {1.0f, 1.0f, 1.0f};
  v.b = {1.0f, 0x1p-24f, 0x1p-24f};
  std::string why;
  EXPECT_FALSE(is_exact_mode(v, &why));
  EXPECT_NE(why.find("2^24"), std::string::npos) << why;
  EXPECT_EQ(ordered_gemm(v, OrderModel{0}).fp32[0], 1.0f);
  EXPECT_EQ(exact_gemm(v, OutputFormat::kFp32).fp32[0], 1.0f + 0x1p-23f);
  // With 2^-23 instead: e0 = -23, sum = 2^23 + 2 units: exact mode, and the orders agree.
  v.b = {1.0f, 0x1p-23f, 0x1p-23f};
  EXPECT_TRUE(is_exact_mode(v, &why)) << why;
  EXPECT_EQ(ordered_gemm(v, OrderModel{0}).fp32[0], 1.0f + 0x1p-22f);
  // A non-power-of-two scale breaks exactness of the scaling step.
  GemmProblem s = make_exact_mode_operands(2, 2, 64, kMxfp8Blocks, true, 4).problem;
  s.a_scale[1] = 3.0f;
  EXPECT_FALSE(is_exact_mode(s, &why));
  EXPECT_NE(why.find("power of two"), std::string::npos) << why;
  // A scale that pushes a dequantized value out of fp32's range.
  s.a_scale[1] = 0x1p126f;
  s.a[0 * 64 + 40] = 8.0f;  // row 0, k = 40: scaled by a_scale[1]
  EXPECT_FALSE(is_exact_mode(s, &why));
  EXPECT_THROW(make_exact_mode_operands(1, 1, (size_t{1} << 24) + 1, kMxfp8Blocks, false, 1),
               std::invalid_argument);
}

// Guards against disagreement between modes where exactness forces agreement: on exact-mode
// operands exact == ordered (both scale placements) == random summation orders, bit for bit,
// in fp32 and bf16, and exact lies inside the bound.
TEST(ExactMode, AllModesAgreeBitForBit) {
  struct Case {
    const char* name;
    BlockSizes blocks;
    bool scaled;
    size_t m, n, k;
    size_t order_block;  // kPerPartial needs blocks inside the scale block
  };
  const std::vector<Case> cases{
      {"mx", kMxfp8Blocks, true, 5, 7, 160, 32},
      {"deepseek", kDeepSeekBlocks, true, 3, 130, 288, 128},
      {"bf16", kMxfp8Blocks, false, 4, 6, 512, 0},
  };
  for (const Case& c : cases) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE(std::string(c.name) + " seed " + std::to_string(seed));
      const GemmProblem p =
          make_exact_mode_operands(c.m, c.n, c.k, c.blocks, c.scaled, seed).problem;
      ASSERT_TRUE(is_exact_mode(p));
      const GemmOutput exact = exact_gemm(p, OutputFormat::kFp32);
      const OrderModel partial{c.order_block, ScaleApplication::kPerPartial};
      const OrderModel product{96, ScaleApplication::kPerProduct};
      for (const OrderModel& order : {partial, product}) {
        const BitExactVerdict v = compare_fp32(p.m, p.n, exact.fp32, ordered_gemm(p, order).fp32);
        EXPECT_TRUE(v.ok()) << v.summary();
      }
      for (uint64_t shuffle = 0; shuffle < 3; ++shuffle) {
        const BitExactVerdict v =
            compare_fp32(p.m, p.n, exact.fp32, shuffled_naive_gemm(p, seed * 100 + shuffle));
        EXPECT_TRUE(v.ok()) << v.summary();
      }
      OrderModel bf16_order = partial;
      bf16_order.output = OutputFormat::kBf16;
      const GemmOutput exact16 = exact_gemm(p, OutputFormat::kBf16);
      EXPECT_TRUE(compare_bf16(p.m, p.n, exact16.bf16, ordered_gemm(p, bf16_order).bf16).ok());
      EXPECT_EQ(exact16.bf16, to_bf16(exact.fp32));
      AccumModel model;
      model.block_k = c.order_block;
      const BoundVerdict inside = check_bound(compute_bounds(p, model), exact);
      EXPECT_TRUE(inside.ok()) << inside.summary();
    }
  }
}

}  // namespace
}  // namespace mxgate
