#include "properties/grouped_cases.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

#include "impl/calls.h"
#include "impl/harness.h"
#include "properties/scale_io.h"
#include "reference/exact_sum.h"

namespace mxgate::properties {

namespace {

// Routed experts and top-k of production MoE models (their config.json; the project's research
// notes list the copies read): the figures the generators scale down.
constexpr std::array<MoeRouting, 4> kRoutings = {{
    {"deepseek_v3", 256, 8,
     "deepseek-ai/DeepSeek-V3 config.json: n_routed_experts 256, "
     "num_experts_per_tok 8"},
    {"kimi_k2", 384, 8,
     "moonshotai/Kimi-K2 config.json (kimi_k2, DeepseekV3 layout): 384 "
     "experts, top-8"},
    {"qwen3_moe", 128, 8,
     "Qwen/Qwen3-235B-A22B config.json: num_experts 128, "
     "num_experts_per_tok 8"},
    {"gpt_oss", 128, 4,
     "openai/gpt-oss-120b config.json: num_local_experts 128, "
     "experts_per_token 4"},
}};

constexpr std::array<std::string_view, 11> kDistributions = {
    "random",        "zero_first", "zero_last",    "all_but_one_zero", "one_token", "tile",
    "tile_plus_one", "all_in_one", "topk_routing", "align_edge",       "uniform"};

std::size_t round_up_to(std::size_t v, std::size_t align) {
  return align <= 1 ? v : (v + align - 1) / align * align;
}

}  // namespace

uint32_t MoeRouting::host_experts() const { return std::max<uint32_t>(2, experts / 32); }
uint32_t MoeRouting::host_top_k() const {
  return std::max<uint32_t>(1, std::min(top_k, host_experts() / 2));
}

std::span<const MoeRouting> moe_routings() { return kRoutings; }

const MoeRouting* find_moe_routing(std::string_view model) {
  for (const MoeRouting& r : kRoutings) {
    if (r.model == model) return &r;
  }
  return nullptr;
}

std::span<const std::string_view> group_distributions() { return kDistributions; }

std::vector<uint32_t> group_sizes(std::string_view dist, std::size_t experts, std::size_t tokens,
                                  std::size_t top_k, std::size_t align, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::size_t a = std::max<std::size_t>(1, align);
  std::vector<uint32_t> s(experts, 0);
  const auto any = [&] { return static_cast<std::size_t>(rng() % experts); };
  const auto random_sizes = [&] {
    const std::size_t cap = std::max<std::size_t>(1, 2 * tokens / experts);
    for (auto& v : s) v = static_cast<uint32_t>(rng() % (cap + 1));
  };
  if (dist == "uniform") {
    for (auto& v : s) v = static_cast<uint32_t>(std::max<std::size_t>(1, tokens / experts));
  } else if (dist == "random" || dist == "zero_first" || dist == "zero_last") {
    random_sizes();
    if (dist == "zero_first") s.front() = 0;
    if (dist == "zero_last") s.back() = 0;
  } else if (dist == "all_but_one_zero" || dist == "all_in_one") {
    s[any()] = static_cast<uint32_t>(dist == "all_in_one" ? tokens * top_k : tokens);
  } else if (dist == "one_token" || dist == "tile" || dist == "tile_plus_one") {
    random_sizes();
    s[any()] = dist == "one_token" ? 1u : dist == "tile" ? 128u : 129u;
  } else if (dist == "topk_routing") {
    // Each token's top-k experts of random router logits (ties to the lower index).
    std::vector<float> logits(experts);
    std::vector<std::size_t> idx(experts);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (std::size_t t = 0; t < tokens; ++t) {
      for (float& l : logits) l = normal(rng);
      std::iota(idx.begin(), idx.end(), std::size_t{0});
      const std::size_t k = std::min(top_k, experts);
      std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                        [&](std::size_t x, std::size_t y) {
                          return logits[x] > logits[y] || (logits[x] == logits[y] && x < y);
                        });
      for (std::size_t j = 0; j < k; ++j) ++s[idx[j]];
    }
  } else if (dist == "align_edge") {
    // Boundaries on the declared alignment but off the 128-row tile: one alignment unit, a tile
    // minus one unit, a tile plus one unit (1: 127, 129).
    for (auto& v : s) {
      const std::size_t pick = rng() % 3;
      const std::size_t unit = a == 1 ? 1 : a;
      v = static_cast<uint32_t>(pick == 0 ? unit : pick == 1 ? 128 - unit : 128 + unit);
    }
  } else {
    throw CaseError("case field 'dist' has unknown value '" + std::string(dist) + "'");
  }
  for (auto& v : s) v = static_cast<uint32_t>(round_up_to(v, a));
  return s;
}

