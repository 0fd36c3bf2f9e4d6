// The grouped properties on the k-grouped layout (the MoE weight gradient, docs/grouped.md §8):
// grouped.exact, grouped.split_equivalence, grouped.empty_groups, grouped.group_isolation and
// grouped.determinism take a k-grouped op (kgrouped_cases.h) as they take an m-grouped one. Each
// property's generator and check (props_grouped.cpp) are extended, not copied: a k-grouped op's
// cases come from gen_kgrouped, every other op's from the property's own generator, and its check
// from the k-grouped checks below; the property's accepts / declines take a k-grouped op by
// kgrouped_declines (grouped_gen.h's decline it: the other grouped properties need row groups).
//   grouped.exact              fingerprint exact-mode data, exact_gemm per K group, +0 per empty
//   grouped.split_equivalence  general data, ordered_gemm per K group in the declared order
//   grouped.empty_groups       at least one empty K group: its slice is written +0, and NaN in
//                              the scale column after the last group's grids (where an empty
//                              last group's first block would start) changes no byte (an empty
//                              group has no K and so no data or scales of its own to poison)
//   grouped.group_isolation    a fresh draw of one group's K columns and scales changes its slice
//                              only
//   grouped.determinism        the same call twice gives the same bytes
#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "properties/gemm_cases.h"
#include "properties/grouped_cases.h"
#include "properties/kgrouped_cases.h"
#include "properties/props.h"

