// The sharded grouped calls of a mixture-of-experts layer (docs/grouped.md §8), on the ops of
// families grouped_gemm_block and grouped_gemm_mx:
//   grouped.tp_split  tensor parallel. split=n (the w13 shards, column parallel): N cut into tp
//                     column shards, each shard's grouped call (every expert's B rows of the
//                     shard and their scales), columns concatenated, equals the unsharded call bit
//                     for bit. split=k (the w2 shards, row parallel): K cut on the scheme's scale
//                     blocks along K (128 FP8 block, 32 MX) into tp shards of shard_k (the last
//                     the rest), the shards' fp32 outputs summed in rank order (the all-reduce)
//                     equal exact_grouped_gemm of the unsharded problem bit for bit.
//   grouped.ep_split  expert parallel: the experts cut into `ranks` contiguous ranges, each rank a
//                     grouped call over its experts with its tokens only (its groups' rows of A,
//                     nothing else); their rows put back where the unsharded call has them equal
//                     that call bit for bit.
// Data: a K split sums partial outputs, so its cases are exact-mode data (fingerprint operands
// exact in the op's declared accumulator, gemm_operands.h exact_operands): every shard's output
// and every sum of partials is exact, and the sum equals the exact result bit for bit whatever
// order a kernel sums in; no bound is needed. A column shard or an EP rank changes no element's
// terms, only which call computes it, so for an op that declares its summation order (a per-
// element order over K, the same whatever N, M and the other groups are) their cases are general
// data, still compared bit for bit; an op without one gets exact-mode data there too (its kernel
// may pick another order for another shape).
// The unsharded call is held to the oracle first (exact_grouped_gemm, or ordered_grouped_gemm in
// the declared order on general data): shards that agree with a wrong unsharded output prove
// nothing. Every shard call must leave the rows no group of it owns as the poison.
#include <rapidcheck.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "impl/harness.h"
#include "properties/gemm_cases.h"
#include "properties/grouped_cases.h"
#include "properties/grouped_gen.h"
#include "properties/props.h"
#include "reference/grouped_gemm.h"

