// GemmProblem (gemm_oracle.h): scale lookup, construction and the shape checks every mode runs.
#include <stdexcept>
#include <string>

#include "reference/gemm_oracle.h"

namespace mxgate {

using std::size_t;

float GemmProblem::scale_a(size_t row, size_t kk) const {
  return a_scale.empty() ? 1.0f : a_scale[(row / blocks.a_m) * a_scale_cols() + kk / blocks.a_k];
}

float GemmProblem::scale_b(size_t col, size_t kk) const {
  return b_scale.empty() ? 1.0f : b_scale[(col / blocks.b_n) * b_scale_cols() + kk / blocks.b_k];
}

namespace {

std::string num(size_t x) { return std::to_string(x); }

[[noreturn]] void invalid_problem(const std::string& what) {
  throw std::invalid_argument("GEMM problem: " + what);
}

// Dimensions and block sizes only.
void validate_shape(const GemmProblem& p) {
  const auto fail = invalid_problem;
  if (p.m == 0) {
    fail("M is 0");
  }
  if (p.n == 0) {
    fail("N is 0");
  }
  if (p.k == 0) {
    fail("K is 0");
  }
  const BlockSizes& b = p.blocks;
  if (b.a_m == 0 || b.a_k == 0) {
    fail("A scale block is " + num(b.a_m) + "x" + num(b.a_k) + " (must be positive)");
  }
  if (b.b_n == 0 || b.b_k == 0) {
    fail("B scale block is " + num(b.b_n) + "x" + num(b.b_k) + " (must be positive)");
  }
  constexpr size_t kMax = size_t{1} << 40;  // keeps every product of sizes far from overflow
  if (p.m > kMax || p.n > kMax || p.k > kMax || p.m * p.k > kMax || p.n * p.k > kMax ||
      p.m * p.n > kMax) {
    fail("shape " + num(p.m) + "x" + num(p.n) + "x" + num(p.k) + " is too large");
  }
}

}  // namespace

GemmProblem make_gemm_problem(size_t m, size_t n, size_t k, BlockSizes blocks, bool scaled) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.blocks = blocks;
  validate_shape(p);  // before allocating
  p.a.assign(m * k, 0.0f);
  p.b.assign(n * k, 0.0f);
  if (scaled) {
    p.a_scale.assign(p.a_scale_rows() * p.a_scale_cols(), 1.0f);
    p.b_scale.assign(p.b_scale_rows() * p.b_scale_cols(), 1.0f);
  }
  validate_gemm_problem(p);
  return p;
}

void validate_gemm_problem(const GemmProblem& p) {
  const auto fail = invalid_problem;
  validate_shape(p);
  const BlockSizes& b = p.blocks;
  if (p.a.size() != p.m * p.k) {
    fail("A has " + num(p.a.size()) + " values, expected M*K = " + num(p.m) + "*" + num(p.k));
  }
  if (p.b.size() != p.n * p.k) {
    fail("B has " + num(p.b.size()) + " values, expected N*K = " + num(p.n) + "*" + num(p.k));
  }
  const size_t as = p.a_scale_rows() * p.a_scale_cols(), bs = p.b_scale_rows() * p.b_scale_cols();
  if (!p.a_scale.empty() && p.a_scale.size() != as) {
    fail("A scales have " + num(p.a_scale.size()) + " entries, expected ceil(M/" + num(b.a_m) +
         ")*ceil(K/" + num(b.a_k) + ") = " + num(p.a_scale_rows()) + "*" + num(p.a_scale_cols()) +
         " (or none)");
  }
  if (!p.b_scale.empty() && p.b_scale.size() != bs) {
    fail("B scales have " + num(p.b_scale.size()) + " entries, expected ceil(N/" + num(b.b_n) +
         ")*ceil(K/" + num(b.b_k) + ") = " + num(p.b_scale_rows()) + "*" + num(p.b_scale_cols()) +
         " (or none)");
  }
}

}  // namespace mxgate
