// The case pieces of the grouped GEMM properties (props_grouped.cpp): group sizes drawn from
// distributions that reach the edges the public record names (zero-token experts first, last and
// all but one, one token, exactly one 128-row tile, a tile plus one, every token in one expert,
// top-k routing from random router logits, the declared offset alignment's edge), expert counts
// and top-k from production MoE models scaled down for the host, and one grouped call built from
// dense operands per group: a group is a dense GEMM on a row range, so each group's operands and
// its expected rows come from the dense pieces (gemm_operands.h, the dense oracle), never from
// the grouped kernel's index code. docs/grouped.md.
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "impl/op.h"
#include "properties/gemm_operands.h"
#include "properties/property.h"
#include "reference/grouped_gemm.h"

namespace mxgate::properties {

inline constexpr impl::FamilyMask kGroupedFamilies =
    impl::family_bit(impl::Family::kGroupedGemmBlock) |
    impl::family_bit(impl::Family::kGroupedGemmMx);

// A production MoE routing configuration: routed experts and top-k per token, with the source of
// the figures, and the host-scaled E (experts / 32) and top-k (at most half of that) the
// generators use.
struct MoeRouting {
  std::string_view model;
  uint32_t experts = 0;
  uint32_t top_k = 0;
  std::string_view source;
  uint32_t host_experts() const;
  uint32_t host_top_k() const;
};
std::span<const MoeRouting> moe_routings();
const MoeRouting* find_moe_routing(std::string_view model);

// The size distributions, by name (case field `dist`).
std::span<const std::string_view> group_distributions();
// The row count of each of `experts` groups under distribution `dist`: `tokens` routed tokens
// (top-k: `tokens` tokens of top_k experts each), every size a multiple of `align` (sizes rounded
// up to it, as a padded MoE permute does), from `seed`. Throws CaseError for an unknown `dist`.
std::vector<uint32_t> group_sizes(std::string_view dist, std::size_t experts, std::size_t tokens,
                                  std::size_t top_k, std::size_t align, uint64_t seed);
// "0,3,128" and back (case field `sizes`; CaseError for a malformed list).
std::string sizes_text(std::span<const uint32_t> sizes);
std::vector<uint32_t> sizes_field(const Case& c);
// The tags of every grouped case: op:NAME, grouped:layout:LAYOUT, grouped:dist:D,
// grouped:model:M, and EMPTY + first / last / all_but_one for the empty groups of `sizes`.
void tag_case_and_empty_groups(const Context& ctx, const impl::Op& op, const Case& c,
                               std::string_view layout, const std::vector<uint32_t>& sizes,
                               const std::string& empty);

// The rows one group owns in the call's M rows, and the call's M.
struct GroupSpan {
  std::size_t r0 = 0, rows = 0;
};
struct GroupGeometry {
  std::vector<GroupSpan> groups;
  std::size_t m = 0;              // rows of A and out
  std::vector<uint32_t> offsets;  // what the call carries (ends, starts or masked counts)
};
// The geometry of `op`'s grouped clause for these sizes: contiguous rows one group after another
// plus `tail` unowned rows after them (end offsets only); masked slots of max_m rows.
GroupGeometry group_geometry(const impl::Op& op, std::span<const uint32_t> sizes, std::size_t tail,
                             std::size_t max_m);

// Dense operands per expert (A: the group's rows, at least one; B: the expert's N x K) and the
// call's scale layout; `unread_poison`: every row of A no group owns holds NaN codes and NaN
// scales, so a kernel that reads one shows it.
struct GroupedOperands {
  std::vector<Operands> experts;
  GroupGeometry geo;
  std::size_t n = 0, k = 0;
  impl::Layout scales = impl::Layout::kRowMajor;
};

// The raw output bytes of one call (m x n of `format`).
Bytes run_grouped_op(const impl::RunContext& run, const impl::Op& op, const GroupedOperands& g,
                     OutputFormat format);

// The call as the reference's grouped problem (reference/grouped_gemm.h): the layout from the
// offsets the call carries (m_contiguous_layout with the clause's offsets policy and alignment, or
// masked_layout), every group's decoded rows of A and their scales at its rows (rows no group owns
// NaN: the oracle never reads them), every expert's B and scale grid stacked. Throws
// std::logic_error when the reference's groups are not the geometry's.
GroupedGemmProblem reference_problem(const impl::Op& op, const GroupedOperands& g);

// The reference's check_unwritten_rows against the output poison (gpu::kPoisonByte in every
// byte): a row no group owns that the call wrote, located by its global row and col.
std::optional<Failure> check_unwritten(const std::string& what, const GroupedGemmProblem& p,
                                       const GemmOutput& actual);
// compare_grouped of the groups' rows; the failure's message names the first and worst element as
// (group, row, col), `where` is the first (global row). `expected` takes actual's bits in the rows
// no group owns (check_unwritten judges those), so a report's mismatch map shows only groups.
std::optional<Failure> compare_grouped_outputs(const std::string& what, const GroupedGemmProblem& p,
                                               GemmOutput expected, const GemmOutput& actual);
// The worst element of a failed bound verdict as a located element (global row, col; expected:
// the exact result rounded to the output format), for Failure::where.
std::optional<BitMismatch> bound_mismatch(const GroupedBoundVerdict& v, OutputFormat format);

// The call's output against the oracle (`exact`: exact_grouped_gemm; else ordered_grouped_gemm in
// the op's declared order), compared with `raw`: check_unwritten, then compare_grouped_outputs.
std::optional<Failure> check_grouped_output(const std::string& what, const impl::Op& op,
                                            const GroupedOperands& g, OutputFormat format,
                                            const Bytes& raw, bool exact);
// Every row no group of `g` owns still holds the output poison in `raw` (a call's own check, for
// the shard calls of the split properties: no reference problem of theirs is built).
std::optional<Failure> check_unowned_poison(const std::string& what, const GroupedOperands& g,
                                            OutputFormat format, const Bytes& raw);
// Bytes per output element of `f` (bf16 2, fp32 4).
std::size_t out_elem(OutputFormat f);
// The first element of rows [0, rows) of n elements where `got`'s bytes differ from `want`'s,
// among the rows `judged` takes: its (row, col) and both bit patterns.
std::optional<BitMismatch> first_raw_difference(OutputFormat format, std::size_t rows,
                                                std::size_t n, const Bytes& want, const Bytes& got,
                                                const std::function<bool(std::size_t)>& judged);
// Whether two raw outputs are equal outside the rows of group `except` (none: every row).
std::optional<Failure> compare_raw_rows(const std::string& what, const GroupedOperands& g,
                                        OutputFormat format, const Bytes& want, const Bytes& got,
                                        std::optional<std::size_t> except);

// The group owning output row `r` ("group 2 row 5" / "no group"), for failure messages.
std::string locate_row(const GroupGeometry& geo, std::size_t r);

}  // namespace mxgate::properties
