// GEMM properties over the GEMM ops of the implementation under test (families gemm_mx,
// gemm_block, gemm_bf16): every op bit-exact on exact-mode data (fingerprint scales), in its
// declared order or accumulator simulation (ops that declare one) and inside the bound of its
// accumulator model on general data; metamorphic TP column / row splits and poisoned padding. Cases
// come from gemm_cases.h (shapes from each op's contract and the production catalog); operands are
// laid out with the reference's layout code (gemm_operands.h). The layout properties are
// props_layout.cpp.
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>

#include "impl/accumulator.h"
#include "impl/harness.h"
#include "properties/extreme_scales.h"
#include "properties/gemm_cases.h"
#include "properties/gemm_operands.h"
#include "properties/nan_scale_regime.h"
#include "properties/props.h"
#include "properties/zero_row_regime.h"
#include "reference/accumulator_bounds.h"
#include "reference/accumulator_simulation.h"
#include "reference/convention.h"
#include "reference/format.h"
#include "reference/gemm_fp8_out.h"

namespace mxgate::properties {

namespace {

// The block rows of B a column shard must start on: 1 when the op takes n_offset (the built-in
// kernels) or B's scales are not row blocks.
std::size_t shard_unit(const Op& op) {
  const impl::Contract& c = op.contract;
  std::size_t unit = std::max<std::size_t>(1, c.n.align);
  if (op.family == Family::kGemmBlock && !c.n_offset && c.b_block_rows > 1) {
    unit = std::lcm(unit, static_cast<std::size_t>(c.b_block_rows));
  }
  return unit;
}

// Row shards of K = 128 each must be inside the contract and cut no scale block.
std::string row_split_declines(const Op& op) {
  const impl::Contract& c = op.contract;
  if (std::string why = gemm_fp32_declines(op); !why.empty()) return why;
  if (128 % std::max<uint64_t>(1, c.k.align) != 0 || c.k.min > 128) {
    return "K = 128 inside its contract (the shard's K)";
  }
  for (uint32_t bk : {c.a_block_cols, c.b_block_cols}) {
    if (op.family != Family::kGemmBf16 && bk != 0 && 128 % bk != 0) {
      return "scale blocks along K that divide 128";
    }
  }
  return "";
}

bool row_split_accepts(const Op& op) { return row_split_declines(op).empty(); }

// Every scaled GEMM: its scale buffers carry allocator slack after their last element, and
// padded layouts (swizzle, TMA-aligned) or leading dimensions their padding.
std::string poison_declines(const Op& op) {
  if (std::string why = gemm_fp32_declines(op); !why.empty()) return why;
  return op.family == Family::kGemmBf16 ? "scales (gemm_bf16 has none)" : "";
}

bool poison_accepts(const Op& op) { return poison_declines(op).empty(); }

// ---- gemm.exact -----------------------------------------------------------------------------

// Of a scaled GEMM's cases three in eight are plain, one in two plant the extreme scale codes
// and one in eight the extreme element codes (extreme_scales.h: fields scales=extreme and
// elements=extreme). The fields are absent otherwise, so earlier cases and regression files read
// as before, and a shrink toward the first choice drops them only when the failure does not need
// them.
// One case in two of a scaled GEMM whose scales are row- or column-major also pads every line of
// its scale grids (field `scale_ld`, 1 or 3 slots of poison): the grids become views into wider
// tensors, as a strided or sliced scale tensor is (the contracts take any ld that meets their
// alignment), so a kernel that infers the layout from the shape reads poison or another row.
// An op taking several element formats (the FNUZ block GEMMs: E4M3FNUZ and E5M2FNUZ) plants
// the extreme elements in three cases of eight, one in eight plain: its formats share those
// cases, and each must reach properties.coverage in one default run.
// Independently, one case in eight of a block GEMM with per-row A scales along K takes the
// "one K tile, an all-zero row" regime (zero_row_regime.h: field `edge`, K one scale block, at
// least two rows), in place of the extreme regimes (they plant the same scales). Otherwise one
// case in four of an MX GEMM and one in eight of a block GEMM take the "NaN scale over nonzero
// elements" regime (nan_scale_regime.h: field `edge=nan_scale_block`), in place of the plain and
// extreme-scale cases (never of the extreme-element ones, whose formats must all reach coverage).
bool several_element_types(const Op& op) {
  return fp8_element_types(op.contract.a_dtypes).size() > 1 ||
         fp8_element_types(op.contract.b_dtypes).size() > 1;
}

rc::Gen<Case> gen_exact(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    const bool scaled = op->family != Family::kGemmBf16;
    return rc::gen::apply(
        [op](Shape3 s, int pick, const std::string& out, uint64_t seed, TypePick types, int extreme,
             int ld_extra, std::size_t zero_row_k, const std::string& out_scale, bool nan_block) {
          if (zero_row_k != 0 || extreme == 2) nan_block = false;  // element extremes kept
          if (nan_block) extreme = 0;
          if (zero_row_k != 0) {
            std::get<0>(s) = fit_dim(std::max<std::size_t>(std::get<0>(s), 2), op->contract.m);
            std::get<2>(s) = zero_row_k;
            extreme = 0;
          }
          Case c = gemm_case("gemm.exact", *op, s, pick, out, seed, types);
          if (zero_row_k != 0) c.set("edge", kZeroRowEdge);
          if (nan_block) c.set("edge", kNanScaleEdge);
          if (extreme == 1) c.set("scales", "extreme");
          if (extreme == 2) c.set("elements", "extreme");
          const std::string& layout = c.text("layout");
          if (ld_extra != 0 && (layout == "row_major" || layout == "col_major")) {
            c.set("scale_ld", ld_extra);
          }
          if (case_fp8_out(c)) c.set("out_scale", out_scale);
          return c;
        },
        gen_shape(*op), pick<int>({0, 1, 1}), gen_out(*op, true), gen_seed(), gen_types(*op),
        !scaled                      ? rc::gen::just(0)
        : several_element_types(*op) ? pick<int>({0, 1, 1, 1, 1, 2, 2, 2})
                                     : pick<int>({0, 0, 0, 1, 1, 1, 1, 2}),
        scaled ? gen_scale_ld(*op) : rc::gen::just(0), gen_zero_row_k(*op), gen_out_scale(),
        gen_nan_scale(*op));
  });
}

