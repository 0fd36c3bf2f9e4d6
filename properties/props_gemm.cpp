// GEMM and layout properties over the GEMM ops of the implementation under test (families
// gemm_mx, gemm_block, gemm_bf16): every op bit-exact on exact-mode data (fingerprint scales),
// in its declared order (ops that declare one) and inside the bound of its accumulator model on
// general data; scale layouts and the weight preshuffle as bijections; metamorphic TP column /
// row splits and poisoned padding. Shapes, dtypes, scale layouts and block shapes come from each
// op's contract (props.h gen_m/gen_n/gen_k) and from the production catalog
// (corpus/shapes/production_shapes.tsv): per-rank N x K of TP-sharded models. Operands are laid
// out with the reference's layout code (gemm_operands.h).
#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <tuple>

#include "impl/accumulator.h"
#include "impl/harness.h"
#include "properties/gemm_operands.h"
#include "properties/props.h"
#include "properties/shape_catalog.h"
#include "reference/accumulator_bounds.h"
#include "reference/format.h"
#include "reference/scale_layout.h"
#include "reference/weight_shuffle.h"

namespace mxgate::properties {

namespace {

using impl::Family;
using impl::family_bit;
using impl::Layout;
using impl::layout_bit;
using impl::Op;
using Shape3 = std::tuple<std::size_t, std::size_t, std::size_t>;

constexpr impl::FamilyMask kGemmFamilies =
    family_bit(Family::kGemmMx) | family_bit(Family::kGemmBlock) | family_bit(Family::kGemmBf16);

const std::vector<ShapeEntry>& catalog() {
  static const std::vector<ShapeEntry> entries = [] {
    try {
      return load_shape_catalog(default_shape_catalog_path());
    } catch (const std::exception&) {
      return std::vector<ShapeEntry>{};  // a tree without corpus/: random shapes only
    }
  }();
  return entries;
}

// The scale layouts the properties can build (every scale layout of the ABI); row-major for an
// unscaled GEMM.
std::vector<Layout> scale_layouts(const Op& op) {
  std::vector<Layout> out;
  for (Layout l : impl::layouts_in(op.contract.a_scale_layouts)) {
    if (l != Layout::kAiterShuffle16x16) out.push_back(l);
  }
  if (op.family == Family::kGemmBf16 || out.empty()) out = {Layout::kRowMajor};
  return out;
}

bool preshuffled_b(const Op& op) {
  const impl::LayoutMask b = op.contract.b_layouts;
  return (b & layout_bit(Layout::kRowMajor)) == 0 &&
         (b & layout_bit(Layout::kAiterShuffle16x16)) != 0;
}

// A GEMM op the properties can feed: E4M3FN or E5M2 codes, each operand a type its contract
// accepts (bf16 for gemm_bf16), in row-major A, B row-major or AITER-shuffled (with the shuffle's
// N % 16, K % 32), fp32 scales for block GEMMs, e8m0 for MX, a scale layout, fp32 or bf16 output.
bool gemm_accepts(const Op& op) {
  const impl::Contract& c = op.contract;
  const GemmKind kind = gemm_kind(op.family);
  if (kind == GemmKind::kBf16) {
    const impl::DtypeMask bf16 = impl::dtype_bit(impl::Dtype::kBf16);
    if ((c.a_dtypes & bf16) == 0 || (c.b_dtypes & bf16) == 0) return false;
  } else if (fp8_element_types(c.a_dtypes).empty() || fp8_element_types(c.b_dtypes).empty()) {
    return false;
  }
  if ((c.out_dtypes & (impl::dtype_bit(impl::Dtype::kF32) | impl::dtype_bit(impl::Dtype::kBf16))) ==
      0) {
    return false;
  }
  if ((c.b_layouts & (layout_bit(Layout::kRowMajor) | layout_bit(Layout::kAiterShuffle16x16))) ==
      0) {
    return false;
  }
  if (preshuffled_b(op) && (c.n.align % 16 != 0 || c.k.align % 32 != 0)) return false;
  if (kind == GemmKind::kMx) {
    return c.scale_dtype == impl::Dtype::kE8m0 && c.a_block_cols == 32 && c.b_block_cols == 32;
  }
  if (kind == GemmKind::kBlock) return c.scale_dtype == impl::Dtype::kF32;
  return true;
}

bool fp32_out(const Op& op) {
  return (op.contract.out_dtypes & impl::dtype_bit(impl::Dtype::kF32)) != 0;
}

bool gemm_fp32_accepts(const Op& op) { return gemm_accepts(op) && fp32_out(op); }

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
bool row_split_accepts(const Op& op) {
  const impl::Contract& c = op.contract;
  if (!gemm_fp32_accepts(op) || 128 % std::max<uint64_t>(1, c.k.align) != 0 || c.k.min > 128) {
    return false;
  }
  for (uint32_t bk : {c.a_block_cols, c.b_block_cols}) {
    if (op.family != Family::kGemmBf16 && bk != 0 && 128 % bk != 0) return false;
  }
  return true;
}

bool padded_layout(Layout l) { return l == Layout::kTmaColMajor || l == Layout::kNvSwizzle128x4; }

// Every scaled GEMM: its scale buffers carry allocator slack after their last element, and
// padded layouts (swizzle, TMA-aligned) or leading dimensions their padding.
bool poison_accepts(const Op& op) {
  return gemm_fp32_accepts(op) && op.family != Family::kGemmBf16;
}

// Per-rank (N, K) of catalog layers the op can run, small enough for the host models.
// Computed once per op: generators ask for them on every case.
const std::vector<std::pair<std::size_t, std::size_t>>& catalog_shapes(const Op& op) {
  static std::mutex mutex;
  static std::map<const Op*, std::vector<std::pair<std::size_t, std::size_t>>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto it = cache.find(&op);
  if (it != cache.end()) return it->second;
  const impl::Contract& c = op.contract;
  std::set<std::pair<std::size_t, std::size_t>> out;
  for (const ShapeEntry& e : catalog()) {
    const bool fits =
        op.family == Family::kGemmMx ? (e.is_mx() || e.k % 32 == 0)
        : op.family == Family::kGemmBlock && c.b_block_rows == 128 && c.a_block_cols == 128
            ? e.is_block128()
            : true;
    if (!fits || !c.n.admits(e.n) || !c.k.admits(e.k)) continue;
    if (e.n * e.k > (std::size_t{1} << 23)) continue;
    out.insert({e.n, e.k});
  }
  return cache[&op] = std::vector<std::pair<std::size_t, std::size_t>>(out.begin(), out.end());
}

// N % 128 residues of TP-sharded per-rank N in the catalog (the sub-block shards of Z16).
const std::vector<std::size_t>& catalog_n_residues() {
  static const std::vector<std::size_t> residues = [] {
    std::set<std::size_t> res;
    for (const ShapeEntry& e : catalog()) {
      if (e.tp > 1 && e.n % 128 != 0) res.insert(e.n % 128);
    }
    if (res.empty()) res = {32, 64, 96};
    return std::vector<std::size_t>(res.begin(), res.end());
  }();
  return residues;
}

std::string layout_choice(const Op& op, int pick) {
  const std::vector<Layout> ls = scale_layouts(op);
  return std::string(impl::to_string(ls[static_cast<std::size_t>(pick) % ls.size()]));
}

// The output formats a case picks from: fp32 three times as often as bf16 (where the op writes
// both).
rc::Gen<std::string> gen_out(const Op& op) {
  const bool f32 = fp32_out(op);
  const bool bf16 = (op.contract.out_dtypes & impl::dtype_bit(impl::Dtype::kBf16)) != 0;
  if (f32 && bf16) return pick<std::string>({"fp32", "fp32", "fp32", "bf16"});
  return rc::gen::just<std::string>(f32 ? "fp32" : "bf16");
}

OpLayout op_layout(const Case& c, const Op& op, const Context& ctx) {
  OpLayout l;
  l.kernel_faults = ctx.kernel_faults();
  const std::string& layout = c.text("layout");
  const auto parsed = impl::parse_layout(layout);
  if (!parsed || *parsed == Layout::kAiterShuffle16x16) {
    throw CaseError("case field 'layout' has unknown value '" + layout + "'");
  }
  l.scales = *parsed;
  l.e8m0_pad = static_cast<uint8_t>(c.num_or("pad", 0xFF));
  l.f32_pad = c.num_or("pad", 0xFF) == 0 ? 0.0f : std::numeric_limits<float>::quiet_NaN();
  ctx.tag("layout:" + layout);
  if (preshuffled_b(op)) ctx.tag("layout:aiter_preshuffle");
  return l;
}

OutputFormat out_format(const Case& c) {
  const std::string& o = c.text("out");
  if (o == "fp32") return OutputFormat::kFp32;
  if (o == "bf16") return OutputFormat::kBf16;
  throw CaseError("case field 'out' must be fp32 or bf16, not '" + o + "'");
}

// The FP8 element types of A and B a case of `op` picks from (its contract's, E4M3FN first: the
// shrink target); the case names them (fields a_dtype, b_dtype) only where the op accepts more
// than E4M3FN, so cases and regression files of E4M3FN-only ops read as before.
using TypePick = std::pair<std::size_t, std::size_t>;

rc::Gen<TypePick> gen_types(const Op& op) {
  if (op.family == Family::kGemmBf16) return rc::gen::just(TypePick{0, 0});
  const std::size_t na = fp8_element_types(op.contract.a_dtypes).size();
  const std::size_t nb = fp8_element_types(op.contract.b_dtypes).size();
  return rc::gen::pair(range(0, std::max<std::size_t>(na, 1)),
                       range(0, std::max<std::size_t>(nb, 1)));
}

bool names_types(impl::DtypeMask mask) {
  return mask != 0 && fp8_element_types(mask) != std::vector<impl::Dtype>{impl::Dtype::kE4m3fn};
}

Case gemm_case(std::string_view property, const Op& op, Shape3 s, int layout_pick,
               std::string_view out, uint64_t seed, TypePick types = {0, 0}) {
  Case c{std::string(property)};
  c.set("op", op.name);
  c.set("m", std::get<0>(s)).set("n", std::get<1>(s)).set("k", std::get<2>(s));
  c.set("layout", layout_choice(op, layout_pick));
  c.set("out", out).set("seed", seed);
  if (op.family != Family::kGemmBf16) {
    const impl::Contract& ct = op.contract;
    if (names_types(ct.a_dtypes)) {
      c.set("a_dtype", impl::to_string(fp8_element_types(ct.a_dtypes).at(types.first)));
    }
    if (names_types(ct.b_dtypes)) {
      c.set("b_dtype", impl::to_string(fp8_element_types(ct.b_dtypes).at(types.second)));
    }
  }
  return c;
}

// M x N x K from the contract's clauses; past its M tile, N is kept to two of its alignment
// units (the host models' cost is M x N x K; the wave structure needs rows, not columns).
rc::Gen<Shape3> gen_contract_shape(const impl::Contract& c, int max_blocks = 3) {
  return rc::gen::map(
      rc::gen::tuple(gen_m(c.m, c.m_tile), gen_n(c.n), gen_k(c.k, max_blocks)), [c](Shape3 s) {
        if (std::get<0>(s) > 128) {
          std::get<1>(s) =
              std::min(std::get<1>(s), fit_dim(2 * std::max<uint64_t>(1, c.n.align), c.n));
        }
        return s;
      });
}

// The element types a case names (E4M3FN where it names none); tags them for coverage.
ElementTypes case_types(const Context& ctx, const Case& c, const Op& op) {
  if (op.family == Family::kGemmBf16) return {impl::Dtype::kBf16, impl::Dtype::kBf16};
  const auto read = [&c](const char* field) {
    if (!c.has(field)) return impl::Dtype::kE4m3fn;
    const std::string& text = c.text(field);
    const auto d = impl::parse_dtype(text);
    if (!d || (*d != impl::Dtype::kE4m3fn && *d != impl::Dtype::kE5m2)) {
      throw CaseError("case field '" + std::string(field) + "' must be e4m3fn or e5m2, not '" +
                      text + "'");
    }
    return *d;
  };
  const ElementTypes t{read("a_dtype"), read("b_dtype")};
  ctx.tag("dtype:" + std::string(impl::to_string(t.a)) + "x" + std::string(impl::to_string(t.b)));
  return t;
}

using NK = std::pair<std::size_t, std::size_t>;

// A catalog (N, K) that shrinks by halving K or N inside the contract (fit_dim), so a failure
// found on a production shape still shrinks toward the minimal case instead of stopping at the
// smallest catalog entry that fails.
rc::Gen<NK> gen_catalog_nk(const std::vector<NK>& cat, const impl::Dim& dn, const impl::Dim& dk) {
  return rc::gen::mapcat(pick(cat), [dn, dk](NK nk) {
    return rc::Gen<NK>([nk, dn, dk](const rc::Random&, int) {
      return rc::shrinkable::shrinkRecur(nk, [dn, dk](const NK& v) {
        std::vector<NK> smaller;
        const std::size_t k2 = fit_dim(v.second / 2, dk), n2 = fit_dim(v.first / 2, dn);
        if (k2 < v.second) smaller.push_back({v.first, k2});
        if (n2 < v.first) smaller.push_back({n2, v.second});
        return rc::seq::fromContainer(std::move(smaller));
      });
    });
  });
}

// Shapes of `op`: contract-derived random shapes, or (1 in 8) a catalog per-rank shape with
// M in {1, 2}.
rc::Gen<Shape3> gen_shape(const Op& op) {
  const impl::Contract& c = op.contract;
  rc::Gen<Shape3> random = gen_contract_shape(c);
  const auto& cat = catalog_shapes(op);
  if (cat.empty()) return random;
  const impl::Dim dm = c.m, dn = c.n, dk = c.k;
  // 1 case in 8 takes a catalog shape; the choice shrinks toward the random shapes.
  return rc::gen::mapcat(range(0, 8), [random, cat, dm, dn, dk](std::size_t i) {
    if (i < 7) return random;
    return rc::gen::apply(
        [dm](std::size_t m, NK nk) {
          return Shape3{fit_dim(m, dm), nk.first, nk.second};
        },
        range(1, 3), gen_catalog_nk(cat, dn, dk));
  });
}

void tag_op(const Context& ctx, const Op& op) { ctx.tag("op:" + op.name); }

// ---- gemm.exact -----------------------------------------------------------------------------

rc::Gen<Case> gen_exact(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    return rc::gen::apply(
        [op](Shape3 s, int pick, const std::string& out, uint64_t seed, TypePick types) {
          return gemm_case("gemm.exact", *op, s, pick, out, seed, types);
        },
        gen_shape(*op), pick<int>({0, 1, 1}), gen_out(*op), gen_seed(), gen_types(*op));
  });
}

