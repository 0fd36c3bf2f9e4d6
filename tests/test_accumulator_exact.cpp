// Covers reference/accumulator_exact: exact-mode operands per accumulator model. Generated
// operands meet the model's condition over seeds and shapes (M = 1, K not a multiple of 128, K
// below a chunk), and on them the simulated accumulator equals the correctly rounded oracle bit
// for bit (fp32 and bf16) whatever its grouping, chunking, rounding and normalisation; operands
// exact in fp32 but not in a 10-bit accumulator are rejected with the located chunk, and the
// simulation then really differs; chunks across scale blocks are rejected; fp32_rn keeps
// today's generator; every registry model (structured adders included) gets operands on which
// its simulation equals the oracle.
// Does not cover: the bound (test_accumulator_bounds), the gemm.exact property's use of the
// generator (properties/).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/accumulator.h"
#include "reference/accumulator_exact.h"
#include "reference/accumulator_simulation.h"
#include "reference/gemm_oracle.h"

namespace mxgate {
namespace {

using std::size_t;

struct Shape {
  size_t m, n, k;
};
const std::vector<Shape> kShapes = {
    {1, 5, 128}, {3, 7, 300}, {2, 2, 2048}, {4, 3, 64}, {1, 1, 1000}};

// Guards against generated operands that are not exact in the model, and against a "correct
// kernel" (the simulation, in every grouping and chunking the operands allow) that is not bit
// equal to the oracle on them.
TEST(AccumulatorExactMode, SimulationIsBitEqualToTheOracleWhateverItsOrder) {
  // Operands for sm90_fp8_mma (chunks of 128, 14 bits) are exact for any accumulator that sums
  // sub-chunks of them with at least 14 bits: every partial sum is a subset sum of a chunk.
  const AccumulatorModel target = *find_accumulator("sm90_fp8_mma");
  const std::vector<std::string> kernels = {
      "sm90_fp8_mma",
      "sm90_fp8_mma:group_size=1",
      "sm90_fp8_mma:group_size=128,rounding=nearest_even",
      "sm90_fp8_mma:chunk_k=64,group_size=16,normalize_group_sum=1",
      "sm90_fp8_mma:chunk_k=32,group_size=4,precision_bits=16",
      "fp32_rn",
  };
  for (const Shape& s : kShapes) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      SCOPED_TRACE("M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) +
                   " K=" + std::to_string(s.k) + " seed=" + std::to_string(seed));
      const ExactModeOperands g =
          make_exact_mode_operands(s.m, s.n, s.k, kDeepSeekBlocks, true, seed, target);
      std::string why;
      ASSERT_TRUE(is_exact_mode(g.problem, target, &why)) << why;
      for (OutputFormat f : {OutputFormat::kFp32, OutputFormat::kBf16}) {
        const GemmOutput exact = exact_gemm(g.problem, f);
        for (const std::string& k : kernels) {
          const GemmOutput sim = simulate_gemm(g.problem, parse_accumulator_spec(k), f);
          EXPECT_EQ(sim.fp32, exact.fp32) << k;
          EXPECT_EQ(sim.bf16, exact.bf16) << k;
        }
      }
    }
  }
}

// Guards against a generator that ignores the model's precision: a 10-bit accumulator needs
// smaller values (v*v*128 < 2^10), and its simulation is then bit-equal too.
TEST(AccumulatorExactMode, NarrowAccumulatorGetsSmallerOperands) {
  const AccumulatorModel narrow =
      parse_accumulator_spec("sm90_fp8_mma:precision_bits=10,group_size=8");
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const ExactModeOperands g =
        make_exact_mode_operands(3, 4, 640, kDeepSeekBlocks, true, seed, narrow);
    std::string why;
    ASSERT_TRUE(is_exact_mode(g.problem, narrow, &why)) << why;
    for (float x : g.problem.a) {
      ASSERT_LE(std::fabs(x), 2.0f);  // v = 2: 4 * 128 = 512 < 1024; v = 4 would reach 2048
    }
    EXPECT_EQ(simulate_gemm(g.problem, narrow, OutputFormat::kFp32).fp32,
              exact_gemm(g.problem, OutputFormat::kFp32).fp32);
  }
}

// Guards against a checker that accepts operands the accumulator cannot sum exactly: fp32 exact
// operands (v = 8, here non-negative) overflow a 10-bit accumulator's chunk; the checker names
// the chunk, and the simulation differs from the oracle, so the condition is not vacuous.
TEST(AccumulatorExactMode, CheckerRejectsWhatTheAccumulatorWouldRound) {
  const AccumulatorModel narrow =
      parse_accumulator_spec("sm90_fp8_mma:precision_bits=10,group_size=8");
  GemmProblem p =
      make_exact_mode_operands(4, 6, 512, kDeepSeekBlocks, true, 11, *find_accumulator("fp32_rn"))
          .problem;
  // Non-negative values: partial sums grow to about 128 * 16 >= 2^10 units, so the narrow
  // accumulator really drops bits (fp32 exactness depends on sum |t| only and still holds).
  for (auto* v : {&p.a, &p.b}) {
    for (float& x : *v) x = std::fabs(x);
  }
  std::string why;
  ASSERT_TRUE(is_exact_mode(p, &why)) << why;  // exact in fp32
  EXPECT_FALSE(is_exact_mode(p, narrow, &why));
  EXPECT_NE(why.find("over the chunk at k="), std::string::npos) << why;
  EXPECT_NE(why.find("reaches 2^10 units"), std::string::npos) << why;
  EXPECT_NE(simulate_gemm(p, narrow, OutputFormat::kFp32).fp32,
            exact_gemm(p, OutputFormat::kFp32).fp32);
  // A chunk under two scales is not the model's at all.
  const GemmProblem mx = make_exact_mode_operands(2, 2, 256, kMxfp8Blocks, true, 3).problem;
  EXPECT_FALSE(is_exact_mode(mx, *find_accumulator("sm90_fp8_mma"), &why));
  EXPECT_NE(why.find("chunk [0, 128) crosses a scale block"), std::string::npos) << why;
  EXPECT_THROW(
      make_exact_mode_operands(2, 2, 256, kMxfp8Blocks, true, 3, *find_accumulator("sm90_fp8_mma")),
      std::invalid_argument);
}

