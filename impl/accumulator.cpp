#include "impl/accumulator.h"

#include <array>

namespace mxgate::impl {
namespace {

constexpr std::array<std::string_view, 1> kNames = {"fp32_rn"};

AccumModel fp32_rn(const Op& op, OutputFormat output) {
  AccumModel m;  // unit roundoff 2^-24, eta 2^-150, fp32 overflow threshold
  m.output = output;
  if (const auto& o = op.contract.order) {
    m.block_k = o->block_k;
    m.product_roundings = o->product_roundings;
    m.partial_roundings = o->partial_roundings;
    return m;
  }
  // No declared order: a bound valid for every order and every place the scales are applied.
  // One partial of all K bounds any summation tree (depth <= K - 1); a product meets at most
  // three roundings before it is summed, a partial at most two after.
  const bool scaled = op.family != Family::kGemmBf16;
  m.block_k = 0;
  m.product_roundings = scaled ? 3 : 1;
  m.partial_roundings = scaled ? 2 : 0;
  return m;
}

}  // namespace

std::span<const std::string_view> accumulator_names() { return kNames; }

std::string accumulator_list() {
  std::string out;
  for (std::string_view n : kNames) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

bool known_accumulator(std::string_view name) {
  for (std::string_view n : kNames) {
    if (n == name) return true;
  }
  return false;
}

AccumModel accum_model_for(const Op& op, OutputFormat output) {
  if (!is_gemm(op.family)) {
    throw ContractError(op.impl + "/" + op.name + ": a " + std::string(to_string(op.family)) +
                        " op has no accumulator");
  }
  const std::string& name = op.contract.accumulator.empty() ? "fp32_rn" : op.contract.accumulator;
  if (name == "fp32_rn") return fp32_rn(op, output);
  throw ContractError(op.impl + "/" + op.name + ": accumulator model '" + name +
                      "' is unknown (known: " + accumulator_list() + ")");
}

}  // namespace mxgate::impl
