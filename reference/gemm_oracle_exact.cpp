// Exact mode (gemm_oracle.h): the exact sums from the engine (gemm_oracle_engine.cpp), rounded
// once to the output format, with the epilogue's alpha.
#include <utility>
#include <vector>

#include "reference/exact_sum.h"
#include "reference/fp_fence.h"
#include "reference/gemm_oracle.h"
#include "reference/gemm_oracle_engine.h"

// Clang contracts a*b + c into an FMA by default; every file of the GEMM oracle compiles without
// contraction, so no result depends on where code lives.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace mxgate {

using std::size_t;

GemmOutput exact_gemm(const GemmProblem& problem, OutputFormat format,
                      const ExactOptions& options) {
  validate_gemm_problem(problem);
  GemmOutput out;
  out.rows = problem.m;
  out.cols = problem.n;
  out.format = format;
  if (problem.alpha != 1.0f) {
    std::vector<float> acc(problem.m * problem.n, 0.0f);
    gemm_engine::exact_sums_fp32(problem, options, acc.data());
    // The epilogue's one fp32 multiply, IEEE signs included: a negative acc whose product with
    // alpha underflows is -0, as fl32(alpha * acc) is in every kernel (and in ordered_gemm).
    for (float& c : acc) c = fence(problem.alpha * c);
    if (format == OutputFormat::kFp32) {
      out.fp32 = std::move(acc);
    } else {
      out.bf16.resize(acc.size());
      for (size_t e = 0; e < acc.size(); ++e) out.bf16[e] = round_to_bf16_bits(acc[e]);
    }
    return out;
  }
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
