// GEMM and layout properties: every GEMM kernel bit-exact on exact-mode data (fingerprint
// scales), in its declared order and inside the bound on general data; scale layouts and the
// weight preshuffle as bijections; metamorphic TP column / row splits and poisoned padding.
// Shapes come from the kernels' contracts (props.h gen_m/gen_n/gen_k) and from the production
// catalog (corpus/shapes/production_shapes.tsv): per-rank N x K of TP-sharded models.
#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "gpu/contract.h"
#include "properties/gemm_operands.h"
#include "properties/props.h"
#include "properties/shape_catalog.h"
#include "reference/format.h"
#include "reference/scale_layout.h"
#include "reference/weight_shuffle.h"

namespace mxgate::properties {

namespace {

using gpu::Kernel;
using Shape3 = std::tuple<std::size_t, std::size_t, std::size_t>;

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

// Per-rank (N, K) of catalog layers the kernel can run, small enough for the host models.
// Computed once per kernel: generators ask for them on every case.
const std::vector<std::pair<std::size_t, std::size_t>>& catalog_shapes(Kernel kernel) {
  static const auto per_kernel = [] {
    std::array<std::vector<std::pair<std::size_t, std::size_t>>, gpu::kKernelCount> all;
    for (Kernel k : gpu::all_kernels()) {
      const gpu::Contract& c = gpu::contract(k);
      std::set<std::pair<std::size_t, std::size_t>> out;
      for (const ShapeEntry& e : catalog()) {
        const bool fits = is_mx(k)      ? (e.is_mx() || e.k % 32 == 0)
                          : is_block(k) ? e.is_block128()
                                        : true;
        if (!fits || e.n % c.n_align != 0 || e.k % c.k_align != 0) continue;
        if (e.n * e.k > (std::size_t{1} << 23)) continue;
        out.insert({e.n, e.k});
      }
      all[static_cast<std::size_t>(k)].assign(out.begin(), out.end());
    }
    return all;
  }();
  return per_kernel[static_cast<std::size_t>(kernel)];
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

// The GEMMs the backend runs, the most permissive contract first: shrinking moves toward it
// (gemm_mx_dequant takes any K % 32, gemm_blockscale any K). The scaled kernels with optional
// layouts come up more often than bf16.
std::vector<Kernel> supported_gemms(const Context& ctx) {
  std::vector<Kernel> out;
  for (Kernel k :
       {Kernel::kGemmMxDequant, Kernel::kGemmBlockscale, Kernel::kGemmBlockscaleBpreshuffle,
        Kernel::kGemmMxDotScaled, Kernel::kGemmBf16, Kernel::kGemmBlockscaleBpreshuffle,
        Kernel::kGemmMxDequant, Kernel::kGemmBlockscale}) {
    if (ctx.be->supports(k)) out.push_back(k);
  }
  return out;
}

std::string layout_choice(Kernel k, int pick) {
  if (is_mx(k)) return pick % 2 ? "nv_swizzle_128x4" : "row_major";
  if (k == Kernel::kGemmBlockscaleBpreshuffle) return pick % 2 ? "tma_col_major" : "col_major";
  return "row_major";
}

LaunchLayout launch_layout(const Case& c, Kernel k, const Context& ctx) {
  LaunchLayout l;
  l.faults = ctx.kernel_faults();
  const std::string& layout = c.text("layout");
  const auto parsed = parse_scale_layout(layout);
  if (!parsed) throw CaseError("case field 'layout' has unknown value '" + layout + "'");
  if (layout != layout_choice(k, 0) && layout != layout_choice(k, 1)) {
    throw CaseError("layout " + layout + " is not one " + std::string(gpu::kernel_name(k)) +
                    " reads");
  }
  l.swizzled_mx_scales = *parsed == ScaleLayout::kNvSwizzle128x4;
  l.tma_aligned_as = *parsed == ScaleLayout::kTmaColMajor;
  l.mx_pad = static_cast<uint8_t>(c.num_or("pad", 0xFF));
  l.as_pad = c.num_or("pad", 0xFF) == 0 ? 0.0f : std::numeric_limits<float>::quiet_NaN();
  ctx.tag("layout:" + layout);
  if (gpu::contract(k).weight == gpu::WeightLayout::kAiterPreshuffled) {
    ctx.tag("layout:aiter_preshuffle");
  }
  return l;
}

OutputFormat out_format(const Case& c) {
  const std::string& o = c.text("out");
  if (o == "fp32") return OutputFormat::kFp32;
  if (o == "bf16") return OutputFormat::kBf16;
  throw CaseError("case field 'out' must be fp32 or bf16, not '" + o + "'");
}

Case gemm_case(std::string_view property, Kernel kernel, Shape3 s, int layout_pick,
               std::string_view out, uint64_t seed) {
  Case c{std::string(property)};
  c.set("kernel", gpu::kernel_name(kernel));
  c.set("m", std::get<0>(s)).set("n", std::get<1>(s)).set("k", std::get<2>(s));
  c.set("layout", layout_choice(kernel, layout_pick));
  c.set("out", out).set("seed", seed);
  return c;
}

// Shapes of `kernel`: contract-derived random shapes, or (1 in 8) a catalog per-rank shape with
// M in {1, 2}.
rc::Gen<Shape3> gen_shape(Kernel kernel) {
  const gpu::Contract& c = gpu::contract(kernel);
  rc::Gen<Shape3> random = rc::gen::tuple(gen_m(), gen_n(c.n_align), gen_k(c.k_align));
  const auto& cat = catalog_shapes(kernel);
  if (cat.empty()) return random;
  // 1 case in 8 takes a catalog shape; the choice shrinks toward the random shapes.
  return rc::gen::mapcat(range(0, 8), [random, cat](std::size_t i) {
    if (i < 7) return random;
    return rc::gen::apply(
        [](std::size_t m, std::pair<std::size_t, std::size_t> nk) {
          return Shape3{m, nk.first, nk.second};
        },
        range(1, 3), pick(cat));
  });
}

void check_contract_or_throw(Kernel kernel, std::size_t m, std::size_t n, std::size_t k) {
  const gpu::Contract& ct = gpu::contract(kernel);
  if (m == 0 || n == 0 || k == 0 || n % ct.n_align != 0 || k % ct.k_align != 0) {
    throw CaseError("shape M=" + std::to_string(m) + " N=" + std::to_string(n) +
                    " K=" + std::to_string(k) + " is outside the contract of " +
                    std::string(gpu::kernel_name(kernel)));
  }
}

// ---- gemm.exact -----------------------------------------------------------------------------

rc::Gen<Case> gen_exact(const Context& ctx) {
  return rc::gen::mapcat(pick(supported_gemms(ctx)), [](Kernel kernel) {
    return rc::gen::apply(
        [kernel](Shape3 s, int pick, const std::string& out, uint64_t seed) {
          return gemm_case("gemm.exact", kernel, s, pick, out, seed);
        },
        gen_shape(kernel), pick<int>({0, 1, 1}),
        pick<std::string>({"fp32", "fp32", "fp32", "bf16"}), gen_seed());
  });
}

std::optional<Failure> check_exact(const Context& ctx, const Case& c) {
  const Kernel kernel = enum_field<Kernel>(c, "kernel", gpu::parse_kernel);
  const std::size_t m = c.num("m"), n = c.num("n"), k = c.num("k");
  check_contract_or_throw(kernel, m, n, k);
  const OutputFormat fmt = out_format(c);
  const LaunchLayout layout = launch_layout(c, kernel, ctx);
  const Operands o = exact_operands(kernel, m, n, k, c.num("seed"), true);
  ctx.tag("kernel:" + std::string(gpu::kernel_name(kernel)));
  tag_shape(ctx, m, n, k);
  tag_e8m0(ctx, o.a_e8m0);
  return compare_outputs(std::string(gpu::kernel_name(kernel)) + " vs exact_gemm (exact mode)",
                         exact_gemm(o.problem, fmt), run_gemm(*ctx.be, kernel, o, fmt, layout));
}

// ---- gemm.ordered_bound ---------------------------------------------------------------------

rc::Gen<Case> gen_ordered(const Context& ctx) {
  return rc::gen::mapcat(pick(supported_gemms(ctx)), [](Kernel kernel) {
    const gpu::Contract& c = gpu::contract(kernel);
    return rc::gen::apply(
        [kernel](Shape3 s, const std::string& out, uint64_t seed) {
          return gemm_case("gemm.ordered_bound", kernel, s, 0, out, seed);
        },
        rc::gen::tuple(gen_m(), gen_n(c.n_align), gen_k(c.k_align)),
        pick<std::string>({"fp32", "fp32", "fp32", "bf16"}), gen_seed());
  });
}

std::optional<Failure> check_ordered(const Context& ctx, const Case& c) {
  const Kernel kernel = enum_field<Kernel>(c, "kernel", gpu::parse_kernel);
  const std::size_t m = c.num("m"), n = c.num("n"), k = c.num("k");
  check_contract_or_throw(kernel, m, n, k);
  const OutputFormat fmt = out_format(c);
  const LaunchLayout layout = launch_layout(c, kernel, ctx);
  const Operands o = general_operands(kernel, m, n, k, c.num("seed"));
  const GemmOutput got = run_gemm(*ctx.be, kernel, o, fmt, layout);
  ctx.tag("kernel:" + std::string(gpu::kernel_name(kernel)));
  tag_shape(ctx, m, n, k);
  const std::string name(gpu::kernel_name(kernel));
  if (auto f = compare_outputs(name + " vs ordered_gemm (declared order)",
                               ordered_gemm(o.problem, order_model(kernel, fmt)), got)) {
    return f;
  }
  const BoundVerdict v = check_bound(compute_bounds(o.problem, accum_model(kernel, fmt)), got);
  if (v.ok()) return std::nullopt;
  return Failure{name + " outside its error bound: " + v.summary(), std::nullopt, std::nullopt,
                 got};
}

// ---- layouts.round_trip ---------------------------------------------------------------------

rc::Gen<Case> gen_round_trip(const Context&) {
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

rc::Gen<Case> gen_preshuffle(const Context&) {
  return rc::gen::apply(
      [](std::size_t n, std::size_t k, uint64_t seed) {
        Case c("preshuffle.bit_exact");
        c.set("n", n).set("k", k).set("seed", seed);
        return c;
      },
      gen_n(gpu::contract(Kernel::kPreshuffleWeight).n_align),
      gen_k(gpu::contract(Kernel::kPreshuffleWeight).k_align, 2), gen_seed());
}

std::optional<Failure> check_preshuffle(const Context& ctx, const Case& c) {
  const std::size_t n = c.num("n"), k = c.num("k");
  check_contract_or_throw(Kernel::kPreshuffleWeight, 1, n, k);
  std::mt19937_64 rng(c.num("seed"));
  const Bytes w = random_codes(n * k, rng);
  gpu::Backend& be = *ctx.be;
  gpu::ScopedBuffers buffers(be);
  gpu::PreshuffleArgs a;
  a.in = buffers.make(w, "W");
  a.out = buffers.allocate(n * k, "W_shuffled");
  a.p = {n, k};
  be.run({Kernel::kPreshuffleWeight, a});
  const Bytes got = be.download(a.out);
  ctx.tag("kernel:preshuffle_weight");
  ctx.tag("layout:aiter_preshuffle");
  return compare_codes("preshuffled weight", Format::kE4M3FN, n, k, shuffle_weight(w, n, k, 1),
                       got);
}

// ---- metamorphic.tp_column_split ------------------------------------------------------------

rc::Gen<Case> gen_column_split(const Context& ctx) {
  const std::vector<std::size_t> residues = catalog_n_residues();
  return rc::gen::mapcat(pick(supported_gemms(ctx)), [residues](Kernel kernel) {
    const gpu::Contract& ct = gpu::contract(kernel);
    const std::size_t align = ct.n_align;
    return rc::gen::apply(
        [kernel, align](std::size_t tp, std::size_t res, std::size_t blocks, std::size_t m,
                        std::size_t k, uint64_t seed) {
          const std::size_t local = std::max(align, (res + 128 * blocks) / align * align);
          Case c =
              gemm_case("metamorphic.tp_column_split", kernel, {m, local * tp, k}, 0, "fp32", seed);
          c.set("tp", tp);
          return c;
        },
        range(2, 9), pick(residues), range(0, 2), pick<std::size_t>({1, 2, 3, 4, 5}),
        gen_k(ct.k_align, 1), gen_seed());
  });
}

// The GEMM of every rank's column shard (B rows [r*N/tp, (r+1)*N/tp), its scale blocks from
// the global block index, n_offset for the block kernels) concatenated equals the full GEMM.
std::optional<Failure> check_column_split(const Context& ctx, const Case& c) {
  const Kernel kernel = enum_field<Kernel>(c, "kernel", gpu::parse_kernel);
  const std::size_t m = c.num("m"), n = c.num("n"), k = c.num("k");
  const std::size_t tp = c.num("tp");
  if (tp < 1 || n % tp != 0) throw CaseError("case field 'tp' must divide N");
  const std::size_t local = n / tp;
  check_contract_or_throw(kernel, m, local, k);
  const LaunchLayout layout = launch_layout(c, kernel, ctx);
  const Operands o = exact_operands(kernel, m, n, k, c.num("seed"), true);
  const GemmOutput full = run_gemm(*ctx.be, kernel, o, OutputFormat::kFp32, layout);
  GemmOutput joined{m, n, OutputFormat::kFp32, std::vector<float>(m * n), {}};
  const std::size_t elem = o.b.size() / (n * k);
  for (std::size_t r = 0; r < tp; ++r) {
    const std::size_t n0 = r * local;
    Operands s = o;
    s.n = local;
    s.b.assign(o.b.begin() + static_cast<std::ptrdiff_t>(n0 * k * elem),
               o.b.begin() + static_cast<std::ptrdiff_t>((n0 + local) * k * elem));
    LaunchLayout sl = layout;
    if (is_mx(kernel)) {
      const std::size_t kb = (k + 31) / 32;
      s.b_e8m0.assign(o.b_e8m0.begin() + static_cast<std::ptrdiff_t>(n0 * kb),
                      o.b_e8m0.begin() + static_cast<std::ptrdiff_t>((n0 + local) * kb));
    } else if (is_block(kernel)) {
      const std::size_t kb = (k + 127) / 128;
      const std::size_t b0 = n0 / 128, b1 = (n0 + local + 127) / 128;
      s.b_f32.assign(o.b_f32.begin() + static_cast<std::ptrdiff_t>(b0 * kb),
                     o.b_f32.begin() + static_cast<std::ptrdiff_t>(b1 * kb));
      sl.n_offset = n0;
    }
    const GemmOutput part = run_gemm(*ctx.be, kernel, s, OutputFormat::kFp32, sl);
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < local; ++j)
        joined.fp32[i * n + n0 + j] = part.fp32[i * local + j];
    }
  }
  ctx.tag("kernel:" + std::string(gpu::kernel_name(kernel)));
  ctx.tag("tp:shard");
  if (local % 128 != 0) ctx.tag("tp:sub_block_shard");
  tag_shape(ctx, m, local, k);
  return compare_outputs("TP=" + std::to_string(tp) + " column shards concatenated vs full GEMM",
                         full, joined);
}

// ---- metamorphic.tp_row_split ---------------------------------------------------------------

rc::Gen<Case> gen_row_split(const Context& ctx) {
  return rc::gen::mapcat(pick(supported_gemms(ctx)), [](Kernel kernel) {
    const gpu::Contract& ct = gpu::contract(kernel);
    return rc::gen::apply(
        [kernel](std::size_t tp, std::size_t m, std::size_t n, std::size_t tail, uint64_t seed) {
          // Every shard but the last is whole 128-blocks of K; the last may end in a residue.
          const std::size_t k = 128 * (tp - 1) + tail;
          Case c = gemm_case("metamorphic.tp_row_split", kernel, {m, n, k}, 0, "fp32", seed);
          c.set("tp", tp);
          return c;
        },
        range(2, 5), gen_m(), gen_n(ct.n_align), gen_k(ct.k_align, 1), gen_seed());
  });
}

// Row-parallel: rank r holds K columns [128 r, 128 (r+1)) (the last rank the rest). On exact-mode
// data the fp32 sum of the ranks' partial GEMMs (the all-reduce) equals the full GEMM bit for bit.
std::optional<Failure> check_row_split(const Context& ctx, const Case& c) {
  const Kernel kernel = enum_field<Kernel>(c, "kernel", gpu::parse_kernel);
  const std::size_t m = c.num("m"), n = c.num("n"), k = c.num("k");
  const std::size_t tp = c.num("tp");
  if (tp < 2 || k <= 128 * (tp - 1)) throw CaseError("case field 'tp' needs K > 128 (tp - 1)");
  check_contract_or_throw(kernel, m, n, k);
  const LaunchLayout layout = launch_layout(c, kernel, ctx);
  const Operands o = exact_operands(kernel, m, n, k, c.num("seed"), true);
  const GemmOutput full = run_gemm(*ctx.be, kernel, o, OutputFormat::kFp32, layout);
  GemmOutput sum{m, n, OutputFormat::kFp32, std::vector<float>(m * n, 0.0f), {}};
  const std::size_t elem = o.a.size() / (m * k);
  for (std::size_t r = 0; r < tp; ++r) {
    const std::size_t k0 = 128 * r, k1 = r + 1 == tp ? k : k0 + 128;
    Operands s;
    s.m = m;
    s.n = n;
    s.k = k1 - k0;
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
    auto scale_cols = [](const auto& src, std::size_t rows, std::size_t per_row, std::size_t c0,
                         std::size_t c1) {
      std::remove_cvref_t<decltype(src)> out;
      for (std::size_t i = 0; i < rows; ++i) {
        out.insert(out.end(), src.begin() + static_cast<std::ptrdiff_t>(i * per_row + c0),
                   src.begin() + static_cast<std::ptrdiff_t>(i * per_row + c1));
      }
      return out;
    };
    if (is_mx(kernel)) {
      const std::size_t kb = (k + 31) / 32;
      s.a_e8m0 = scale_cols(o.a_e8m0, m, kb, k0 / 32, (k1 + 31) / 32);
      s.b_e8m0 = scale_cols(o.b_e8m0, n, kb, k0 / 32, (k1 + 31) / 32);
    } else if (is_block(kernel)) {
      const std::size_t kb = (k + 127) / 128;
      s.a_f32 = scale_cols(o.a_f32, m, kb, k0 / 128, (k1 + 127) / 128);
      s.b_f32 = scale_cols(o.b_f32, (n + 127) / 128, kb, k0 / 128, (k1 + 127) / 128);
    }
    const GemmOutput part = run_gemm(*ctx.be, kernel, s, OutputFormat::kFp32, layout);
    for (std::size_t i = 0; i < m * n; ++i) sum.fp32[i] += part.fp32[i];
  }
  ctx.tag("kernel:" + std::string(gpu::kernel_name(kernel)));
  ctx.tag("tp:row_split");
  tag_shape(ctx, m, n, k);
  return compare_outputs("TP=" + std::to_string(tp) + " row-split partial sums vs full GEMM", full,
                         sum);
}

// ---- metamorphic.padding_poison -------------------------------------------------------------

rc::Gen<Case> gen_poison(const Context& ctx) {
  std::vector<Kernel> padded;
  for (Kernel k : supported_gemms(ctx)) {
    if (is_mx(k) || k == Kernel::kGemmBlockscaleBpreshuffle) padded.push_back(k);
  }
  return rc::gen::mapcat(pick(padded), [](Kernel kernel) {
    const gpu::Contract& c = gpu::contract(kernel);
    return rc::gen::apply(
        [kernel](Shape3 s, uint64_t seed) {
          return gemm_case("metamorphic.padding_poison", kernel, s, 1, "fp32", seed);
        },
        rc::gen::tuple(gen_m(), gen_n(c.n_align), gen_k(c.k_align, 2)), gen_seed());
  });
}

// I6: the padding of a padded scale layout (swizzle columns to 4 and rows to 128, TMA rows to
// align4(M)) filled with 0x00, 0x7F or NaN gives the same output bits, equal to exact_gemm.
std::optional<Failure> check_poison(const Context& ctx, const Case& c) {
  const Kernel kernel = enum_field<Kernel>(c, "kernel", gpu::parse_kernel);
  const std::size_t m = c.num("m"), n = c.num("n"), k = c.num("k");
  check_contract_or_throw(kernel, m, n, k);
  Case zero = c;
  zero.set("pad", 0);
  const LaunchLayout clean = launch_layout(zero, kernel, ctx);
  const Operands o = exact_operands(kernel, m, n, k, c.num("seed"), true);
  const GemmOutput want = exact_gemm(o.problem, OutputFormat::kFp32);
  ctx.tag("kernel:" + std::string(gpu::kernel_name(kernel)));
  tag_shape(ctx, m, n, k);
  for (uint8_t pad : {uint8_t{0x00}, uint8_t{0x7F}, uint8_t{0xFF}}) {
    LaunchLayout l = clean;
    l.mx_pad = pad;
    l.as_pad = pad == 0 ? 0.0f : pad == 0x7F ? 1.0e30f : std::numeric_limits<float>::quiet_NaN();
    char what[96];
    std::snprintf(what, sizeof what, "output with padding 0x%02X vs exact_gemm", pad);
    if (auto f =
            compare_outputs(what, want, run_gemm(*ctx.be, kernel, o, OutputFormat::kFp32, l))) {
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
                 gen_exact, check_exact});
  out.push_back({"gemm.ordered_bound",
                 "a GEMM whose summation differs from its declared order, or that leaves the "
                 "rigorous error bound of its accumulation model on general data",
                 gen_ordered, check_ordered});
  out.push_back({"layouts.round_trip",
                 "a scale layout or weight shuffle that is not a bijection (lost or duplicated "
                 "elements, padding holding data)",
                 gen_round_trip, check_round_trip});
  out.push_back({"preshuffle.bit_exact",
                 "a device weight preshuffle that differs from AITER's shuffle_weight (16,16)",
                 gen_preshuffle, check_preshuffle});
  out.push_back({"metamorphic.tp_column_split",
                 "a TP shard whose weight-scale block index comes from the local, not the global, "
                 "row (N % 128 != 0 shards)",
                 gen_column_split, check_column_split});
  out.push_back({"metamorphic.tp_row_split",
                 "a row-parallel shard whose partial GEMM is not its share of the full one",
                 gen_row_split, check_row_split});
  out.push_back({"metamorphic.padding_poison",
                 "padding of a padded scale layout read into the result (I6)", gen_poison,
                 check_poison});
}

}  // namespace mxgate::properties