namespace mxgate::properties {

namespace {

// The scale block along K a row-parallel shard boundary must sit on: the scheme's (MX 32, FP8
// block 128), so no shard cuts a scale block.
std::size_t k_unit(const Op& op) { return op.family == Family::kGroupedGemmMx ? 32 : 128; }

// A column shard of `local` rows keeps its B scales whole rows of the grid: MX scales are per
// row; FP8 block scales are 128-row blocks, so a shard is whole blocks (local % 128 == 0) or lies
// inside one block (128 % local == 0: every shard of that width starts on a multiple of it). The
// built-in grouped kernels take no n_offset.
bool column_shard_ok(const Op& op, std::size_t local) {
  if (local == 0) return false;
  return op.family != Family::kGroupedGemmBlock || local % 128 == 0 || 128 % local == 0;
}

const Op& op_named(const Ops& ops, const std::string& name) {
  for (const Op* op : ops) {
    if (op->name == name) return *op;
  }
  throw std::logic_error("generated case names an op outside the property's ops");
}

// At most 2^20 terms (rows x N x K) in the unsharded call of a case: the shards run it again, on
// the host models, so the gate's case count stays well under a second.
constexpr std::size_t kSplitTerms = std::size_t{1} << 20;

rc::Gen<Case> gen_tp(const Context&, const Ops& ops) {
  return rc::gen::mapcat(
      gen_grouped("grouped.tp_split", ops, GroupedDraw::kAny), [ops](const Case& base) {
        const Op& op = op_named(ops, base.text("op"));
        const bool mx = op.family == Family::kGroupedGemmMx;
        const std::size_t unit = k_unit(op);
        return rc::gen::apply(
            [base, unit, op = &op](bool k_split, std::size_t tp, std::size_t local,
                                   std::size_t width, std::size_t tail) {
              Case c = base;
              c.set("split", k_split ? "k" : "n").set("tp", tp);
              if (k_split) {
                c.set("out", "fp32");  // the partial outputs are summed in fp32
                c.set("k", unit * width * (tp - 1) + tail).set("shard_k", unit * width);
                return cap_terms(*op, std::move(c), kSplitTerms);
              }
              // Halving keeps a block shard a divisor of 128 (the candidates are powers of two).
              const GroupGeometry geo =
                  group_geometry(*op, sizes_field(c), c.num_or("tail", 0), c.num_or("max_m", 0));
              const std::size_t work = std::max<std::size_t>(1, geo.m) * tp * c.num("k");
              while (local > 1 && work * local > kSplitTerms) local /= 2;
              c.set("n", local * tp);
              return c;
            },
            pick<bool>({false, true}), range(2, 5),
            mx ? pick<std::size_t>({1, 2, 3, 8, 16, 40})
               : pick<std::size_t>({1, 2, 4, 8, 16, 32, 64, 128}),
            mx ? pick<std::size_t>({1, 4}) : rc::gen::just<std::size_t>(1),
            mx ? pick<std::size_t>({32, 64, 128, 160}) : pick<std::size_t>({128, 32, 1, 96, 160}));
      });
}

rc::Gen<Case> gen_ep(const Context&, const Ops& ops) {
  return rc::gen::mapcat(gen_grouped("grouped.ep_split", ops, GroupedDraw::kAny, 2),
                         [ops](const Case& base) {
                           const Op* op = &op_named(ops, base.text("op"));
                           const std::size_t experts = sizes_field(base).size();
                           return rc::gen::map(range(2, std::min<std::size_t>(experts, 4) + 1),
                                               [base, op](std::size_t ranks) {
                                                 Case c = cap_terms(*op, base, kSplitTerms);
                                                 c.set("ranks", ranks);
                                                 return c;
                                               });
                         });
}

// Rows [r0, r0 + rows) of a row-major buffer of `per_row` elements per row, columns [c0, c1).
template <class T>
std::vector<T> block_of(const std::vector<T>& v, std::size_t per_row, std::size_t r0,
                        std::size_t rows, std::size_t c0, std::size_t c1) {
  std::vector<T> out;
  for (std::size_t r = r0; r < r0 + rows; ++r) {
    out.insert(out.end(), v.begin() + static_cast<std::ptrdiff_t>(r * per_row + c0),
               v.begin() + static_cast<std::ptrdiff_t>(r * per_row + c1));
  }
  return out;
}

// One expert's operands of a column shard: B rows [n0, n0 + local) and their scales (MX: the same
// rows; FP8 block: the 128-row blocks they lie in). The shard is judged against the unsharded
// call, never the oracle, so its decoded problem is left empty.
Operands column_shard(const Op& op, const Operands& o, std::size_t n0, std::size_t local) {
  Operands s = o;
  s.n = local;
  s.problem = GemmProblem{};
  s.b = block_of(o.b, o.k, n0, local, 0, o.k);
  if (!o.b_e8m0.empty()) {
    const std::size_t kb = o.b_e8m0.size() / o.n;
    s.b_e8m0 = block_of(o.b_e8m0, kb, n0, local, 0, kb);
  }
  if (op.family == Family::kGroupedGemmBlock) {
    const std::size_t kb = (o.k + 127) / 128;
    s.b_f32 = block_of(o.b_f32, kb, n0 / 128, (local + 127) / 128, 0, kb);
  }
  return s;
}

// One expert's operands of a row-parallel shard: K columns [k0, k1) of A and B and the scale
// columns of those K (k0 on a scale block boundary; the last shard may end inside a block).
Operands k_shard(const Operands& o, std::size_t k0, std::size_t k1) {
  Operands s = o;
  s.k = k1 - k0;
  s.problem = GemmProblem{};
  s.a = block_of(o.a, o.k, 0, o.m, k0, k1);
  s.b = block_of(o.b, o.k, 0, o.n, k0, k1);
  const auto cols = [&](const auto& v, std::size_t rows, std::size_t bk) {
    const std::size_t per_row = v.size() / rows;
    return block_of(v, per_row, 0, rows, k0 / bk, (k1 + bk - 1) / bk);
  };
  if (!o.a_e8m0.empty()) s.a_e8m0 = cols(o.a_e8m0, o.m, 32);
  if (!o.b_e8m0.empty()) s.b_e8m0 = cols(o.b_e8m0, o.n, 32);
  if (!o.a_f32.empty()) s.a_f32 = cols(o.a_f32, o.m, 128);
  if (!o.b_f32.empty()) s.b_f32 = cols(o.b_f32, (o.n + 127) / 128, 128);
  return s;
}

std::size_t out_bytes(OutputFormat f) { return f == OutputFormat::kBf16 ? 2 : 4; }

// The unsharded call of a split case: its operands (`exact`: exact-mode data, else general), its
// bytes, held to the oracle (exact_grouped_gemm, else ordered_grouped_gemm in the declared order).
struct Unsharded {
  GroupedOperands g;
  Bytes raw;
  std::optional<Failure> wrong;
};
Unsharded unsharded(const Context& ctx, const Op& op, const Case& c, OutputFormat fmt, bool exact) {
  Unsharded u;
  u.g = case_operands(op, c, exact);
  tag_grouped(ctx, op, c, u.g);
  u.raw = run_grouped_op(ctx.run(), op, u.g, fmt);
  u.wrong = check_grouped_output(op.name + ": the unsharded call", op, u.g, fmt, u.raw, exact);
  return u;
}

// Column shards and EP ranks: general data where the op declares its order (see the top).
bool exact_data_for_moves(const Op& op) { return !op.contract.order; }

std::optional<Failure> check_columns(const Context& ctx, const Op& op, const Case& c,
                                     std::size_t tp) {
  const OutputFormat fmt = out_format(c);
  const std::size_t n = c.num("n"), local = n / tp;
  if (n % tp != 0 || !column_shard_ok(op, local)) {
    throw CaseError(
        "case field 'tp' must divide N into shards of whole B scale rows (FP8 block: "
        "a multiple or a divisor of 128)");
  }
  const auto [g, full, wrong] = unsharded(ctx, op, c, fmt, exact_data_for_moves(op));
  if (wrong) return wrong;
  const std::size_t elem = out_bytes(fmt);
  Bytes joined(full.size(), gpu::kPoisonByte);
  for (std::size_t r = 0; r < tp; ++r) {
    GroupedOperands s = g;
    s.n = local;
    for (Operands& o : s.experts) o = column_shard(op, o, r * local, local);
    const Bytes part = run_grouped_op(ctx.run(), op, s, fmt);
    const std::string what = "TP=" + std::to_string(tp) + " column shard " + std::to_string(r);
    if (auto f = check_unowned_poison(what, s, fmt, part)) return f;
    for (std::size_t row = 0; row < g.geo.m; ++row) {
      std::memcpy(joined.data() + (row * n + r * local) * elem, part.data() + row * local * elem,
                  local * elem);
    }
  }
  ctx.tag("grouped:tp:n_split");
  if (op.family == Family::kGroupedGemmBlock && local < 128) ctx.tag("grouped:tp:sub_block_shard");
  return compare_raw_rows("TP=" + std::to_string(tp) +
                              " column shards concatenated vs the "
                              "unsharded call",
                          g, fmt, full, joined, std::nullopt);
}

std::optional<Failure> check_rows(const Context& ctx, const Op& op, const Case& c, std::size_t tp) {
  if (out_format(c) != OutputFormat::kFp32) {
    throw CaseError("case field 'out' must be fp32 for split=k (the partials are summed in fp32)");
  }
  const std::size_t k = c.num("k"), w = c.num("shard_k");
  if (w == 0 || w % k_unit(op) != 0 || k <= w * (tp - 1)) {
    throw CaseError("case field 'shard_k' must be a multiple of " + std::to_string(k_unit(op)) +
                    " (the scale block along K) with K > shard_k (tp - 1)");
  }
  const OutputFormat fmt = OutputFormat::kFp32;
  const auto [g, full, wrong] = unsharded(ctx, op, c, fmt, true);
  if (wrong) return wrong;
  const GroupedGemmProblem p = reference_problem(op, g);
  GemmOutput sum;
  for (std::size_t r = 0; r < tp; ++r) {
    const std::size_t k0 = r * w, k1 = r + 1 == tp ? k : k0 + w;
    GroupedOperands s = g;
    s.k = k1 - k0;
    for (Operands& o : s.experts) o = k_shard(o, k0, k1);
    const Bytes part = run_grouped_op(ctx.run(), op, s, fmt);
    const std::string what = "TP=" + std::to_string(tp) + " K shard " + std::to_string(r);
    if (auto f = check_unowned_poison(what, s, fmt, part)) return f;
    const GemmOutput out = gemm_output_of(part, g.geo.m, g.n, fmt);
    if (r == 0) {
      sum = out;  // the first partial as it is: +0 + -0 would turn a -0 into +0
    } else {
      for (std::size_t i = 0; i < out.fp32.size(); ++i) sum.fp32[i] += out.fp32[i];
    }
  }
  ctx.tag("grouped:tp:k_split");
  return compare_grouped_outputs("TP=" + std::to_string(tp) + " K shards' partial sums vs " +
                                     "exact_grouped_gemm of the unsharded problem",
                                 p, exact_grouped_gemm(p, fmt), sum);
}

std::optional<Failure> check_tp(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t tp = c.num("tp");
  if (tp < 2 || tp > 16) throw CaseError("case field 'tp' must be 2 to 16");
  const std::string& split = c.text("split");
  if (split == "n") return check_columns(ctx, op, c, tp);
  if (split == "k") return check_rows(ctx, op, c, tp);
  throw CaseError("case field 'split' must be n or k");
}

std::optional<Failure> check_ep(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const OutputFormat fmt = out_format(c);
  const std::vector<uint32_t> sizes = sizes_field(c);
  const std::size_t experts = sizes.size(), ranks = c.num("ranks");
  if (ranks < 2 || ranks > experts) {
    throw CaseError("case field 'ranks' must be 2 to the number of experts");
  }
  const auto [g, full, wrong] = unsharded(ctx, op, c, fmt, exact_data_for_moves(op));
  if (wrong) return wrong;
  const impl::GroupedClause& gc = *op.contract.grouped;
  const bool masked = gc.layout == impl::GroupLayout::kMasked;
  const bool ends = !masked && gc.offsets == impl::OffsetsKind::kEnds;
  const std::size_t row_bytes = g.n * out_bytes(fmt);
  Bytes joined(full.size(), gpu::kPoisonByte);
  for (std::size_t r = 0; r < ranks; ++r) {
    const std::size_t e0 = r * experts / ranks, e1 = (r + 1) * experts / ranks;
    const std::vector<uint32_t> mine(sizes.begin() + static_cast<std::ptrdiff_t>(e0),
                                     sizes.begin() + static_cast<std::ptrdiff_t>(e1));
    std::size_t tokens = 0;
    for (uint32_t v : mine) tokens += v;
    if (tokens == 0) ctx.tag("grouped:ep:rank_without_tokens");
    // Its own rows past the groups as the unsharded call has them (a tail, masked slots of the
    // same max_m); a rank with no row at all (start offsets, or end offsets without a tail) has
    // no call to make and nothing to give back.
    const std::size_t tail = ends ? c.num_or("tail", 0) : 0;
    if (!masked && tokens + tail == 0) continue;
    GroupedOperands s;
    s.n = g.n;
    s.k = g.k;
    s.scales = g.scales;
    s.experts.assign(g.experts.begin() + static_cast<std::ptrdiff_t>(e0),
                     g.experts.begin() + static_cast<std::ptrdiff_t>(e1));
    s.geo = group_geometry(op, mine, tail, masked ? g.geo.m / experts : 0);
    const Bytes part = run_grouped_op(ctx.run(), op, s, fmt);
    const std::string what = "EP rank " + std::to_string(r) + " of " + std::to_string(ranks) +
                             " (experts " + std::to_string(e0) + ".." + std::to_string(e1 - 1) +
                             ")";
    if (auto f = check_unowned_poison(what, s, fmt, part)) return f;
    for (std::size_t j = 0; j < mine.size(); ++j) {
      std::memcpy(joined.data() + g.geo.groups[e0 + j].r0 * row_bytes,
                  part.data() + s.geo.groups[j].r0 * row_bytes, mine[j] * row_bytes);
    }
  }
  ctx.tag("grouped:ep:split");
  if (experts % ranks != 0) ctx.tag("grouped:ep:uneven_ranks");
  return compare_raw_rows("EP=" + std::to_string(ranks) +
                              " ranks' rows recombined vs the "
                              "unsharded call",
                          g, fmt, full, joined, std::nullopt);
}

}  // namespace

void add_grouped_split_properties(std::vector<Property>& out) {
  out.push_back({"grouped.tp_split",
                 "a tensor-parallel shard of a grouped call (w13: a column shard of every expert's "
                 "weights; w2: a K range on the scale blocks) whose output is not its share of "
                 "the unsharded call",
                 kGroupedFamilies, grouped_data_accepts, gen_tp, check_tp, 0,
                 grouped_data_declines});
  out.push_back({"grouped.ep_split",
                 "an expert-parallel rank's grouped call (its experts, its tokens only) whose rows "
                 "differ from the unsharded call's",
                 kGroupedFamilies, grouped_data_accepts, gen_ep, check_ep, 0,
                 grouped_data_declines});
}

}  // namespace mxgate::properties
