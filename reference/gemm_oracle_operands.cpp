// Exact-mode operands (gemm_oracle.h): random operands on which every fp32 summation order is
// exact, and the check that a problem has that property (is_exact_mode).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
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

constexpr int kZeroTerm = std::numeric_limits<int>::min();
constexpr uint64_t kTopCap = uint64_t{1} << 25;

bool in_range(int unit, int top) { return unit >= -149 && top <= 127; }

// Each row's bounds (`out`, one per row), gathered per scale block: within a block every term
// shares the scale, so its largest |value| bounds the block's terms. Returns the index of the
// first element whose value * scale is no fp32 value (condition (3)), SIZE_MAX if none.
size_t row_bounds(const std::vector<float>& values, const std::vector<float>& scales, size_t rows,
                  size_t k, size_t block_rows, size_t block_k, std::vector<RowBounds>& out) {
  out.assign(rows, RowBounds{});
  const size_t cols = ceil_div(k, block_k);
  std::vector<std::pair<int, float>> tops;  // per block of the row: scale exponent, max |value|
  for (size_t r = 0; r < rows; ++r) {
    RowBounds& b = out[r];
    tops.clear();
    for (size_t c = 0; c < cols; ++c) {
      const float s = scales.empty() ? 1.0f : scales[(r / block_rows) * cols + c];
      if (s == 0) continue;  // every term of the block is zero
      const int e = pow2_exponent(s);
      const size_t begin = r * k + c * block_k, end = r * k + std::min(k, (c + 1) * block_k);
      size_t nonzero = 0;
      int lsb_lo = std::numeric_limits<int>::max(), lsb_hi = std::numeric_limits<int>::min();
      uint32_t max_bits = 0;  // of the largest |value|: finite floats order as their |bits|
      for (size_t x = begin; x < end; ++x) {
        const uint32_t u = std::bit_cast<uint32_t>(values[x]) & 0x7FFFFFFFu;
        if (u == 0) continue;
        ++nonzero;
        const uint32_t biased = u >> 23, mant = u & 0x7FFFFFu;
        const int lsb = biased != 0
                            ? static_cast<int>(biased) - 150 + std::countr_zero(mant | 0x800000u)
                            : -149 + std::countr_zero(mant);  // odd_parts(values[x]).lsb
        lsb_lo = std::min(lsb_lo, lsb);
        lsb_hi = std::max(lsb_hi, lsb);
        max_bits = std::max(max_bits, u);
      }
      if (nonzero == 0) continue;
      const float max_abs = std::bit_cast<float>(max_bits);
      if (!in_range(lsb_lo + e, odd_parts(max_abs).msb + e)) {
        for (size_t x = begin;; ++x) {  // the first element out of range
          const OddParts v = odd_parts(values[x]);
          if (v.odd != 0 && !in_range(v.lsb + e, v.msb + e)) return x;
        }
      }
      b.nonzero += nonzero;
      b.lo = std::min(b.lo, lsb_lo + e);
      b.hi = std::max(b.hi, lsb_hi + e);
      b.se_lo = std::min(b.se_lo, e);
      b.se_hi = std::max(b.se_hi, e);
      tops.emplace_back(e, max_abs);
    }
    for (const auto& [e, max_abs] : tops) {  // |value| * 2^e in units of 2^lo, capped
      const OddParts v = odd_parts(max_abs);
      const int shift = v.lsb + e - b.lo;
      b.top = std::max(b.top, shift + std::bit_width(v.odd) > 25 ? kTopCap : v.odd << shift);
    }
  }
  return SIZE_MAX;
}

// One term of an operand: the element's odd parts and its power-of-two scale's exponent
// (kZeroTerm where the element or its scale is zero).
struct Term {
  OddParts v;
  int se = kZeroTerm;
};

Term term_of(float value, float scale) {
  Term t{odd_parts(value), kZeroTerm};
  if (t.v.odd != 0 && scale != 0) t.se = pow2_exponent(scale);
  return t;
}

// One operand's rows, for walking output elements over K: each row's nonzero terms' k (element and
// scale nonzero), ascending, gathered on a row's first walk.
class NonzeroK {
 public:
  NonzeroK(const std::vector<float>& values, const std::vector<float>& scales, size_t rows,
           size_t k, size_t block_rows, size_t block_k)
      : values_(values),
        scales_(scales),
        k_(k),
        block_rows_(block_rows),
        block_k_(block_k),
        rows_(rows) {}

  const std::vector<uint32_t>& row(size_t r) {
    std::optional<std::vector<uint32_t>>& out = rows_[r];
    if (out) return *out;
    out.emplace();
    const size_t cols = ceil_div(k_, block_k_);
    for (size_t c = 0; c < cols; ++c) {
      if (!scales_.empty() && scales_[(r / block_rows_) * cols + c] == 0) continue;
      for (size_t kk = c * block_k_; kk < std::min(k_, (c + 1) * block_k_); ++kk) {
        if (values_[r * k_ + kk] != 0) out->push_back(static_cast<uint32_t>(kk));
      }
    }
    return *out;
  }

 private:
  const std::vector<float>& values_;
  const std::vector<float>& scales_;
  size_t k_, block_rows_, block_k_;
  std::vector<std::optional<std::vector<uint32_t>>> rows_;
};

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
         fits(e_lo, e_hi) && in_range(a.se_lo + b.se_lo, a.se_hi + b.se_hi);
}

