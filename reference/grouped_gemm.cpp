// The grouped oracle's modes (grouped_gemm.h): each is the dense mode (gemm_oracle.h) on every
// group's dense problem (group_problem), its output placed at the group's output rows.
#include "reference/grouped_gemm.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/blocks.h"
#include "reference/fp_fence.h"
#include "reference/gemm_shared.h"

namespace mxgate {

using std::size_t;

namespace {

GemmOutput zero_output(size_t rows, size_t cols, OutputFormat format) {
  GemmOutput out;
  out.rows = rows;
  out.cols = cols;
  out.format = format;
  if (format == OutputFormat::kFp32) {
    out.fp32.assign(rows * cols, 0.0f);
  } else {
    out.bf16.assign(rows * cols, 0);
  }
  return out;
}

// Copies a dense group result (rows x cols) into rows [at, at + rows) of `out`.
void place(const GemmOutput& group, size_t at, GemmOutput& out) {
  const size_t off = at * out.cols;
  if (out.format == OutputFormat::kFp32) {
    std::copy(group.fp32.begin(), group.fp32.end(), out.fp32.begin() + static_cast<long>(off));
  } else {
    std::copy(group.bf16.begin(), group.bf16.end(), out.bf16.begin() + static_cast<long>(off));
  }
}

// The output of a k-grouped group with no K: the sum of no terms (+0) through the dense exact
// mode's epilogue, fl32(alpha * +0), then the output conversion.
GemmOutput empty_k_group(const GroupedGemmProblem& p, size_t g, OutputFormat format) {
  const float alpha = p.alpha.empty() ? 1.0f : p.alpha[g];
  const float zero = alpha == 1.0f ? 0.0f : fence(alpha * 0.0f);
  return gemm_output_from_fp32(p.m, p.n, format, std::vector<float>(p.m * p.n, zero));
}

// Runs `dense(problem)` for every non-empty group and places its output; empty k-grouped groups
// get empty_k_group.
template <class Dense>
GemmOutput per_group(const GroupedGemmProblem& p, OutputFormat format, Dense dense) {
  validate_grouped_problem(p);
  GemmOutput out = zero_output(grouped_output_rows(p), p.n, format);
  for (size_t g = 0; g < p.layout.groups(); ++g) {
    const GroupRange rows = group_output_rows(p, g);
    std::optional<GemmProblem> d = group_problem(p, g);
    if (d) {
      place(dense(*d), rows.begin, out);
    } else if (p.layout.kind == GroupKind::kKGrouped) {
      place(empty_k_group(p, g, format), rows.begin, out);
    }
  }
  return out;
}

void check_output(const GroupedGemmProblem& p, const GemmOutput& out, const char* what) {
  const size_t rows = grouped_output_rows(p);
  const size_t size = out.format == OutputFormat::kFp32 ? out.fp32.size() : out.bf16.size();
  if (out.rows != rows || out.cols != p.n || size != rows * p.n) {
    throw std::invalid_argument(std::string("grouped comparison: ") + what + " is " +
                                std::to_string(out.rows) + "x" + std::to_string(out.cols) + " (" +
                                std::to_string(size) + " values), the problem's output is " +
                                std::to_string(rows) + "x" + std::to_string(p.n));
  }
}

GroupedLocation locate(const GroupedGemmProblem& p, size_t g, size_t row_in_group, size_t col) {
  return {g, row_in_group, group_output_rows(p, g).begin + row_in_group, col};
}

std::string where(const GroupedLocation& l) {
  return "group " + std::to_string(l.group) + " row " + std::to_string(l.row) + " (global row " +
         std::to_string(l.global_row) + ") col " + std::to_string(l.col);
}

uint32_t bits_at(const GemmOutput& o, size_t i) {
  if (o.format == OutputFormat::kFp32) {
    uint32_t b;
    std::memcpy(&b, &o.fp32[i], sizeof b);
    return b;
  }
  return o.bf16[i];
}

}  // namespace

GemmOutput exact_grouped_gemm(const GroupedGemmProblem& problem, OutputFormat format,
                              const ExactOptions& options) {
  ExactStats total;
  ExactOptions per = options;
  ExactStats one;
  if (options.stats != nullptr) per.stats = &one;
  GemmOutput out = per_group(problem, format, [&](const GemmProblem& d) {
    GemmOutput r = exact_gemm(d, format, per);
    if (options.stats != nullptr) {
      total.direct_elements += one.direct_elements;
      total.range_sums += one.range_sums;
      total.general_products += one.general_products;
    }
    return r;
  });
  if (options.stats != nullptr) *options.stats = total;
  return out;
}

GemmOutput ordered_grouped_gemm(const GroupedGemmProblem& problem, const OrderModel& order) {
  return per_group(problem, order.output,
                   [&](const GemmProblem& d) { return ordered_gemm(d, order); });
}

GroupedBounds compute_grouped_bounds(const GroupedGemmProblem& p, const AccumModel& model) {
  return compute_grouped_bounds(
      p, [&](const GemmProblem& d) { return compute_bounds(d, model); }, model.output);
}

GroupedBounds compute_grouped_bounds(const GroupedGemmProblem& p, const DenseBoundsFn& dense_bounds,
                                     OutputFormat output) {
  validate_grouped_problem(p);
  GroupedBounds out;
  const size_t rows = grouped_output_rows(p);
  out.dense.rows = rows;
  out.dense.cols = p.n;
  out.dense.output = output;
  out.dense.exact.assign(rows * p.n, 0.0);
  out.dense.abs_sum.assign(rows * p.n, 0.0);
  out.dense.bound.assign(rows * p.n, 0.0);
  for (size_t g = 0; g < p.layout.groups(); ++g) {
    const GroupRange r = group_output_rows(p, g);
    out.output_rows.push_back(r);
    std::optional<GemmProblem> d = group_problem(p, g);
    if (!d) {
      if (p.layout.kind == GroupKind::kKGrouped) {  // no terms: the exact +-0, bound 0
        const float alpha = p.alpha.empty() ? 1.0f : p.alpha[g];
        std::fill_n(out.dense.exact.begin() + static_cast<long>(r.begin * p.n), r.size() * p.n,
                    alpha * 0.0);
      }
      continue;
    }
    const GemmBounds b = dense_bounds(*d);
    if (b.rows != d->m || b.cols != d->n || b.output != output) {
      throw std::invalid_argument("compute_grouped_bounds: group " + std::to_string(g) +
                                  "'s bounds do not have the group's shape and output format");
    }
    const long at = static_cast<long>(r.begin * p.n);
    std::copy(b.exact.begin(), b.exact.end(), out.dense.exact.begin() + at);
    std::copy(b.abs_sum.begin(), b.abs_sum.end(), out.dense.abs_sum.begin() + at);
    std::copy(b.bound.begin(), b.bound.end(), out.dense.bound.begin() + at);
  }
  return out;
}

GroupedBitExactVerdict compare_grouped(const GroupedGemmProblem& p, const GemmOutput& expected,
                                       const GemmOutput& actual) {
  validate_grouped_problem(p);
  check_output(p, expected, "expected");
  check_output(p, actual, "actual");
  if (expected.format != actual.format) {
    throw std::invalid_argument("grouped comparison: expected and actual formats differ");
  }
  GroupedBitExactVerdict v;
  v.dense.format = actual.format;
  v.dense.cols = p.n;
  for (size_t g = 0; g < p.layout.groups(); ++g) {
    const GroupRange r = group_output_rows(p, g);
    if (r.size() == 0) continue;
    v.dense.rows += r.size();
    const size_t off = r.begin * p.n, count = r.size() * p.n;
    const BitExactVerdict d =
        actual.format == OutputFormat::kFp32
            ? compare_fp32(r.size(), p.n, std::span(expected.fp32).subspan(off, count),
                           std::span(actual.fp32).subspan(off, count))
            : compare_bf16(r.size(), p.n, std::span(expected.bf16).subspan(off, count),
                           std::span(actual.bf16).subspan(off, count));
    if (d.ok()) continue;
    v.dense.mismatches += d.mismatches;
    BitMismatch first = *d.first, worst = *d.worst;
    first.row += r.begin;
    worst.row += r.begin;
    if (!v.dense.first) {
      v.dense.first = first;
      v.first = locate(p, g, d.first->row, d.first->col);
    }
    if (!v.dense.worst || worst.ulp_distance > v.dense.worst->ulp_distance) {
      v.dense.worst = worst;
      v.worst = locate(p, g, d.worst->row, d.worst->col);
    }
  }
  return v;
}

GroupedBoundVerdict check_grouped_bound(const GroupedBounds& bounds, const GemmOutput& actual) {
  const GemmBounds& b = bounds.dense;
  if (actual.rows != b.rows || actual.cols != b.cols || actual.format != b.output) {
    throw std::invalid_argument("check_grouped_bound: output is " + std::to_string(actual.rows) +
                                "x" + std::to_string(actual.cols) +
                                " (or of another format), bounds are " + std::to_string(b.rows) +
                                "x" + std::to_string(b.cols));
  }
  GroupedBoundVerdict v;
  v.dense.cols = b.cols;
  for (size_t g = 0; g < bounds.output_rows.size(); ++g) {
    const GroupRange r = bounds.output_rows[g];
    if (r.size() == 0) continue;
    v.dense.rows += r.size();
    const size_t off = r.begin * b.cols, count = r.size() * b.cols;
    const auto exact = std::span(b.exact).subspan(off, count);
    const auto bound = std::span(b.bound).subspan(off, count);
    const BoundVerdict d =
        actual.format == OutputFormat::kFp32
            ? check_within_bound(r.size(), b.cols, exact, bound,
                                 std::span<const float>(actual.fp32).subspan(off, count))
            : check_within_bound_bf16(r.size(), b.cols, exact, bound,
                                      std::span(actual.bf16).subspan(off, count));
    v.dense.outside += d.outside;
    for (BoundViolation bv : d.violations) {
      const size_t row_in_group = bv.row;
      bv.row += r.begin;
      if (!v.dense.worst || bv.excess > v.dense.worst->excess) {
        v.dense.worst = bv;
        v.worst = GroupedLocation{g, row_in_group, bv.row, bv.col};
      }
      v.dense.violations.push_back(bv);
    }
  }
  return v;
}

std::string GroupedBitExactVerdict::summary() const {
  std::string s = dense.summary();
  if (first) s += "; first at " + where(*first);
  if (worst) s += "; worst at " + where(*worst);
  return s;
}

std::string GroupedBoundVerdict::summary() const {
  std::string s = dense.summary();
  if (worst) s += "; worst at " + where(*worst);
  return s;
}

std::vector<size_t> unwritten_rows(const GroupedGemmProblem& p) {
  validate_grouped_problem(p);
  const size_t rows = grouped_output_rows(p);
  std::vector<char> written(rows, 0);
  for (size_t g = 0; g < p.layout.groups(); ++g) {
    const GroupRange r = group_output_rows(p, g);
    std::fill(written.begin() + static_cast<long>(r.begin),
              written.begin() + static_cast<long>(r.end), 1);
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < rows; ++i) {
    if (!written[i]) out.push_back(i);
  }
  return out;
}

UnwrittenVerdict check_unwritten_rows(const GroupedGemmProblem& p, const GemmOutput& before,
                                      const GemmOutput& after) {
  check_output(p, before, "the output before the kernel");
  check_output(p, after, "the output after the kernel");
  if (before.format != after.format) {
    throw std::invalid_argument("check_unwritten_rows: formats of before and after differ");
  }
  UnwrittenVerdict v;
  for (const size_t row : unwritten_rows(p)) {
    ++v.rows_checked;
    for (size_t c = 0; c < p.n; ++c) {
      const size_t i = row * p.n + c;
      const uint32_t b = bits_at(before, i), a = bits_at(after, i);
      if (a == b) continue;
      ++v.changed;
      if (v.first) continue;
      UnwrittenVerdict::Change ch;
      ch.global_row = row;
      ch.row = row;
      ch.col = c;
      ch.before_bits = b;
      ch.after_bits = a;
      if (p.layout.kind == GroupKind::kMasked) {
        ch.group = row / p.layout.extent;
        ch.row = row % p.layout.extent;
      }
      v.first = ch;
    }
  }
  return v;
}

std::string UnwrittenVerdict::summary() const {
  if (ok()) {
    return "unwritten rows: all " + std::to_string(rows_checked) + " rows kept their contents";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "0x%08x, after 0x%08x", first->before_bits, first->after_bits);
  std::string at = first->group ? "masked row " + std::to_string(first->row) + " of group " +
                                      std::to_string(*first->group) + " (global row " +
                                      std::to_string(first->global_row) + ")"
                                : "row " + std::to_string(first->global_row) + " (in no group)";
  return "unwritten rows: " + std::to_string(changed) + " elements of " +
         std::to_string(rows_checked) + " rows not to be written were written; first " + at +
         " col " + std::to_string(first->col) + " before " + buf;
}

GroupedGemmProblem make_grouped_exact_operands(GroupLayout layout, size_t m, size_t n, size_t k,
                                               BlockSizes blocks, bool scaled, uint64_t seed) {
  GroupedGemmProblem p = make_grouped_problem(std::move(layout), m, n, k, blocks, scaled);
  const bool kg = p.layout.kind == GroupKind::kKGrouped;
  if (!kg) std::fill(p.a.begin(), p.a.end(), std::numeric_limits<float>::quiet_NaN());
  std::mt19937_64 seeds(seed);
  size_t a_scale_at = 0, b_scale_at = 0;
  for (size_t g = 0; g < p.layout.groups(); ++g) {
    const uint64_t group_seed = seeds();
    const GroupRange r = p.layout.ranges[g];
    if (kg && r.size() == 0) continue;
    const size_t gm = kg ? m : std::max<size_t>(r.size(), 1), gk = kg ? r.size() : k;
    const GemmProblem d = make_exact_mode_operands(gm, n, gk, blocks, scaled, group_seed).problem;
    if (kg) {
      for (size_t i = 0; i < m; ++i) {
        std::copy_n(d.a.begin() + static_cast<long>(i * gk), gk,
                    p.a.begin() + static_cast<long>(i * k + r.begin));
      }
      for (size_t j = 0; j < n; ++j) {
        std::copy_n(d.b.begin() + static_cast<long>(j * gk), gk,
                    p.b.begin() + static_cast<long>(j * k + r.begin));
      }
      if (scaled) {
        std::copy(d.a_scale.begin(), d.a_scale.end(),
                  p.a_scale.begin() + static_cast<long>(a_scale_at));
        std::copy(d.b_scale.begin(), d.b_scale.end(),
                  p.b_scale.begin() + static_cast<long>(b_scale_at));
        a_scale_at += d.a_scale.size();
        b_scale_at += d.b_scale.size();
      }
      continue;
    }
    const bool masked = p.layout.kind == GroupKind::kMasked;
    const size_t a_row = masked ? g * p.layout.extent : r.begin;
    std::copy_n(d.a.begin(), r.size() * k, p.a.begin() + static_cast<long>(a_row * k));
    std::copy(d.b.begin(), d.b.end(), p.b.begin() + static_cast<long>(g * n * k));
    if (scaled) {
      const size_t cols = d.a_scale_cols();
      const size_t grid_row = masked ? g * ceil_div(p.layout.extent, blocks.a_m) : r.begin;
      const size_t a_count = ceil_div(r.size(), blocks.a_m) * cols;
      std::copy_n(d.a_scale.begin(), a_count,
                  p.a_scale.begin() + static_cast<long>(grid_row * cols));
      std::copy(d.b_scale.begin(), d.b_scale.end(),
                p.b_scale.begin() + static_cast<long>(g * d.b_scale.size()));
    }
  }
  validate_grouped_problem(p);
  return p;
}

}  // namespace mxgate
