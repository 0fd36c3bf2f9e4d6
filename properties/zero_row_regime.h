// The edge-case regime "one K tile, an all-zero row" of gemm.exact (case field
// `edge=zero_row_one_k_tile`; docs/bug_classes.md §2, Z44). The situation of
// deepseek-ai/DeepGEMM #365: in FP8 MoE training's k-grouped wgrad GEMM (K = tokens, grouped per
// expert, both operands quantized per channel along K in 128-token blocks with fp32 scales
// amax / 448), an expert that gets exactly 128 tokens is a single 128-K tile, and a channel that
// is all zero in it gets a placeholder block scale (1e-30 in the report). Here: K is exactly the
// op's scale block along K (128), one row of A holds only zero codes under a tiny fp32 scale
// (1e-30, the smallest normal 2^-126, or 2^-127: subnormal in fp32, the smallest E8M0 value),
// every other row ordinary; in one case of four one row of B too (under a tiny scale where B's
// scales are per row, its block's ordinary scale otherwise). The expected output is the
// reference's as always: the zero row's outputs are exact zeros.
// Applies to the block GEMMs (family gemm_block, fp32 scales) whose A scales are per row along K
// (a_block_rows = 1); other ops never draw it.
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "impl/op.h"
#include "properties/gemm_operands.h"
#include "reference/accumulator.h"

namespace mxgate::properties {

// The value of case field `edge` for this regime, and the coverage tag's last words.
inline constexpr std::string_view kZeroRowEdge = "zero_row_one_k_tile";

// The K values of the regime `op`'s contract admits: its scale block along K (A's) and 128, in
// that order without repeats; empty when the op does not take the regime.
std::vector<std::size_t> zero_row_ks(const impl::Op& op);

// Case field `edge`'s draw for `op`: 0 (no regime) in seven cases of eight, else one of
// zero_row_ks (the case's K); always 0 for an op without the regime. Shrinks toward 0.
rc::Gen<std::size_t> gen_zero_row_k(const impl::Op& op);

// The tiny scales of the zero row: 1e-30 (the report's placeholder), 2^-126, 2^-127.
inline constexpr float kZeroRowScales[3] = {1e-30f, 0x1p-126f, 0x1p-127f};

// Plants the regime into exact-mode operands `o` of `op` (any K: the generator gives it one
// tile): A row (seed >> 3) % M all zero codes, every one of its block scales
// kZeroRowScales[(seed >> 5) % 3]; where (seed >> 7) % 4 == 3 and N > 1, B row (seed >> 9) % N
// all zero as well (its scales that tiny value where B's scales are per row). The reference's
// problem follows (a UE8M0-scale op sees the E8M0 value of the tiny scale). Self-checked for
// exact mode in `model` (std::logic_error: a generator bug), on the power-of-two twin of 1e-30
// (2^-100). Throws CaseError for an op without the regime. Returns the coverage tags, unqualified:
// "edge:zero_row_one_k_tile" (K one of zero_row_ks) or "edge:zero_row" (another K), the scale's
// "edge:zero_row_scale:1e-30" / ":min_normal" / ":subnormal", and "edge:zero_b_row".
std::vector<std::string> plant_zero_row(const impl::Op& op, Operands& o, uint64_t seed,
                                        const AccumulatorModel& model);

}  // namespace mxgate::properties