// FP8 output (plugin.h revision 4, field out=e4m3fn / e5m2 with out_scale): the reference is the
// fp32 result v the op's fp32 output must equal (`v_from`: exact_gemm, or the declared order),
// then fl32(v * scale_result) cast with the op's FP8 output convention (reference/gemm_fp8_out.h);
// the op's codes must equal it byte for byte.
std::optional<Failure> check_fp8_out(const Context& ctx, const Case& c, const Op& op,
                                     const Operands& o, impl::Dtype out, const OpLayout& layout,
                                     const GemmOutput& v, const std::string& v_from) {
  if ((op.contract.out_dtypes & impl::dtype_bit(out)) == 0 || !impl::takes_fp8_out(op.family)) {
    throw impl::Unsupported(op.name + " declares no " + std::string(impl::to_string(out)) +
                            " output");
  }
  const float factor = out_scale_factor(c);
  const float scale_result = scale_result_for(v.fp32, factor);
  const std::string conv(impl::fp8_out_convention(op.contract));
  const Format format = gemm_element_format(out);
  const std::vector<uint8_t> want =
      fp8_scaled_output(v.fp32, scale_result, format, require_convention(conv));
  const Bytes got = run_gemm_op_fp8(ctx.run(), op, o, out, scale_result, layout);
  ctx.tag("out:fp8_scaled");
  const uint32_t mantissa = bits_of(factor) & 0x7FFFFFu;
  ctx.tag(mantissa == 0 ? "out:fp8_scale:pow2" : "out:fp8_scale:non_pow2");
  ctx.tag("out:" + std::string(impl::to_string(out)));
  char what[160];
  std::snprintf(what, sizeof what, " vs %s, %s output (scale_result %a, %s)", v_from.c_str(),
                std::string(impl::to_string(out)).c_str(), static_cast<double>(scale_result),
                conv.c_str());
  return compare_codes(op.name + what, format, o.m, o.n, want, got);
}

