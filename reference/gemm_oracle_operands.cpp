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

// Over the nonzero terms of one row of A (or B): the range of their lowest set bits (value lsb +
// scale exponent) and of their scale exponents, their count, and the largest |value * scale| in
// units of the row's lowest bit (capped at 2^25). Two rows' bounds bound every term of their
// output element, so most elements need no walk over K (rows_certify_cell).
struct RowBounds {
  size_t nonzero = 0;
  int lo = std::numeric_limits<int>::max(), hi = std::numeric_limits<int>::min();
  int se_lo = std::numeric_limits<int>::max(), se_hi = std::numeric_limits<int>::min();
  uint64_t top = 0;
};

constexpr uint64_t kTopCap = uint64_t{1} << 25;

template <class Value>
std::vector<RowBounds> row_bounds(const std::vector<Value>& vals, const std::vector<int>& se,
                                  size_t rows, size_t k) {
  std::vector<RowBounds> out(rows);
  for (size_t r = 0; r < rows; ++r) {
    RowBounds& b = out[r];
    for (size_t kk = r * k; kk < (r + 1) * k; ++kk) {
      if (se[kk] == std::numeric_limits<int>::min()) continue;  // a zero term
      ++b.nonzero;
      b.lo = std::min(b.lo, vals[kk].lsb + se[kk]);
      b.hi = std::max(b.hi, vals[kk].lsb + se[kk]);
      b.se_lo = std::min(b.se_lo, se[kk]);
      b.se_hi = std::max(b.se_hi, se[kk]);
    }
    for (size_t kk = r * k; kk < (r + 1) * k && b.top < kTopCap; ++kk) {
      if (se[kk] == std::numeric_limits<int>::min()) continue;
      const int shift = vals[kk].lsb + se[kk] - b.lo;
      b.top = shift + std::bit_width(vals[kk].odd) > 25 ? kTopCap
                                                        : std::max(b.top, vals[kk].odd << shift);
    }
  }
  return out;
}

