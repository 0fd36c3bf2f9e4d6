// The edge-case regime "a NaN scale over nonzero elements" of gemm.exact (case field
// `edge=nan_scale_block`; docs/bug_classes.md §2, Z50 and Z51). The OCP MX spec makes the E8M0
// scale byte 0xFF NaN; a kernel that decodes it as +Inf (llvm/llvm-project#214919) or as the
// largest finite scale 2^127 differs from the reference only where an element under that scale
// is nonzero: 0 x Inf is NaN too, so a NaN scale over zero elements (the extreme-scale regime's
// NaN, extreme_scales.h) hides the decode from any kernel that scales each element on its own.
// Here one A scale block (seed-chosen) is NaN (MX: byte 0xFF; block GEMMs: the fp32 NaN, whose
// exponent byte a UE8M0 op reads as 0xFF) and every element under it is +1; B's elements over the
// block's K range are +1 in every row, and A's other rows are zero there, so a NaN scale gives
// NaN in the block's output rows, an Inf scale +Inf, 2^127 a finite or +Inf value, and every
// other output element is the fingerprint's exact result.
// Applies to the MX GEMMs (family gemm_mx) and the block GEMMs (gemm_block) that gemm.exact
// takes; other ops never draw it.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "impl/op.h"
#include "properties/gemm_operands.h"
#include "reference/accumulator.h"

namespace mxgate::properties {

// The value of case field `edge` for this regime, and the coverage tag's last words.
inline constexpr std::string_view kNanScaleEdge = "nan_scale_block";

// True when `op` takes the regime: an MX or block GEMM that gemm.exact accepts.
bool takes_nan_scale(const impl::Op& op);

// Case field `edge`'s draw for `op`: true in one case of four of an MX GEMM, one of eight of a
// block GEMM; always false for an op without the regime. Shrinks toward false.
rc::Gen<bool> gen_nan_scale(const impl::Op& op);

// Plants the regime into exact-mode operands `o` of `op`: A scale block (row block
// (seed >> 3) % rows, K block (seed >> 11) % cols) NaN and its elements +1, B's elements over that
// K range +1, A's other rows zero over it. Self-checked for exact mode in `model` before the +1s
// and the NaN (std::logic_error: a generator bug). Throws CaseError for an op without the regime.
// Returns the coverage tags, unqualified: "edge:nan_scale_block".
std::vector<std::string> plant_nan_scale(const impl::Op& op, Operands& o, uint64_t seed,
                                         const AccumulatorModel& model);

}  // namespace mxgate::properties
