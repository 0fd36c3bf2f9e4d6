// The pieces the grouped-GEMM properties share (props_grouped.cpp, props_grouped_split.cpp): which
// ops they can feed, the case generator over a grouped op (an expert count or a model's routing, a
// size distribution, tokens, N, K, output, scale layout, rows past the groups, seed), the
// coverage tags of a case, and the case's operands (one dense draw per expert). docs/grouped.md
// §8.
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "properties/grouped_cases.h"
#include "properties/props.h"

namespace mxgate::properties {

// What the grouped properties can feed (an empty string when the op is fed): E4M3FN A and B,
// row-major B, fp32 or bf16 out, the scales of its dense family (fp32 1x128 / 128x128, E8M0
// 1x32). grouped_declines adds a declared summation order (the properties that hold a call to
// ordered_gemm); grouped_data_declines is without it (exact-mode data and the bound need none).
std::string grouped_data_declines(const Op& op);
std::string grouped_declines(const Op& op);
bool grouped_data_accepts(const Op& op);
bool grouped_accepts(const Op& op);

// kEmpty: a distribution that leaves experts without tokens, at least one made empty.
enum class GroupedDraw { kAny, kEmpty };

// Cases of `property` over `ops`: the op, a routing (E = 1..4, or a model's host-scaled E and
// top-k; at least `min_experts` experts), a size distribution, tokens, N, K, output, the scale
// layout, the rows past the groups (contiguous end offsets: a tail; masked: max_m past the
// largest count), an expert (grouped.group_isolation) and the seed.
rc::Gen<Case> gen_grouped(std::string_view property, const Ops& ops, GroupedDraw draw,
                          std::size_t min_experts = 1);

// The case with N lowered (to a value its op's contract admits, at least the alignment) until the
// call's rows x N x K is at most `max_terms`: for the properties whose reference work is an exact
// sum per element (the bound), so the gate's case count stays well under a second. The routings
// that make hundreds of rows still run, with a narrow N.
Case cap_terms(const Op& op, Case c, std::size_t max_terms);

// The coverage tags of a case's sizes and layout (grouped_coverage_tags lists them all).
void tag_grouped(const Context& ctx, const Op& op, const Case& c, const GroupedOperands& g);

// The case's operands: one dense draw per expert (`exact`: fingerprint exact mode in the op's
// declared accumulator; else general data), seeds from the case's seed and the expert's index
// (and `salt`). CaseError for a malformed case.
GroupedOperands case_operands(const Op& op, const Case& c, bool exact, uint64_t salt = 0);

}  // namespace mxgate::properties