std::optional<Failure> check_exact(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t m = c.num("m"), n = c.num("n"), k = c.num("k");
  const std::optional<impl::Dtype> fp8_out = case_fp8_out(c);
  const OutputFormat fmt = fp8_out ? OutputFormat::kFp32 : out_format(c);
  const OpLayout layout = op_layout(c, op, ctx);
  // An extreme-scale or extreme-element case checks the operands it plants
  // (extreme_scales.h), not the fingerprint's before it.
  const bool elements = c.has("elements");
  const bool edge = c.has("edge");
  if ((elements && c.has("scales")) || (edge && (elements || c.has("scales")))) {
    throw CaseError("case fields 'scales', 'elements' and 'edge' exclude each other");
  }
  Operands o = exact_operands(op, m, n, k, c.num("seed"), true, case_types(ctx, c, op),
                              !c.has("scales") && !elements && !edge);
  if (edge) {
    const std::string& e = c.text("edge");
    if (e != kZeroRowEdge && e != kNanScaleEdge) {
      throw CaseError("case field 'edge' must be " + std::string(kZeroRowEdge) + " or " +
                      std::string(kNanScaleEdge));
    }
    const std::string family(impl::to_string(op.family));
    const AccumulatorModel model = impl::accum_model_for(op);
    for (const std::string& t : e == kZeroRowEdge ? plant_zero_row(op, o, c.num("seed"), model)
                                                  : plant_nan_scale(op, o, c.num("seed"), model)) {
      ctx.tag(family + ":" + t);
    }
  }
  if (elements) {
    if (c.text("elements") != "extreme") throw CaseError("case field 'elements' must be extreme");
    const std::string family(impl::to_string(op.family));
    for (const std::string& cls :
         plant_extreme_elements(op, o, c.num("seed"), impl::accum_model_for(op))) {
      ctx.tag(family + ":" + cls);
    }
  }
  if (c.has("scales")) {
    if (c.text("scales") != "extreme") throw CaseError("case field 'scales' must be extreme");
    const std::string family(impl::to_string(op.family));
    const std::string format = op.family == Family::kGemmMx ? ":e8m0:" : ":scale:";
    for (const std::string& code :
         plant_extreme_scales(op, o, c.num("seed"), impl::accum_model_for(op))) {
      ctx.tag(family + format + code);
    }
  }
  tag_op(ctx, op);
  tag_shape(ctx, m, n, k);
  tag_e8m0(ctx, o.a_e8m0);
  if (fp8_out) {
    return check_fp8_out(ctx, c, op, o, *fp8_out, layout,
                         exact_gemm(o.problem, OutputFormat::kFp32), "exact_gemm");
  }
  return compare_outputs(op.name + " vs exact_gemm (exact mode)", exact_gemm(o.problem, fmt),
                         run_gemm_op(ctx.run(), op, o, fmt, layout));
}

// ---- gemm.ordered_bound ---------------------------------------------------------------------

// An op that declares its order (or simulation) also gets FP8-output cases (general data: the
// fp32 results, and so fl32(v * scale_result), round); one without has only its bound, which is
// stated for fp32 / bf16 output.
bool bit_exact_order(const Op& op) { return op.contract.order || op.contract.simulated_order; }

// An op writing only FP8 needs a declared order (or simulation) here: no bound is stated for
// FP8 output, so without one the property has no case it can check.
std::string ordered_declines(const Op& op) {
  if (std::string why = gemm_declines(op); !why.empty()) return why;
  return plain_out(op) || bit_exact_order(op)
             ? ""
             : "a declared order or simulation for its FP8-only output (no bound is stated for "
               "FP8 output)";
}

bool ordered_accepts(const Op& op) { return ordered_declines(op).empty(); }

