#include "properties/grouped_gen.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "properties/gemm_cases.h"

namespace mxgate::properties {

std::string grouped_data_declines(const Op& op) {
  const impl::Contract& c = op.contract;
  if (!c.grouped) return "a grouped clause";
  // The k-grouped layout (K groups, no row groups): props_grouped_k.cpp takes it.
  if (c.grouped->layout == impl::GroupLayout::kKGrouped) return "row groups (an m-grouped layout)";
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
  return "";
}

std::string grouped_declines(const Op& op) {
  if (std::string why = grouped_data_declines(op); !why.empty()) return why;
  if (!op.contract.order) return "a declared summation order";
  return "";
}

bool grouped_data_accepts(const Op& op) { return grouped_data_declines(op).empty(); }
bool grouped_accepts(const Op& op) { return grouped_declines(op).empty(); }

rc::Gen<Case> gen_grouped(std::string_view property, const Ops& ops, GroupedDraw draw,
                          std::size_t min_experts) {
  std::vector<std::string> dists;
  if (draw == GroupedDraw::kEmpty) {
    dists = {"zero_first", "zero_last", "all_but_one_zero", "all_in_one", "random"};
  } else {
    for (std::string_view d : group_distributions()) dists.emplace_back(d);
  }
  return gen_over_ops(ops, [property, dists, draw, min_experts](const Op* op) {
    const impl::Contract& ct = op->contract;
    const bool swizzle = (ct.a_scale_layouts & layout_bit(Layout::kNvSwizzle128x4)) != 0 &&
                         (ct.b_scale_layouts & layout_bit(Layout::kNvSwizzle128x4)) != 0;
    // Small expert counts first (the shrink target), then each model's host-scaled routing: one
    // choice, so a shrink can move from a model straight to a small E.
    std::vector<std::pair<std::string, std::size_t>> routings;
    for (std::size_t e = std::max<std::size_t>(1, min_experts); e <= 4; ++e) {
      routings.emplace_back("", e);
    }
    for (const MoeRouting& r : moe_routings()) {
      if (r.host_experts() >= min_experts) routings.emplace_back(r.model, r.host_experts());
    }
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
          if (draw == GroupedDraw::kEmpty && std::count(sizes.begin(), sizes.end(), 0u) == 0) {
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

Case cap_terms(const Op& op, Case c, std::size_t max_terms) {
  const GroupGeometry geo =
      group_geometry(op, sizes_field(c), c.num_or("tail", 0), c.num_or("max_m", 0));
  const std::size_t rows = std::max<std::size_t>(1, geo.m), k = c.num("k");
  const std::size_t n = c.num("n");
  if (rows * n * k <= max_terms) return c;
  return c.set("n", fit_dim(std::max<std::size_t>(1, max_terms / (rows * k)), op.contract.n));
}

void tag_grouped(const Context& ctx, const Op& op, const Case& c, const GroupedOperands& g) {
  const std::vector<uint32_t> s = sizes_field(c);
  const impl::GroupedClause& gc = *op.contract.grouped;
  const uint32_t unit = std::max<uint32_t>(1, gc.offset_align);
  tag_case_and_empty_groups(ctx, op, c, impl::to_string(gc.layout), s, "grouped:empty:");
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

GroupedOperands case_operands(const Op& op, const Case& c, bool exact, uint64_t salt) {
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

}  // namespace mxgate::properties
