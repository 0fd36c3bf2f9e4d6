// Accumulator models of GEMM ops, by the name their contract declares. accum_model_for is the
// one place a bound check gets its reference::AccumModel from (gemm.ordered_bound, the backend
// checks, check-gemm's --accumulator later): a registry of measured models plugs in here.
// Today one model exists:
//   fp32_rn  every rounding fp32 round-to-nearest-even with gradual underflow (unit roundoff
//            2^-24, eta 2^-150). An op that declares its summation order (the built-in kernels)
//            gets that order's partial length and roundings; any other op the structure that
//            holds for every order: one partial over all of K, three roundings per product
//            (a*b, *sa, *sb) and two per partial (unscaled GEMMs: one and none).
// docs/plugins.md §3.4.
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "impl/op.h"
#include "reference/gemm_oracle.h"

namespace mxgate::impl {

// A contract naming an accumulator model mxgate does not know.
class ContractError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

std::span<const std::string_view> accumulator_names();
std::string accumulator_list();  // "fp32_rn" (comma-separated)
bool known_accumulator(std::string_view name);

// The model of `op`'s accumulator with results rounded to `output`. Throws ContractError for a
// non-GEMM op or an unknown model name.
AccumModel accum_model_for(const Op& op, OutputFormat output);

}  // namespace mxgate::impl
