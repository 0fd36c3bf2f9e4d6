// The grouped oracle's index code (grouped_gemm.h): group ranges from offsets or counts, the
// layouts, the problem's shape checks, and the cut of one group into a dense GemmProblem.
// Written from the layout definitions in grouped_gemm.h alone, independently of gpu/ and impl/.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/blocks.h"
#include "reference/grouped_gemm.h"

namespace mxgate {

using std::size_t;

namespace {

std::string num(size_t x) { return std::to_string(x); }

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

void check_alignment(size_t alignment) {
  if (alignment == 0) fail("group offsets: the declared alignment is 0 (must be >= 1)");
}

// Entry i of an offsets / counts array, validated: >= 0 and a multiple of `alignment`.
size_t entry(std::span<const std::int64_t> values, size_t i, const char* name, size_t alignment) {
  const std::int64_t v = values[i];
  const std::string where = std::string(name) + "[" + num(i) + "] = " + std::to_string(v);
  if (v < 0) fail(where + " is negative");
  const auto u = static_cast<size_t>(v);
  if (u % alignment != 0) {
    fail(where + " is not a multiple of the declared alignment " + num(alignment));
  }
  return u;
}

size_t a_scale_cols_of(const GroupedGemmProblem& p, size_t k) { return ceil_div(k, p.blocks.a_k); }
size_t b_scale_cols_of(const GroupedGemmProblem& p, size_t k) { return ceil_div(k, p.blocks.b_k); }

// kKGrouped: the first entry of group g's A / B scale grid in the concatenated vectors.
std::pair<size_t, size_t> k_group_scale_bases(const GroupedGemmProblem& p, size_t g) {
  size_t a = 0, b = 0;
  for (size_t h = 0; h < g; ++h) {
    const size_t kh = p.layout.ranges[h].size();
    a += ceil_div(p.m, p.blocks.a_m) * a_scale_cols_of(p, kh);
    b += ceil_div(p.n, p.blocks.b_n) * b_scale_cols_of(p, kh);
  }
  return {a, b};
}

size_t k_group_scale_total(const GroupedGemmProblem& p, bool a) {
  const auto bases = k_group_scale_bases(p, p.layout.groups());
  return a ? bases.first : bases.second;
}

void check_size(const char* what, size_t got, size_t want, const std::string& formula) {
  if (got != want) {
    fail(std::string("grouped GEMM problem: ") + what + " has " + num(got) + " entries, expected " +
         formula + " = " + num(want));
  }
}

}  // namespace

std::string_view to_string(GroupKind kind) {
  switch (kind) {
    case GroupKind::kMContiguous:
      return "m_contiguous";
    case GroupKind::kMasked:
      return "masked";
    case GroupKind::kKGrouped:
      return "k_grouped";
  }
  return "?";
}

std::string_view to_string(OffsetsPolicy policy) {
  return policy == OffsetsPolicy::kEnds ? "ends" : "starts";
}

std::vector<GroupRange> group_ranges_from_offsets(std::span<const std::int64_t> offsets,
                                                  OffsetsPolicy policy, size_t total,
                                                  size_t alignment) {
  check_alignment(alignment);
  if (offsets.empty()) fail("group offsets: no groups (the offsets array is empty)");
  std::vector<size_t> v(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) {
    v[i] = entry(offsets, i, "offsets", alignment);
    const std::string where = "offsets[" + num(i) + "] = " + num(v[i]);
    if (v[i] > total) fail(where + " exceeds the total " + num(total));
    if (i > 0 && v[i] < v[i - 1]) {
      fail(where + " is below offsets[" + num(i - 1) + "] = " + num(v[i - 1]) +
           " (offsets must be non-decreasing)");
    }
  }
  std::vector<GroupRange> ranges(v.size());
  for (size_t g = 0; g < v.size(); ++g) {
    if (policy == OffsetsPolicy::kEnds) {
      ranges[g] = {g == 0 ? 0 : v[g - 1], v[g]};
    } else {
      ranges[g] = {v[g], g + 1 < v.size() ? v[g + 1] : total};
    }
  }
  return ranges;
}

std::vector<GroupRange> group_ranges_from_counts(std::span<const std::int64_t> counts, size_t total,
                                                 size_t alignment) {
  check_alignment(alignment);
  if (counts.empty()) fail("group counts: no groups (the counts array is empty)");
  std::vector<GroupRange> ranges(counts.size());
  size_t at = 0;
  for (size_t g = 0; g < counts.size(); ++g) {
    const size_t c = entry(counts, g, "counts", alignment);
    if (c > total - at) {
      fail("counts[" + num(g) + "] = " + num(c) + " brings the sum past the total " + num(total));
    }
    ranges[g] = {at, at + c};
    at += c;
  }
  return ranges;
}

GroupLayout m_contiguous_layout(std::span<const std::int64_t> offsets, OffsetsPolicy policy,
                                size_t rows, size_t alignment) {
  return {GroupKind::kMContiguous, group_ranges_from_offsets(offsets, policy, rows, alignment),
          rows};
}

GroupLayout m_contiguous_layout_from_counts(std::span<const std::int64_t> counts, size_t rows,
                                            size_t alignment) {
  return {GroupKind::kMContiguous, group_ranges_from_counts(counts, rows, alignment), rows};
}

GroupLayout masked_layout(std::span<const std::int64_t> counts, size_t max_m) {
  if (max_m == 0) fail("masked layout: max_m is 0");
  if (counts.empty()) fail("masked layout: no experts (the counts array is empty)");
  GroupLayout layout{GroupKind::kMasked, std::vector<GroupRange>(counts.size()), max_m};
  for (size_t g = 0; g < counts.size(); ++g) {
    const size_t c = entry(counts, g, "masked_counts", 1);
    if (c > max_m) {
      fail("masked_counts[" + num(g) + "] = " + num(c) + " exceeds max_m " + num(max_m));
    }
    layout.ranges[g] = {0, c};
  }
  return layout;
}

GroupLayout k_grouped_layout(std::span<const std::int64_t> offsets, OffsetsPolicy policy,
                             size_t total_k, size_t alignment) {
  return {GroupKind::kKGrouped, group_ranges_from_offsets(offsets, policy, total_k, alignment),
          total_k};
}

void validate_grouped_problem(const GroupedGemmProblem& p) {
  const GroupLayout& l = p.layout;
  const size_t e = l.groups();
  const std::string pre = "grouped GEMM problem: ";
  if (e == 0) fail(pre + "no groups");
  if (p.n == 0) fail(pre + "N is 0");
  const BlockSizes& bl = p.blocks;
  if (bl.a_m == 0 || bl.a_k == 0 || bl.b_n == 0 || bl.b_k == 0) fail(pre + "a zero block size");
  for (size_t g = 0; g < e; ++g) {
    const GroupRange r = l.ranges[g];
    const bool ordered = l.kind == GroupKind::kMasked || g == 0 || r.begin >= l.ranges[g - 1].end;
    if (r.begin > r.end || r.end > l.extent || !ordered ||
        (l.kind == GroupKind::kMasked && r.begin != 0)) {
      fail(pre + "group " + num(g) + " range [" + num(r.begin) + ", " + num(r.end) +
           ") is not valid for a " + std::string(to_string(l.kind)) + " layout of extent " +
           num(l.extent));
    }
  }
  if (!p.alpha.empty() && p.alpha.size() != e) {
    fail(pre + "alpha has " + num(p.alpha.size()) + " entries, expected one per group (" + num(e) +
         ") or none");
  }
  if (l.kind == GroupKind::kKGrouped) {
    if (p.m == 0) fail(pre + "M is 0");
    if (p.k != l.extent) fail(pre + "K " + num(p.k) + " differs from the layout's total K");
    check_size("A", p.a.size(), p.m * p.k, "M*K_total");
    check_size("B", p.b.size(), p.n * p.k, "N*K_total");
    if (!p.a_scale.empty()) {
      check_size("A scales", p.a_scale.size(), k_group_scale_total(p, true),
                 "sum over groups of ceil(M/a_m)*ceil(K_g/a_k)");
    }
    if (!p.b_scale.empty()) {
      check_size("B scales", p.b_scale.size(), k_group_scale_total(p, false),
                 "sum over groups of ceil(N/b_n)*ceil(K_g/b_k)");
    }
    return;
  }
  if (p.m != 0) fail(pre + "M is set (" + num(p.m) + "); only k-grouped problems take M");
  if (p.k == 0) fail(pre + "K is 0");
  const size_t a_rows = l.kind == GroupKind::kMasked ? e * l.extent : l.extent;
  check_size("A", p.a.size(), a_rows * p.k, l.kind == GroupKind::kMasked ? "E*max_m*K" : "rows*K");
  if (l.kind == GroupKind::kMContiguous && bl.a_m != 1 && !p.a_scale.empty()) {
    fail(pre +
         "m-contiguous layouts take per-row activation scales (a_m = 1), got a_m = " + num(bl.a_m));
  }
  if (!p.a_scale.empty()) {
    const size_t grid_rows =
        l.kind == GroupKind::kMasked ? e * ceil_div(l.extent, bl.a_m) : l.extent;
    check_size("A scales", p.a_scale.size(), grid_rows * a_scale_cols_of(p, p.k),
               l.kind == GroupKind::kMasked ? "E*ceil(max_m/a_m)*ceil(K/a_k)" : "rows*ceil(K/a_k)");
  }
  check_size("B", p.b.size(), e * p.n * p.k, "E*N*K");
  if (!p.b_scale.empty()) {
    check_size("B scales", p.b_scale.size(), e * ceil_div(p.n, bl.b_n) * b_scale_cols_of(p, p.k),
               "E*ceil(N/b_n)*ceil(K/b_k)");
  }
}

GroupedGemmProblem make_grouped_problem(GroupLayout layout, size_t m, size_t n, size_t k,
                                        BlockSizes blocks, bool scaled) {
  GroupedGemmProblem p;
  p.layout = std::move(layout);
  p.m = m;
  p.n = n;
  p.k = k;
  p.blocks = blocks;
  const size_t e = p.layout.groups();
  if (p.layout.kind == GroupKind::kKGrouped) {
    p.a.assign(m * k, 0.0f);
    p.b.assign(n * k, 0.0f);
    if (scaled) {
      p.a_scale.assign(k_group_scale_total(p, true), 1.0f);
      p.b_scale.assign(k_group_scale_total(p, false), 1.0f);
    }
  } else {
    const bool masked = p.layout.kind == GroupKind::kMasked;
    const size_t a_rows = masked ? e * p.layout.extent : p.layout.extent;
    p.a.assign(a_rows * k, 0.0f);
    p.b.assign(e * n * k, 0.0f);
    if (scaled) {
      const size_t grid_rows = masked ? e * ceil_div(p.layout.extent, blocks.a_m) : a_rows;
      p.a_scale.assign(grid_rows * a_scale_cols_of(p, k), 1.0f);
      p.b_scale.assign(e * ceil_div(n, blocks.b_n) * b_scale_cols_of(p, k), 1.0f);
    }
  }
  validate_grouped_problem(p);
  return p;
}

size_t grouped_output_rows(const GroupedGemmProblem& p) {
  switch (p.layout.kind) {
    case GroupKind::kMContiguous:
      return p.layout.extent;
    case GroupKind::kMasked:
      return p.layout.groups() * p.layout.extent;
    case GroupKind::kKGrouped:
      return p.layout.groups() * p.m;
  }
  return 0;
}

GroupRange group_output_rows(const GroupedGemmProblem& p, size_t g) {
  if (g >= p.layout.groups()) {
    fail("group " + num(g) + " does not exist (" + num(p.layout.groups()) + " groups)");
  }
  const GroupRange r = p.layout.ranges[g];
  switch (p.layout.kind) {
    case GroupKind::kMContiguous:
      return r;
    case GroupKind::kMasked:
      return {g * p.layout.extent, g * p.layout.extent + r.size()};
    case GroupKind::kKGrouped:
      return {g * p.m, (g + 1) * p.m};
  }
  return {};
}

std::optional<GemmProblem> group_problem(const GroupedGemmProblem& p, size_t g) {
  validate_grouped_problem(p);
  if (g >= p.layout.groups()) {
    fail("group " + num(g) + " does not exist (" + num(p.layout.groups()) + " groups)");
  }
  const GroupRange r = p.layout.ranges[g];
  if (r.size() == 0) return std::nullopt;
  GemmProblem d;
  d.n = p.n;
  d.blocks = p.blocks;
  d.alpha = p.alpha.empty() ? 1.0f : p.alpha[g];
  const auto copy = [](const std::vector<float>& from, size_t begin, size_t count,
                       std::vector<float>& to) {
    to.insert(to.end(), from.begin() + static_cast<std::ptrdiff_t>(begin),
              from.begin() + static_cast<std::ptrdiff_t>(begin + count));
  };
  if (p.layout.kind == GroupKind::kKGrouped) {
    d.m = p.m;
    d.k = r.size();
    for (size_t i = 0; i < p.m; ++i) copy(p.a, i * p.k + r.begin, d.k, d.a);
    for (size_t j = 0; j < p.n; ++j) copy(p.b, j * p.k + r.begin, d.k, d.b);
    const auto [a_base, b_base] = k_group_scale_bases(p, g);
    if (!p.a_scale.empty()) copy(p.a_scale, a_base, d.a_scale_rows() * d.a_scale_cols(), d.a_scale);
    if (!p.b_scale.empty()) copy(p.b_scale, b_base, d.b_scale_rows() * d.b_scale_cols(), d.b_scale);
  } else {
    d.m = r.size();
    d.k = p.k;
    const bool masked = p.layout.kind == GroupKind::kMasked;
    // The first row of A (and of its scale grid) the group reads.
    const size_t a_row = masked ? g * p.layout.extent : r.begin;
    copy(p.a, a_row * p.k, d.m * p.k, d.a);
    if (!p.a_scale.empty()) {
      const size_t cols = a_scale_cols_of(p, p.k);
      const size_t grid_row = masked ? g * ceil_div(p.layout.extent, p.blocks.a_m) : r.begin;
      copy(p.a_scale, grid_row * cols, d.a_scale_rows() * cols, d.a_scale);
    }
    copy(p.b, g * p.n * p.k, p.n * p.k, d.b);
    if (!p.b_scale.empty()) {
      const size_t grid = d.b_scale_rows() * d.b_scale_cols();
      copy(p.b_scale, g * grid, grid, d.b_scale);
    }
  }
  validate_gemm_problem(d);
  return d;
}

}  // namespace mxgate