rc::Gen<Case> gen_ordered(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    const impl::Contract& c = op->contract;
    return rc::gen::apply(
        [op](Shape3 s, const std::string& out, uint64_t seed, TypePick types,
             const std::string& out_scale) {
          Case cs = gemm_case("gemm.ordered_bound", *op, s, 0, out, seed, types);
          if (case_fp8_out(cs)) cs.set("out_scale", out_scale);
          return cs;
        },
        gen_contract_shape(c), gen_out(*op, bit_exact_order(*op)), gen_seed(), gen_types(*op),
        gen_out_scale());
  });
}

// An op that declares its summation order (or that its sums are its accumulator model's
// simulation) must follow it bit for bit; every op must stay inside
// the bound of its accumulator model (impl/accumulator.h accum_model_for; the bound of
// reference/accumulator_bounds.h for that model).
std::optional<Failure> check_ordered(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t m = c.num("m"), n = c.num("n"), k = c.num("k");
  const std::optional<impl::Dtype> fp8_out = case_fp8_out(c);
  const OutputFormat fmt = fp8_out ? OutputFormat::kFp32 : out_format(c);
  const OpLayout layout = op_layout(c, op, ctx);
  const AccumulatorModel model = impl::accum_model_for(op);
  const Operands o = general_operands(op, m, n, k, c.num("seed"), case_types(ctx, c, op));
  if (fp8_out) {
    if (!bit_exact_order(op)) {
      throw impl::Unsupported(op.name +
                              ": FP8 output in gemm.ordered_bound needs a declared "
                              "order or simulation (no bound is stated for FP8 output)");
    }
    tag_op(ctx, op);
    tag_shape(ctx, m, n, k);
    return op.contract.order ? check_fp8_out(ctx, c, op, o, *fp8_out, layout,
                                             ordered_gemm(o.problem, order_model(op, fmt)),
                                             "ordered_gemm (declared order)")
                             : check_fp8_out(ctx, c, op, o, *fp8_out, layout,
                                             simulate_gemm(o.problem, model, fmt),
                                             "simulate_gemm (" + model.name + ")");
  }
  const GemmOutput got = run_gemm_op(ctx.run(), op, o, fmt, layout);
  tag_op(ctx, op);
  tag_shape(ctx, m, n, k);
  if (op.contract.order) {
    if (auto f = compare_outputs(op.name + " vs ordered_gemm (declared order)",
                                 ordered_gemm(o.problem, order_model(op, fmt)), got)) {
      return f;
    }
  } else if (op.contract.simulated_order) {
    if (auto f = compare_outputs(op.name + " vs simulate_gemm (" + model.name + ", bit for bit)",
                                 simulate_gemm(o.problem, model, fmt), got)) {
      return f;
    }
  }
  const BoundVerdict v = check_bound(compute_bounds(o.problem, model, fmt), got);
  if (v.ok()) return std::nullopt;
  return Failure{
      op.name + " outside the error bound of accumulator " + model.name + ": " + v.summary(),
      std::nullopt, std::nullopt, got};
}

// ---- metamorphic.tp_column_split ------------------------------------------------------------

rc::Gen<Case> gen_column_split(const Context&, const Ops& ops) {
  const std::vector<std::size_t>& residues = catalog_n_residues();
  return gen_over_ops(ops, [residues](const Op* op) {
    const impl::Contract& ct = op->contract;
    const std::size_t unit = shard_unit(*op);
    const impl::Dim dn{unit, ct.n.min, ct.n.max};
    return rc::gen::apply(
        [op, unit, dn](std::size_t tp, std::size_t res, std::size_t blocks, std::size_t m,
                       std::size_t k, uint64_t seed, TypePick types) {
          const std::size_t local = fit_dim(std::max(unit, (res + 128 * blocks) / unit * unit), dn);
          Case c = gemm_case("metamorphic.tp_column_split", *op,
                             {fit_dim(m, op->contract.m), local * tp, k}, 0, "fp32", seed, types);
          c.set("tp", tp);
          return c;
        },
        range(2, 9), pick(residues), range(0, 2), pick<std::size_t>({1, 2, 3, 4, 5}),
        gen_k(ct.k, 1), gen_seed(), gen_types(*op));
  });
}

