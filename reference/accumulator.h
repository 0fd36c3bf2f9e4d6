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
//                  promoted: scaled and added in fp32 round-to-nearest: sm90_fp8_mma. The same kind
//                  describes structured adders (docs/accumulators.md §3.1): exact sub-sums of
//                  consecutive products (sm100_mxf4nvf4), odd/even halves fused separately and a
//                  late C (cdna3_fp8_mfma), a partial stored by rounding to fp32 (sm100_*).
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
  kRoundDown,    // toward -Inf (MMA-Sim's earlier CDNA3 code: math.floor)
};

// How a group step's result is stored in the fp32 register holding the partial.
enum class StoreRounding : unsigned char {
  kExact,        // it always fits (validate_accumulator): Fasi et al.'s carry bits kept
  kNearestEven,  // rounded to fp32, ties to even (CDNA3's MFMA result)
  kTruncate,     // rounded to fp32 toward zero (MMA-Sim's Blackwell "RZ" output)
};

struct AlignedChunkParams {
  std::size_t chunk_k = 128;    // consecutive k accumulated before promotion (0: all of K)
  std::size_t group_size = 32;  // products added at once, with the running partial
  int precision_bits = 14;      // significant bits kept relative to a group's largest term
  AlignRounding rounding = AlignRounding::kTruncate;
  bool normalize_group_sum = false;  // each group sum is rounded to precision_bits again
  int partial_roundings = 2;         // fp32 RN roundings applying the scales to a partial (1, 2)
  // Structured adders (docs/accumulators.md §3.1); the defaults are the flat adder above.
  std::size_t sub_sum = 1;  // products summed exactly in runs of this many k, the runs aligned
  bool halves = false;      // products at even and odd k fused apart, the halves then aligned
  int late_c_bits = 0;      // 0: the partial is aligned with the products (early C); else late C:
                            // the product sum keeps late_c_bits, the partial precision_bits
  AlignRounding late_rounding = AlignRounding::kTruncate;  // the halves' and late C's alignment
  StoreRounding store = StoreRounding::kExact;
};

struct AccumulatorModel {
  std::string name;
  std::string description;  // one line
  std::string source;       // where its semantics and numbers come from
  std::string status;       // "measured on H200 ...", "published, not measured here", ...
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
// (docs/accumulators.md §3: with store=exact, precision_bits + ceil(log2(group_size + 1)) <= 24
// keeps every group sum an fp32 value; §3.1 for the structured parameters).
void validate_accumulator(const AccumulatorModel& model);

// The fewest significant bits any rounding of a group step keeps relative to the largest term
// (precision_bits, late_c_bits when late, 24 when the store rounds to fp32): the unit of the
// bound (accumulator_bounds.cpp) and of exact mode (accumulator_exact.h).
int effective_precision(const AlignedChunkParams& params);

std::string_view to_string(AccumulatorKind kind);
std::string_view to_string(AlignRounding rounding);
std::string_view to_string(StoreRounding rounding);

}  // namespace mxgate
