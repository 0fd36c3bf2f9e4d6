// The grouped-GEMM oracle (mixture-of-experts GEMMs, docs/grouped.md §2): a group is a dense GEMM
// on a row range (or, k-grouped, on a K range), so every mode below cuts the grouped problem into
// one dense GemmProblem per group (group_problem) and calls the dense oracle (gemm_oracle.h) on
// it: the arithmetic, the bound's accumulator models and the verdict policies are the dense ones.
// This file owns only the index code (which rows / K columns / scales belong to which group),
// written independently of the kernels under test (gpu/, impl/).
//
// Layouts (GroupKind), C = A * B^T per group, B row-major (N x K) per expert:
//   kMContiguous: A is (rows, K), groups are row ranges of A (from offsets or counts), B is
//                 (E, N, K) stored as (E*N) x K; output (rows, N): group g's rows of C are group
//                 g's rows of A times expert g's B. Rows in no group (past the last offset, or
//                 before the first start) are never read and never written.
//   kMasked:      A is (E, max_m, K) with a valid-row count per expert (vLLM batched experts,
//                 DeepGEMM masked decode); output (E, max_m, N). Rows at or past the count are
//                 never read and their output rows never written (their poison must survive).
//   kKGrouped:    A is (M, K_total), B is (N, K_total); K is split into groups (the MoE wgrad:
//                 K = tokens), one (M, N) output per group: output (E, M, N). An empty K group
//                 outputs zeros (the sum of no terms is +0), written, never stale.
//
// Offsets: cumulative ENDS (torch `offs`: group g is [ends[g-1], ends[g]), group 0 starts at 0)
// or STARTS (group g is [starts[g], starts[g+1]), the last ends at the total), a named policy;
// or per-group counts. Every entry must be >= 0, monotone (non-decreasing: equal entries are an
// empty group), <= the total, and a multiple of the alignment the caller declares (1, 16, 32,
// 128: the contract's offset alignment).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reference/gemm_oracle.h"
#include "reference/verdict.h"

namespace mxgate {

enum class GroupKind { kMContiguous, kMasked, kKGrouped };
// How an offsets array is read (group_ranges_from_offsets).
enum class OffsetsPolicy { kEnds, kStarts };

std::string_view to_string(GroupKind kind);
std::string_view to_string(OffsetsPolicy policy);

// A half-open range [begin, end) of rows (m-grouped) or of K (k-grouped).
struct GroupRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t size() const { return end - begin; }
  bool operator==(const GroupRange&) const = default;
};

// Per-group ranges from an offsets array of one entry per group (E entries). Throws
// std::invalid_argument naming the bad entry ("offsets[3] = 130 ...") when an entry is negative,
// decreases, exceeds `total`, or is not a multiple of `alignment` (which must be >= 1).
// kEnds: group g = [ends[g-1] (0 for g = 0), ends[g]); rows [ends[E-1], total) are in no group.
// kStarts: group g = [starts[g], starts[g+1]) and the last [starts[E-1], total); rows
// [0, starts[0]) are in no group.
std::vector<GroupRange> group_ranges_from_offsets(std::span<const std::int64_t> offsets,
                                                  OffsetsPolicy policy, std::size_t total,
                                                  std::size_t alignment = 1);
// Per-group ranges from counts (group g = [sum of counts before g, + counts[g])), with the same
// checks: every count >= 0 and a multiple of `alignment`, the sum <= total (named by entry).
std::vector<GroupRange> group_ranges_from_counts(std::span<const std::int64_t> counts,
                                                 std::size_t total, std::size_t alignment = 1);

struct GroupLayout {
  GroupKind kind = GroupKind::kMContiguous;
  // kMContiguous: rows of A; kMasked: [0, count) within each expert's slot; kKGrouped: K ranges.
  std::vector<GroupRange> ranges;
  // kMContiguous: the rows of A (and of the output); kMasked: max_m; kKGrouped: total K.
  std::size_t extent = 0;
  std::size_t groups() const { return ranges.size(); }
};

