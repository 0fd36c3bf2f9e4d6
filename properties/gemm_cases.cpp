// The case pieces the GEMM properties share (gemm_cases.h).
#include "properties/gemm_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "properties/props.h"
#include "properties/shape_catalog.h"

namespace mxgate::properties {

namespace {

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

// Per-rank (N, K) of catalog layers the op can run, small enough for the host models.
// Computed once per contract clause that decides them: generators ask on every case. Keyed by
// those values, not by the op's address: an in-process implementation (a Python adapter's,
// libmxgate.so) lives for one check, and a later op of another contract may take its address.
const std::vector<std::pair<std::size_t, std::size_t>>& catalog_shapes(const Op& op) {
  const impl::Contract& c = op.contract;
  using Key = std::tuple<int, std::size_t, std::size_t, uint64_t, uint64_t, uint64_t, uint64_t,
                         uint64_t, uint64_t>;
  const Key key{static_cast<int>(op.family),
                c.b_block_rows,
                c.a_block_cols,
                c.n.align,
                c.n.min,
                c.n.max,
                c.k.align,
                c.k.min,
                c.k.max};
  static std::mutex mutex;
  static std::map<Key, std::vector<std::pair<std::size_t, std::size_t>>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto it = cache.find(key);
  if (it != cache.end()) return it->second;
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
  return cache[key] = std::vector<std::pair<std::size_t, std::size_t>>(out.begin(), out.end());
}

bool names_types(impl::DtypeMask mask) {
  return mask != 0 && fp8_element_types(mask) != std::vector<impl::Dtype>{impl::Dtype::kE4m3fn};
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

}  // namespace

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

// A GEMM op the properties can feed: FP8 codes (E4M3FN, E5M2 or the FNUZ pair), each operand a type
// its contract accepts (bf16 for gemm_bf16), in row-major A, B row-major or AITER-shuffled (with
// the shuffle's N % 16, K % 32), fp32 scales for block GEMMs, e8m0 for MX, a scale layout, fp32 or
// bf16 output, or only FP8 output (plugin.h revision 4: every case of such an op takes it).
// Returns the first clause `op` misses, "" when it has them all.
std::string gemm_declines(const Op& op) {
  const impl::Contract& c = op.contract;
  const GemmKind kind = gemm_kind(op.family);
  if (kind == GemmKind::kBf16) {
    const impl::DtypeMask bf16 = impl::dtype_bit(impl::Dtype::kBf16);
    if ((c.a_dtypes & bf16) == 0 || (c.b_dtypes & bf16) == 0) return "bf16 A and B";
  } else if (fp8_element_types(c.a_dtypes).empty() || fp8_element_types(c.b_dtypes).empty()) {
    return "FP8 A and B (FP4 / FP6 GEMMs are the fp4 properties')";
  }
  if (!plain_out(op) && !fp8_out_only(op)) return "fp32, bf16 or FP8 output";
  if ((c.b_layouts & (layout_bit(Layout::kRowMajor) | layout_bit(Layout::kAiterShuffle16x16))) ==
      0) {
    return "B row-major or AITER-shuffled";
  }
  if (preshuffled_b(op) && (c.n.align % 16 != 0 || c.k.align % 32 != 0)) {
    return "N % 16 and K % 32 for a shuffled B";
  }
  if (kind == GemmKind::kMx &&
      !(c.scale_dtype == impl::Dtype::kE8m0 && c.a_block_cols == 32 && c.b_block_cols == 32)) {
    return "e8m0 scales of 1 x 32 blocks";
  }
  if (kind == GemmKind::kBlock && c.scale_dtype != impl::Dtype::kF32) return "fp32 block scales";
  return "";
}

bool gemm_accepts(const Op& op) { return gemm_declines(op).empty(); }

bool plain_out(const Op& op) {
  return (op.contract.out_dtypes &
          (impl::dtype_bit(impl::Dtype::kF32) | impl::dtype_bit(impl::Dtype::kBf16))) != 0;
}

bool fp8_out_only(const Op& op) {
  return !plain_out(op) && impl::takes_fp8_out(op.family) &&
         (op.contract.out_dtypes & impl::kFp8OutDtypes) != 0;
}

bool fp32_out(const Op& op) {
  return (op.contract.out_dtypes & impl::dtype_bit(impl::Dtype::kF32)) != 0;
}

std::string gemm_fp32_declines(const Op& op) {
  const std::string why = gemm_declines(op);
  return !why.empty() || fp32_out(op) ? why : "fp32 output";
}

bool gemm_fp32_accepts(const Op& op) { return gemm_fp32_declines(op).empty(); }

bool padded_layout(Layout l) { return l == Layout::kTmaColMajor || l == Layout::kNvSwizzle128x4; }

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

namespace {

std::string layout_choice(const Op& op, int pick) {
  const std::vector<Layout> ls = scale_layouts(op);
  return std::string(impl::to_string(ls[static_cast<std::size_t>(pick) % ls.size()]));
}

}  // namespace

// The output formats a case picks from: fp32 three times as often as bf16 (where the op writes
// both); with `fp8`, half the cases of an op that writes FP8 take its first FP8 dtype, and every
// case of an op that writes only FP8 (a caller passing fp8 false for such an op gets its FP8 too:
// the op writes nothing else).
rc::Gen<std::string> gen_out(const Op& op, bool fp8) {
  const bool f32 = fp32_out(op);
  const bool bf16 = (op.contract.out_dtypes & impl::dtype_bit(impl::Dtype::kBf16)) != 0;
  const std::vector<impl::Dtype> fp8s =
      impl::takes_fp8_out(op.family) ? impl::dtypes_in(op.contract.out_dtypes & impl::kFp8OutDtypes)
                                     : std::vector<impl::Dtype>{};
  if (!f32 && !bf16 && !fp8s.empty()) {
    return rc::gen::just<std::string>(std::string(impl::to_string(fp8s.front())));
  }
  if (fp8 && !fp8s.empty()) {
    const std::string f(impl::to_string(fp8s.front()));
    const std::string plain = f32 ? "fp32" : "bf16";
    return pick<std::string>({plain, plain, bf16 ? "bf16" : plain, f, f, f});
  }
  if (f32 && bf16) return pick<std::string>({"fp32", "fp32", "fp32", "bf16"});
  return rc::gen::just<std::string>(f32 ? "fp32" : "bf16");
}

rc::Gen<std::string> gen_out_scale() {
  return pick<std::string>(
      {"2", "0.5", "4", "0.25", "8", "0.125", "16", "0.0625", "0.75", "1.5", "3", "0.3"});
}

std::optional<impl::Dtype> case_fp8_out(const Case& c) {
  const std::string& o = c.text("out");
  const auto d = impl::parse_dtype(o);
  if (d && impl::is_fp8_out(*d)) return d;
  return std::nullopt;
}

float out_scale_factor(const Case& c) {
  const std::string& text = c.text("out_scale");
  char* end = nullptr;
  const float f = std::strtof(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(f) || !(f > 0.0f)) {
    throw CaseError("case field 'out_scale' must be a finite positive number, not '" + text + "'");
  }
  return f;
}

float scale_result_for(std::span<const float> v, float factor) {
  float amax = 0.0f;
  for (float x : v) {
    if (std::isfinite(x)) amax = std::max(amax, std::fabs(x));
  }
  // ilogb reads the exponent off the bits (subnormals by their leading bit): no log2.
  const int t = amax == 0.0f ? 0 : std::clamp(3 - std::ilogb(amax), -120, 120);
  return std::ldexp(factor, t);
}

OpLayout op_layout(const Case& c, const Op& op, const Context& ctx) {
  OpLayout l;
  const std::string& layout = c.text("layout");
  const auto parsed = impl::parse_layout(layout);
  if (!parsed || *parsed == Layout::kAiterShuffle16x16) {
    throw CaseError("case field 'layout' has unknown value '" + layout + "'");
  }
  l.scales = *parsed;
  l.e8m0_pad = static_cast<uint8_t>(c.num_or("pad", 0xFF));
  l.f32_pad = c.num_or("pad", 0xFF) == 0 ? 0.0f : std::numeric_limits<float>::quiet_NaN();
  l.scale_ld_extra = scale_ld_field(ctx, c);
  ctx.tag("layout:" + layout);
  if (preshuffled_b(op)) ctx.tag("layout:aiter_preshuffle");
  return l;
}

OutputFormat out_format(const Case& c) {
  const std::string& o = c.text("out");
  if (o == "fp32") return OutputFormat::kFp32;
  if (o == "bf16") return OutputFormat::kBf16;
  if (case_fp8_out(c)) {
    throw CaseError("case field 'out' " + o +
                    ": FP8 output is for gemm.exact and gemm.ordered_bound only");
  }
  throw CaseError("case field 'out' must be fp32, bf16, e4m3fn or e5m2, not '" + o + "'");
}

// The FP8 element types of A and B a case of `op` picks from (its contract's, E4M3FN first: the
// shrink target); the case names them (fields a_dtype, b_dtype) only where the op accepts more
// than E4M3FN, so cases and regression files of E4M3FN-only ops read as before.
rc::Gen<TypePick> gen_types(const Op& op) {
  if (op.family == Family::kGemmBf16) return rc::gen::just(TypePick{0, 0});
  const std::size_t na = fp8_element_types(op.contract.a_dtypes).size();
  const std::size_t nb = fp8_element_types(op.contract.b_dtypes).size();
  return rc::gen::pair(range(0, std::max<std::size_t>(na, 1)),
                       range(0, std::max<std::size_t>(nb, 1)));
}

Case gemm_case(std::string_view property, const Op& op, Shape3 s, int layout_pick,
               std::string_view out, uint64_t seed, TypePick types) {
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
rc::Gen<Shape3> gen_contract_shape(const impl::Contract& c, int max_blocks) {
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
    if (!d || fp8_element_types(impl::dtype_bit(*d)).empty()) {
      throw CaseError("case field '" + std::string(field) +
                      "' must be e4m3fn, e5m2, e4m3fnuz or e5m2fnuz, not '" + text + "'");
    }
    return *d;
  };
  const ElementTypes t{read("a_dtype"), read("b_dtype")};
  ctx.tag("dtype:" + std::string(impl::to_string(t.a)) + "x" + std::string(impl::to_string(t.b)));
  return t;
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

}  // namespace mxgate::properties
