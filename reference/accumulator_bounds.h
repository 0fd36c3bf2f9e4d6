// Bound mode for a named accumulator model: the rigorous forward-error bound of every output
// element (docs/accumulators.md §5). kFloat models use gemm_oracle.h compute_bounds; the
// aligned-chunk bound (sm90_fp8_mma) is derived in accumulator_bounds.cpp.
#pragma once

#include "reference/accumulator.h"
#include "reference/gemm_oracle.h"

namespace mxgate {

// Throws std::invalid_argument for an invalid problem or model, or (kAlignedChunks) a chunk that
// crosses a scale block: the model does not describe such a kernel. `threads` as in
// ExactOptions for kAlignedChunks (kFloat runs gemm_oracle.h compute_bounds, whose engine takes
// parallel.h thread_count()); the bounds never depend on it.
GemmBounds compute_bounds(const GemmProblem& problem, const AccumulatorModel& model,
                          OutputFormat output, unsigned threads = 0);

}  // namespace mxgate