// Builders (each validates as group_ranges_from_offsets does and throws std::invalid_argument).
GroupLayout m_contiguous_layout(std::span<const std::int64_t> offsets, OffsetsPolicy policy,
                                std::size_t rows, std::size_t alignment = 1);
GroupLayout m_contiguous_layout_from_counts(std::span<const std::int64_t> counts, std::size_t rows,
                                            std::size_t alignment = 1);
// counts[g] in [0, max_m] valid rows of expert g (named by entry otherwise); max_m >= 1.
GroupLayout masked_layout(std::span<const std::int64_t> counts, std::size_t max_m);
GroupLayout k_grouped_layout(std::span<const std::int64_t> offsets, OffsetsPolicy policy,
                             std::size_t total_k, std::size_t alignment = 1);

// A grouped problem of DECODED values (as GemmProblem: the caller decodes bytes and lays scales
// out as logical row-major grids; grouped_scale_layout.h maps them to kernels' buffers).
//   kMContiguous: a (extent x k); a_scale (extent x ceil(k/a_k)), a_m must be 1 (per-row
//                 activation scales); b (E x n x k); b_scale E stacked grids ceil(n/b_n) x
//                 ceil(k/b_k) (each expert's blocks start at its row 0).
//   kMasked:      a (E x extent x k); a_scale E stacked grids ceil(extent/a_m) x ceil(k/a_k);
//                 b, b_scale as kMContiguous.
//   kKGrouped:    m rows; a (m x extent), b (n x extent); a_scale / b_scale: one grid per group,
//                 concatenated in group order, ceil(m/a_m) x ceil(K_g/a_k) and ceil(n/b_n) x
//                 ceil(K_g/b_k) (scale blocks restart at each group's first K; an empty group
//                 has none).
// Empty scale vectors mean every scale 1.0 (bf16 x bf16; weight-only: a_scale empty). `alpha`:
// empty = 1 for every group, else one per group (NVFP4 per-expert global factors), applied as
// the dense epilogue's alpha.
struct GroupedGemmProblem {
  GroupLayout layout;
  std::size_t m = 0;  // kKGrouped only (rows of A and of each group's output); 0 otherwise
  std::size_t n = 0;
  std::size_t k = 0;  // kMContiguous / kMasked: K of every group; kKGrouped: layout.extent
  BlockSizes blocks;
  std::vector<float> a;
  std::vector<float> a_scale;
  std::vector<float> b;
  std::vector<float> b_scale;
  std::vector<float> alpha;
};

// Throws std::invalid_argument naming the first inconsistency (sizes of values and scales, a_m
// != 1 for kMContiguous, kKGrouped with k != extent, alpha of the wrong length, a zero N / K / M).
void validate_grouped_problem(const GroupedGemmProblem& problem);

// A problem of the layout's shape with zero values and, when `scaled`, every scale 1.0.
GroupedGemmProblem make_grouped_problem(GroupLayout layout, std::size_t m, std::size_t n,
                                        std::size_t k, BlockSizes blocks, bool scaled);

// Rows of the grouped output: kMContiguous extent, kMasked E*extent, kKGrouped E*m.
std::size_t grouped_output_rows(const GroupedGemmProblem& problem);
// The output rows group g writes, as a global row range of the grouped output.
GroupRange group_output_rows(const GroupedGemmProblem& problem, std::size_t g);

// Group g as a dense problem (its rows of A with their scales times its expert's B; k-grouped:
// its K columns of A and B with its scale grids), alpha = the group's; nullopt when the group is
// empty (no rows / no K). Throws std::invalid_argument when g >= groups().
std::optional<GemmProblem> group_problem(const GroupedGemmProblem& problem, std::size_t g);

// ---- Modes (each the dense mode per group) ------------------------------------------------------

// The dense exact result per group, rounded once (RNE) to `format`, bit-exact as exact_gemm. An
// empty k-grouped group is fl32(alpha * +0). Rows in no group (and masked rows) are +0.0 here:
// they are not results, compare_grouped never reads them, check_unwritten_rows judges a kernel's.
GemmOutput exact_grouped_gemm(const GroupedGemmProblem& problem, OutputFormat format,
                              const ExactOptions& options = {});