template <class T>
std::vector<T> slice_rows(const std::vector<T>& v, std::size_t cols, std::size_t r0,
                          std::size_t r1) {
  return std::vector<T>(v.begin() + static_cast<std::ptrdiff_t>(r0 * cols),
                        v.begin() + static_cast<std::ptrdiff_t>(r1 * cols));
}

// The case's exact-mode operands and the op's full fp32 GEMM of them, held to exact_gemm first
// (`wrong`): splits that agree with a wrong (or unwritten, poisoned) full output prove nothing.
struct FullGemm {
  OpLayout layout;
  Operands o;
  GemmOutput full;
  std::optional<Failure> wrong;
};
FullGemm full_gemm(const Context& ctx, const Case& c, const Op& op, std::size_t m, std::size_t n,
                   std::size_t k) {
  FullGemm g;
  g.layout = op_layout(c, op, ctx);
  g.o = exact_operands(op, m, n, k, c.num("seed"), true, case_types(ctx, c, op));
  g.full = run_gemm_op(ctx.run(), op, g.o, OutputFormat::kFp32, g.layout);
  g.wrong = compare_outputs("full GEMM vs exact_gemm", exact_gemm(g.o.problem, OutputFormat::kFp32),
                            g.full);
  return g;
}

// The GEMM of every rank's column shard (B rows [r*N/tp, (r+1)*N/tp) with their scales: MX and
// row-wise scales by row, per-tensor the one scale, block scales the blocks the shard touches
// with n_offset where the op takes it) concatenated equals the full GEMM.
std::optional<Failure> check_column_split(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t m = c.num("m"), n = c.num("n"), k = c.num("k");
  const std::size_t tp = c.num("tp");
  if (tp < 1 || n % tp != 0) throw CaseError("case field 'tp' must divide N");
  const std::size_t local = n / tp;
  if (local % shard_unit(op) != 0) {
    throw impl::Unsupported(op.name + " cannot take a column shard of " + std::to_string(local) +
                            " rows (its B scale blocks need multiples of " +
                            std::to_string(shard_unit(op)) + ")");
  }
  const auto [layout, o, full, wrong] = full_gemm(ctx, c, op, m, n, k);
  if (wrong) return wrong;
  GemmOutput joined{m, n, OutputFormat::kFp32, std::vector<float>(m * n), {}};
  const std::size_t elem = o.b.size() / (n * k);
  const BlockSizes blocks = op_blocks(op, m, n, k);
  for (std::size_t r = 0; r < tp; ++r) {
    const std::size_t n0 = r * local;
    Operands s = o;
    s.n = local;
    s.b = slice_rows(o.b, k * elem, n0, n0 + local);
    OpLayout sl = layout;
    if (op.family == Family::kGemmMx) {
      s.b_e8m0 = slice_rows(o.b_e8m0, (k + 31) / 32, n0, n0 + local);
    } else if (op.family == Family::kGemmBlock) {
      const std::size_t cols = o.problem.b_scale_cols();
      if (blocks.b_n >= n) {
        s.b_f32 = o.b_f32;  // one row of scales covers every shard
      } else {
        const std::size_t b0 = n0 / blocks.b_n, b1 = (n0 + local + blocks.b_n - 1) / blocks.b_n;
        s.b_f32 = slice_rows(o.b_f32, cols, b0, b1);
        if (op.contract.n_offset) sl.n_offset = n0;
      }
    }
    const GemmOutput part = run_gemm_op(ctx.run(), op, s, OutputFormat::kFp32, sl);
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < local; ++j)
        joined.fp32[i * n + n0 + j] = part.fp32[i * local + j];
    }
  }
  tag_op(ctx, op);
  ctx.tag("tp:shard");
  if (local % 128 != 0) ctx.tag("tp:sub_block_shard");
  tag_shape(ctx, m, local, k);
  return compare_outputs("TP=" + std::to_string(tp) + " column shards concatenated vs full GEMM",
                         full, joined);
}

// ---- metamorphic.tp_row_split ---------------------------------------------------------------