std::string sizes_text(std::span<const uint32_t> sizes) {
  std::string out;
  for (uint32_t v : sizes) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

std::vector<uint32_t> sizes_field(const Case& c) {
  std::vector<uint32_t> out;
  const std::string& t = c.text("sizes");
  std::size_t at = 0;
  while (at <= t.size()) {
    const std::size_t end = std::min(t.find(',', at), t.size());
    const std::string v = t.substr(at, end - at);
    if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) {
      throw CaseError("case field 'sizes' must be a comma list of row counts, got '" + t + "'");
    }
    out.push_back(static_cast<uint32_t>(std::stoul(v)));
    at = end + 1;
  }
  return out;
}

void tag_case_and_empty_groups(const Context& ctx, const impl::Op& op, const Case& c,
                               std::string_view layout, const std::vector<uint32_t>& sizes,
                               const std::string& empty) {
  const std::size_t zeros = static_cast<std::size_t>(std::count(sizes.begin(), sizes.end(), 0u));
  ctx.tag("op:" + op.name);
  ctx.tag("grouped:layout:" + std::string(layout));
  ctx.tag("grouped:dist:" + c.text("dist"));
  if (c.has("model")) ctx.tag("grouped:model:" + c.text("model"));
  if (sizes.size() > 1 && sizes.front() == 0) ctx.tag(empty + "first");
  if (sizes.size() > 1 && sizes.back() == 0) ctx.tag(empty + "last");
  if (sizes.size() > 1 && zeros == sizes.size() - 1) ctx.tag(empty + "all_but_one");
}

GroupGeometry group_geometry(const impl::Op& op, std::span<const uint32_t> sizes, std::size_t tail,
                             std::size_t max_m) {
  const impl::GroupedClause& gc = *op.contract.grouped;
  GroupGeometry geo;
  if (gc.layout == impl::GroupLayout::kMasked) {
    const std::size_t slot = std::max<std::size_t>(
        {max_m, std::size_t{1}, *std::max_element(sizes.begin(), sizes.end())});
    for (std::size_t e = 0; e < sizes.size(); ++e) {
      geo.groups.push_back({e * slot, sizes[e]});
      geo.offsets.push_back(sizes[e]);
    }
    geo.m = slot * sizes.size();
    return geo;
  }
  std::size_t r = 0;
  for (uint32_t v : sizes) {
    geo.groups.push_back({r, v});
    geo.offsets.push_back(
        static_cast<uint32_t>(gc.offsets == impl::OffsetsKind::kStarts ? r : r + v));
    r += v;
  }
  geo.m = r + (gc.offsets == impl::OffsetsKind::kEnds ? tail : 0);
  return geo;
}

std::string locate_row(const GroupGeometry& geo, std::size_t r) {
  for (std::size_t e = 0; e < geo.groups.size(); ++e) {
    const GroupSpan& g = geo.groups[e];
    if (r >= g.r0 && r < g.r0 + g.rows) {
      return "group " + std::to_string(e) + " row " + std::to_string(r - g.r0);
    }
  }
  return "no group (a row the call must not write)";
}

std::size_t out_elem(OutputFormat f) { return f == OutputFormat::kBf16 ? 2 : 4; }

std::optional<BitMismatch> first_raw_difference(OutputFormat format, std::size_t rows,
                                                std::size_t n, const Bytes& want, const Bytes& got,
                                                const std::function<bool(std::size_t)>& judged) {
  const std::size_t elem = out_elem(format), row_bytes = n * elem;
  for (std::size_t r = 0; r < rows; ++r) {
    if (!judged(r)) continue;
    for (std::size_t i = 0; i < row_bytes; ++i) {
      if (want[r * row_bytes + i] == got[r * row_bytes + i]) continue;
      BitMismatch where;
      where.row = r;
      where.col = i / elem;
      for (std::size_t b = 0; b < elem; ++b) {
        const std::size_t at = r * row_bytes + where.col * elem + b;
        where.expected_bits |= static_cast<uint32_t>(want[at]) << (8 * b);
        where.actual_bits |= static_cast<uint32_t>(got[at]) << (8 * b);
      }
      return where;
    }
  }
  return std::nullopt;
}

