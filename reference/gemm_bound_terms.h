// Terms that both GEMM bounds take from the problem: compute_bounds for a floating accumulator
// (gemm_oracle_bound.cpp) and for an aligned-chunk one (accumulator_bounds.cpp). Both derive the
// bound from sum_i |t_i| and from how far a rounding's absolute error can still be scaled up.
#pragma once

#include <vector>

#include "reference/gemm_oracle.h"

namespace mxgate {

// The problem with every value and scale replaced by its magnitude: its exact GEMM is
// sum_i |t_i| for every output element.
GemmProblem magnitude_problem(const GemmProblem& problem);

// The largest factor an absolute error can still be multiplied by, per row of A and per column of
// B: max(1, max |scale|) over the scales of that row / column (S in gemm_oracle.h's derivation).
struct ScaleAmplification {
  std::vector<double> a;  // M entries
  std::vector<double> b;  // N entries
};
ScaleAmplification scale_amplification(const GemmProblem& problem);

}  // namespace mxgate
