// Covers reference/gemm_oracle's other modes and their agreement with exact mode: the ordered
// fp32 emulation (declared order, no FMA, scale placement), the rigorous bound (hand value,
// overflow, a planted bug), the exact-mode operand generator and checker, and the agreements
// between modes that must hold: on exact-mode operands exact == ordered == any summation order,
// inside the bound; on general data the ordered result lies inside the bound (many seeds,
// printed).
// Does not cover: exact mode on hand-derived problems and its fast path
// (test_gemm_oracle_exact.cpp), decoding fp8/e8m0 bytes (format codecs), physical scale layouts,
// GPU kernels.
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
using test_support::random_problem;
using test_support::Scales;
using test_support::shuffled_naive_gemm;
using test_support::to_bf16;

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