namespace {

// Which group owns row r (groups.size(): none).
std::size_t owner(const GroupGeometry& geo, std::size_t r) {
  for (std::size_t e = 0; e < geo.groups.size(); ++e) {
    if (r >= geo.groups[e].r0 && r < geo.groups[e].r0 + geo.groups[e].rows) return e;
  }
  return geo.groups.size();
}

// The stacked scale storage: each group's (or expert's) grid in `layout`, one after another.
template <class T>
std::vector<T> stack_scales(impl::Layout layout, const std::vector<std::vector<T>>& grids,
                            const std::vector<std::size_t>& rows, std::size_t cols, T pad) {
  std::vector<T> out;
  for (std::size_t i = 0; i < grids.size(); ++i) {
    if (rows[i] == 0) continue;
    const StoredScales<T> s = store_scales<T>(layout, rows[i], cols, grids[i], 1, pad);
    out.insert(out.end(), s.values.begin(), s.values.end());
  }
  if (out.empty()) out.push_back(pad);
  return out;
}

}  // namespace

Bytes run_grouped_op(const impl::RunContext& run, const impl::Op& op, const GroupedOperands& g,
                     OutputFormat format) {
  using impl::Call;
  using impl::Dtype;
  using impl::Layout;
  const GroupGeometry& geo = g.geo;
  const std::size_t m = geo.m, n = g.n, k = g.k, e_count = g.experts.size();
  const bool mx = impl::dense_family(op.family) == impl::Family::kGemmMx;
  const std::size_t kb = mx ? (k + 31) / 32 : (k + 127) / 128;
  const bool swz = g.scales == Layout::kNvSwizzle128x4;
  // A: each group's rows; a row no group owns holds E4M3FN NaN codes (never to be read).
  Bytes a(m * k, 0x7F);
  for (std::size_t e = 0; e < e_count; ++e) {
    const GroupSpan& s = geo.groups[e];
    std::memcpy(a.data() + s.r0 * k, g.experts[e].a.data(), s.rows * k);
  }
  Bytes b;
  for (const Operands& o : g.experts) b.insert(b.end(), o.b.begin(), o.b.end());
  impl::Invocation inv(op, run);
  inv.input(&Call::a, a, m, k, k, Dtype::kE4m3fn, Layout::kRowMajor);
  inv.input(&Call::b, b, e_count * n, k, k, Dtype::kE4m3fn, Layout::kRowMajor);
  if (mx) {
    Bytes sa, sb;
    if (swz) {
      std::vector<Bytes> ga, gb;
      std::vector<std::size_t> ra, rb;
      for (std::size_t e = 0; e < e_count; ++e) {
        const GroupSpan& s = geo.groups[e];
        ga.emplace_back(g.experts[e].a_e8m0.begin(),
                        g.experts[e].a_e8m0.begin() + static_cast<std::ptrdiff_t>(s.rows * kb));
        ra.push_back(s.rows);
        gb.push_back(g.experts[e].b_e8m0);
        rb.push_back(n);
      }
      sa = stack_scales<uint8_t>(Layout::kNvSwizzle128x4, ga, ra, kb, 0xFF);
      sb = stack_scales<uint8_t>(Layout::kNvSwizzle128x4, gb, rb, kb, 0xFF);
    } else {
      sa.assign(m * kb, 0xFF);
      for (std::size_t e = 0; e < e_count; ++e) {
        const GroupSpan& s = geo.groups[e];
        std::memcpy(sa.data() + s.r0 * kb, g.experts[e].a_e8m0.data(), s.rows * kb);
      }
      for (const Operands& o : g.experts) sb.insert(sb.end(), o.b_e8m0.begin(), o.b_e8m0.end());
    }
    const Layout l = swz ? Layout::kNvSwizzle128x4 : Layout::kRowMajor;
    inv.input(&Call::a_scale, sa, m, kb, swz ? 0 : kb, Dtype::kE8m0, l);
    inv.input(&Call::b_scale, sb, e_count * n, kb, swz ? 0 : kb, Dtype::kE8m0, l);
  } else {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> sa(m * kb, nan), sb;
    for (std::size_t e = 0; e < e_count; ++e) {
      const GroupSpan& s = geo.groups[e];
      std::copy_n(g.experts[e].a_f32.begin(), s.rows * kb,
                  sa.begin() + static_cast<std::ptrdiff_t>(s.r0 * kb));
    }
    for (const Operands& o : g.experts) sb.insert(sb.end(), o.b_f32.begin(), o.b_f32.end());
    inv.input(&Call::a_scale, bytes_of(sa), m, kb, kb, Dtype::kF32, Layout::kRowMajor);
    inv.input(&Call::b_scale, bytes_of(sb), sb.size() / kb, kb, kb, Dtype::kF32, Layout::kRowMajor);
  }
  const Call call = impl::grouped_call(inv, m, n, k, out_dtype(format), geo.offsets);
  return inv.run_and_read(call, &Call::out);
}

