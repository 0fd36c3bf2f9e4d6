// The case pieces of the grouped properties for the k-grouped layout (the MoE weight gradient,
// K = tokens; docs/grouped.md §1, §8): A is M x K_total and B N x K_total, group e a K range
// [end_{e-1}, end_e), one M x N output per group, (E * M) x N in all. Each group is a dense GEMM
// on its K range, so its operands are the dense operands of an M x N x K_e GEMM (gemm_operands.h)
// and its expected slice the dense oracle's; an empty group (no K) is +0 (the sum of no terms),
// written. Group K sizes come from the m-grouped distributions (grouped_cases.h group_sizes) at
// the op's offset alignment (128: one K block per unit). props_grouped_k.cpp uses them.
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>
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

// Whether `op` is a grouped GEMM of the k-grouped layout.
bool is_k_grouped(const impl::Op& op);
// What the k-grouped properties need of `op` ("" when it is fed): the k-grouped layout, E4M3FN A
// and B, row-major B, fp32 or bf16 out, the FP8 block scales (fp32 1x128 / 128x128, row-major),
// a declared summation order.
std::string kgrouped_declines(const impl::Op& op);

// One k-grouped call: per group its dense operands (M x N x K_e; nullopt for an empty group), its
// K range; `scale_slack`: the value of the one scale column stored after the last group's grids
// (where an empty last group's first block would start; 1 or NaN, never read).
struct KGroupedOperands {
  std::vector<std::optional<Operands>> groups;
  std::vector<uint32_t> ends;  // cumulative K ends, what the call carries
  std::size_t m = 0, n = 0, k = 0;
  float scale_slack = 1.0f;
  std::size_t k0(std::size_t e) const { return e == 0 ? 0 : ends[e - 1]; }
  std::size_t size(std::size_t e) const { return ends[e] - k0(e); }
};

// Dense operands per group of K sizes `sizes` (`exact`: fingerprint exact mode, else general
// data), seeded from `seed`, the group's index and `salt`.
KGroupedOperands kgrouped_operands(const impl::Op& op, std::span<const uint32_t> sizes,
                                   std::size_t m, std::size_t n, bool exact, uint64_t seed,
                                   uint64_t salt = 0);

// The raw output bytes ((E * M) x N of `format`) of one call.
Bytes run_kgrouped_op(const impl::RunContext& run, const impl::Op& op, const KGroupedOperands& g,
                      OutputFormat format);

// The call as the grouped oracle's problem (reference/grouped_gemm.h: k_grouped_layout from the
// ends the call carries, A and B decoded, the groups' scale grids in group order).
GroupedGemmProblem kgrouped_reference_problem(const impl::Op& op, const KGroupedOperands& g);

// The call against the grouped oracle (`exact`: exact_grouped_gemm; else ordered_grouped_gemm in
// the op's declared order; an empty group's slice fl32(alpha * +0) = +0), compared by
// compare_grouped. The failure locates its element as (group, row, col).
std::optional<Failure> check_kgrouped_output(const std::string& what, const impl::Op& op,
                                             const KGroupedOperands& g, OutputFormat format,
                                             const Bytes& raw, bool exact);
// Whether two raw outputs are equal outside group `except`'s slice (none: everywhere).
std::optional<Failure> compare_kgrouped_rows(const std::string& what, const KGroupedOperands& g,
                                             OutputFormat format, const Bytes& want,
                                             const Bytes& got, std::optional<std::size_t> except);

}  // namespace mxgate::properties
