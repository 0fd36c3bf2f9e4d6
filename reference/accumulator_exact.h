// Exact-mode operands for a named accumulator model (docs/accumulators.md §6): operands on which
// every summation the model allows is exact, so a correct kernel with that accumulator equals the
// correctly rounded oracle (exact_gemm) bit for bit, whatever its order.
//   kFloat (fp32 round-to-nearest only): gemm_oracle.h make_exact_mode_operands / is_exact_mode.
//   kAlignedChunks: those fp32 conditions (they make the promoted fp32 sums exact) and, for every
//     output element and chunk, the scales constant over the chunk and
//       sum over the chunk of |a_i b_i| < 2^(e0 + p),
//     e0 the lowest set bit of the chunk's nonzero products a_i b_i, p = effective_precision
//     (precision_bits, or fewer where a late C or the fp32 store keeps fewer: §3.1). Every
//     term a group step sees (a product, a sub-sum, a half, or the running partial: a sum of a
//     subset of the chunk's products) is then a multiple of 2^e0 below 2^(e0+p), so its largest
//     term's exponent E is at most e0 + p - 1 and the alignment unit 2^(E-p+1) is at most 2^e0:
//     nothing is truncated or rounded, in any grouping and order, and the group sum (a multiple of
//     2^e0 below 2^(e0+p)) is exact under normalize_group_sum too.
#pragma once

#include <cstdint>
#include <string>

#include "reference/accumulator.h"
#include "reference/gemm_oracle.h"

namespace mxgate {

// Random operands exact in `model`: integers in {-v..v} (v <= 8, exact in E4M3, E5M2 and bf16)
// with v*v*min(chunk_k, K) < 2^p for kAlignedChunks, power-of-two scales as in
// gemm_oracle.h make_exact_mode_operands. Throws std::invalid_argument when no such operands
// exist (K > 2^24, a scale block smaller than the model's chunk, a float model other than fp32
// round-to-nearest).
ExactModeOperands make_exact_mode_operands(std::size_t m, std::size_t n, std::size_t k,
                                           BlockSizes blocks, bool scaled, std::uint64_t seed,
                                           const AccumulatorModel& model);

// Throws what make_exact_mode_operands throws for these K, blocks and model (its refusals depend on
// nothing else), without drawing operands: for a caller that writes every value and scale itself.
void require_exact_mode_operands(std::size_t k, BlockSizes blocks, bool scaled,
                                 const AccumulatorModel& model);

// The condition above; `why` (optional) receives the first violation.
bool is_exact_mode(const GemmProblem& problem, const AccumulatorModel& model,
                   std::string* why = nullptr);

}  // namespace mxgate