std::optional<Failure> check_exact(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t m = c.num("m"), n = c.num("n"), k = c.num("k");
  const OutputFormat fmt = out_format(c);
  const OpLayout layout = op_layout(c, op, ctx);
  const Operands o = exact_operands(op, m, n, k, c.num("seed"), true, case_types(ctx, c, op));
  tag_op(ctx, op);
  tag_shape(ctx, m, n, k);
  tag_e8m0(ctx, o.a_e8m0);
  return compare_outputs(op.name + " vs exact_gemm (exact mode)", exact_gemm(o.problem, fmt),
                         run_gemm_op(*ctx.be, op, o, fmt, layout));
}

// ---- gemm.ordered_bound ---------------------------------------------------------------------

rc::Gen<Case> gen_ordered(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    const impl::Contract& c = op->contract;
    return rc::gen::apply(
        [op](Shape3 s, const std::string& out, uint64_t seed, TypePick types) {
          return gemm_case("gemm.ordered_bound", *op, s, 0, out, seed, types);
        },
        gen_contract_shape(c), gen_out(*op), gen_seed(), gen_types(*op));
  });
}

// An op that declares its summation order must follow it bit for bit; every op must stay inside
// the bound of its accumulator model (impl/accumulator.h accum_model_for; the bound of
// reference/accumulator_bounds.h for that model).
std::optional<Failure> check_ordered(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t m = c.num("m"), n = c.num("n"), k = c.num("k");
  const OutputFormat fmt = out_format(c);
  const OpLayout layout = op_layout(c, op, ctx);
  const AccumulatorModel model = impl::accum_model_for(op);
  const Operands o = general_operands(op, m, n, k, c.num("seed"), case_types(ctx, c, op));
  const GemmOutput got = run_gemm_op(*ctx.be, op, o, fmt, layout);
  tag_op(ctx, op);
  tag_shape(ctx, m, n, k);
  if (op.contract.order) {
    if (auto f = compare_outputs(op.name + " vs ordered_gemm (declared order)",
                                 ordered_gemm(o.problem, order_model(op, fmt)), got)) {
      return f;
    }
  }
  const BoundVerdict v = check_bound(compute_bounds(o.problem, model, fmt), got);
  if (v.ok()) return std::nullopt;
  return Failure{
      op.name + " outside the error bound of accumulator " + model.name + ": " + v.summary(),
      std::nullopt, std::nullopt, got};
}

