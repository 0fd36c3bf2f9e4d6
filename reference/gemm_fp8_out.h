// FP8 GEMM output: the epilogue of a GEMM that writes FP8 codes scaled by a per-tensor
// scale_result (include/mxgate/plugin.h revision 4; torch._scaled_mm's scale_result, cuBLASLt's
// D scale). Given the fp32 result v a GEMM's fp32-output path writes (exact_gemm's on exact-mode
// operands, or an ordered / simulated result), each output code is
//   encode_with(convention, format, fl32(v * scale_result))
// one fp32 multiply (RNE, gradual underflow), then the convention's element cast (its rounding,
// overflow and NaN rules, convention.h). Nothing here knows a kernel's layout: the codes are the
// row-major m x n matrix of v.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reference/convention.h"
#include "reference/format.h"

namespace mxgate {

// The codes of fl32(v[i] * scale_result) in `format`, one per byte, in v's order. Throws
// std::invalid_argument when `format` is not an 8-bit element format the convention defines.
std::vector<uint8_t> fp8_scaled_output(std::span<const float> v, float scale_result, Format format,
                                       const Convention& convention);

}  // namespace mxgate
