// Exact mode (gemm_oracle.h): the exact sums from the engine (gemm_oracle_engine.cpp), rounded
// once to the output format, with the epilogue's alpha.
#include <utility>
#include <vector>

#include "reference/fp_fence.h"
#include "reference/gemm_oracle.h"
#include "reference/gemm_oracle_engine.h"
#include "reference/gemm_shared.h"

namespace mxgate {

using std::size_t;

GemmOutput exact_gemm(const GemmProblem& problem, OutputFormat format,
                      const ExactOptions& options) {
  validate_gemm_problem(problem);
  if (problem.alpha != 1.0f) {
    std::vector<float> acc(problem.m * problem.n, 0.0f);
    gemm_engine::exact_sums_fp32(problem, options, acc.data());
    // The epilogue's one fp32 multiply, IEEE signs included: a negative acc whose product with
    // alpha underflows is -0, as fl32(alpha * acc) is in every kernel (and in ordered_gemm).
    for (float& c : acc) c = fence(problem.alpha * c);
    return gemm_output_from_fp32(problem.m, problem.n, format, std::move(acc));
  }
  GemmOutput out;
  out.rows = problem.m;
  out.cols = problem.n;
  out.format = format;
  if (format == OutputFormat::kFp32) {
    out.fp32.assign(problem.m * problem.n, 0.0f);
    gemm_engine::exact_sums_fp32(problem, options, out.fp32.data());
  } else {
    out.bf16.assign(problem.m * problem.n, 0);
    gemm_engine::exact_sums_bf16(problem, options, out.bf16.data());
  }
  return out;
}

std::vector<double> exact_gemm_fp64(const GemmProblem& problem, const ExactOptions& options) {
  validate_gemm_problem(problem);
  std::vector<double> out(problem.m * problem.n, 0.0);
  gemm_engine::exact_sums_fp64(problem, options, out.data());
  if (problem.alpha != 1.0f) {
    for (double& c : out) c *= static_cast<double>(problem.alpha);
  }
  return out;
}

}  // namespace mxgate
