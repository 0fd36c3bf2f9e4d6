// Named accumulator models: how a GEMM kernel's hardware adds its products (docs/accumulators.md).
//
// A model is data, one row of the registry in accumulator.cpp. Bound mode (accumulator_bounds.h),
// exact-mode operand generation (accumulator_exact.h), the bit-faithful simulation
// (accumulator_simulation.h) and the probe (probe/accumulator_probe.h) all take one. Two kinds:
//   kFloat         every operation rounds in a floating-point accumulator of `unit_roundoff`
//                  (gemm_oracle.h AccumModel, any summation order): fp32_rn.
//   kAlignedChunks a tensor-core accumulator (docs/accumulators.md §3): within a chunk of chunk_k
//                  consecutive k, groups of group_size products are added at once to the running
//                  partial after aligning every term to the largest one and keeping precision_bits
//                  (truncating or rounding the bits shifted out); each chunk's partial is then
//                  promoted: scaled and added in fp32 round-to-nearest: sm90_fp8_mma.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reference/gemm_oracle.h"

namespace mxgate {

enum class AccumulatorKind : unsigned char { kFloat, kAlignedChunks };

// What happens to the bits of a term shifted below the kept precision.
enum class AlignRounding : unsigned char {
  kTruncate,     // dropped: round toward zero (Fasi et al. 2021; docs/accumulators.md §3)
  kNearestEven,  // round to nearest, ties to even
};

struct AlignedChunkParams {
  std::size_t chunk_k = 128;    // consecutive k accumulated before promotion (0: all of K)
  std::size_t group_size = 32;  // products added at once, with the running partial
  int precision_bits = 14;      // significant bits kept relative to a group's largest term
  AlignRounding rounding = AlignRounding::kTruncate;
  bool normalize_group_sum = false;  // each group sum is rounded to precision_bits again
  int partial_roundings = 2;         // fp32 RN roundings applying the scales to a partial (1, 2)
};

struct AccumulatorModel {
  std::string name;
  std::string description;  // one line
  std::string source;       // where its semantics and numbers come from
  AccumulatorKind kind = AccumulatorKind::kFloat;
  AccumModel fp;              // kFloat (fp.output is ignored: the check supplies the output)
  AlignedChunkParams chunks;  // kAlignedChunks
};

// Every named model, in registry order; find_accumulator returns nullptr for an unknown name.
std::span<const AccumulatorModel> all_accumulators();
const AccumulatorModel* find_accumulator(std::string_view name);
// "fp32_rn sm90_fp8_mma": the names, space-separated, for messages.
std::string accumulator_names();

// "NAME" or "NAME:param=value,param=value": a registered model with parameters overridden (the
// probe's simulations, check-gemm's --accumulator). Throws std::invalid_argument naming the
// problem: an unknown model (listing the names), an unknown parameter (listing the model's), a
// value out of range. The result's name is the spec as given.
AccumulatorModel parse_accumulator_spec(std::string_view spec);

// A float-kind model of `bits` significant bits (unit roundoff 2^-bits, fp32's exponent range)
// summing partials of at most block_k consecutive k: check-gemm's --acc-bits / --block-k.
AccumulatorModel manual_float_accumulator(int bits, std::size_t block_k);

struct AccumulatorParameter {
  std::string name;
  std::string value;
  std::string meaning;
};
// The model's parameters in a fixed order (the names parse_accumulator_spec accepts).
std::vector<AccumulatorParameter> accumulator_parameters(const AccumulatorModel& model);

// Throws std::invalid_argument when the parameters are outside what the model's code supports
// (docs/accumulators.md §3: precision_bits + ceil(log2(group_size + 1)) <= 24 keeps every group
// sum an fp32 value).
void validate_accumulator(const AccumulatorModel& model);

std::string_view to_string(AccumulatorKind kind);
std::string_view to_string(AlignRounding rounding);

}  // namespace mxgate
