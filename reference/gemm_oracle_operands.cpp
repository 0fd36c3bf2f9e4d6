// Exact-mode operands (gemm_oracle.h): random operands on which every fp32 summation order is
// exact, and the check that a problem has that property (is_exact_mode).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/float_bits.h"
#include "reference/gemm_oracle.h"

namespace mxgate {

using std::size_t;

namespace {

std::string num(size_t x) { return std::to_string(x); }

}  // namespace

ExactModeOperands make_exact_mode_operands(size_t m, size_t n, size_t k, BlockSizes blocks,
                                           bool scaled, uint64_t seed) {
  if (k > (size_t{1} << 24)) {
    throw std::invalid_argument("make_exact_mode_operands: K = " + num(k) +
                                " > 2^24: no integer operands keep fp32 sums exact");
  }
  ExactModeOperands out;
  out.seed = seed;
  out.problem = make_gemm_problem(m, n, k, blocks, scaled);
  GemmProblem& p = out.problem;
  // sum |t| <= K * v^2 * 2^(max scale exponent); terms are multiples of 2^(min scale exponent).
  // With v = 2^log_v: K * 2^(2 log_v) * 2^(spread) <= 2^24 keeps sum |t| <= 2^24 * 2^e0.
  const int log_k = ceil_log2(k);
  int log_v = 3;
  while (log_v > 0 && 2 * log_v + log_k > 24) {
    --log_v;
  }
  const int v = 1 << log_v;
  const int spread = 24 - log_k - 2 * log_v;
  const int spread_a = std::min(spread / 2, 8), spread_b = std::min(spread - spread / 2, 8);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> value(-v, v);
  for (float& x : p.a) {
    x = static_cast<float>(value(rng));
  }
  for (float& x : p.b) {
    x = static_cast<float>(value(rng));
  }
  if (scaled) {
    // A random base exponent per operand in [-4, 4] keeps scales away from 1 without leaving
    // fp32's comfortable range; each block draws from [base - spread, base].
    std::uniform_int_distribution<int> base(-4, 4);
    const int base_a = base(rng), base_b = base(rng);
    std::uniform_int_distribution<int> ea(base_a - spread_a, base_a), eb(base_b - spread_b, base_b);
    for (float& s : p.a_scale) {
      s = std::ldexp(1.0f, ea(rng));
    }
    for (float& s : p.b_scale) {
      s = std::ldexp(1.0f, eb(rng));
    }
  }
  return out;
}

bool is_exact_mode(const GemmProblem& problem, std::string* why) {
  validate_gemm_problem(problem);
  const GemmProblem& p = problem;
  auto fail = [&](const std::string& reason) {
    if (why != nullptr) {
      *why = reason;
    }
    return false;
  };
  // (1) finite values, power-of-two (or zero) scales.
  auto pow2_scales = [&](const std::vector<float>& scales, const std::string& operand) {
    for (size_t e = 0; e < scales.size(); ++e) {
      if (!std::isfinite(scales[e]) || !is_pow2_or_zero(scales[e])) {
        return fail(operand + " scale #" + num(e) + " is not a power of two or zero");
      }
    }
    return true;
  };
  if (!pow2_scales(p.a_scale, "A") || !pow2_scales(p.b_scale, "B")) return false;
  struct Value {
    uint64_t odd = 0;  // odd significand; 0 for zero
    int lsb = 0;       // value = +-odd * 2^lsb
    int msb = 0;
  };
  auto decompose = [](float x) {
    Value v;
    if (x == 0) {
      return v;
    }
    bit_range(x, &v.lsb, &v.msb);
    v.odd = static_cast<uint64_t>(std::ldexp(std::fabs(static_cast<double>(x)), -v.lsb));
    return v;
  };
  auto scale_exp = [](float s) {  // s a nonzero power of two
    int l, h;
    bit_range(s, &l, &h);
    return l;
  };
  auto in_range = [](int unit, int top) { return unit >= -149 && top <= 127; };
  auto decompose_all = [&](const std::vector<float>& x, std::vector<Value>& out,
                           const std::string& operand) {
    for (size_t e = 0; e < x.size(); ++e) {
      if (!std::isfinite(x[e])) return fail(operand + " value #" + num(e) + " is not finite");
      out[e] = decompose(x[e]);
    }
    return true;
  };
  std::vector<Value> av(p.a.size()), bv(p.b.size());
  if (!decompose_all(p.a, av, "A") || !decompose_all(p.b, bv, "B")) return false;
  // (3, dequantized operands) a*sa and b*sb are fp32 values.
  auto scaled_in_fp32 = [&](const std::vector<Value>& x, size_t rows, auto scale,
                            const std::string& product, const std::string& operand) {
    for (size_t i = 0; i < rows; ++i) {
      for (size_t kk = 0; kk < p.k; ++kk) {
        const Value& v = x[i * p.k + kk];
        const float s = scale(i, kk);
        if (v.odd != 0 && s != 0 && !in_range(v.lsb + scale_exp(s), v.msb + scale_exp(s))) {
          return fail(product + " leaves fp32 at " + operand + "(" + num(i) + "," + num(kk) + ")");
        }
      }
    }
    return true;
  };
  if (!scaled_in_fp32(
          av, p.m, [&](size_t i, size_t kk) { return p.scale_a(i, kk); }, "a*sa", "A") ||
      !scaled_in_fp32(
          bv, p.n, [&](size_t j, size_t kk) { return p.scale_b(j, kk); }, "b*sb", "B")) {
    return false;
  }
  // The scale exponent of every element (kZeroTerm: the element or its scale is zero), looked up
  // once: the O(M N K) loops below then index arrays instead of the scale grids.
  constexpr int kZeroTerm = std::numeric_limits<int>::min();
  std::vector<int> a_se(p.a.size()), b_se(p.b.size());
  for (size_t i = 0; i < p.m; ++i) {
    for (size_t kk = 0; kk < p.k; ++kk) {
      const float s = p.scale_a(i, kk);
      a_se[i * p.k + kk] = av[i * p.k + kk].odd == 0 || s == 0 ? kZeroTerm : scale_exp(s);
    }
  }
  for (size_t j = 0; j < p.n; ++j) {
    for (size_t kk = 0; kk < p.k; ++kk) {
      const float s = p.scale_b(j, kk);
      b_se[j * p.k + kk] = bv[j * p.k + kk].odd == 0 || s == 0 ? kZeroTerm : scale_exp(s);
    }
  }
  for (size_t i = 0; i < p.m; ++i) {
    for (size_t j = 0; j < p.n; ++j) {
      const std::string at = " at C(" + num(i) + "," + num(j) + ")";
      auto term_exps = [&](size_t kk, int* ea, int* eb) {
        *ea = a_se[i * p.k + kk];
        *eb = b_se[j * p.k + kk];
        return *ea != kZeroTerm && *eb != kZeroTerm;
      };
      // (2) e0 = lowest set bit over nonzero terms.
      int e0 = std::numeric_limits<int>::max();
      for (size_t kk = 0; kk < p.k; ++kk) {
        int ea, eb;
        if (!term_exps(kk, &ea, &eb)) {
          continue;
        }
        e0 = std::min(e0, av[i * p.k + kk].lsb + bv[j * p.k + kk].lsb + ea + eb);
      }
      if (e0 == std::numeric_limits<int>::max()) {
        continue;  // every term is zero
      }
      uint64_t units = 0;  // sum |t| / 2^e0
      // The scale exponents the terms carry (the forms of (3): ea + eb, ea, eb), lowest and
      // highest.
      int lo[3] = {std::numeric_limits<int>::max(), std::numeric_limits<int>::max(),
                   std::numeric_limits<int>::max()};
      int hi[3] = {std::numeric_limits<int>::min(), std::numeric_limits<int>::min(),
                   std::numeric_limits<int>::min()};
      for (size_t kk = 0; kk < p.k; ++kk) {
        int ea, eb;
        if (!term_exps(kk, &ea, &eb)) {
          continue;
        }
        const Value &x = av[i * p.k + kk], &y = bv[j * p.k + kk];
        const int shift = x.lsb + y.lsb + ea + eb - e0;
        const uint64_t odd = x.odd * y.odd;  // < 2^48
        if (shift + std::bit_width(odd) > 25) {
          return fail("a term exceeds 2^24 * 2^e0" + at);
        }
        units += odd << shift;
        if (units > (uint64_t{1} << 24)) {
          return fail("sum |terms| exceeds 2^24 * 2^e0" + at);
        }
        const int forms[3] = {ea + eb, ea, eb};
        for (int f = 0; f < 3; ++f) {
          lo[f] = std::min(lo[f], forms[f]);
          hi[f] = std::max(hi[f], forms[f]);
        }
      }
      // (3) partial sums before / between / after scaling (units 2^(e0 - x), x one of the forms
      // or 0), and the scale product, in fp32. A partial sum of any subset of terms is at most
      // units * 2^e0 in magnitude, so the unscaled or half-scaled partial of a term's block is at
      // most units * 2^(e0 - x): its top bit is below 2^(e0 - x + bit_width(units)).
      const int top = std::bit_width(units) - 1;
      for (int f = 0; f < 3; ++f) {
        if (!in_range(e0 - hi[f], e0 - lo[f] + top)) {
          return fail("a partial sum leaves fp32's range" + at);
        }
      }
      if (!in_range(e0, e0 + top)) {
        return fail("a partial sum leaves fp32's range" + at);
      }
      if (!in_range(lo[0], hi[0])) {
        return fail("sa*sb leaves fp32's range" + at);
      }
    }
  }
  return true;
}

}  // namespace mxgate