GroupedGemmProblem reference_problem(const impl::Op& op, const GroupedOperands& g) {
  const impl::GroupedClause& gc = *op.contract.grouped;
  const GroupGeometry& geo = g.geo;
  const std::size_t e_count = g.experts.size(), n = g.n, k = g.k;
  const std::vector<std::int64_t> offs(geo.offsets.begin(), geo.offsets.end());
  GroupLayout layout =
      gc.layout == impl::GroupLayout::kMasked
          ? masked_layout(offs, geo.m / e_count)
          : m_contiguous_layout(offs,
                                gc.offsets == impl::OffsetsKind::kStarts ? OffsetsPolicy::kStarts
                                                                         : OffsetsPolicy::kEnds,
                                geo.m, std::max<uint32_t>(1, gc.offset_align));
  const BlockSizes blocks = g.experts.front().problem.blocks;
  GroupedGemmProblem p = make_grouped_problem(std::move(layout), 0, n, k, blocks, true);
  for (std::size_t e = 0; e < e_count; ++e) {
    const GroupRange r = group_output_rows(p, e);
    if (r.begin != geo.groups[e].r0 || r.size() != geo.groups[e].rows) {
      throw std::logic_error("reference_problem: the reference's group " + std::to_string(e) +
                             " is not the case's geometry");
    }
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::fill(p.a.begin(), p.a.end(), nan);
  std::fill(p.a_scale.begin(), p.a_scale.end(), nan);
  const std::size_t a_cols = (k + blocks.a_k - 1) / blocks.a_k;
  bool alpha = false;
  for (std::size_t e = 0; e < e_count; ++e) {
    const GemmProblem& d = g.experts[e].problem;
    if (d.blocks.a_m != 1 || d.blocks.a_k != blocks.a_k || d.blocks.b_n != blocks.b_n ||
        d.blocks.b_k != blocks.b_k || d.n != n || d.k != k) {
      throw std::logic_error("reference_problem: experts of different shapes or scale blocks");
    }
    const GroupSpan& s = geo.groups[e];
    std::copy_n(d.a.begin(), s.rows * k, p.a.begin() + static_cast<std::ptrdiff_t>(s.r0 * k));
    std::copy_n(d.a_scale.begin(), s.rows * a_cols,
                p.a_scale.begin() + static_cast<std::ptrdiff_t>(s.r0 * a_cols));
    std::copy(d.b.begin(), d.b.end(), p.b.begin() + static_cast<std::ptrdiff_t>(e * n * k));
    std::copy(d.b_scale.begin(), d.b_scale.end(),
              p.b_scale.begin() + static_cast<std::ptrdiff_t>(e * d.b_scale.size()));
    alpha = alpha || d.alpha != 1.0f;
  }
  if (alpha) {
    for (const Operands& o : g.experts) p.alpha.push_back(o.problem.alpha);
  }
  return p;
}

std::optional<Failure> check_unwritten(const std::string& what, const GroupedGemmProblem& p,
                                       const GemmOutput& actual) {
  const std::size_t elem = out_elem(actual.format);
  const GemmOutput poison =
      gemm_output_of(Bytes(actual.rows * actual.cols * elem, gpu::kPoisonByte), actual.rows,
                     actual.cols, actual.format);
  const UnwrittenVerdict u = check_unwritten_rows(p, poison, actual);
  if (u.ok()) return std::nullopt;
  BitMismatch where;
  where.row = u.first->global_row;
  where.col = u.first->col;
  where.expected_bits = u.first->before_bits;
  where.actual_bits = u.first->after_bits;
  return Failure{what + ": " + u.summary(), where, std::nullopt, actual};
}

std::optional<Failure> compare_grouped_outputs(const std::string& what, const GroupedGemmProblem& p,
                                               GemmOutput expected, const GemmOutput& actual) {
  const GroupedBitExactVerdict v = compare_grouped(p, expected, actual);
  if (v.ok()) return std::nullopt;
  for (std::size_t r : unwritten_rows(p)) {
    for (std::size_t j = 0; j < p.n; ++j) {
      if (expected.format == OutputFormat::kFp32) {
        expected.fp32[r * p.n + j] = actual.fp32[r * p.n + j];
      } else {
        expected.bf16[r * p.n + j] = actual.bf16[r * p.n + j];
      }
    }
  }
  return Failure{what + ": " + v.summary(), v.dense.first, expected, actual};
}

std::optional<BitMismatch> bound_mismatch(const GroupedBoundVerdict& v, OutputFormat format) {
  if (!v.dense.worst) return std::nullopt;
  const BoundViolation& w = *v.dense.worst;
  BitMismatch m;
  m.row = w.row;
  m.col = w.col;
  if (format == OutputFormat::kFp32) {
    m.expected_bits = std::bit_cast<uint32_t>(static_cast<float>(w.exact));
    m.actual_bits = std::bit_cast<uint32_t>(static_cast<float>(w.actual));
  } else {
    m.expected_bits = round_to_bf16_bits(w.exact);
    m.actual_bits = round_to_bf16_bits(w.actual);  // exact: the bf16 value itself
  }
  m.ulp_distance = format == OutputFormat::kFp32
                       ? ulp_distance_fp32(m.expected_bits, m.actual_bits)
                       : ulp_distance_bf16(static_cast<uint16_t>(m.expected_bits),
                                           static_cast<uint16_t>(m.actual_bits));
  return m;
}

std::optional<Failure> check_grouped_output(const std::string& what, const impl::Op& op,
                                            const GroupedOperands& g, OutputFormat format,
                                            const Bytes& raw, bool exact) {
  const GroupedGemmProblem p = reference_problem(op, g);
  const GemmOutput actual = gemm_output_of(raw, g.geo.m, g.n, format);
  if (auto f = check_unwritten(what, p, actual)) return f;
  return exact ? compare_grouped_outputs(what + " vs exact_grouped_gemm", p,
                                         exact_grouped_gemm(p, format), actual)
               : compare_grouped_outputs(what + " vs ordered_grouped_gemm (declared order)", p,
                                         ordered_grouped_gemm(p, order_model(op, format)), actual);
}

std::optional<Failure> check_unowned_poison(const std::string& what, const GroupedOperands& g,
                                            OutputFormat format, const Bytes& raw) {
  const GroupGeometry& geo = g.geo;
  // Rows no group owns: never written, every byte still the poison (expected bits 0xFF...FF).
  const Bytes poison(raw.size(), gpu::kPoisonByte);
  const std::optional<BitMismatch> where =
      first_raw_difference(format, geo.m, g.n, poison, raw,
                           [&](std::size_t r) { return owner(geo, r) == geo.groups.size(); });
  if (!where) return std::nullopt;
  return Failure{what + ": row " + std::to_string(where->row) + " col " +
                     std::to_string(where->col) + " was written, but it is " +
                     locate_row(geo, where->row),
                 where, std::nullopt, std::nullopt};
}

std::optional<Failure> compare_raw_rows(const std::string& what, const GroupedOperands& g,
                                        OutputFormat format, const Bytes& want, const Bytes& got,
                                        std::optional<std::size_t> except) {
  const std::optional<BitMismatch> where =
      first_raw_difference(format, g.geo.m, g.n, want, got,
                           [&](std::size_t r) { return !except || owner(g.geo, r) != *except; });
  if (!where) return std::nullopt;
  return Failure{what + ": row " + std::to_string(where->row) + " col " +
                     std::to_string(where->col) + " (" + locate_row(g.geo, where->row) +
                     ") changed",
                 where, std::nullopt, std::nullopt};
}

}  // namespace mxgate::properties
