// Named accumulator models of the bound mode (check-gemm --accumulator NAME, the C API's
// "accumulators" list): each is a set of AccumModel parameters (reference/gemm_oracle.h) under a
// stable name. `--acc-bits` / `--block-k` stay the manual form of the same model.
//
// Today's one model is fp32_rn, the model bound mode has always used: every rounding fp32
// round-to-nearest, partials of at most 128 consecutive k. New models (e.g. a measured Hopper FP8
// tensor-core accumulator) are rows of the table in accumulators.cpp; callers list names through
// named_accumulators() and never hard-code them.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "reference/gemm_oracle.h"

namespace mxgate::api {

struct NamedAccumulator {
  std::string_view name;
  std::string_view description;  // one line: what it models and where that comes from
  int acc_bits;                  // unit roundoff 2^-acc_bits (24: fp32 round-to-nearest)
  std::size_t block_k;           // partials of at most block_k consecutive k (0: one over all K)
  int product_roundings;         // AccumModel::product_roundings
  int partial_roundings;         // AccumModel::partial_roundings
};

std::span<const NamedAccumulator> named_accumulators();
const NamedAccumulator* find_accumulator(std::string_view name);
std::string accumulator_names();                // "a, b" for error messages
const NamedAccumulator& default_accumulator();  // fp32_rn

// The bound-mode model of acc_bits / block_k (check-gemm's manual form): unit roundoff
// 2^-acc_bits, underflow error 2^(-126-acc_bits) (half the fp32 subnormal spacing for 24 bits,
// the whole spacing for 23: the accumulator has fp32's exponent range), overflow at fp32's
// threshold for that precision, the default product / partial roundings.
AccumModel accum_model(int acc_bits, std::size_t block_k, OutputFormat output);
AccumModel accum_model(const NamedAccumulator& accumulator, OutputFormat output);

}  // namespace mxgate::api