// ---- layouts.round_trip ---------------------------------------------------------------------

rc::Gen<Case> gen_round_trip(const Context&, const Ops&) {
  std::vector<std::string> names;
  for (ScaleLayout l : all_scale_layouts()) names.emplace_back(to_string(l));
  names.emplace_back("aiter_preshuffle");
  return rc::gen::apply(
      [](const std::string& layout, std::size_t rows, std::size_t cols) {
        Case c("layouts.round_trip");
        c.set("layout", layout).set("rows", rows).set("cols", cols);
        return c;
      },
      pick(names), range(1, 300), range(1, 40));
}

// pack then unpack is the identity, every slot of the storage is one logical element or
// padding (scale_inverse), and the padding count is storage - rows x cols. The weight
// preshuffle (rows x 16, cols x 32 bytes) must be a bijection with unshuffle as its inverse.
std::optional<Failure> check_round_trip(const Context& ctx, const Case& c) {
  const std::string& name = c.text("layout");
  const std::size_t rows = c.num("rows"), cols = c.num("cols");
  ctx.tag("layout:" + name);
  if (name == "aiter_preshuffle") {
    const std::size_t n = rows * 16, k = cols * 32;
    std::vector<uint8_t> w(n * k);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(i * 131 + i / 251);
    const std::vector<uint8_t> back = unshuffle_weight(shuffle_weight(w, n, k, 1), n, k, 1);
    return compare_codes("unshuffle(shuffle(w))", Format::kE4M3FN, n, k, w, back);
  }
  const auto layout = parse_scale_layout(name);
  if (!layout) throw CaseError("case field 'layout' has unknown value '" + name + "'");
  std::vector<uint32_t> logical(rows * cols);
  for (std::size_t i = 0; i < logical.size(); ++i) logical[i] = static_cast<uint32_t>(i);
  const auto packed = pack_scales<uint32_t>(*layout, rows, cols, logical, 0xFFFFFFFFu);
  const auto back = unpack_scales<uint32_t>(*layout, rows, cols, packed);
  if (back != logical) return Failure{name + ": unpack(pack(x)) != x", {}, {}, {}};
  std::size_t pads = 0;
  for (std::size_t off = 0; off < packed.size(); ++off) {
    const auto rc_ = scale_inverse(*layout, rows, cols, off);
    if (!rc_) {
      ++pads;
      if (packed[off] != 0xFFFFFFFFu) {
        return Failure{
            name + ": padding slot " + std::to_string(off) + " holds an element", {}, {}, {}};
      }
    } else if (packed[off] != rc_->first * cols + rc_->second) {
      return Failure{
          name + ": scale_inverse(" + std::to_string(off) + ") disagrees with pack", {}, {}, {}};
    }
  }
  if (pads != packed.size() - rows * cols) return Failure{name + ": padding count", {}, {}, {}};
  return std::nullopt;
}