// The dense ordered emulation per group (ordered_gemm).
GemmOutput ordered_grouped_gemm(const GroupedGemmProblem& problem, const OrderModel& order);

// Bounds over the whole grouped output (compute_bounds per group, the same accumulator model);
// rows in no group have exact 0 and bound 0 and are never checked.
struct GroupedBounds {
  GemmBounds dense;
  std::vector<GroupRange> output_rows;  // per group, global rows (group_output_rows)
};
GroupedBounds compute_grouped_bounds(const GroupedGemmProblem& problem, const AccumModel& model);
// The same with any dense bound (e.g. accumulator_bounds.h's named accumulator models) applied per
// group; `output` is the bounds' output format (that of every group's bounds).
using DenseBoundsFn = std::function<GemmBounds(const GemmProblem&)>;
GroupedBounds compute_grouped_bounds(const GroupedGemmProblem& problem,
                                     const DenseBoundsFn& dense_bounds, OutputFormat output);

// ---- Verdicts, located as (group, row within the group, col) ------------------------------------

struct GroupedLocation {
  std::size_t group = 0;
  std::size_t row = 0;         // within the group (0 = the group's first output row)
  std::size_t global_row = 0;  // in the grouped output
  std::size_t col = 0;
};

// The dense verdict over the rows of every group (its coordinates are global rows), plus the
// located first / worst as (group, row, col). ok() iff dense.ok().
struct GroupedBitExactVerdict {
  BitExactVerdict dense;
  std::optional<GroupedLocation> first;
  std::optional<GroupedLocation> worst;
  bool ok() const { return dense.ok(); }
  // e.g. "fp32 bit-exact: 1 of 96 differ; first group 2 row 0 (global row 7) col 3 expected ..."
  std::string summary() const;
};
struct GroupedBoundVerdict {
  BoundVerdict dense;
  std::optional<GroupedLocation> worst;
  bool ok() const { return dense.ok(); }
  std::string summary() const;
};

// Bit-exact comparison of the rows of every group (verdict.h policies). Throws
// std::invalid_argument when either output's shape or format does not match the problem's.
GroupedBitExactVerdict compare_grouped(const GroupedGemmProblem& problem,
                                       const GemmOutput& expected, const GemmOutput& actual);
GroupedBoundVerdict check_grouped_bound(const GroupedBounds& bounds, const GemmOutput& actual);

// Rows a kernel must not write (kMasked rows at or past the count; kMContiguous rows in no
// group): each element's bits in `after` must equal those in `before` (strict bit equality, NaN
// payloads included: a rewritten poison NaN was written). kKGrouped has none.
struct UnwrittenVerdict {
  std::size_t rows_checked = 0;
  std::size_t changed = 0;  // elements whose bits changed
  struct Change {
    std::optional<std::size_t> group;  // kMasked: the expert whose masked row it is
    std::size_t row = 0;               // kMasked: row within the expert's slot
    std::size_t global_row = 0;
    std::size_t col = 0;
    std::uint32_t before_bits = 0;
    std::uint32_t after_bits = 0;
  };
  std::optional<Change> first;
  bool ok() const { return changed == 0; }
  std::string summary() const;
};
// The global output rows no group writes, ascending.
std::vector<std::size_t> unwritten_rows(const GroupedGemmProblem& problem);
UnwrittenVerdict check_unwritten_rows(const GroupedGemmProblem& problem, const GemmOutput& before,
                                      const GemmOutput& after);

// ---- Exact-mode operands ------------------------------------------------------------------------

// Random grouped operands on which every group is exact-mode (gemm_oracle.h
// make_exact_mode_operands, seeded per group from `seed`); rows in no group of A are NaN (a
// kernel that reads them poisons its output). Empty groups still get their expert's B.
GroupedGemmProblem make_grouped_exact_operands(GroupLayout layout, std::size_t m, std::size_t n,
                                               std::size_t k, BlockSizes blocks, bool scaled,
                                               std::uint64_t seed);

}  // namespace mxgate