// Guards against refusing exact-mode operands where no chunk can cross a scale block: per-tensor
// scales (one block spanning all of K) with K = 300, not a multiple of the 128-k chunk (the last
// chunk is [256, 300)), and row-wise ones; a block boundary inside a chunk (blocks of 96 k under
// chunks of 128) is still refused.
TEST(AccumulatorExactMode, ScalesSpanningAllOfKTakeAnyK) {
  const AccumulatorModel& sm90 = *find_accumulator("sm90_fp8_mma");
  for (const BlockSizes& b : {BlockSizes{3, 300, 4, 300}, BlockSizes{1, 300, 1, 300}}) {
    const GemmProblem p = make_exact_mode_operands(3, 4, 300, b, true, 5, sm90).problem;
    std::string why;
    EXPECT_TRUE(is_exact_mode(p, sm90, &why)) << why;
    EXPECT_EQ(simulate_gemm(p, sm90, OutputFormat::kFp32).fp32,
              exact_gemm(p, OutputFormat::kFp32).fp32);
  }
  EXPECT_THROW(make_exact_mode_operands(3, 4, 300, BlockSizes{1, 96, 1, 96}, true, 5, sm90),
               std::invalid_argument);
}

// Guards against fp32_rn drifting from today's exact-mode generator and checker (the gemm.exact
// property and the gate use them).
TEST(AccumulatorExactMode, Fp32RnIsTodaysGenerator) {
  const AccumulatorModel& f = *find_accumulator("fp32_rn");
  for (uint64_t seed : {1u, 9u}) {
    const GemmProblem a = make_exact_mode_operands(3, 5, 2304, kMxfp8Blocks, true, seed).problem;
    const GemmProblem b = make_exact_mode_operands(3, 5, 2304, kMxfp8Blocks, true, seed, f).problem;
    EXPECT_EQ(a.a, b.a);
    EXPECT_EQ(a.b, b.b);
    EXPECT_EQ(a.a_scale, b.a_scale);
    EXPECT_EQ(a.b_scale, b.b_scale);
    EXPECT_TRUE(is_exact_mode(b, f));
  }
  EXPECT_THROW(is_exact_mode(make_gemm_problem(1, 1, 8, kMxfp8Blocks, false),
                             parse_accumulator_spec("fp32_rn:unit_roundoff_bits=16")),
               std::invalid_argument);
}

// Guards against refusing exact-mode operands to an fp32 accumulator with directed rounding (the
// Triton mma.sync tile's measured model): its partial sums are fp32 values, so no rounding mode
// changes them, and the operands are fp32_rn's.
TEST(AccumulatorExactMode, DirectedFp32TakesTheRoundToNearestOperands) {
  const AccumulatorModel rz = parse_accumulator_spec("fp32_rn:unit_roundoff_bits=23");
  const GemmProblem a = make_exact_mode_operands(3, 5, 300, kMxfp8Blocks, true, 4).problem;
  const GemmProblem b = make_exact_mode_operands(3, 5, 300, kMxfp8Blocks, true, 4, rz).problem;
  EXPECT_EQ(a.a, b.a);
  EXPECT_EQ(a.b_scale, b.b_scale);
  EXPECT_TRUE(is_exact_mode(b, rz));
}

// Guards against a registry model (sub-sums, halves, a late C, an fp32 store included) for
// which exact mode generates operands its own simulation rounds: a model added to the registry
// is covered here without a new test.
TEST(AccumulatorExactMode, EveryRegistryModelIsBitEqualOnItsOperands) {
  for (const AccumulatorModel& m : all_accumulators()) {
    for (const Shape& s : kShapes) {
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        SCOPED_TRACE(m.name + " M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) +
                     " K=" + std::to_string(s.k) + " seed=" + std::to_string(seed));
        // Per-tensor scales: the published models accumulate all of K (chunk_k = 0).
        const BlockSizes blocks{s.m, s.k, s.n, s.k};
        const ExactModeOperands g = make_exact_mode_operands(s.m, s.n, s.k, blocks, true, seed, m);
        std::string why;
        ASSERT_TRUE(is_exact_mode(g.problem, m, &why)) << why;
        for (OutputFormat f : {OutputFormat::kFp32, OutputFormat::kBf16}) {
          const GemmOutput exact = exact_gemm(g.problem, f);
          const GemmOutput sim = simulate_gemm(g.problem, m, f);
          EXPECT_EQ(sim.fp32, exact.fp32);
          EXPECT_EQ(sim.bf16, exact.bf16);
        }
      }
    }
  }
}

}  // namespace
}  // namespace mxgate