// ---- preshuffle.bit_exact -------------------------------------------------------------------

// A 1-byte element type the op shuffles.
std::optional<impl::Dtype> byte_dtype(const Op& op) {
  for (impl::Dtype d : impl::dtypes_in(op.contract.a_dtypes)) {
    if (impl::dtype_bytes(d) == 1 && (op.contract.out_dtypes & impl::dtype_bit(d))) return d;
  }
  return std::nullopt;
}

bool preshuffle_accepts(const Op& op) { return byte_dtype(op).has_value(); }

rc::Gen<Case> gen_preshuffle(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    return rc::gen::apply(
        [op](std::size_t n, std::size_t k, uint64_t seed) {
          Case c("preshuffle.bit_exact");
          c.set("op", op->name).set("n", n).set("k", k).set("seed", seed);
          return c;
        },
        gen_n(op->contract.m), gen_k(op->contract.k, 2), gen_seed());
  });
}

// The op's shuffle of a random N x K weight (rows = N) equals AITER's shuffle_weight (16,16).
std::optional<Failure> check_preshuffle(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::size_t n = c.num("n"), k = c.num("k");
  const auto dtype = byte_dtype(op);
  if (!dtype) throw impl::Unsupported(op.name + " shuffles no 1-byte element type");
  std::mt19937_64 rng(c.num("seed"));
  const Bytes w = random_codes(n * k, rng);
  impl::Invocation inv(op, *ctx.be);
  inv.input(&impl::Call::a, w, n, k, k, *dtype, Layout::kRowMajor);
  inv.output(&impl::Call::out, n * k, n, k, 0, *dtype, Layout::kAiterShuffle16x16);
  impl::Call call;
  call.m = n;
  call.k = k;
  tag_op(ctx, op);
  ctx.tag("layout:aiter_preshuffle");
  inv.run(call);
  return compare_codes("preshuffled weight", Format::kE4M3FN, n, k, shuffle_weight(w, n, k, 1),
                       inv.read(&impl::Call::out));
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
  const OpLayout layout = op_layout(c, op, ctx);
  const Operands o = exact_operands(op, m, n, k, c.num("seed"), true, case_types(ctx, c, op));
  const GemmOutput full = run_gemm_op(*ctx.be, op, o, OutputFormat::kFp32, layout);
  // The full GEMM against the reference first: shards that agree with a wrong (or unwritten,
  // poisoned) full output would prove nothing.
  if (auto f = compare_outputs("full GEMM vs exact_gemm",
                               exact_gemm(o.problem, OutputFormat::kFp32), full)) {
    return f;
  }
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
    const GemmOutput part = run_gemm_op(*ctx.be, op, s, OutputFormat::kFp32, sl);
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
  const OpLayout layout = op_layout(c, op, ctx);
  const Operands o = exact_operands(op, m, n, k, c.num("seed"), true, case_types(ctx, c, op));
  const GemmOutput full = run_gemm_op(*ctx.be, op, o, OutputFormat::kFp32, layout);
  if (auto f = compare_outputs("full GEMM vs exact_gemm",
                               exact_gemm(o.problem, OutputFormat::kFp32), full)) {
    return f;
  }
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
    const GemmOutput part = run_gemm_op(*ctx.be, op, s, OutputFormat::kFp32, layout);
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
    if (auto f = compare_outputs(what, want, run_gemm_op(*ctx.be, op, o, OutputFormat::kFp32, l))) {
      return f;
    }
  }
  return std::nullopt;
}

}  // namespace