rc::Gen<Case> gen_row_split(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    const impl::Contract& ct = op->contract;
    return rc::gen::apply(
        [op](std::size_t tp, std::size_t m, std::size_t n, std::size_t tail, uint64_t seed,
             TypePick types) {
          // Every shard but the last is whole 128-blocks of K; the last may end in a residue.
          const std::size_t k = 128 * (tp - 1) + tail;
          if (m > 128)
            n = std::min(n,
                         fit_dim(2 * std::max<uint64_t>(1, op->contract.n.align), op->contract.n));
          Case c = gemm_case("metamorphic.tp_row_split", *op, {m, n, k}, 0, "fp32", seed, types);
          c.set("tp", tp);
          return c;
        },
        range(2, 5), gen_m(ct.m), gen_n(ct.n), gen_k(ct.k, 1), gen_seed(), gen_types(*op));
  });
}

// Row-parallel: rank r holds K columns [128 r, 128 (r+1)) (the last rank the rest). On exact-mode
// data the fp32 sum of the ranks' partial GEMMs (the all-reduce) equals the full GEMM bit for bit.
std::optional<Failure> check_row_split(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t m = c.num("m"), n = c.num("n"), k = c.num("k");
  const std::size_t tp = c.num("tp");
  if (tp < 2 || k <= 128 * (tp - 1)) throw CaseError("case field 'tp' needs K > 128 (tp - 1)");
  const auto [layout, o, full, wrong] = full_gemm(ctx, c, op, m, n, k);
  if (wrong) return wrong;
  GemmOutput sum{m, n, OutputFormat::kFp32, std::vector<float>(m * n, 0.0f), {}};
  const std::size_t elem = o.a.size() / (m * k);
  const BlockSizes blocks = op_blocks(op, m, n, k);
  for (std::size_t r = 0; r < tp; ++r) {
    const std::size_t k0 = 128 * r, k1 = r + 1 == tp ? k : k0 + 128;
    Operands s;
    s.m = m;
    s.n = n;
    s.k = k1 - k0;
    s.types = o.types;
    auto cols = [&](const Bytes& src, std::size_t rows) {
      Bytes out;
      for (std::size_t i = 0; i < rows; ++i) {
        out.insert(out.end(), src.begin() + static_cast<std::ptrdiff_t>((i * k + k0) * elem),
                   src.begin() + static_cast<std::ptrdiff_t>((i * k + k1) * elem));
      }
      return out;
    };
    s.a = cols(o.a, m);
    s.b = cols(o.b, n);
    // The scale columns of K block size `bk` the shard covers (bk >= K: the one column).
    auto scale_cols = [k, k0, k1](const auto& src, std::size_t per_row, std::size_t bk) {
      const std::size_t c0 = bk >= k ? 0 : k0 / bk;
      const std::size_t c1 = bk >= k ? 1 : (k1 + bk - 1) / bk;
      std::remove_cvref_t<decltype(src)> out;
      for (std::size_t i = 0; i < src.size() / per_row; ++i) {
        out.insert(out.end(), src.begin() + static_cast<std::ptrdiff_t>(i * per_row + c0),
                   src.begin() + static_cast<std::ptrdiff_t>(i * per_row + c1));
      }
      return out;
    };
    if (op.family == Family::kGemmMx) {
      const std::size_t kb = (k + 31) / 32;
      s.a_e8m0 = scale_cols(o.a_e8m0, kb, 32);
      s.b_e8m0 = scale_cols(o.b_e8m0, kb, 32);
    } else if (op.family == Family::kGemmBlock) {
      s.a_f32 = scale_cols(o.a_f32, o.problem.a_scale_cols(), blocks.a_k);
      s.b_f32 = scale_cols(o.b_f32, o.problem.b_scale_cols(), blocks.b_k);
    }
    const GemmOutput part = run_gemm_op(ctx.run(), op, s, OutputFormat::kFp32, layout);
    for (std::size_t i = 0; i < m * n; ++i) sum.fp32[i] += part.fp32[i];
  }
  tag_op(ctx, op);
  ctx.tag("tp:row_split");
  tag_shape(ctx, m, n, k);
  return compare_outputs("TP=" + std::to_string(tp) + " row-split partial sums vs full GEMM", full,
                         sum);
}

// ---- metamorphic.padding_poison -------------------------------------------------------------

