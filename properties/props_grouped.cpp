// The grouped (mixture-of-experts) GEMM properties over the ops of families grouped_gemm_block and
// grouped_gemm_mx (docs/grouped.md §8). Every check runs one grouped call and holds it to the
// reference's grouped oracle (reference/grouped_gemm.h: a group is a dense GEMM on a row range, so
// each mode is the dense one per group); its operands are dense operands per expert
// (gemm_operands.h), and every row no group owns must keep the output poison.
//   grouped.exact              fingerprint exact-mode data, exact_grouped_gemm
//   grouped.split_equivalence  general data: the grouped call equals ordered_grouped_gemm in the
//                              declared order bit for bit
//   grouped.ordered_bound      general data: every group inside the bound of the op's declared
//                              accumulator model (compute_grouped_bounds / check_grouped_bound)
//   grouped.empty_groups       zero-token experts write nothing and disturb nothing: the call is
//                              exact, and NaN weights for every empty expert change no byte
//   grouped.group_isolation    a fresh draw of one expert's weights, scales and tokens changes
//                              the rows of that expert's group only
//   grouped.determinism        the same call twice gives the same bytes
// The sharded calls (grouped.tp_split, grouped.ep_split) are props_grouped_split.cpp. Group sizes,
// expert counts and top-k: grouped_cases.h; the generator: grouped_gen.h. Coverage tags:
// grouped_coverage_tags.
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "impl/accumulator.h"
#include "impl/harness.h"
#include "properties/gemm_cases.h"
#include "properties/grouped_cases.h"
#include "properties/grouped_gen.h"
#include "properties/props.h"
#include "reference/accumulator_bounds.h"
#include "reference/grouped_gemm.h"

namespace mxgate::properties {

namespace {

rc::Gen<Case> gen_any(const char* property, const Ops& ops) {
  return gen_grouped(property, ops, GroupedDraw::kAny);
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

// At most 2^18 terms a case (rows x N x K): the exact sum per element that the bound needs is
// the cost of this property.
constexpr std::size_t kBoundTerms = std::size_t{1} << 18;

rc::Gen<Case> gen_bound(const Context&, const Ops& ops) {
  return rc::gen::map(gen_any("grouped.ordered_bound", ops), [ops](Case c) {
    for (const Op* op : ops) {
      if (op->name == c.text("op")) return cap_terms(*op, std::move(c), kBoundTerms);
    }
    return c;
  });
}

// Every group's rows inside the bound of the op's declared accumulator model (impl/accumulator.h
// accum_model_for, the model gemm.ordered_bound takes; its dense bound of
// reference/accumulator_bounds.h applied per group by compute_grouped_bounds). The declared order
// is grouped.split_equivalence's: this holds whatever order a kernel of that model sums in.
std::optional<Failure> check_bound(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const AccumulatorModel model = impl::accum_model_for(op);
  const GroupedOperands g = case_operands(op, c, false);
  tag_grouped(ctx, op, c, g);
  const OutputFormat fmt = out_format(c);
  const GroupedGemmProblem p = reference_problem(op, g);
  const GemmOutput got = gemm_output_of(run_grouped_op(ctx.run(), op, g, fmt), g.geo.m, g.n, fmt);
  if (auto f = check_unwritten(op.name, p, got)) return f;
  const GroupedBounds bounds = compute_grouped_bounds(
      p, [&](const GemmProblem& d) { return compute_bounds(d, model, fmt); }, fmt);
  const GroupedBoundVerdict v = check_grouped_bound(bounds, got);
  if (v.ok()) return std::nullopt;
  return Failure{
      op.name + " outside the error bound of accumulator " + model.name + ": " + v.summary(),
      bound_mismatch(v, fmt), std::nullopt, got};
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
  out.push_back({"grouped.ordered_bound",
                 "a grouped call that leaves, on general data, the rigorous error bound of its "
                 "declared accumulator model in some group (wrong expert, wrong scales, a row "
                 "left unwritten)",
                 kGroupedFamilies, grouped_data_accepts, gen_bound, check_bound, 0,
                 grouped_data_declines});
  add(
      "grouped.empty_groups",
      "an expert without tokens that writes rows, reads its weights, or disturbs another group",
      [](const Context&, const Ops& ops) {
        return gen_grouped("grouped.empty_groups", ops, GroupedDraw::kEmpty);
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
  std::vector<std::string> t = {
      "grouped:layout:contiguous", "grouped:layout:masked", "grouped:empty:first",
      "grouped:empty:last", "grouped:empty:all_but_one", "grouped:one_token", "grouped:tile",
      "grouped:tile_plus_one", "grouped:align_edge", "grouped:tail_rows",
      "grouped:masked:past_count", "grouped:scales:swizzle_per_group", "grouped:k_tiles>1",
      "grouped:empty_expert_poisoned",
      // grouped.tp_split / grouped.ep_split (props_grouped_split.cpp)
      "grouped:tp:n_split", "grouped:tp:k_split", "grouped:tp:sub_block_shard", "grouped:ep:split",
      "grouped:ep:rank_without_tokens", "grouped:ep:uneven_ranks"};
  for (std::string_view d : group_distributions()) t.push_back("grouped:dist:" + std::string(d));
  for (const MoeRouting& r : moe_routings()) t.push_back("grouped:model:" + std::string(r.model));
  return t;
}

}  // namespace mxgate::properties