namespace mxgate::properties {

namespace {

enum class Draw { kAny, kEmpty };

// Cases of `property` on the k-grouped ops: a model's routing (or a small E), a size distribution
// of group_sizes at the op's offset alignment (K per group: 0, one 128 block or several; kEmpty:
// one leaving groups empty, at least one made empty, at least one kept nonempty), tokens, M, N,
// output, a group (group_isolation) and the seed.
rc::Gen<Case> gen_kgrouped(std::string_view property, const Ops& ops, Draw draw) {
  std::vector<std::string> dists;
  if (draw == Draw::kEmpty) {
    // An empty group after a nonempty one first: the shrink target (a stale accumulator needs
    // one before it).
    dists = {"zero_last", "zero_first", "all_but_one_zero", "random"};
  } else {
    for (std::string_view d : group_distributions()) dists.emplace_back(d);
  }
  return gen_over_ops(ops, [property, dists, draw](const Op* op) {
    std::vector<std::pair<std::string, std::size_t>> routings = {
        {"", 1}, {"", 2}, {"", 3}, {"", 4}};
    if (draw == Draw::kEmpty) routings.erase(routings.begin());  // an empty group and a K > 0
    for (const MoeRouting& r : moe_routings()) routings.emplace_back(r.model, r.host_experts());
    return rc::gen::apply(
        [op, property, draw](const std::pair<std::string, std::size_t>& routing,
                             const std::string& dist, std::size_t tokens, std::size_t m,
                             std::size_t n, uint64_t seed, const std::string& out,
                             std::size_t group) {
          const std::size_t experts = routing.second;
          const MoeRouting* r = find_moe_routing(routing.first);
          const std::size_t top_k = r != nullptr ? r->host_top_k() : 1;
          const uint32_t align = std::max<uint32_t>(1, op->contract.grouped->offset_align);
          std::vector<uint32_t> sizes = group_sizes(dist, experts, tokens, top_k, align, seed);
          const auto zeros = [&] { return std::count(sizes.begin(), sizes.end(), 0u); };
          if (draw == Draw::kEmpty && zeros() == 0) sizes[seed % experts] = 0;
          if (zeros() == static_cast<std::ptrdiff_t>(experts)) {
            // K > 0: one K block for the first group (the last where the first must be empty).
            sizes[dist == "zero_first" ? experts - 1 : 0] = align;
          }
          Case c{std::string(property)};
          c.set("op", op->name).set("dist", dist);
          if (r != nullptr) c.set("model", routing.first).set("top_k", top_k);
          c.set("sizes", sizes_text(sizes)).set("m", m).set("n", fit_dim(n, op->contract.n));
          c.set("out", out);
          if (property == "grouped.group_isolation") c.set("expert", group % experts);
          c.set("seed", seed);
          return c;
        },
        pick(routings), pick(dists), pick<std::size_t>({3, 1, 2, 5, 160}),
        pick<std::size_t>({1, 2, 3, 8, 17}), pick<std::size_t>({1, 2, 3, 8, 16, 130}), gen_seed(),
        gen_out(*op), range(0, 64));
  });
}

// The coverage tags of a k-grouped case (kgrouped_coverage_tags lists them).
void tag_kgrouped(const Context& ctx, const Op& op, const Case& c) {
  const std::vector<uint32_t> s = sizes_field(c);
  tag_case_and_empty_groups(ctx, op, c, "k_grouped", s, "grouped:k:empty:");
  for (uint32_t v : s) {
    if (v == 128) ctx.tag("grouped:k:one_block");
    if (v > 128) ctx.tag("grouped:k:several_blocks");
  }
}

KGroupedOperands case_operands(const Context& ctx, const Op& op, const Case& c, bool exact,
                               uint64_t salt = 0) {
  tag_kgrouped(ctx, op, c);
  return kgrouped_operands(op, sizes_field(c), c.num("m"), c.num("n"), exact, c.num("seed"), salt);
}

std::optional<Failure> check_k_exact(const Context& ctx, const Case& c, bool exact) {
  const Op& op = case_op(ctx, c);
  const KGroupedOperands g = case_operands(ctx, op, c, exact);
  const OutputFormat fmt = out_format(c);
  return check_kgrouped_output(op.name, op, g, fmt, run_kgrouped_op(ctx.run(), op, g, fmt), exact);
}

std::optional<Failure> check_k_empty(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  KGroupedOperands g = case_operands(ctx, op, c, true);
  const OutputFormat fmt = out_format(c);
  const Bytes first = run_kgrouped_op(ctx.run(), op, g, fmt);
  if (auto f = check_kgrouped_output(op.name, op, g, fmt, first, true)) return f;
  if (std::none_of(g.groups.begin(), g.groups.end(), [](const auto& o) { return !o; })) {
    return std::nullopt;
  }
  ctx.tag("grouped:k:empty_poisoned");
  g.scale_slack = std::numeric_limits<float>::quiet_NaN();
  return compare_kgrouped_rows(op.name + ": NaN scales after the last group's grids", g, fmt, first,
                               run_kgrouped_op(ctx.run(), op, g, fmt), std::nullopt);
}

std::optional<Failure> check_k_isolation(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  KGroupedOperands g = case_operands(ctx, op, c, false);
  const OutputFormat fmt = out_format(c);
  const std::size_t j = c.num("expert");
  if (j >= g.groups.size()) throw CaseError("case field 'expert' is not one of the groups");
  const Bytes first = run_kgrouped_op(ctx.run(), op, g, fmt);
  g.groups[j] =
      kgrouped_operands(op, sizes_field(c), g.m, g.n, false, c.num("seed"), 1 + j).groups[j];
  return compare_kgrouped_rows(op.name + ": group " + std::to_string(j) + " redrawn", g, fmt, first,
                               run_kgrouped_op(ctx.run(), op, g, fmt), j);
}

std::optional<Failure> check_k_determinism(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const KGroupedOperands g = case_operands(ctx, op, c, false);
  const OutputFormat fmt = out_format(c);
  const Bytes first = run_kgrouped_op(ctx.run(), op, g, fmt);
  return compare_kgrouped_rows(op.name + ": the same call again", g, fmt, first,
                               run_kgrouped_op(ctx.run(), op, g, fmt), std::nullopt);
}

// The extended properties, by index: their names, the k-grouped draw and check, and the
// property's own generator and check (set by extend_grouped_properties_k).
struct Extension {
  std::string_view name;
  Draw draw;
  std::optional<Failure> (*check)(const Context&, const Case&);
};
const std::array<Extension, 5> kExtensions = {{
    {"grouped.exact", Draw::kAny,
     [](const Context& ctx, const Case& c) { return check_k_exact(ctx, c, true); }},
    {"grouped.split_equivalence", Draw::kAny,
     [](const Context& ctx, const Case& c) { return check_k_exact(ctx, c, false); }},
    {"grouped.empty_groups", Draw::kEmpty, check_k_empty},
    {"grouped.group_isolation", Draw::kAny, check_k_isolation},
    {"grouped.determinism", Draw::kAny, check_k_determinism},
}};
struct Base {
  rc::Gen<Case> (*gen)(const Context&, const Ops&) = nullptr;
  std::optional<Failure> (*check)(const Context&, const Case&) = nullptr;
  bool (*accepts)(const Op&) = nullptr;
  std::string (*declines)(const Op&) = nullptr;
};
std::array<Base, 5> g_base;

template <std::size_t I>
rc::Gen<Case> extended_gen(const Context& ctx, const Ops& ops) {
  Ops m_ops, k_ops;
  for (const Op* op : ops) (is_k_grouped(*op) ? k_ops : m_ops).push_back(op);
  if (k_ops.empty()) return g_base[I].gen(ctx, ops);
  rc::Gen<Case> k = gen_kgrouped(kExtensions[I].name, k_ops, kExtensions[I].draw);
  if (m_ops.empty()) return k;
  return rc::gen::weightedOneOf<Case>(
      {{m_ops.size(), g_base[I].gen(ctx, m_ops)}, {k_ops.size(), std::move(k)}});
}

template <std::size_t I>
std::optional<Failure> extended_check(const Context& ctx, const Case& c) {
  if (is_k_grouped(case_op(ctx, c))) return kExtensions[I].check(ctx, c);
  return g_base[I].check(ctx, c);
}

template <std::size_t I>
bool extended_accepts(const Op& op) {
  if (is_k_grouped(op)) return kgrouped_declines(op).empty();
  return g_base[I].accepts == nullptr || g_base[I].accepts(op);
}

template <std::size_t I>
std::string extended_declines(const Op& op) {
  if (is_k_grouped(op)) return kgrouped_declines(op);
  return g_base[I].declines == nullptr ? "" : g_base[I].declines(op);
}

template <std::size_t... I>
void extend(std::vector<Property>& props, std::index_sequence<I...>) {
  const auto one = [&props](auto index) {
    constexpr std::size_t i = decltype(index)::value;
    for (Property& p : props) {
      if (p.name != kExtensions[i].name) continue;
      g_base[i] = {p.gen, p.check, p.accepts, p.declines};
      p.gen = extended_gen<i>;
      p.check = extended_check<i>;
      p.accepts = extended_accepts<i>;
      p.declines = extended_declines<i>;
    }
  };
  (one(std::integral_constant<std::size_t, I>{}), ...);
}

}  // namespace

void extend_grouped_properties_k(std::vector<Property>& out) {
  extend(out, std::make_index_sequence<kExtensions.size()>{});
}

std::vector<std::string> kgrouped_coverage_tags() {
  return {"grouped:layout:k_grouped",    "grouped:k:empty:first", "grouped:k:empty:last",
          "grouped:k:empty:all_but_one", "grouped:k:one_block",   "grouped:k:several_blocks",
          "grouped:k:empty_poisoned"};
}

}  // namespace mxgate::properties