// Bytes of allocator slack after each scale buffer in metamorphic.padding_poison: more than a
// K tile's scale columns (four E8M0 bytes, one fp32 block scale) past the end.
constexpr std::size_t kScaleSlack = 16;

// The index of the op's first padded scale layout (0: none, the leading dimension pads).
int padded_pick(const Op& op) {
  const std::vector<Layout> ls = scale_layouts(op);
  for (std::size_t i = 0; i < ls.size(); ++i) {
    if (padded_layout(ls[i])) return static_cast<int>(i);
  }
  return 0;
}

rc::Gen<Case> gen_poison(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    const impl::Contract& c = op->contract;
    return rc::gen::apply(
        [op](Shape3 s, uint64_t seed, TypePick types) {
          return gemm_case("metamorphic.padding_poison", *op, s, padded_pick(*op), "fp32", seed,
                           types);
        },
        gen_contract_shape(c, 2), gen_seed(), gen_types(*op));
  });
}

// I6: the padding of a padded scale layout (swizzle columns to 4 and rows to 128, TMA rows to
// align4(M), a leading dimension rounded up) and the allocator slack after each scale buffer's
// last element (what a K-tail load without a mask reads: Z28) filled with 0x00, 0x7F or NaN give
// the same output bits, equal to exact_gemm.
std::optional<Failure> check_poison(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t m = c.num("m"), n = c.num("n"), k = c.num("k");
  Case zero = c;
  zero.set("pad", 0);
  const OpLayout clean = op_layout(zero, op, ctx);
  const Operands o = exact_operands(op, m, n, k, c.num("seed"), true, case_types(ctx, c, op));
  const GemmOutput want = exact_gemm(o.problem, OutputFormat::kFp32);
  tag_op(ctx, op);
  tag_shape(ctx, m, n, k);
  for (uint8_t pad : {uint8_t{0x00}, uint8_t{0x7F}, uint8_t{0xFF}}) {
    OpLayout l = clean;
    l.e8m0_pad = pad;
    l.f32_pad = pad == 0 ? 0.0f : pad == 0x7F ? 1.0e30f : std::numeric_limits<float>::quiet_NaN();
    l.slack = kScaleSlack;
    char what[96];
    std::snprintf(what, sizeof what, "output with padding 0x%02X vs exact_gemm", pad);
    if (auto f =
            compare_outputs(what, want, run_gemm_op(ctx.run(), op, o, OutputFormat::kFp32, l))) {
      return f;
    }
  }
  return std::nullopt;
}

}  // namespace

void add_gemm_properties(std::vector<Property>& out) {
  out.push_back({"gemm.exact",
                 "a GEMM that reads a scale from the wrong slot (order, stride, leading "
                 "dimension, swizzle), drops a partial K block, reads past K or decodes an "
                 "extreme scale code wrongly: exact-mode data makes any of them a located bit "
                 "difference",
                 kGemmFamilies, gemm_accepts, gen_exact, check_exact, 0, gemm_declines});
  out.push_back({"gemm.ordered_bound",
                 "a GEMM whose summation differs from its declared order, or that leaves the "
                 "rigorous error bound of its accumulator model on general data",
                 kGemmFamilies, ordered_accepts, gen_ordered, check_ordered, 0, ordered_declines});
  out.push_back({"metamorphic.tp_column_split",
                 "a TP shard whose weight-scale block index comes from the local, not the global, "
                 "row (N % 128 != 0 shards)",
                 kGemmFamilies, gemm_fp32_accepts, gen_column_split, check_column_split, 0,
                 gemm_fp32_declines});
  out.push_back({"metamorphic.tp_row_split",
                 "a row-parallel shard whose partial GEMM is not its share of the full one",
                 kGemmFamilies, row_split_accepts, gen_row_split, check_row_split, 0,
                 row_split_declines});
  out.push_back({"metamorphic.padding_poison",
                 "padding of a padded scale layout read into the result (I6)", kGemmFamilies,
                 poison_accepts, gen_poison, check_poison, 0, poison_declines});
}

}  // namespace mxgate::properties
