// check-gemm on grouped dumps (verbs/tensor_ops.h): every group's slice of the inputs is decoded
// by gemm's own loader (load_gemm, so dtypes, shapes and codes are checked as for a dense dump),
// the slices are assembled into a GroupedGemmProblem and judged by the grouped oracle
// (reference/grouped_gemm.h), elements located as (group, row, col).
#include "verbs/grouped_gemm_ops.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/accumulator_bounds.h"
#include "verbs/accumulator_ops.h"
#include "verbs/check_gemm_verdict.h"
#include "verbs/tensor_arrays.h"
#include "verbs/tensor_options.h"

namespace mxgate::verbs {
namespace {

using std::size_t;

std::string describe(const NpyArray& a) {
  return std::string(npy_dtype_name(a.dtype)) + " " + npy_shape_string(a.shape);
}

// Entries [begin, begin + count) along the first axis.
NpyArray outer_slice(const NpyArray& a, size_t begin, size_t count) {
  const size_t inner = a.shape[0] == 0 ? 0 : a.size() / a.shape[0];
  const size_t bytes = inner * a.itemsize();
  std::vector<size_t> shape = a.shape;
  shape[0] = count;
  std::vector<uint8_t> data(a.bytes.begin() + static_cast<long>(begin * bytes),
                            a.bytes.begin() + static_cast<long>((begin + count) * bytes));
  return NpyArray::from_bytes(a.dtype, std::move(shape), std::move(data));
}

// Entry g of the first axis, that axis dropped: (E, x, y) -> (x, y).
NpyArray expert_slice(const NpyArray& a, size_t g) {
  NpyArray s = outer_slice(a, g, 1);
  s.shape.erase(s.shape.begin());
  return s;
}

void require_rank(const NpyArray& a, const std::string& role, size_t rank, const std::string& dims,
                  size_t experts) {
  if (a.rank() != rank || (experts != 0 && a.shape[0] != experts)) {
    throw UsageError(role + ": expected " + dims +
                     (experts != 0 ? " with E=" + std::to_string(experts) +
                                         " (one expert per entry of the group file)"
                                   : std::string()) +
                     ", got " + describe(a));
  }
}

std::vector<std::int64_t> index_values(const NpyArray& a, const std::string& role) {
  if ((a.dtype != NpyDtype::kInt32 && a.dtype != NpyDtype::kInt64) || a.rank() != 1 ||
      a.shape[0] == 0) {
    throw UsageError(role + ": expected int32 or int64 (E,) with E >= 1, got " + describe(a));
  }
  if (a.dtype == NpyDtype::kInt64) return a.values<std::int64_t>();
  const std::vector<std::int32_t> v = a.values<std::int32_t>();
  return {v.begin(), v.end()};
}

// Copies `count` floats of `from` to `to` at `at`.
void put(const std::vector<float>& from, std::vector<float>& to, size_t at) {
  std::copy(from.begin(), from.end(), to.begin() + static_cast<long>(at));
}

GemmOutput output_of(const NpyArray& c, size_t rows, size_t cols) {
  GemmOutput o;
  o.rows = rows;
  o.cols = cols;
  o.format = c.dtype == NpyDtype::kFloat32 ? OutputFormat::kFp32 : OutputFormat::kBf16;
  if (o.format == OutputFormat::kFp32) {
    o.fp32 = c.values<float>();
  } else {
    o.bf16 = c.values<uint16_t>();
  }
  return o;
}

struct LoadedGrouped {
  GroupedGemmProblem problem;
  std::string what;
};

LoadedGrouped load_grouped(const CheckGemmSpec& spec, const ArrayReader& read) {
  const GroupedCheckSpec& gs = *spec.grouped;
  const std::string group_option = gs.masked ? "masked-counts" : "offsets";
  const std::vector<std::int64_t> entries = index_values(read(group_option), "--" + group_option);
  const size_t e = entries.size();
  std::map<std::string, NpyArray> cache;
  const auto full = [&](const std::string& option) -> const NpyArray& {
    auto it = cache.find(option);
    if (it == cache.end()) it = cache.emplace(option, read(option)).first;
    return it->second;
  };
  const NpyArray& an = full("a");
  if (gs.masked) {
    require_rank(an, "--a", 3, "(E, max_m, K)", e);
  } else {
    require_rank(an, "--a", 2, "(rows, K)", 0);
  }
  require_rank(full("b"), "--b", 3, "(E, N, K)", e);
  const size_t extent = an.shape[gs.masked ? 1 : 0];
  GroupLayout layout;
  try {
    layout = gs.masked ? masked_layout(entries, extent)
                       : m_contiguous_layout(entries, gs.policy, extent, gs.alignment);
  } catch (const std::invalid_argument& err) {
    throw UsageError("--" + group_option + ": " + err.what() + " (A has " + std::to_string(extent) +
                     (gs.masked ? " rows per expert)" : " rows)"));
  }
  if (extent == 0) throw UsageError("--a: rows must be positive, got " + describe(an));
  // Group g's inputs as gemm's loader reads them: its rows of A (at least one, so that an empty
  // group's expert is decoded and checked too), its expert's B and scales.
  std::vector<LoadedGemm> groups;
  for (size_t g = 0; g < e; ++g) {
    const GroupRange r = layout.ranges[g];
    const size_t first = gs.masked ? 0 : (r.size() == 0 ? 0 : r.begin);
    const size_t rows = std::max<size_t>(r.size(), 1);
    const auto slice_a = [&](const NpyArray& x, const std::string& role) {
      if (gs.masked) {
        require_rank(x, role, 3, "(E, max_m, ...)", e);
        return outer_slice(expert_slice(x, g), first, rows);
      }
      require_rank(x, role, 2, "(rows, ...)", 0);
      if (x.shape[0] != extent) {
        throw UsageError(role + ": expected " + std::to_string(extent) + " rows (A's), got " +
                         describe(x));
      }
      return outer_slice(x, first, rows);
    };
    const ArrayReader sub = [&](const std::string& option) -> NpyArray {
      const NpyArray& x = full(option);
      if (option == "a" || option == "a-scales") return slice_a(x, "--" + option);
      if (option == "b" || option == "b-scales") {
        require_rank(x, "--" + option, 3, "(E, ...)", e);
        return expert_slice(x, g);
      }
      if (option == "b-global" && x.rank() == 1 && x.shape[0] == e && e > 1) {
        return outer_slice(x, g, 1);  // one global decode scale per expert
      }
      return x;
    };
    try {
      groups.push_back(load_gemm(spec.gemm, sub));
    } catch (const UsageError& err) {
      throw UsageError(std::string(err.what()) + " (in group " + std::to_string(g) + "'s slice)");
    }
  }
  const GemmProblem& g0 = groups[0].problem;
  GroupedGemmProblem p = make_grouped_problem(layout, 0, g0.n, g0.k, g0.blocks, false);
  const size_t a_cols = ceil_div(g0.k, g0.blocks.a_k), b_grid = g0.b_scale.size();
  const bool a_scaled = !g0.a_scale.empty(), b_scaled = !g0.b_scale.empty();
  if (a_scaled) p.a_scale.assign((gs.masked ? e * extent : extent) * a_cols, 1.0f);
  if (b_scaled) p.b_scale.assign(e * b_grid, 1.0f);
  p.alpha.assign(e, 1.0f);
  for (size_t g = 0; g < e; ++g) {
    const GemmProblem& d = groups[g].problem;
    const GroupRange r = layout.ranges[g];
    const size_t row0 = gs.masked ? g * extent : r.begin;
    if (r.size() != 0) {
      put(d.a, p.a, row0 * p.k);
      if (a_scaled) put(d.a_scale, p.a_scale, row0 * a_cols);
    }
    put(d.b, p.b, g * p.n * p.k);
    if (b_scaled) put(d.b_scale, p.b_scale, g * b_grid);
    p.alpha[g] = d.alpha;
  }
  validate_grouped_problem(p);
  std::string what =
      "grouped " + std::string(to_string(layout.kind)) + " E=" + std::to_string(e) + " (" +
      (gs.masked ? "masked counts, max_m " + std::to_string(extent)
                 : "offsets " + std::string(to_string(gs.policy)) + ", alignment " +
                       std::to_string(gs.alignment) + ", rows " + std::to_string(extent)) +
      ") " + spec.gemm.scheme + " N=" + std::to_string(p.n) + " K=" + std::to_string(p.k);
  return {std::move(p), std::move(what)};
}

// The C-shaped input `option`: (rows, N), masked (E, max_m, N); float32 or uint16.
GemmOutput read_c(const GroupedGemmProblem& p, const ArrayReader& read, const std::string& option,
                  std::optional<NpyDtype> dtype) {
  const NpyArray c = read(option);
  const bool masked = p.layout.kind == GroupKind::kMasked;
  const size_t rows = grouped_output_rows(p);
  const bool dtype_ok =
      dtype ? c.dtype == *dtype : c.dtype == NpyDtype::kFloat32 || c.dtype == NpyDtype::kUint16;
  const bool shape_ok = masked ? c.rank() == 3 && c.shape[0] == p.layout.groups() &&
                                     c.shape[1] == p.layout.extent && c.shape[2] == p.n
                               : c.rank() == 2 && c.shape[0] == rows && c.shape[1] == p.n;
  if (!dtype_ok || !shape_ok) {
    const std::string want_dtype =
        dtype ? std::string(npy_dtype_name(*dtype)) + " (C's dtype)" : "float32 or uint16";
    const std::string want_shape =
        masked
            ? "(E=" + std::to_string(p.layout.groups()) +
                  ", max_m=" + std::to_string(p.layout.extent) + ", N=" + std::to_string(p.n) + ")"
            : "(rows=" + std::to_string(rows) + ", N=" + std::to_string(p.n) + ")";
    throw UsageError("--" + option + ": expected " + want_dtype + " " + want_shape + ", got " +
                     describe(c));
  }
  return output_of(c, rows, p.n);
}

LocatedElement with_group(LocatedElement l, const GroupedLocation& at) {
  l.group = at.group;
  l.group_row = at.row;
  return l;
}

}  // namespace

std::optional<GroupedCheckSpec> grouped_check_spec(const Args& a) {
  const bool offsets = a.get("offsets").has_value(), masked = a.get("masked-counts").has_value();
  if (!offsets) {
    reject_options(a, {"offsets-kind", "offsets-alignment"}, "applies to --offsets only");
  }
  if (!offsets && !masked) {
    reject_options(a, {"c-before"}, "applies to grouped dumps (--offsets, --masked-counts) only");
    return std::nullopt;
  }
  if (offsets && masked) {
    throw UsageError("--offsets and --masked-counts: give one (an m-contiguous or a masked dump)");
  }
  GroupedCheckSpec s;
  s.masked = masked;
  const std::string kind = a.get("offsets-kind").value_or("ends");
  if (kind != "ends" && kind != "starts") {
    throw UsageError("--offsets-kind: unknown kind '" + kind + "' (kinds: ends starts)");
  }
  s.policy = kind == "ends" ? OffsetsPolicy::kEnds : OffsetsPolicy::kStarts;
  s.alignment = static_cast<size_t>(a.integer("offsets-alignment", 1, 1, 1 << 20));
  s.c_before = a.get("c-before").has_value();
  return s;
}

CheckGemmResult check_grouped_gemm(const CheckGemmSpec& spec, const ArrayReader& read) {
  const LoadedGrouped loaded = load_grouped(spec, read);
  const GroupedGemmProblem& p = loaded.problem;
  const GemmOutput actual = read_c(p, read, "c", std::nullopt);
  const OutputFormat format = actual.format;
  if (spec.dtype && (*spec.dtype == "float32") != (format == OutputFormat::kFp32)) {
    throw UsageError("--dtype " + *spec.dtype + " does not match --c (the dtype is taken from C)");
  }
  std::optional<UnwrittenVerdict> unwritten;
  if (spec.grouped->c_before) {
    const NpyDtype dt = format == OutputFormat::kFp32 ? NpyDtype::kFloat32 : NpyDtype::kUint16;
    unwritten = check_unwritten_rows(p, read_c(p, read, "c-before", dt), actual);
  }
  CheckGemmResult r;
  r.mode = spec.mode;
  r.output = format;
  r.rows = actual.rows;
  r.cols = actual.cols;
  const char* format_name = format == OutputFormat::kFp32 ? "fp32" : "bf16";
  std::string header, summary;
  if (spec.mode == CheckMode::kExact) {
    if (spec.accumulator) {
      throw UsageError(
          "--accumulator: in exact mode not supported for grouped dumps yet (the "
          "exactness line); use it with --mode bound");
    }
    const GemmOutput expected = exact_grouped_gemm(p, format);
    const GroupedBitExactVerdict v = compare_grouped(p, expected, actual);
    r.mismatches = v.dense.mismatches;
    if (v.first) r.first = with_group(located_bits(*v.dense.first, format), *v.first);
    if (v.worst) r.worst = with_group(located_bits(*v.dense.worst, format), *v.worst);
    summary = v.summary();
    header = "check-gemm " + loaded.what + ", " + format_name +
             " output, exact mode (correctly rounded)";
  } else {
    const AccumulatorModel model = spec.accumulator
                                       ? *spec.accumulator
                                       : manual_float_accumulator(spec.acc_bits, spec.block_k);
    GroupedBoundVerdict v;
    try {
      const GroupedBounds b = compute_grouped_bounds(
          p, [&](const GemmProblem& d) { return compute_bounds(d, model, format); }, format);
      v = check_grouped_bound(b, actual);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    r.mismatches = v.dense.outside;
    if (!v.ok()) {
      const GemmOutput rounded = exact_grouped_gemm(p, format);
      const BoundViolation& f = v.dense.violations.front();
      GroupedLocation at_first{0, 0, f.row, f.col};
      for (size_t g = 0; g < p.layout.groups(); ++g) {
        const GroupRange rows = group_output_rows(p, g);
        if (f.row >= rows.begin && f.row < rows.end)
          at_first = {g, f.row - rows.begin, f.row, f.col};
      }
      r.first = with_group(located_bound(f, rounded, actual), at_first);
      r.worst = with_group(located_bound(*v.dense.worst, rounded, actual), *v.worst);
    }
    summary = v.summary();
    const std::string model_text = spec.accumulator
                                       ? "accumulator " + spec.accumulator->name
                                       : "acc-bits " + std::to_string(spec.acc_bits) +
                                             ", block-k " + std::to_string(spec.block_k);
    header = "check-gemm " + loaded.what + ", " + format_name + " output, bound mode (" +
             model_text + ")";
  }
  std::string rows_line;
  const size_t idle = unwritten_rows(p).size();
  if (unwritten) {
    r.mismatches += unwritten->changed;
    rows_line = unwritten->summary() + "\n";
  } else if (idle != 0) {
    rows_line = "unwritten rows: " + std::to_string(idle) +
                " rows no group writes, not judged (give --c-before, the buffer before the "
                "kernel ran)\n";
  }
  r.text = header + "\n" + summary + "\n" + rows_line + (r.ok() ? "PASS" : "FAIL") + "\n";
  return r;
}

}  // namespace mxgate::verbs