// Whether conditions (2) and (3) of is_exact_mode hold for every term rows `a` and `b` can form,
// from their bounds alone: e0 lies in [a.lo + b.lo, a.hi + b.hi], each term is at most
// a.top * b.top units of 2^(a.lo + b.lo), and there are at most min(nonzero) terms. False means
// only "not shown": the caller then walks K.
bool rows_certify_cell(const RowBounds& a, const RowBounds& b) {
  if (a.nonzero == 0 || b.nonzero == 0) return true;  // every term is zero
  const uint64_t term = a.top * b.top;                // <= 2^50
  const uint64_t limit = uint64_t{1} << 24;
  if (term > limit || std::min(a.nonzero, b.nonzero) > limit / term) return false;
  const int e_lo = a.lo + b.lo, e_hi = a.hi + b.hi;
  const auto fits = [](int lo, int hi) { return lo >= -149 && hi + 24 <= 127; };
  return fits(e_lo - a.se_hi - b.se_hi, e_hi - a.se_lo - b.se_lo) &&
         fits(e_lo - a.se_hi, e_hi - a.se_lo) && fits(e_lo - b.se_hi, e_hi - b.se_lo) &&
         fits(e_lo, e_hi) && a.se_lo + b.se_lo >= -149 && a.se_hi + b.se_hi <= 127;
}

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
  for (size_t e = 0; e < p.a_scale.size(); ++e) {
    if (!std::isfinite(p.a_scale[e]) || !is_pow2_or_zero(p.a_scale[e])) {
      return fail("A scale #" + num(e) + " is not a power of two or zero");
    }
  }
  for (size_t e = 0; e < p.b_scale.size(); ++e) {
    if (!std::isfinite(p.b_scale[e]) || !is_pow2_or_zero(p.b_scale[e])) {
      return fail("B scale #" + num(e) + " is not a power of two or zero");
    }
  }
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
  auto in_range = [](int unit, int top) { return unit >= -149 && top <= 127; };
  std::vector<Value> av(p.a.size()), bv(p.b.size());
  for (size_t e = 0; e < p.a.size(); ++e) {
    if (!std::isfinite(p.a[e])) {
      return fail("A value #" + num(e) + " is not finite");
    }
    av[e] = decompose(p.a[e]);
  }
  for (size_t e = 0; e < p.b.size(); ++e) {
    if (!std::isfinite(p.b[e])) {
      return fail("B value #" + num(e) + " is not finite");
    }
    bv[e] = decompose(p.b[e]);
  }
  // The scale exponent of every element (kZeroTerm: the element or its scale is zero), looked up
  // once per scale block: the checks below then index arrays instead of the scale grids.
  constexpr int kZeroTerm = std::numeric_limits<int>::min();
  std::vector<int> a_se(p.a.size()), b_se(p.b.size());
  const auto scale_exps = [&](const std::vector<Value>& vals, const std::vector<float>& scales,
                              size_t rows, size_t block_rows, size_t block_k,
                              std::vector<int>& se) {
    const size_t cols = ceil_div(p.k, block_k);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) {
        const float s = scales.empty() ? 1.0f : scales[(r / block_rows) * cols + c];
        int e = kZeroTerm;
        if (s != 0) {
          int h;
          bit_range(s, &e, &h);
        }
        for (size_t kk = c * block_k; kk < std::min(p.k, (c + 1) * block_k); ++kk) {
          se[r * p.k + kk] = vals[r * p.k + kk].odd == 0 ? kZeroTerm : e;
        }
      }
    }
  };
  scale_exps(av, p.a_scale, p.m, p.blocks.a_m, p.blocks.a_k, a_se);
  scale_exps(bv, p.b_scale, p.n, p.blocks.b_n, p.blocks.b_k, b_se);
  // (3, dequantized operands) a*sa and b*sb are fp32 values.
  for (size_t e = 0; e < p.a.size(); ++e) {
    const Value& v = av[e];
    if (a_se[e] != kZeroTerm && !in_range(v.lsb + a_se[e], v.msb + a_se[e])) {
      return fail("a*sa leaves fp32 at A(" + num(e / p.k) + "," + num(e % p.k) + ")");
    }
  }
  for (size_t e = 0; e < p.b.size(); ++e) {
    const Value& v = bv[e];
    if (b_se[e] != kZeroTerm && !in_range(v.lsb + b_se[e], v.msb + b_se[e])) {
      return fail("b*sb leaves fp32 at B(" + num(e / p.k) + "," + num(e % p.k) + ")");
    }
  }
  const std::vector<RowBounds> a_rows = row_bounds(av, a_se, p.m, p.k);
  const std::vector<RowBounds> b_rows = row_bounds(bv, b_se, p.n, p.k);
  for (size_t i = 0; i < p.m; ++i) {
    for (size_t j = 0; j < p.n; ++j) {
      if (rows_certify_cell(a_rows[i], b_rows[j])) {
        continue;  // (2) and (3) hold for every term the two rows can form
      }
      const auto at = [&] { return " at C(" + num(i) + "," + num(j) + ")"; };
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
      for (size_t kk = 0; kk < p.k; ++kk) {
        int ea, eb;
        if (!term_exps(kk, &ea, &eb)) {
          continue;
        }
        const Value &x = av[i * p.k + kk], &y = bv[j * p.k + kk];
        const int shift = x.lsb + y.lsb + ea + eb - e0;
        const uint64_t odd = x.odd * y.odd;  // < 2^48
        if (shift + std::bit_width(odd) > 25) {
          return fail("a term exceeds 2^24 * 2^e0" + at());
        }
        units += odd << shift;
        if (units > (uint64_t{1} << 24)) {
          return fail("sum |terms| exceeds 2^24 * 2^e0" + at());
        }
        // (3) partial sums before / between / after scaling, and the scale product, in fp32.
        for (int g : {e0 - ea - eb, e0 - ea, e0 - eb, e0}) {
          if (!in_range(g, g + 24)) {
            return fail("a partial sum leaves fp32's range" + at());
          }
        }
        if (!in_range(ea + eb, ea + eb)) {
          return fail("sa*sb leaves fp32's range" + at());
        }
      }
    }
  }
  return true;
}

}  // namespace mxgate
