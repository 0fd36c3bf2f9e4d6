// Bytes measured on real implementations, copied from docs/conventions.md §3 (one H200,
// nvcc 13.0, torch 2.11.0+cu130, triton 3.6.0, ml_dtypes 0.6.0). These are the expected
// outputs the conventions must reproduce: data from the device, never from our own code.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "reference/e8m0.h"
#include "reference/format.h"

namespace mxgate {

// fp32 inputs through one convention's encoder into one format.
struct MeasuredEncode {
  std::string_view convention;
  Format format;
  std::string_view source;  // which row of docs/conventions.md §3
  std::span<const float> inputs;
  std::span<const uint8_t> bytes;
};

// fp32 inputs through one E8M0 encode rule (CUDA's rounding modes, torch, ml_dtypes).
struct MeasuredE8m0 {
  E8m0Encode rule;
  std::string_view source;
  std::span<const float> inputs;
  std::span<const uint8_t> bytes;
};

// E8M0 bytes through one decode rule, expected fp32 bit patterns (any NaN matches any NaN).
struct MeasuredE8m0Decode {
  std::string_view convention;
  E8m0Decode rule;
  std::string_view source;
  std::span<const uint8_t> bytes;
  std::span<const uint32_t> fp32_bits;
};

std::span<const MeasuredEncode> measured_encodes();
std::span<const MeasuredE8m0> measured_e8m0_encodes();
std::span<const MeasuredE8m0Decode> measured_e8m0_decodes();

// Measured counts (docs/conventions.md §3.6): fp32 y for which exp2(ceil(log2(y))) != bitceil(y).
inline constexpr uint64_t kLog2CeilMismatchesAllNormals = 3654;  // CUDA log2f, Triton tl.log2
inline constexpr uint64_t kLog2CeilMismatchesTorchRange = 91;    // torch.log2 CUDA, [2^-27, 2^14)

}  // namespace mxgate
