// The verdict of check-gemm as it reads (verbs/tensor_ops.h): an element located by the exact
// comparison or by the bound check, with its bits and values, and the line that says whether the
// operands are exact in an accumulator model. Internal to verbs/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "reference/accumulator.h"
#include "reference/accumulator_bounds.h"
#include "reference/gemm_oracle.h"
#include "reference/verdict.h"
#include "verbs/tensor_ops.h"

namespace mxgate::verbs {

// A bit mismatch of the exact comparison (no bound: exact, bound and excess are NaN).
LocatedElement located_bits(const BitMismatch& m, OutputFormat format);
// A bound violation with the bits of the correctly rounded result beside it.
LocatedElement located_bound(const BoundViolation& v, const GemmOutput& rounded,
                             const GemmOutput& actual);
// Exact mode with --accumulator: whether a correct kernel with that accumulator is bound to equal
// the correctly rounded result on these operands (docs/accumulators.md §6). The verdict itself
// stays the bit comparison; this line says whether a mismatch can be the accumulator's doing.
std::string exactness_line(const GemmProblem& problem, const AccumulatorModel& model);

}  // namespace mxgate::verbs
