// Dequantization of MX and block-FP8 tensors to fp32 and bf16, and the GEMM problems built from
// quantized operands (decoded exactly, for the GEMM oracle).
//
// fp32: decode(element) * decode(scale) as one fp32 multiply (exact unless it under/overflows).
// bf16: that fp32 product rounded once to bf16 (RNE), as vLLM's dequant_mxfp8_to_bf16 does
// (fp32 intermediate, one bf16 rounding; docs/formats.md §3.5).
#pragma once

#include <cstdint>
#include <vector>

#include "reference/block_quant.h"
#include "reference/e8m0.h"
#include "reference/gemm_oracle.h"
#include "reference/mx_quant.h"

namespace mxgate {

std::vector<float> dequantize_mx(const MxQuantized& q, E8m0Decode scale_decode);
std::vector<uint16_t> dequantize_mx_bf16(const MxQuantized& q, E8m0Decode scale_decode);
std::vector<float> dequantize_block(const BlockQuantized& q);
std::vector<uint16_t> dequantize_block_bf16(const BlockQuantized& q);

// C = A * B^T over MXFP8 operands (A: M x K activations, B: N x K weights), e8m0 scales decoded
// with `scale_decode`. Throws std::invalid_argument when K differs or a shape is inconsistent.
GemmProblem mx_gemm_problem(const MxQuantized& a, const MxQuantized& b, E8m0Decode scale_decode);
// C = A * B^T over block FP8 (A 1x128 groups, B 128x128 blocks).
GemmProblem block_gemm_problem(const BlockQuantized& a, const BlockQuantized& b);
// C = A * B^T over bf16 bit patterns (the dequantize-at-load path).
GemmProblem bf16_gemm_problem(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                              std::size_t m, std::size_t n, std::size_t k);

}  // namespace mxgate
