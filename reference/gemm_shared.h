// Pieces of GEMM work that the oracle's modes (gemm_oracle_*.cpp) and the accumulator models
// (accumulator_bounds.cpp, accumulator_exact.cpp, accumulator_simulation.cpp) share, each written
// once here.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "reference/gemm_oracle.h"

namespace mxgate {

// The problem with every value and scale replaced by its magnitude: its exact GEMM is
// sum_i |t_i| for every output element (the bounds' abs_sum).
GemmProblem magnitude_problem(const GemmProblem& problem);

// The largest factor an absolute error can still be multiplied by, per row of A and per column of
// B: max(1, max |scale|) over the scales of that row / column (S in gemm_oracle.h's derivation).
struct ScaleAmplification {
  std::vector<double> a;  // M entries
  std::vector<double> b;  // N entries
};
ScaleAmplification scale_amplification(const GemmProblem& problem);

// A K-block [begin, end) that spans two scale blocks of A (a == true) or else of B.
struct ScaleCrossing {
  std::size_t begin = 0;
  std::size_t end = 0;
  bool a = false;
};
// The first K-block of `block_k` consecutive k (0: all of K; the last block may be shorter) that
// does not lie inside one A scale block and one B scale block; nullopt when all do. A model that
// applies one scale to a whole block's sum is undefined there. Empty scale vectors never cross.
std::optional<ScaleCrossing> first_scale_crossing(const GemmProblem& problem, std::size_t block_k);

// The output of rows x cols fp32 results: kept (kFp32) or each rounded once (RNE) to bf16.
GemmOutput gemm_output_from_fp32(std::size_t rows, std::size_t cols, OutputFormat format,
                                 std::vector<float> values);

}  // namespace mxgate
