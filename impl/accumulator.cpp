#include "impl/accumulator.h"

#include <string_view>

namespace mxgate::impl {
namespace {

std::string where(const Op& op) { return op.impl + "/" + op.name; }

// The scale block along K of one operand of `op`: 32 for MX, the contract's (0 = the whole of K)
// for block GEMMs, 0 (no scales) for bf16.
uint32_t k_block(const Op& op, bool a) {
  if (op.family == Family::kGemmMx) return 32;
  if (op.family == Family::kGemmBlock)
    return a ? op.contract.a_block_cols : op.contract.b_block_cols;
  return 0;
}

// The partial structure of a float model for `op` as parameters of the registry's float kind,
// ahead of the spec's own (set_parameter applies them in order: the spec's win).
std::string float_structure(const Op& op) {
  if (const auto& o = op.contract.order) {
    return "block_k=" + std::to_string(o->block_k) +
           ",product_roundings=" + std::to_string(o->product_roundings) +
           ",partial_roundings=" + std::to_string(o->partial_roundings);
  }
  // No declared order: a bound valid for every order and every place the scales are applied.
  // One partial of all K bounds any summation tree (depth <= K - 1); a product meets at most
  // three roundings before it is summed, a partial at most two after.
  const bool scaled = op.family != Family::kGemmBf16;
  return std::string("block_k=0,product_roundings=") + (scaled ? "3" : "1") +
         ",partial_roundings=" + (scaled ? "2" : "0");
}

// Throws ContractError when a chunk of `m` can cross one of `op`'s scale blocks along K.
void check_chunks(const Op& op, const AccumulatorModel& m) {
  const std::size_t chunk = m.chunks.chunk_k;  // 0: all of K
  for (bool a : {true, false}) {
    const uint32_t block = k_block(op, a);
    if (block == 0 || (chunk != 0 && block % chunk == 0)) continue;
    throw ContractError(where(op) + ": accumulator " + m.name + " promotes chunks of " +
                        (chunk == 0 ? std::string("all of K") : std::to_string(chunk) + " k") +
                        " under one scale, but the op's " + (a ? "A" : "B") +
                        " scale blocks span " + std::to_string(block) +
                        " k: the model does not describe this op (its chunk must " +
                        "divide the scale blocks along K; docs/accumulators.md §3)");
  }
}

}  // namespace

std::string declared_accumulator(const Op& op) {
  return op.contract.accumulator.empty() ? "fp32_rn" : op.contract.accumulator;
}

AccumulatorModel accum_model_for(const Op& op) {
  if (!is_gemm(op.family)) {
    throw ContractError(where(op) + ": a " + std::string(to_string(op.family)) +
                        " op has no accumulator");
  }
  const std::string spec = declared_accumulator(op);
  const std::string_view name = std::string_view(spec).substr(0, spec.find(':'));
  const AccumulatorModel* base = find_accumulator(name);
  if (base == nullptr) {
    throw ContractError(where(op) + ": accumulator model '" + std::string(name) +
                        "' is unknown (known: " + accumulator_names() + ")");
  }
  AccumulatorModel m;
  try {
    if (base->kind == AccumulatorKind::kFloat) {
      const std::size_t colon = spec.find(':');
      const std::string own = colon == std::string::npos ? "" : "," + spec.substr(colon + 1);
      m = parse_accumulator_spec(std::string(name) + ":" + float_structure(op) + own);
    } else {
      m = parse_accumulator_spec(spec);
    }
  } catch (const std::invalid_argument& e) {
    throw ContractError(where(op) + ": accumulator '" + spec + "': " + e.what());
  }
  m.name = spec;
  if (m.kind == AccumulatorKind::kAlignedChunks) check_chunks(op, m);
  return m;
}

std::optional<std::string> accumulator_problem(const Op& op) {
  if (!is_gemm(op.family)) return std::nullopt;
  try {
    (void)accum_model_for(op);
  } catch (const ContractError& e) {
    return e.what();
  }
  return std::nullopt;
}

}  // namespace mxgate::impl
