#include "reference/gemm_shared.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "reference/exact_sum.h"

namespace mxgate {

using std::size_t;

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
  for (size_t i = 0; i < p.m; ++i) {
    for (size_t kk = 0; kk < p.k; kk += p.blocks.a_k) {
      amp.a[i] = std::max(amp.a[i], std::fabs(static_cast<double>(p.scale_a(i, kk))));
    }
  }
  for (size_t j = 0; j < p.n; ++j) {
    for (size_t kk = 0; kk < p.k; kk += p.blocks.b_k) {
      amp.b[j] = std::max(amp.b[j], std::fabs(static_cast<double>(p.scale_b(j, kk))));
    }
  }
  return amp;
}

std::optional<ScaleCrossing> first_scale_crossing(const GemmProblem& p, size_t block_k) {
  const size_t len = block_k == 0 ? p.k : block_k;
  for (size_t k0 = 0; k0 < p.k; k0 += len) {
    const size_t last = std::min(p.k, k0 + len) - 1;
    const bool a_ok = p.a_scale.empty() || k0 / p.blocks.a_k == last / p.blocks.a_k;
    const bool b_ok = p.b_scale.empty() || k0 / p.blocks.b_k == last / p.blocks.b_k;
    if (!a_ok || !b_ok) {
      return ScaleCrossing{k0, last + 1, !a_ok};
    }
  }
  return std::nullopt;
}

GemmOutput gemm_output_from_fp32(size_t rows, size_t cols, OutputFormat format,
                                 std::vector<float> values) {
  GemmOutput out;
  out.rows = rows;
  out.cols = cols;
  out.format = format;
  if (format == OutputFormat::kFp32) {
    out.fp32 = std::move(values);
  } else {
    out.bf16.resize(values.size());
    for (size_t e = 0; e < values.size(); ++e) {
      out.bf16[e] = round_to_bf16_bits(values[e]);
    }
  }
  return out;
}

}  // namespace mxgate
