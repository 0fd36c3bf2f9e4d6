#include "reference/gemm_bound_terms.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace mxgate {

GemmProblem magnitude_problem(const GemmProblem& problem) {
  GemmProblem abs_problem = problem;
  for (auto* v : {&abs_problem.a, &abs_problem.b, &abs_problem.a_scale, &abs_problem.b_scale}) {
    for (float& x : *v) {
      x = std::fabs(x);
    }
  }
  return abs_problem;
}

ScaleAmplification scale_amplification(const GemmProblem& p) {
  ScaleAmplification amp{std::vector<double>(p.m, 1.0), std::vector<double>(p.n, 1.0)};
  for (std::size_t i = 0; i < p.m; ++i) {
    for (std::size_t kk = 0; kk < p.k; kk += p.blocks.a_k) {
      amp.a[i] = std::max(amp.a[i], std::fabs(static_cast<double>(p.scale_a(i, kk))));
    }
  }
  for (std::size_t j = 0; j < p.n; ++j) {
    for (std::size_t kk = 0; kk < p.k; kk += p.blocks.b_k) {
      amp.b[j] = std::max(amp.b[j], std::fabs(static_cast<double>(p.scale_b(j, kk))));
    }
  }
  return amp;
}

}  // namespace mxgate
