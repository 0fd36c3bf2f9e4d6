#include "api/accumulators.h"

#include <array>
#include <cmath>

namespace mxgate::api {
namespace {

constexpr std::array<NamedAccumulator, 1> kAccumulators = {{
    {"fp32_rn",
     "fp32 round-to-nearest for every product, addition and scaling; partials of at most 128 k, "
     "each scaled with two roundings (vLLM Triton w8a8; bound mode's model before named models)",
     24, 128, 1, 2},
}};

}  // namespace

std::span<const NamedAccumulator> named_accumulators() { return kAccumulators; }

const NamedAccumulator* find_accumulator(std::string_view name) {
  for (const NamedAccumulator& a : kAccumulators) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string accumulator_names() {
  std::string out;
  for (const NamedAccumulator& a : kAccumulators) {
    out += (out.empty() ? "" : ", ") + std::string(a.name);
  }
  return out;
}

const NamedAccumulator& default_accumulator() { return kAccumulators[0]; }

AccumModel accum_model(int acc_bits, std::size_t block_k, OutputFormat output) {
  AccumModel model;
  model.unit_roundoff = std::ldexp(1.0, -acc_bits);
  model.underflow_eta = std::ldexp(1.0, -126 - acc_bits);
  model.overflow_threshold = std::ldexp(2.0 - std::ldexp(1.0, -acc_bits), 127);
  model.block_k = block_k;
  model.output = output;
  return model;
}

AccumModel accum_model(const NamedAccumulator& accumulator, OutputFormat output) {
  AccumModel model = accum_model(accumulator.acc_bits, accumulator.block_k, output);
  model.product_roundings = accumulator.product_roundings;
  model.partial_roundings = accumulator.partial_roundings;
  return model;
}

}  // namespace mxgate::api
