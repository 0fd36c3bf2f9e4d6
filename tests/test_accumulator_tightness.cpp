// Covers the tightness of bound mode for every accumulator model of the registry
// (reference/accumulator.h, docs/accumulators.md §5): outputs just outside what a model allows
// must fail its bound, so a bound that became looser is caught, not only one that became too
// tight (test_accumulator_bounds.cpp holds each simulation inside). Per model:
//   - one more bit lost: the same adder with one bit less (aligned chunks: precision_bits - 1 in
//     the reference simulation; fp32_rn: a sequential sum rounded to nearest at 23 bits, written
//     here) on a sum whose small terms that bit decides;
//   - one product off: the model's own simulation with the largest product's A operand (448, the
//     product that dominates output (0, 0)) one code of E4M3FN away (416).
// Each model's own simulation on the same problem is inside (the control).
// Does not cover: the bound's derivation or value (test_accumulator_bounds.cpp,
// test_gemm_oracle_modes.cpp), block scales (per-tensor here), bf16 outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "reference/accumulator.h"
#include "reference/accumulator_bounds.h"
#include "reference/accumulator_simulation.h"
#include "reference/format.h"
#include "reference/gemm_oracle.h"

namespace mxgate {
namespace {

using std::size_t;

// x rounded to nearest (ties to even) at `bits` significant bits, by its exponent field.
double round_to_bits(double x, int bits) {
  if (x == 0) return x;
  int e = 0;
  (void)std::frexp(x, &e);  // |x| in [2^(e-1), 2^e)
  const double quantum = std::ldexp(1.0, e - bits);
  return std::nearbyint(x / quantum) * quantum;  // default mode: to nearest even
}

// M = N = 1, per-tensor (no scales): a = [1, t, t, ...], b = all 1, K values.
GemmProblem sum_problem(size_t k, double t) {
  GemmProblem p = make_gemm_problem(1, 1, k, BlockSizes{1, k, 1, k}, true);
  p.a.assign(k, static_cast<float>(t));
  p.a[0] = 1.0f;
  p.b.assign(k, 1.0f);
  p.a_scale.clear();
  p.b_scale.clear();
  return p;
}

// The model's bits: what the terms t are placed against.
int precision_of(const AccumulatorModel& m) {
  return m.kind == AccumulatorKind::kFloat ? 24 : m.chunks.precision_bits;
}

// The output of an adder with one bit less than `m` on `p`.
GemmOutput one_bit_less(const GemmProblem& p, const AccumulatorModel& m) {
  if (m.kind == AccumulatorKind::kAlignedChunks) {
    AccumulatorModel lossy = m;
    lossy.chunks.precision_bits -= 1;
    return simulate_gemm(p, lossy, OutputFormat::kFp32);
  }
  // fp32_rn with 23 bits: one product per step, each sum rounded (a = [1, t, ...] times 1).
  double acc = 0;
  for (size_t kk = 0; kk < p.k; ++kk) {
    acc = round_to_bits(acc + static_cast<double>(p.a[kk]) * p.b[kk], 23);
  }
  GemmOutput out{1, 1, OutputFormat::kFp32, {static_cast<float>(acc)}, {}};
  return out;
}

// Models whose bound, today, passes one bit less on this data (a finding, not yet explained: at
// a sum near 1 their bounds are 41, 68 and 81 fp32 ulps for one group, looser than the last bit
// of adders that keep 25 to 36 bits): |one bit less - exact| / bound is held at least at the
// value measured (December 2026, rounded down), so it cannot grow looser unseen. Every other
// model must reject one bit less outright.
struct LooseModel {
  std::string_view name;
  double floor;
};
constexpr LooseModel kLooserThanOneBit[] = {
    {"cdna3_fp8_mfma", 0.25}, {"sm100_f8f6f4", 0.34}, {"sm100_mxf4nvf4", 1.3e-5}};

// Guards against a bound grown loose enough to pass an adder that keeps one bit less than the
// model: the small terms t sit at the last bit the model keeps and the lossy adder does not
// (aligned chunks, P bits relative to the group's largest term, ulp 2^(1-P): t = 1.5 * 2^(1-P),
// dropped whole by truncation at P - 1 bits; fp32_rn: t = 1.5 * 2^-24, which round to nearest
// at 24 bits carries up and at 23 bits drops), so the lossy adder loses them all.
TEST(BoundTightness, EveryModelRejectsOneMoreBitLost) {
  for (const AccumulatorModel& m : all_accumulators()) {
    SCOPED_TRACE(m.name);
    if (m.kind == AccumulatorKind::kFloat) {
      // one_bit_less knows fp32 round to nearest only: a new float model needs its own here.
      ASSERT_EQ(m.fp.unit_roundoff, 0x1p-24) << "a float model other than fp32_rn";
    }
    const int p = precision_of(m);
    const size_t group = m.kind == AccumulatorKind::kFloat ? 128 : m.chunks.group_size;
    const size_t sub = m.kind == AccumulatorKind::kFloat ? 1 : m.chunks.sub_sum;
    // K: one group (one 128-block for the float kind).
    const double t = std::ldexp(1.5, m.kind == AccumulatorKind::kFloat ? -p : 1 - p);
    GemmProblem prob = sum_problem(group, t);
    if (sub > 1) {  // the 1 alone in its sub-sum; each other sub-sum sums exactly to t
      for (size_t kk = 1; kk < prob.k; ++kk) {
        prob.a[kk] = kk < sub ? 0.0f : static_cast<float>(t / static_cast<double>(sub));
      }
    }
    const GemmBounds b = compute_bounds(prob, m, OutputFormat::kFp32);
    const BoundVerdict own = check_bound(b, simulate_gemm(prob, m, OutputFormat::kFp32));
    EXPECT_TRUE(own.ok()) << own.summary();
    const GemmOutput lossy = one_bit_less(prob, m);
    const double ratio = std::fabs(lossy.fp32[0] - b.exact[0]) / b.bound[0];
    std::cout << "[ tight    ] " << m.name << ": one bit less is " << ratio << " of the bound\n";
    const auto loose = std::find_if(std::begin(kLooserThanOneBit), std::end(kLooserThanOneBit),
                                    [&](const LooseModel& l) { return l.name == m.name; });
    if (loose != std::end(kLooserThanOneBit)) {
      EXPECT_GE(ratio, loose->floor) << m.name << "'s bound grew looser than recorded";
      continue;
    }
    const BoundVerdict v = check_bound(b, lossy);
    EXPECT_FALSE(v.ok()) << "one bit less passes " << m.name << "'s bound: got " << lossy.fp32[0]
                         << ", exact " << b.exact[0] << ", bound " << b.bound[0];
  }
}

// Guards against a bound grown loose enough to pass a kernel that reads one operand code wrong:
// the dominant product's A value moved to the next E4M3FN value (448 -> 416).
TEST(BoundTightness, EveryModelRejectsOneProductOff) {
  for (const AccumulatorModel& m : all_accumulators()) {
    SCOPED_TRACE(m.name);
    const size_t k = 300;  // past two 128-blocks, a K tail
    GemmProblem prob = make_gemm_problem(2, 3, k, BlockSizes{2, k, 3, k}, true);
    prob.a_scale.clear();
    prob.b_scale.clear();
    uint32_t state = 12345;
    const auto code = [&state] {
      state = state * 1664525u + 1013904223u;
      return decode(Format::kE4M3FN, (state >> 24) & 0x3Fu);  // 0 .. 1.875
    };
    for (float& x : prob.a) x = code();
    for (float& x : prob.b) x = code();
    // The product that matters: 448 * 448 in output (0, 0), inside the second 128-block.
    const size_t at = 137;
    prob.a[at] = prob.b[at] = 448.0f;
    const GemmBounds b = compute_bounds(prob, m, OutputFormat::kFp32);
    const BoundVerdict own = check_bound(b, simulate_gemm(prob, m, OutputFormat::kFp32));
    EXPECT_TRUE(own.ok()) << own.summary();
    GemmProblem off = prob;
    off.a[at] = decode(Format::kE4M3FN, 0x7D);  // 416, one code below 448 (0x7E)
    const GemmOutput wrong = simulate_gemm(off, m, OutputFormat::kFp32);
    const BoundVerdict v = check_bound(b, wrong);
    EXPECT_FALSE(v.ok()) << "one product off passes " << m.name << "'s bound: got " << wrong.fp32[0]
                         << ", exact " << b.exact[0] << ", bound " << b.bound[0];
  }
}

}  // namespace
}  // namespace mxgate