void add_gemm_properties(std::vector<Property>& out) {
  out.push_back({"gemm.exact",
                 "a GEMM that reads a scale from the wrong slot (order, stride, swizzle), drops a "
                 "partial K block or reads past K: exact-mode data makes any of them a located "
                 "bit difference",
                 kGemmFamilies, gemm_accepts, gen_exact, check_exact});
  out.push_back({"gemm.ordered_bound",
                 "a GEMM whose summation differs from its declared order, or that leaves the "
                 "rigorous error bound of its accumulator model on general data",
                 kGemmFamilies, gemm_accepts, gen_ordered, check_ordered});
  out.push_back({"layouts.round_trip",
                 "a scale layout or weight shuffle that is not a bijection (lost or duplicated "
                 "elements, padding holding data)",
                 0, nullptr, gen_round_trip, check_round_trip});
  out.push_back({"preshuffle.bit_exact",
                 "a device weight preshuffle that differs from AITER's shuffle_weight (16,16)",
                 family_bit(Family::kPreshuffle), preshuffle_accepts, gen_preshuffle,
                 check_preshuffle});
  out.push_back({"metamorphic.tp_column_split",
                 "a TP shard whose weight-scale block index comes from the local, not the global, "
                 "row (N % 128 != 0 shards)",
                 kGemmFamilies, gemm_fp32_accepts, gen_column_split, check_column_split});
  out.push_back({"metamorphic.tp_row_split",
                 "a row-parallel shard whose partial GEMM is not its share of the full one",
                 kGemmFamilies, row_split_accepts, gen_row_split, check_row_split});
  out.push_back({"metamorphic.padding_poison",
                 "padding of a padded scale layout read into the result (I6)", kGemmFamilies,
                 poison_accepts, gen_poison, check_poison});
}

}  // namespace mxgate::properties
