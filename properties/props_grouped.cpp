// The grouped (mixture-of-experts) GEMM properties over the ops of families grouped_gemm_block and
// grouped_gemm_mx (docs/grouped.md §8). Every check runs one grouped call and holds it to the
// DENSE pieces per group, since a group is a dense GEMM on a row range: its operands are dense
// operands (gemm_operands.h), its expected rows the dense oracle's (exact_gemm, or ordered_gemm in
// the op's declared order), and every row no group owns must keep the output poison.
//   grouped.exact              fingerprint exact-mode data, exact_gemm per group
//   grouped.split_equivalence  general data: the grouped call equals the dense GEMMs of its groups
//                              bit for bit (ordered_gemm in the declared order)
//   grouped.empty_groups       zero-token experts write nothing and disturb nothing: the call is
//                              exact, and NaN weights for every empty expert change no byte
//   grouped.group_isolation    a fresh draw of one expert's weights, scales and tokens changes
//                              the rows of that expert's group only
//   grouped.determinism        the same call twice gives the same bytes
// Group sizes, expert counts and top-k: grouped_cases.h. Coverage tags: grouped_coverage_tags.
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "impl/harness.h"
#include "properties/gemm_cases.h"
#include "properties/grouped_cases.h"
#include "properties/props.h"

namespace mxgate::properties {

namespace {

// What the properties can feed: E4M3FN A and B, row-major B, fp32 or bf16 out, the scales of
// its dense family (fp32 1x128 / 128x128, E8M0 1x32).
std::string grouped_declines(const Op& op) {
  const impl::Contract& c = op.contract;
  if (!c.grouped) return "a grouped clause";
  const impl::DtypeMask e4m3 = dtype_bit(Dtype::kE4m3fn);
  if ((c.a_dtypes & e4m3) == 0 || (c.b_dtypes & e4m3) == 0) return "E4M3FN A and B";
  if ((c.b_layouts & layout_bit(Layout::kRowMajor)) == 0) return "row-major B";
  if ((c.out_dtypes & (dtype_bit(Dtype::kF32) | dtype_bit(Dtype::kBf16))) == 0) {
    return "fp32 or bf16 output";
  }
  if ((c.a_scale_layouts & layout_bit(Layout::kRowMajor)) == 0) return "row-major scales";
  if (op.family == Family::kGroupedGemmBlock &&
      (c.scale_dtype != Dtype::kF32 || c.a_block_rows != 1 || c.a_block_cols != 128 ||
       c.b_block_rows != 128 || c.b_block_cols != 128)) {
    return "fp32 scales of 1x128 (A) and 128x128 (B)";
  }
  if (op.family == Family::kGroupedGemmMx && c.scale_dtype != Dtype::kE8m0) return "E8M0 scales";
  if (!c.order) return "a declared summation order";
  return "";
}
bool grouped_accepts(const Op& op) { return grouped_declines(op).empty(); }

enum class Draw { kAny, kEmpty };

// Cases of `property`: an op, a model's routing (or a small E), a size distribution (kEmpty: one
// that leaves experts without tokens, at least one made empty), tokens, N, K, output, the scale
// layout, the rows past the groups (contiguous end offsets: a tail; masked: max_m past the
// largest count), an expert (group_isolation) and the seed.
rc::Gen<Case> gen_grouped(std::string_view property, const Ops& ops, Draw draw) {
  std::vector<std::string> dists;
  if (draw == Draw::kEmpty) {
    dists = {"zero_first", "zero_last", "all_but_one_zero", "all_in_one", "random"};
  } else {
    for (std::string_view d : group_distributions()) dists.emplace_back(d);
  }
  return gen_over_ops(ops, [property, dists, draw](const Op* op) {
    const impl::Contract& ct = op->contract;
    const bool swizzle = (ct.a_scale_layouts & layout_bit(Layout::kNvSwizzle128x4)) != 0 &&
                         (ct.b_scale_layouts & layout_bit(Layout::kNvSwizzle128x4)) != 0;
    // Small expert counts first (the shrink target), then each model's host-scaled routing: one
    // choice, so a shrink can move from a model straight to a small E.
    std::vector<std::pair<std::string, std::size_t>> routings = {
        {"", 1}, {"", 2}, {"", 3}, {"", 4}};
    for (const MoeRouting& r : moe_routings()) routings.emplace_back(r.model, r.host_experts());
    return rc::gen::apply(
        [op, property, draw](const std::pair<std::string, std::size_t>& routing,
                             const std::string& dist, std::size_t tokens, std::size_t n,
                             std::size_t k, uint64_t seed, const std::string& out, bool swz,
                             std::size_t extra, std::size_t expert) {
          const std::string& model = routing.first;
          const std::size_t experts = routing.second;
          const MoeRouting* r = find_moe_routing(model);
          const std::size_t top_k = r != nullptr ? r->host_top_k() : 1;
          const impl::GroupedClause& g = *op->contract.grouped;
          std::vector<uint32_t> sizes =
              group_sizes(dist, experts, tokens, top_k, g.offset_align, seed);
          if (draw == Draw::kEmpty && std::count(sizes.begin(), sizes.end(), 0u) == 0) {
            sizes[seed % experts] = 0;
          }
          // Start offsets end at M: some group must have rows.
          const bool starts =
              g.layout == impl::GroupLayout::kContiguous && g.offsets == impl::OffsetsKind::kStarts;
          if (starts && std::count(sizes.begin(), sizes.end(), 0u) ==
                            static_cast<std::ptrdiff_t>(sizes.size())) {
            sizes.back() = std::max<uint32_t>(1, g.offset_align);
          }
          Case c{std::string(property)};
          c.set("op", op->name).set("dist", dist);
          if (!model.empty()) c.set("model", model).set("top_k", top_k);
          c.set("sizes", sizes_text(sizes));
          if (g.layout == impl::GroupLayout::kMasked) {
            c.set("max_m", *std::max_element(sizes.begin(), sizes.end()) + extra);
          } else if (!starts) {
            // End offsets: M is the groups' rows and the tail, never 0.
            const bool none = std::count(sizes.begin(), sizes.end(), 0u) ==
                              static_cast<std::ptrdiff_t>(sizes.size());
            c.set("tail", std::max<std::size_t>(extra, none ? 1 : 0));
          }
          c.set("n", fit_dim(n, op->contract.n)).set("k", k).set("out", out);
          c.set("layout", swz ? "nv_swizzle_128x4" : "row_major");
          if (property == "grouped.group_isolation") c.set("expert", expert % experts);
          c.set("seed", seed);
          return c;
        },
        pick(routings), pick(dists), pick<std::size_t>({3, 1, 2, 5, 8, 16, 40}),
        pick<std::size_t>({1, 2, 3, 8, 16, 130}), gen_k(ct.k, 2), gen_seed(), gen_out(*op),
        swizzle ? pick<bool>({false, true}) : rc::gen::just(false), pick<std::size_t>({0, 0, 1, 3}),
        range(0, 64));
  });
}

rc::Gen<Case> gen_any(const char* property, const Ops& ops) {
  return gen_grouped(property, ops, Draw::kAny);
}

// The coverage tags of a case's sizes and layout (grouped_coverage_tags lists them all).
void tag_grouped(const Context& ctx, const Op& op, const Case& c, const GroupedOperands& g) {
  const std::vector<uint32_t> s = sizes_field(c);
  const impl::GroupedClause& gc = *op.contract.grouped;
  const std::size_t zeros = static_cast<std::size_t>(std::count(s.begin(), s.end(), 0u));
  const uint32_t unit = std::max<uint32_t>(1, gc.offset_align);
  ctx.tag("op:" + op.name);
  ctx.tag("grouped:layout:" + std::string(impl::to_string(gc.layout)));
  ctx.tag("grouped:dist:" + c.text("dist"));
  if (c.has("model")) ctx.tag("grouped:model:" + c.text("model"));
  if (s.size() > 1 && s.front() == 0) ctx.tag("grouped:empty:first");
  if (s.size() > 1 && s.back() == 0) ctx.tag("grouped:empty:last");
  if (s.size() > 1 && zeros == s.size() - 1) ctx.tag("grouped:empty:all_but_one");
  for (uint32_t v : s) {
    if (v == unit) ctx.tag("grouped:one_token");
    if (v == 128) ctx.tag("grouped:tile");
    if (v == 128 + unit) ctx.tag("grouped:tile_plus_one");
  }
  for (const GroupSpan& sp : g.geo.groups) {
    if (sp.r0 % 128 != 0 && unit > 1) ctx.tag("grouped:align_edge");
    if (sp.r0 % 128 != 0 && unit == 1 && sp.r0 % 16 != 0) ctx.tag("grouped:align_edge");
  }
  if (c.num_or("tail", 0) != 0) ctx.tag("grouped:tail_rows");
  if (gc.layout == impl::GroupLayout::kMasked) {
    for (uint32_t v : s) {
      if (v < g.geo.m / s.size()) ctx.tag("grouped:masked:past_count");
    }
  }
  if (g.scales == Layout::kNvSwizzle128x4) ctx.tag("grouped:scales:swizzle_per_group");
  if (g.k > 128) ctx.tag("grouped:k_tiles>1");
}

// The case's operands: one dense draw per expert (`exact`: fingerprint exact mode; else general
// data), seeds from the case's seed and the expert's index (and `salt`).
GroupedOperands case_operands(const Op& op, const Case& c, bool exact, uint64_t salt = 0) {
  const std::vector<uint32_t> sizes = sizes_field(c);
  if (sizes.empty() || sizes.size() > 64) throw CaseError("case field 'sizes': 1 to 64 groups");
  GroupedOperands g;
  g.n = c.num("n");
  g.k = c.num("k");
  g.geo = group_geometry(op, sizes, c.num_or("tail", 0), c.num_or("max_m", 0));
  const std::string& layout = c.text("layout");
  if (layout != "row_major" && layout != "nv_swizzle_128x4") {
    throw CaseError("case field 'layout' must be row_major or nv_swizzle_128x4");
  }
  g.scales = layout == "row_major" ? Layout::kRowMajor : Layout::kNvSwizzle128x4;
  const uint64_t seed = c.num("seed");
  for (std::size_t e = 0; e < sizes.size(); ++e) {
    const std::size_t rows = std::max<uint32_t>(1, sizes[e]);
    const uint64_t s = seed * 1000003u + e + salt * 7919u;
    g.experts.push_back(exact ? exact_operands(op, rows, g.n, g.k, s, true)
                              : general_operands(op, rows, g.n, g.k, s));
  }
  return g;
}

std::optional<Failure> run_and_check(const Context& ctx, const Case& c, bool exact) {
  const Op& op = case_op(ctx, c);
  const GroupedOperands g = case_operands(op, c, exact);
  tag_grouped(ctx, op, c, g);
  const OutputFormat fmt = out_format(c);
  return check_grouped_output(op.name, op, g, fmt, run_grouped_op(ctx.run(), op, g, fmt), exact);
}

std::optional<Failure> check_exact(const Context& ctx, const Case& c) {
  return run_and_check(ctx, c, true);
}

std::optional<Failure> check_split(const Context& ctx, const Case& c) {
  return run_and_check(ctx, c, false);
}

std::optional<Failure> check_empty(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  GroupedOperands g = case_operands(op, c, true);
  tag_grouped(ctx, op, c, g);
  const OutputFormat fmt = out_format(c);
  const Bytes first = run_grouped_op(ctx.run(), op, g, fmt);
  if (auto f = check_grouped_output(op.name, op, g, fmt, first, true)) return f;
  // NaN codes and NaN scales for every expert without tokens: nothing may read them.
  bool any = false;
  for (std::size_t e = 0; e < g.experts.size(); ++e) {
    if (g.geo.groups[e].rows != 0) continue;
    any = true;
    Operands& o = g.experts[e];
    std::fill(o.b.begin(), o.b.end(), uint8_t{0x7F});
    std::fill(o.b_e8m0.begin(), o.b_e8m0.end(), uint8_t{0xFF});
    std::fill(o.b_f32.begin(), o.b_f32.end(), std::numeric_limits<float>::quiet_NaN());
  }
  if (!any) return std::nullopt;
  ctx.tag("grouped:empty_expert_poisoned");
  return compare_raw_rows(op.name + ": NaN weights of the experts without tokens", g, fmt, first,
                          run_grouped_op(ctx.run(), op, g, fmt), std::nullopt);
}

std::optional<Failure> check_isolation(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  GroupedOperands g = case_operands(op, c, false);
  tag_grouped(ctx, op, c, g);
  const OutputFormat fmt = out_format(c);
  const std::size_t j = c.num("expert");
  if (j >= g.experts.size()) throw CaseError("case field 'expert' is not one of the groups");
  const Bytes first = run_grouped_op(ctx.run(), op, g, fmt);
  g.experts[j] = case_operands(op, c, false, 1 + j).experts[j];
  return compare_raw_rows(op.name + ": expert " + std::to_string(j) + " redrawn", g, fmt, first,
                          run_grouped_op(ctx.run(), op, g, fmt), j);
}

std::optional<Failure> check_determinism(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const GroupedOperands g = case_operands(op, c, false);
  tag_grouped(ctx, op, c, g);
  const OutputFormat fmt = out_format(c);
  const Bytes first = run_grouped_op(ctx.run(), op, g, fmt);
  return compare_raw_rows(op.name + ": the same call again", g, fmt, first,
                          run_grouped_op(ctx.run(), op, g, fmt), std::nullopt);
}

}  // namespace

void add_grouped_properties(std::vector<Property>& out) {
  const auto add = [&out](const char* name, const char* guards, auto gen, auto check) {
    out.push_back(
        {name, guards, kGroupedFamilies, grouped_accepts, gen, check, 0, grouped_declines});
  };
  add(
      "grouped.exact",
      "a grouped GEMM that gives any group a wrong row (wrong expert, rows of another group, a "
      "row left unwritten) or writes a row no group owns",
      [](const Context&, const Ops& ops) { return gen_any("grouped.exact", ops); }, check_exact);
  add(
      "grouped.split_equivalence",
      "a grouped call that differs, on general data, from the dense GEMMs of its groups in the "
      "declared order",
      [](const Context&, const Ops& ops) { return gen_any("grouped.split_equivalence", ops); },
      check_split);
  add(
      "grouped.empty_groups",
      "an expert without tokens that writes rows, reads its weights, or disturbs another group",
      [](const Context&, const Ops& ops) {
        return gen_grouped("grouped.empty_groups", ops, Draw::kEmpty);
      },
      check_empty);
  add(
      "grouped.group_isolation",
      "one expert's weights or scales reaching the rows of another expert's group",
      [](const Context&, const Ops& ops) { return gen_any("grouped.group_isolation", ops); },
      check_isolation);
  add(
      "grouped.determinism", "a grouped call whose bytes change from one run to the next",
      [](const Context&, const Ops& ops) { return gen_any("grouped.determinism", ops); },
      check_determinism);
}

std::vector<std::string> grouped_coverage_tags() {
  std::vector<std::string> t = {"grouped:layout:contiguous",
                                "grouped:layout:masked",
                                "grouped:empty:first",
                                "grouped:empty:last",
                                "grouped:empty:all_but_one",
                                "grouped:one_token",
                                "grouped:tile",
                                "grouped:tile_plus_one",
                                "grouped:align_edge",
                                "grouped:tail_rows",
                                "grouped:masked:past_count",
                                "grouped:scales:swizzle_per_group",
                                "grouped:k_tiles>1",
                                "grouped:empty_expert_poisoned"};
  for (std::string_view d : group_distributions()) t.push_back("grouped:dist:" + std::string(d));
  for (const MoeRouting& r : moe_routings()) t.push_back("grouped:model:" + std::string(r.model));
  return t;
}

}  // namespace mxgate::properties
