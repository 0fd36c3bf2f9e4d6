// The accumulator model of a GEMM op, from the name its contract declares. accum_model_for is the
// one place a bound check or an exact-mode generator gets its model (gemm.ordered_bound, gemm.exact
// and the metamorphic GEMM properties, the probe's comparison): the contract's spec ("NAME" or
// "NAME:param=value,...", "" = fp32_rn) goes through the reference's registry
// (reference/accumulator.h parse_accumulator_spec), so `mxgate accumulators` lists every name an
// op may declare. Per kind:
//   float (fp32_rn)  an op that declares its summation order (the built-in kernels) gets that
//                    order's partial length and roundings; any other op the structure that holds
//                    for every order: one partial over all of K, three roundings per product
//                    (a*b, *sa, *sb) and two per partial (unscaled GEMMs: one and none). A
//                    parameter the spec sets explicitly wins over both.
//   aligned chunks   (sm90_fp8_mma) the model's own parameters; it applies only where every chunk
//                    of chunk_k consecutive k lies under one A and one B scale, so its chunk must
//                    divide the op's scale blocks along K (0 = the whole of K): on MX blocks of 32
//                    a chunk of 128 does not, and the contract is in error.
// docs/plugins.md §3.4.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "impl/op.h"
#include "reference/accumulator.h"

namespace mxgate::impl {

// A contract whose accumulator clause cannot be used: no model for a non-GEMM op, a name or
// parameter the registry does not know, a model that does not describe the op's scale blocks.
class ContractError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The spec `op` declares ("fp32_rn" when its contract names none).
std::string declared_accumulator(const Op& op);

// The model of `op`'s accumulator (its name: the declared spec). Throws ContractError, its
// message starting with "IMPL/OP: ".
AccumulatorModel accum_model_for(const Op& op);

// Why accum_model_for(op) throws; nullopt when it does not, or for a non-GEMM op (`mxgate impls`
// shows it beside the op).
std::optional<std::string> accumulator_problem(const Op& op);

}  // namespace mxgate::impl
