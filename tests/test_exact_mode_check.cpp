// Covers reference/gemm_oracle's is_exact_mode against a plain restatement of its condition
// (gemm_oracle.h), evaluated here in double arithmetic term by term for every output element:
// random problems near each edge of the condition (sum of terms near 2^24 units, units and
// magnitudes near fp32's range, zero values and scales) get the same verdict and the same first
// violating element. is_exact_mode certifies most elements from per-row bounds without walking K;
// this guards that shortcut.
// Does not cover: the exact-mode operand generators (test_gemm_oracle_modes.cpp), the chunk
// condition of aligned-chunk accumulators (test_accumulator_exact.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "reference/gemm_oracle.h"

namespace {

using mxgate::GemmProblem;

// The lowest set bit of a finite nonzero double: x = odd * 2^lowest_bit(x).
int lowest_bit(double x) {
  int e = 0;
  double m = std::frexp(std::fabs(x), &e);  // x = m * 2^e, m in [0.5, 1)
  e -= 53;
  m = std::ldexp(m, 53);  // an integer below 2^53
  while (std::fmod(m, 2.0) == 0.0) {
    m /= 2.0;
    ++e;
  }
  return e;
}

bool fp32_units(int unit, int top) { return unit >= -149 && top <= 127; }

// "A(i,k)", "B(j,k)" or "C(i,j)": where the condition first fails, in is_exact_mode's order (every
// a*sa, every b*sb, then the output elements row by row); nothing when it holds.
std::optional<std::string> first_violation(const GemmProblem& p) {
  const auto operand = [&p](bool is_a, std::size_t r, std::size_t kk, int* se) {
    const float v = is_a ? p.a[r * p.k + kk] : p.b[r * p.k + kk];
    const float s = is_a ? p.scale_a(r, kk) : p.scale_b(r, kk);
    *se = s == 0 ? 0 : std::ilogb(s);
    return static_cast<double>(v) * static_cast<double>(s);  // exact: <= 24 bits, in range
  };
  for (bool is_a : {true, false}) {
    for (std::size_t r = 0; r < (is_a ? p.m : p.n); ++r) {
      for (std::size_t kk = 0; kk < p.k; ++kk) {
        int se;
        const double x = operand(is_a, r, kk, &se);
        if (x != 0 && !fp32_units(lowest_bit(x), std::ilogb(x))) {
          return std::string(is_a ? "A(" : "B(") + std::to_string(r) + "," + std::to_string(kk) +
                 ")";
        }
      }
    }
  }
  for (std::size_t i = 0; i < p.m; ++i) {
    for (std::size_t j = 0; j < p.n; ++j) {
      const std::string here = "C(" + std::to_string(i) + "," + std::to_string(j) + ")";
      int e0 = 1 << 20;
      for (std::size_t kk = 0; kk < p.k; ++kk) {
        int ea, eb;
        const double t = operand(true, i, kk, &ea) * operand(false, j, kk, &eb);
        if (t != 0) e0 = std::min(e0, lowest_bit(t));
      }
      double sum = 0;  // exact while it stays below 2^(e0 + 53)
      // Every partial sum of a subset of the terms is at most `sum`; with x (ea + eb, ea, eb or
      // 0) removed it is a multiple of 2^(e0 - x) below 2^(ilogb(sum) - x + 1).
      std::vector<int> xs;
      for (std::size_t kk = 0; kk < p.k; ++kk) {
        int ea, eb;
        const double t = operand(true, i, kk, &ea) * operand(false, j, kk, &eb);
        if (t == 0) continue;
        sum += std::fabs(t);
        if (sum > std::ldexp(1.0, e0 + 24)) return here;
        xs.insert(xs.end(), {ea + eb, ea, eb, 0});
        if (!fp32_units(ea + eb, ea + eb)) return here;
      }
      for (int x : xs) {
        if (!fp32_units(e0 - x, std::ilogb(sum) - x)) return here;
      }
    }
  }
  return std::nullopt;
}

// A problem whose values are odd multiples of powers of two and whose scales are powers of two
// (some zero) around a random base exponent, sized so that every edge of the condition is hit.
GemmProblem random_problem(std::mt19937_64& rng) {
  const auto pick = [&rng](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  const std::size_t m = pick(1, 5), n = pick(1, 5), k = pick(1, 70);
  const mxgate::BlockSizes blocks{
      static_cast<std::size_t>(pick(1, 3)), static_cast<std::size_t>(pick(1, 40)),
      static_cast<std::size_t>(pick(1, 3)), static_cast<std::size_t>(pick(1, 40))};
  GemmProblem p = mxgate::make_gemm_problem(m, n, k, blocks, true);
  const int odd_bits = pick(1, 9);
  const int scale_spread = pick(0, 9) == 0 ? pick(20, 40) : pick(0, 8);
  const int value_spread = pick(0, 9) == 0 ? pick(20, 60) : pick(0, 6);
  const int zero_percent = pick(0, 30);
  // Each operand its own value and scale exponents: where the two meet, e0 and the partial sums
  // approach fp32's range from one side only.
  const auto fill = [&](std::vector<float>& values, std::vector<float>& scales) {
    const int value_base = std::vector<int>{-130, -70, -20, 0, 0, 0, 30, 90}[pick(0, 7)];
    const int scale_base = std::vector<int>{-140, -128, -75, -12, 0, 0, 40, 60, 100}[pick(0, 8)];
    for (float& x : values) {
      if (pick(0, 99) < zero_percent) {
        x = 0.0f;
        continue;
      }
      const int odd = 2 * pick(0, (1 << odd_bits) / 2 - 1) + 1;
      const int e = std::clamp(value_base + pick(0, value_spread), -149, 127 - odd_bits);
      x = std::ldexp(static_cast<float>(pick(0, 1) ? odd : -odd), e);
    }
    for (float& s : scales) {
      s = pick(0, 99) < zero_percent / 3
              ? 0.0f
              : std::ldexp(1.0f,
                           std::clamp(scale_base + pick(-scale_spread, scale_spread), -149, 127));
    }
  };
  fill(p.a, p.a_scale);
  fill(p.b, p.b_scale);
  return p;
}

// Guards against the per-row shortcut certifying an element whose terms break the condition
// (or refusing one that meets it), and against a first violation reported elsewhere than where
// walking the elements in order finds it.
TEST(ExactModeCheck, AgreesWithTheConditionTermByTerm) {
  std::mt19937_64 rng(20261202);
  int holds = 0, fails = 0, cell_fails = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const GemmProblem p = random_problem(rng);
    const std::optional<std::string> expected = first_violation(p);
    std::string why;
    const bool exact = mxgate::is_exact_mode(p, &why);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + why);
    ASSERT_EQ(exact, !expected.has_value()) << (expected ? *expected : "holds");
    if (expected) {
      ASSERT_NE(why.find("at " + *expected), std::string::npos) << *expected;
      ++fails;
      cell_fails += expected->front() == 'C';
    } else {
      ++holds;
    }
  }
  std::cout << holds << " problems exact-mode, " << fails << " not (" << cell_fails
            << " at an output element)\n";
  // Both sides of the condition were exercised, each often.
  EXPECT_GT(holds, 800);
  EXPECT_GT(cell_fails, 800);
}

}  // namespace
