// The exact GEMM engine behind exact_gemm / exact_gemm_fp64 (gemm_oracle.h, exact mode): tiles of
// folded, packed operands summed exactly by a dot engine (gemm_oracle_dot.h) where that is
// provably exact, by an ExactSum otherwise, in parallel (parallel.h) with a result that does not
// depend on the thread count. Each function writes problem.m x problem.n row-major elements of
// the exact sum (alpha not applied; the problem already validated) rounded once (RNE), zero
// results as +0.
#pragma once

#include <cstdint>

#include "reference/gemm_oracle.h"

namespace mxgate::gemm_engine {

void exact_sums_fp32(const GemmProblem& problem, const ExactOptions& options, float* out);
void exact_sums_bf16(const GemmProblem& problem, const ExactOptions& options, uint16_t* out);
void exact_sums_fp64(const GemmProblem& problem, const ExactOptions& options, double* out);

}  // namespace mxgate::gemm_engine