// Conditions (2) and (3) of is_exact_mode for output element (i, j), term by term in k order;
// the first violation's reason, or nothing. `ks`: the k of row i of A's (or row j of B's) nonzero
// terms, ascending (every term both rows hold is among them; the others are zero, and every
// condition skips a zero term); `terms`: scratch.
std::optional<std::string> walk_cell(const GemmProblem& p, const std::vector<uint32_t>& ks,
                                     size_t i, size_t j,
                                     std::vector<std::pair<Term, Term>>& terms) {
  const auto at = [&] { return " at C(" + num(i) + "," + num(j) + ")"; };
  terms.clear();
  for (const uint32_t kk : ks) {
    const Term ta = term_of(p.a[i * p.k + kk], p.scale_a(i, kk));
    if (ta.se == kZeroTerm) continue;
    const Term tb = term_of(p.b[j * p.k + kk], p.scale_b(j, kk));
    if (tb.se == kZeroTerm) continue;
    terms.emplace_back(ta, tb);
  }
  // (2) e0 = lowest set bit over nonzero terms.
  int e0 = std::numeric_limits<int>::max();
  for (const auto& [ta, tb] : terms) e0 = std::min(e0, ta.v.lsb + tb.v.lsb + ta.se + tb.se);
  if (e0 == std::numeric_limits<int>::max()) return std::nullopt;  // every term is zero
  uint64_t units = 0;                                              // sum |t| / 2^e0
  // The scale exponents the terms carry (the forms of (3): ea + eb, ea, eb), lowest and highest.
  int lo[3] = {std::numeric_limits<int>::max(), std::numeric_limits<int>::max(),
               std::numeric_limits<int>::max()};
  int hi[3] = {std::numeric_limits<int>::min(), std::numeric_limits<int>::min(),
               std::numeric_limits<int>::min()};
  for (const auto& [ta, tb] : terms) {
    const int ea = ta.se, eb = tb.se;
    const int shift = ta.v.lsb + tb.v.lsb + ea + eb - e0;
    const uint64_t odd = ta.v.odd * tb.v.odd;  // < 2^48
    if (shift + std::bit_width(odd) > 25) return "a term exceeds 2^24 * 2^e0" + at();
    units += odd << shift;
    if (units > (uint64_t{1} << 24)) return "sum |terms| exceeds 2^24 * 2^e0" + at();
    const int forms[3] = {ea + eb, ea, eb};
    for (int f = 0; f < 3; ++f) {
      lo[f] = std::min(lo[f], forms[f]);
      hi[f] = std::max(hi[f], forms[f]);
    }
  }
  // (3) partial sums before / between / after scaling (units 2^(e0 - x), x one of the forms or
  // 0), and the scale product, in fp32. A partial sum of any subset of the terms is at most
  // units * 2^e0, so a partial with x removed is below 2^(e0 - x + bit_width(units)).
  const int top = std::bit_width(units) - 1;
  for (int f = 0; f < 3; ++f) {
    if (!in_range(e0 - hi[f], e0 - lo[f] + top)) return "a partial sum leaves fp32's range" + at();
  }
  if (!in_range(e0, e0 + top)) return "a partial sum leaves fp32's range" + at();
  if (!in_range(lo[0], hi[0])) return "sa*sb leaves fp32's range" + at();
  return std::nullopt;
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
  for (size_t e = 0; e < p.a.size(); ++e) {
    if (!std::isfinite(p.a[e])) {
      return fail("A value #" + num(e) + " is not finite");
    }
  }
  for (size_t e = 0; e < p.b.size(); ++e) {
    if (!std::isfinite(p.b[e])) {
      return fail("B value #" + num(e) + " is not finite");
    }
  }
  // (3, dequantized operands) a*sa and b*sb are fp32 values.
  std::vector<RowBounds> a_rows, b_rows;
  if (const size_t e = row_bounds(p.a, p.a_scale, p.m, p.k, p.blocks.a_m, p.blocks.a_k, a_rows);
      e != SIZE_MAX) {
    return fail("a*sa leaves fp32 at A(" + num(e / p.k) + "," + num(e % p.k) + ")");
  }
  if (const size_t e = row_bounds(p.b, p.b_scale, p.n, p.k, p.blocks.b_n, p.blocks.b_k, b_rows);
      e != SIZE_MAX) {
    return fail("b*sb leaves fp32 at B(" + num(e / p.k) + "," + num(e % p.k) + ")");
  }
  // (2) and (3) per output element: walked over K only where the rows' bounds do not show them,
  // so the verdict and the first violation are those of walking every element.
  NonzeroK a(p.a, p.a_scale, p.m, p.k, p.blocks.a_m, p.blocks.a_k);
  NonzeroK b(p.b, p.b_scale, p.n, p.k, p.blocks.b_n, p.blocks.b_k);
  std::vector<std::pair<Term, Term>> terms;
  for (size_t i = 0; i < p.m; ++i) {
    for (size_t j = 0; j < p.n; ++j) {
      if (rows_certify_cell(a_rows[i], b_rows[j])) continue;
      // Walked over the nonzero terms of the row that has fewer (row_bounds counted them).
      const std::vector<uint32_t>& ks =
          a_rows[i].nonzero <= b_rows[j].nonzero ? a.row(i) : b.row(j);
      if (auto reason = walk_cell(p, ks, i, j, terms)) return fail(*reason);
    }
  }
  return true;
}

}  // namespace mxgate
