#include "properties/kgrouped_cases.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "impl/calls.h"
#include "impl/harness.h"
#include "properties/grouped_cases.h"
#include "reference/grouped_gemm.h"

namespace mxgate::properties {

namespace {

std::size_t blocks_of(std::size_t v) { return (v + 127) / 128; }

// The group whose slice holds output row r, and the row within it ("group 1 row 0").
std::string locate_k_row(const KGroupedOperands& g, std::size_t r) {
  return "group " + std::to_string(r / g.m) + " row " + std::to_string(r % g.m) +
         (g.size(r / g.m) == 0 ? " (an empty K group)" : "");
}

}  // namespace

bool is_k_grouped(const impl::Op& op) {
  return op.contract.grouped && op.contract.grouped->layout == impl::GroupLayout::kKGrouped;
}

std::string kgrouped_declines(const impl::Op& op) {
  const impl::Contract& c = op.contract;
  if (!is_k_grouped(op)) return "the k-grouped layout";
  const impl::DtypeMask e4m3 = impl::dtype_bit(impl::Dtype::kE4m3fn);
  if ((c.a_dtypes & e4m3) == 0 || (c.b_dtypes & e4m3) == 0) return "E4M3FN A and B";
  if ((c.b_layouts & impl::layout_bit(impl::Layout::kRowMajor)) == 0) return "row-major B";
  if ((c.out_dtypes & (impl::dtype_bit(impl::Dtype::kF32) | impl::dtype_bit(impl::Dtype::kBf16))) ==
      0) {
    return "fp32 or bf16 output";
  }
  if ((c.a_scale_layouts & impl::layout_bit(impl::Layout::kRowMajor)) == 0) {
    return "row-major scales";
  }
  if (op.family != impl::Family::kGroupedGemmBlock || c.scale_dtype != impl::Dtype::kF32 ||
      c.a_block_rows != 1 || c.a_block_cols != 128 || c.b_block_rows != 128 ||
      c.b_block_cols != 128) {
    return "fp32 scales of 1x128 (A) and 128x128 (B)";
  }
  if (!c.order) return "a declared summation order";
  return "";
}

GroupedGemmProblem kgrouped_reference_problem(const impl::Op& op, const KGroupedOperands& g) {
  const std::vector<std::int64_t> ends(g.ends.begin(), g.ends.end());
  GroupLayout layout = k_grouped_layout(ends, OffsetsPolicy::kEnds, g.k,
                                        std::max<uint32_t>(1, op.contract.grouped->offset_align));
  const auto first =
      std::find_if(g.groups.begin(), g.groups.end(), [](const auto& o) { return o.has_value(); });
  GroupedGemmProblem p =
      make_grouped_problem(std::move(layout), g.m, g.n, g.k, (*first)->problem.blocks, true);
  // A (m x K) and B (n x K) decoded, each group's columns at its K range; the scale grids one per
  // group, appended in group order (reference/grouped_gemm.h kKGrouped).
  std::vector<float> sa, sb;
  for (std::size_t e = 0; e < g.groups.size(); ++e) {
    if (!g.groups[e]) continue;
    const GemmProblem& d = (*g.groups[e]).problem;
    const std::size_t k0 = g.k0(e), ke = g.size(e);
    for (std::size_t r = 0; r < g.m; ++r) {
      std::copy_n(d.a.begin() + static_cast<std::ptrdiff_t>(r * ke), ke,
                  p.a.begin() + static_cast<std::ptrdiff_t>(r * g.k + k0));
    }
    for (std::size_t r = 0; r < g.n; ++r) {
      std::copy_n(d.b.begin() + static_cast<std::ptrdiff_t>(r * ke), ke,
                  p.b.begin() + static_cast<std::ptrdiff_t>(r * g.k + k0));
    }
    sa.insert(sa.end(), d.a_scale.begin(), d.a_scale.end());
    sb.insert(sb.end(), d.b_scale.begin(), d.b_scale.end());
  }
  if (sa.size() != p.a_scale.size() || sb.size() != p.b_scale.size()) {
    throw std::logic_error(
        "kgrouped_reference_problem: the groups' scale grids are not the "
        "reference's k-grouped grids");
  }
  p.a_scale = std::move(sa);
  p.b_scale = std::move(sb);
  return p;
}

KGroupedOperands kgrouped_operands(const impl::Op& op, std::span<const uint32_t> sizes,
                                   std::size_t m, std::size_t n, bool exact, uint64_t seed,
                                   uint64_t salt) {
  if (sizes.empty() || sizes.size() > 64) throw CaseError("case field 'sizes': 1 to 64 groups");
  KGroupedOperands g;
  g.m = m;
  g.n = n;
  for (std::size_t e = 0; e < sizes.size(); ++e) {
    g.k += sizes[e];
    g.ends.push_back(static_cast<uint32_t>(g.k));
    if (sizes[e] == 0) {
      g.groups.emplace_back(std::nullopt);
      continue;
    }
    const uint64_t s = seed * 1000003u + e + salt * 7919u;
    g.groups.emplace_back(exact ? exact_operands(op, m, n, sizes[e], s, true)
                                : general_operands(op, m, n, sizes[e], s));
  }
  if (g.k == 0) throw CaseError("case field 'sizes': some K group must be nonempty (K > 0)");
  return g;
}

Bytes run_kgrouped_op(const impl::RunContext& run, const impl::Op& op, const KGroupedOperands& g,
                      OutputFormat format) {
  using impl::Call;
  using impl::Dtype;
  using impl::Layout;
  const std::size_t m = g.m, n = g.n, k = g.k, e_count = g.groups.size();
  // A (m x K) and B (n x K): each group's columns at its K range.
  Bytes a(m * k, 0x7F), b(n * k, 0x7F);
  std::vector<float> sa, sb;
  for (std::size_t e = 0; e < e_count; ++e) {
    if (!g.groups[e]) continue;
    const Operands& o = *g.groups[e];
    const std::size_t k0 = g.k0(e), ke = g.size(e);
    for (std::size_t r = 0; r < m; ++r) std::memcpy(&a[r * k + k0], &o.a[r * ke], ke);
    for (std::size_t r = 0; r < n; ++r) std::memcpy(&b[r * k + k0], &o.b[r * ke], ke);
    // Scales: one grid per group, concatenated in group order (docs/grouped.md §3).
    sa.insert(sa.end(), o.a_f32.begin(), o.a_f32.end());
    sb.insert(sb.end(), o.b_f32.begin(), o.b_f32.end());
  }
  sa.insert(sa.end(), m, g.scale_slack);
  sb.insert(sb.end(), blocks_of(n), g.scale_slack);
  const std::size_t kb = blocks_of(k);
  impl::Invocation inv(op, run);
  inv.input(&Call::a, a, m, k, k, Dtype::kE4m3fn, Layout::kRowMajor);
  inv.input(&Call::b, b, n, k, k, Dtype::kE4m3fn, Layout::kRowMajor);
  inv.input(&Call::a_scale, bytes_of(sa), m, kb, kb, Dtype::kF32, Layout::kRowMajor);
  inv.input(&Call::b_scale, bytes_of(sb), blocks_of(n), kb, kb, Dtype::kF32, Layout::kRowMajor);
  const Dtype out = out_dtype(format);
  const std::size_t rows = e_count * m;
  std::vector<uint8_t> offs(e_count * 4);
  for (std::size_t i = 0; i < e_count; ++i) {
    for (std::size_t j = 0; j < 4; ++j)
      offs[i * 4 + j] = static_cast<uint8_t>(g.ends[i] >> (8 * j));
  }
  inv.input(&Call::group_offsets, offs, 1, e_count, e_count, Dtype::kNone, Layout::kRowMajor);
  inv.output(&Call::out, impl::tensor_bytes(out, rows, n), rows, n, n, out, Layout::kRowMajor);
  Call call;
  call.m = m;
  call.n = n;
  call.k = k;
  call.offsets = g.ends;
  return inv.run_and_read(call, &Call::out);
}

std::optional<Failure> check_kgrouped_output(const std::string& what, const impl::Op& op,
                                             const KGroupedOperands& g, OutputFormat format,
                                             const Bytes& raw, bool exact) {
  const GroupedGemmProblem p = kgrouped_reference_problem(op, g);
  const GemmOutput actual = gemm_output_of(raw, g.groups.size() * g.m, g.n, format);
  const GemmOutput expected =
      exact ? exact_grouped_gemm(p, format) : ordered_grouped_gemm(p, order_model(op, format));
  const GroupedBitExactVerdict v = compare_grouped(p, expected, actual);
  if (v.ok()) return std::nullopt;
  std::string note;
  if (v.first && g.size(v.first->group) == 0) note = " (an empty K group: +0 due)";
  return Failure{what + (exact ? " vs exact_grouped_gemm: " : " vs ordered_grouped_gemm: ") +
                     v.summary() + note,
                 v.dense.first, expected, actual};
}

std::optional<Failure> compare_kgrouped_rows(const std::string& what, const KGroupedOperands& g,
                                             OutputFormat format, const Bytes& want,
                                             const Bytes& got, std::optional<std::size_t> except) {
  const std::optional<BitMismatch> where =
      first_raw_difference(format, g.groups.size() * g.m, g.n, want, got,
                           [&](std::size_t r) { return !except || r / g.m != *except; });
  if (!where) return std::nullopt;
  return Failure{what + ": row " + std::to_string(where->row) + " col " +
                     std::to_string(where->col) + " (" + locate_k_row(g, where->row) + ") changed",
                 where, std::nullopt, std::nullopt};
}

}  // namespace mxgate::properties
