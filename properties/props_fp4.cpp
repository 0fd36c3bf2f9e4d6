// FP4 properties over the ops that quantize, dequantize or multiply MXFP4 / NVFP4 (families
// quantize_mx and dequantize with E2M1 codes, gemm_mx with an E2M1 B, and the NVFP4 families
// quantize_nvfp4, dequantize_nvfp4, gemm_nvfp4): quantizers and dequantizers bit-exact against
// reference/mx_quant.h, nvfp4_quant.h and dequant.h under the convention each op claims; GEMMs
// bit-exact on exact-mode data (against exact_gemm with the global scales' alpha), in their
// declared order and inside their accumulator model's bound on general data. Generators: K =
// 128 kb + r with r around the 16- and 32-element blocks and odd (a packed row then ends in a
// padding nibble), every E8M0 / E4M3 scale code including the E4M3 subnormals, NVFP4 global
// scales at the extremes (0, FLT_MAX, 2^-149, a bf16 global), the FP4 value classes
// (properties/fp4_values.h). Packed E2M1 is the ABI's: element 2i in the low nibble, padding
// nibbles of inputs 0xF. docs/fp4.md §12.
#include <rapidcheck.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "impl/accumulator.h"
#include "impl/calls.h"
#include "impl/harness.h"
#include "properties/extreme_scales.h"
#include "properties/fp4_cases.h"
#include "properties/fp4_operands.h"
#include "properties/fp4_values.h"
#include "properties/gemm_operands.h"
#include "properties/props.h"
#include "properties/scale_io.h"
#include "reference/accumulator_bounds.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/fp4_pack.h"
#include "reference/fp_encode.h"
#include "reference/mx_quant.h"
#include "reference/nvfp4_quant.h"
#include "reference/quant_conventions.h"

namespace mxgate::properties {

namespace {

// ---- quantize_fp4.bit_exact -----------------------------------------------------------------

// An MXFP4 quantizer (quantize_mx writing E2M1 with e8m0 1 x 32 scales) or an NVFP4 one (E4M3
// 1 x 16 scales, global scales), fp32 or bf16 input, claiming conventions the reference has a
// quantizer of.
bool quantize_fp4_accepts(const Op& op) {
  const impl::Contract& c = op.contract;
  if ((c.out_dtypes & kE2m1) == 0 || (c.a_dtypes & kFloatIn) == 0 || c.a_block_rows > 1) {
    return false;
  }
  if (op.family == Family::kQuantizeMx) {
    return c.scale_dtype == Dtype::kE8m0 && c.a_block_cols == 32 && claims_all(op, has_mxfp4);
  }
  return op.family == Family::kQuantizeNvfp4 && c.scale_dtype == Dtype::kE4m3fn &&
         c.a_block_cols == 16 && c.global_dtypes != 0 && claims_all(op, has_nvfp4);
}

rc::Gen<Fp4ValueClass> gen_fp4_class() {
  using V = Fp4ValueClass;
  return pick<V>({V::kInts, V::kNormal, V::kTies, V::kScaleCodes, V::kSaturation, V::kZeroBlock,
                  V::kWide, V::kTies, V::kScaleCodes, V::kZeroTensor, V::kNanInf, V::kSubnormalIn,
                  V::kMixed, V::kTies, V::kScaleCodes, V::kZeroBlock, V::kMixed});
}

// NVFP4 global amax modes: the tensor's amax, 2688 * 2^gexp (exact encode / decode scales),
// amax * 2^gexp (block scales saturating or going subnormal), and the extremes.
const std::vector<std::string>& global_amax_modes() {
  static const std::vector<std::string> m = {"amax", "pow2", "pow2", "scaled", "amax",
                                             "zero", "max",  "tiny", "scaled", "pow2"};
  return m;
}

float global_amax_of(const Case& c, const std::vector<float>& x, Dtype gdtype) {
  const std::string& mode = c.text("global");
  const int gexp = static_cast<int>(c.snum("gexp"));
  float g = 0.0f;
  if (mode == "amax" || mode == "scaled") {
    for (float v : x) {
      if (std::isnan(v)) {
        g = v;
        break;
      }
      g = std::max(g, std::fabs(v));
    }
    if (mode == "scaled") g = std::ldexp(g, gexp);
  } else if (mode == "pow2") {
    g = std::ldexp(2688.0f, gexp);
  } else if (mode == "zero") {
    g = 0.0f;
  } else if (mode == "max") {
    g = std::numeric_limits<float>::max();
  } else if (mode == "tiny") {
    g = std::numeric_limits<float>::denorm_min();
  } else {
    throw CaseError("case field 'global' has unknown value '" + mode + "'");
  }
  return gdtype == Dtype::kBf16 ? float_of_bf16(bf16_of(g)) : g;
}

rc::Gen<Case> gen_quantize_fp4(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    const impl::Contract& ct = op->contract;
    return rc::gen::apply(
        [op](const std::string& conv, const std::string& input, std::size_t rows, std::size_t cols,
             Fp4ValueClass vc, uint64_t seed, const std::string& global, int gexp,
             const std::string& gdtype, std::size_t layout) {
          Case c("quantize_fp4.bit_exact");
          c.set("op", op->name).set("conv", conv).set("input", input);
          c.set("rows", fit_dim(rows, op->contract.m)).set("cols", cols);
          c.set("values", to_string(vc)).set("seed", seed);
          if (nvfp4_op(*op)) {
            c.set("global", global).set("gexp", std::to_string(gexp)).set("gdtype", gdtype);
            c.set("layout", layout_name(*op, layout));
          }
          return c;
        },
        pick(ct.conventions), gen_float_dtype(ct.a_dtypes), range(1, 4), gen_k_fp4(ct.k, 2),
        gen_fp4_class(), gen_seed(), pick(global_amax_modes()),
        pick<int>({0, 3, -4, 9, -11, 17, -20, 1, -1}), gen_global_dtype(*op), range(0, 3));
  });
}

struct Fp4Quantized {
  std::vector<uint8_t> codes;   // rows x cols, one per byte
  std::vector<uint8_t> scales;  // logical row-major
};

Fp4Quantized run_quantize_fp4(const Context& ctx, const Op& op, const Case& c,
                              const std::vector<float>& x, const std::vector<uint16_t>& bf16,
                              bool bf16_in, std::size_t rows, std::size_t cols,
                              std::optional<float> global, Dtype gdtype, Layout layout) {
  impl::Invocation inv(op, ctx.run());
  const std::size_t sc = ceil_div(cols, block_of(op));
  uint64_t ld = 0;
  const std::size_t scale_bytes = stored_size(layout, rows, sc, op.contract.a_scale_ld_align, &ld);
  if (bf16_in) {
    inv.input(&impl::Call::a, bytes_of(bf16), rows, cols, cols, Dtype::kBf16, Layout::kRowMajor);
  } else {
    inv.input(&impl::Call::a, bytes_of(x), rows, cols, cols, Dtype::kF32, Layout::kRowMajor);
  }
  if (global) {
    inv.input(&impl::Call::a_global, global_bytes(*global, gdtype), 1, 1, 1, gdtype,
              Layout::kRowMajor);
  }
  impl::Call call = impl::quantize_call(inv, rows, cols, Dtype::kE2m1,
                                        {sc, ld, scale_bytes, op.contract.scale_dtype, layout});
  call.convention = c.text("conv");
  return {unpack_fp4(inv.run_and_read(call, &impl::Call::out), rows, cols, NibbleOrder::kLowFirst),
          load_scales<uint8_t>(layout, rows, sc, inv.read(&impl::Call::out_scale),
                               op.contract.a_scale_ld_align)};
}

// The reference's codes and scales; an input the convention leaves undefined (a NaN where its
// E2M1 cast names no code) is outside what can be checked: Unsupported, reported.
Fp4Quantized reference_quantize(const Op& op, const Convention& conv, const std::vector<float>& x,
                                std::size_t rows, std::size_t cols, std::optional<float> global,
                                Rounding rounding) {
  try {
    if (nvfp4_op(op)) {
      NvFp4Policy p = *nvfp4_policy(conv);
      p.element.rounding = rounding;
      const NvFp4Quantized q = quantize_nvfp4(x, rows, cols, p, global);
      return {q.data, q.scales};
    }
    MxPolicy p = *mx_policy(conv, Format::kE2M1);
    p.element.rounding = rounding;
    const MxQuantized q = quantize_mx(x, rows, cols, Format::kE2M1, p);
    return {q.data, q.scales};
  } catch (const UndefinedEncoding& e) {
    throw impl::Unsupported(std::string(conv.name) + " defines no code here: " + e.what());
  }
}

std::optional<Failure> check_quantize_fp4(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const Convention* conv = find_convention(c.text("conv"));
  if (conv == nullptr || !(nvfp4_op(op) ? has_nvfp4(*conv) : has_mxfp4(*conv))) {
    throw CaseError("case field 'conv': " + c.text("conv") + " has no " +
                    (nvfp4_op(op) ? "NVFP4" : "MXFP4") + " quantizer in the reference");
  }
  const bool bf16_in = bf16_field(c, "input");
  const std::size_t rows = c.num("rows"), cols = c.num("cols");
  const auto vc = enum_field<Fp4ValueClass>(c, "values", parse_fp4_value_class);
  const int gexp = c.has("gexp") ? static_cast<int>(c.snum("gexp")) : 0;
  std::vector<float> x = make_fp4_values(vc, rows, cols, block_of(op), gexp, c.num("seed"));
  std::vector<uint16_t> bf16;
  if (bf16_in) {
    for (float& v : x) {
      bf16.push_back(bf16_of(v));
      v = float_of_bf16(bf16.back());
    }
  }
  std::optional<float> global;
  Dtype gdtype = Dtype::kF32;
  Layout layout = Layout::kRowMajor;
  if (nvfp4_op(op)) {
    gdtype = global_dtype_field(c);
    global = global_amax_of(c, x, gdtype);
    layout = layout_field(c);
    ctx.tag("layout:" + c.text("layout"));
    if (*global == 0.0f) ctx.tag("nvfp4:global_zero");
    if (c.text("global") == "max" || c.text("global") == "tiny") ctx.tag("nvfp4:global_extreme");
    if (gdtype == Dtype::kBf16) ctx.tag("nvfp4:global_bf16");
  }
  const Fp4Quantized want =
      reference_quantize(op, *conv, x, rows, cols, global, Rounding::kNearestEven);
  ctx.tag("op:" + op.name);
  tag_shape(ctx, rows, 0, cols);
  tag_k(ctx, cols);
  if (ctx.coverage != nullptr) {
    const Fp4Quantized away =
        reference_quantize(op, *conv, x, rows, cols, global, Rounding::kNearestAway);
    if (away.codes != want.codes) ctx.tag("e2m1:tie");
    for (uint8_t code : want.codes) {
      if ((code & 7) == 7) {
        ctx.tag("e2m1:saturated");
        break;
      }
    }
    if (nvfp4_op(op)) {
      tag_e4m3_scales(ctx, want.scales);
    } else {
      tag_e8m0(ctx, want.scales);
    }
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t k0 = 0; k0 < cols; k0 += block_of(op)) {
        bool zero = true;
        for (std::size_t k = k0; k < std::min(cols, k0 + block_of(op)); ++k) {
          zero = zero && x[r * cols + k] == 0.0f;
        }
        if (zero) ctx.tag("fp4:zero_block");
      }
    }
  }
  const Fp4Quantized got =
      run_quantize_fp4(ctx, op, c, x, bf16, bf16_in, rows, cols, global, gdtype, layout);
  const std::size_t sc = ceil_div(cols, block_of(op));
  if (auto f = compare_codes(nvfp4_op(op) ? "e4m3 scale bytes" : "e8m0 scale bytes",
                             nvfp4_op(op) ? Format::kE4M3FN : Format::kE8M0, rows, sc, want.scales,
                             got.scales)) {
    return f;
  }
  return compare_codes("e2m1 codes", Format::kE2M1, rows, cols, want.codes, got.codes);
}

// ---- dequantize_fp4.bit_exact ---------------------------------------------------------------

bool dequantize_fp4_accepts(const Op& op) {
  const impl::Contract& c = op.contract;
  if ((c.a_dtypes & kE2m1) == 0 || (c.out_dtypes & kFloatIn) == 0 || c.a_block_rows > 1) {
    return false;
  }
  if (op.family == Family::kDequantize)
    return c.scale_dtype == Dtype::kE8m0 && c.a_block_cols == 32;
  return op.family == Family::kDequantizeNvfp4 && c.scale_dtype == Dtype::kE4m3fn &&
         c.a_block_cols == 16 && c.global_dtypes != 0;
}

rc::Gen<Case> gen_dequantize_fp4(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    const impl::Contract& ct = op->contract;
    return rc::gen::apply(
        [op](const std::string& out, std::size_t rows, std::size_t cols, const std::string& scales,
             uint64_t seed, const std::string& global, const std::string& gdtype, int ld_extra) {
          Case c("dequantize_fp4.bit_exact");
          c.set("op", op->name).set("out", out);
          c.set("rows", fit_dim(rows, op->contract.m)).set("cols", cols);
          c.set("scales", scales).set("seed", seed);
          if (nvfp4_op(*op)) c.set("global", global).set("gdtype", gdtype);
          if (ld_extra != 0) c.set("scale_ld", ld_extra);
          return c;
        },
        gen_float_dtype(ct.out_dtypes), range(1, 4), gen_k_fp4(ct.k, 2),
        pick<std::string>({"every", "normal", "every"}), gen_seed(), pick(fp4_global_modes()),
        gen_global_dtype(*op), gen_scale_ld(*op));
  });
}

// Scale bytes: MXFP4 "every" = the e8m0 extremes 0x00 0x01 0xFE 0xFF and random bytes, "normal"
// = 118..136; NVFP4 "every" = all 128 E4M3 codes 0x00..0x7F in turn from a random start (every
// code once per 128 scales), "normal" = 0x30..0x50.
std::vector<uint8_t> fp4_scale_bytes(bool nv, const std::string& cls, std::size_t count,
                                     std::mt19937_64& rng) {
  if (cls != "every" && cls != "normal") {
    throw CaseError("case field 'scales' must be every or normal");
  }
  std::vector<uint8_t> out(count);
  const uint64_t start = rng();
  for (std::size_t i = 0; i < count; ++i) {
    if (nv) {
      out[i] = cls == "every" ? static_cast<uint8_t>((start + i * 37) % 128)
                              : static_cast<uint8_t>(0x30 + rng() % 0x21);
    } else if (cls == "every") {
      static constexpr uint8_t kExtreme[] = {0x00, 0x01, 0xFE, 0xFF, 0x7F, 0x80};
      out[i] = (rng() & 1) ? kExtreme[rng() % 6] : static_cast<uint8_t>(rng());
    } else {
      out[i] = static_cast<uint8_t>(118 + rng() % 19);
    }
  }
  return out;
}

std::optional<Failure> check_dequantize_fp4(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const bool nv = nvfp4_op(op);
  const std::size_t rows = c.num("rows"), cols = c.num("cols");
  const bool bf16_out = bf16_field(c, "out");
  std::mt19937_64 rng(c.num("seed"));
  std::vector<uint8_t> codes(rows * cols);
  for (uint8_t& v : codes) v = static_cast<uint8_t>(rng() & 0xF);
  const std::size_t sc = ceil_div(cols, block_of(op));
  const std::vector<uint8_t> scales = fp4_scale_bytes(nv, c.text("scales"), rows * sc, rng);
  float global = 1.0f, unused = 1.0f;
  Dtype gdtype = Dtype::kF32;
  if (nv) {
    gdtype = global_dtype_field(c);
    pick_globals(c.text("global"), c.num("seed"), global, unused);
    if (gdtype == Dtype::kBf16) global = float_of_bf16(bf16_of(global));
  }
  ctx.tag("op:" + op.name);
  tag_shape(ctx, rows, 0, cols);
  tag_k(ctx, cols);
  if (nv) {
    tag_e4m3_scales(ctx, scales, impl::to_string(op.family));
  } else {
    tag_e8m0(ctx, scales);
  }
  impl::Invocation inv(op, ctx.run());
  const Layout sl = Layout::kRowMajor;
  if ((op.contract.a_scale_layouts & impl::layout_bit(sl)) == 0) {
    throw impl::Unsupported(op.name + " reads no row-major scales");
  }
  const StoredScales<uint8_t> stored = store_scales<uint8_t>(
      sl, rows, sc, scales, op.contract.a_scale_ld_align, 0xFF, scale_ld_field(ctx, c));
  inv.input(&impl::Call::a, pack_fp4(codes, rows, cols, NibbleOrder::kLowFirst, 0xF), rows, cols,
            cols, Dtype::kE2m1, Layout::kRowMajor);
  inv.input(&impl::Call::a_scale, stored.values, rows, sc, stored.ld, op.contract.scale_dtype, sl);
  if (nv) {
    inv.input(&impl::Call::a_global, global_bytes(global, gdtype), 1, 1, 1, gdtype,
              Layout::kRowMajor);
  }
  const OutputFormat format = bf16_out ? OutputFormat::kBf16 : OutputFormat::kFp32;
  const impl::Call call = impl::rows_call(inv, rows, cols, out_dtype(format));
  const GemmOutput got =
      gemm_output_of(inv.run_and_read(call, &impl::Call::out), rows, cols, format);
  GemmOutput want{rows, cols, format, {}, {}};
  if (nv) {
    const NvFp4Quantized q{rows, cols, false, codes, scales, 1.0f, global};
    if (bf16_out) {
      want.bf16 = dequantize_nvfp4_bf16(q);
    } else {
      want.fp32 = dequantize_nvfp4(q);
    }
  } else {
    const MxQuantized q{rows, cols, Format::kE2M1, codes, scales};
    const std::string name =
        op.contract.conventions.empty() ? "ocp_mx" : op.contract.conventions[0];
    const E8m0Decode rule = require_convention(name).e8m0_decode;
    if (bf16_out) {
      want.bf16 = dequantize_mx_bf16(q, rule);
    } else {
      want.fp32 = dequantize_mx(q, rule);
    }
  }
  return compare_outputs(bf16_out ? "dequantized bf16" : "dequantized fp32", want, got);
}

// ---- gemm_fp4.exact, gemm_fp4.ordered_bound -------------------------------------------------

// A's element formats of an FP4 GEMM op: e2m1 first, e4m3fn (MXFP8 x MXFP4) where it takes both.
rc::Gen<std::string> gen_a_format(const Op& op) {
  const bool e2m1 = (op.contract.a_dtypes & kE2m1) != 0;
  const bool e4m3 = !nvfp4_op(op) && (op.contract.a_dtypes & dtype_bit(Dtype::kE4m3fn)) != 0;
  if (e2m1 && e4m3) return pick<std::string>({"e2m1", "e2m1", "e4m3fn"});
  return rc::gen::just<std::string>(e2m1 ? "e2m1" : "e4m3fn");
}

Dtype a_format(const Case& c) {
  const auto d = impl::parse_dtype(c.text("a"));
  if (!d || (*d != Dtype::kE2m1 && *d != Dtype::kE4m3fn)) {
    throw CaseError("case field 'a' must be e2m1 or e4m3fn");
  }
  return *d;
}

// gemm_fp4.exact plants the NVFP4 extreme scales (UE4M3 0x00 / 0x01 / 0x7E, fp32 globals
// 2^-127 x 2^127: extreme_scales.h) in one NVFP4 case of two (field `scales=extreme`, absent
// otherwise, so earlier cases and regression files read as before).
rc::Gen<Case> gen_gemm_fp4(std::string_view property, const Ops& ops) {
  return gen_over_ops(ops, [property](const Op* op) {
    const impl::Contract& ct = op->contract;
    const bool extremes = property == "gemm_fp4.exact" && nvfp4_op(*op);
    return rc::gen::apply(
        [op, property](std::size_t m, std::size_t n, std::size_t k, std::size_t layout,
                       const std::string& out, uint64_t seed, const std::string& a,
                       const std::string& global, const std::string& gdtype, bool extreme,
                       int ld_extra) {
          Case c{std::string(property)};
          c.set("op", op->name).set("m", m).set("n", n).set("k", k);
          c.set("layout", layout_name(*op, layout)).set("out", out).set("seed", seed);
          c.set("a", a);
          if (nvfp4_op(*op)) c.set("global", global).set("gdtype", gdtype);
          if (extreme) c.set("scales", "extreme");
          if (ld_extra != 0 && c.text("layout") == "row_major") c.set("scale_ld", ld_extra);
          return c;
        },
        gen_m(ct.m), gen_n(ct.n), gen_k_fp4(ct.k, 3), pick<std::size_t>({0, 1, 1}),
        gen_float_dtype(ct.out_dtypes), gen_seed(), gen_a_format(*op), pick(fp4_global_modes()),
        gen_global_dtype(*op), extremes ? pick<bool>({false, true}) : rc::gen::just(false),
        gen_scale_ld(*op));
  });
}

rc::Gen<Case> gen_exact_fp4(const Context&, const Ops& ops) {
  return gen_gemm_fp4("gemm_fp4.exact", ops);
}
rc::Gen<Case> gen_ordered_fp4(const Context&, const Ops& ops) {
  return gen_gemm_fp4("gemm_fp4.ordered_bound", ops);
}

struct GemmCase {
  std::size_t m, n, k;
  OutputFormat format;
  Layout layout;
  Dtype a;
  Dtype gdtype;
};

GemmCase gemm_case_of(const Context& ctx, const Op& op, const Case& c) {
  GemmCase g{c.num("m"),
             c.num("n"),
             c.num("k"),
             bf16_field(c, "out") ? OutputFormat::kBf16 : OutputFormat::kFp32,
             layout_field(c),
             a_format(c),
             nvfp4_op(op) ? global_dtype_field(c) : Dtype::kF32};
  ctx.tag("op:" + op.name);
  ctx.tag("layout:" + c.text("layout"));
  tag_shape(ctx, g.m, g.n, g.k);
  tag_k(ctx, g.k);
  if (g.a == Dtype::kE4m3fn) ctx.tag("fp4:mixed_operands");
  return g;
}

void tag_operand_scales(const Context& ctx, const Fp4Operands& o) {
  if (o.nvfp4) {
    tag_e4m3_scales(ctx, o.a_scales, "gemm_nvfp4");
    tag_e4m3_scales(ctx, o.b_scales, "gemm_nvfp4");
  } else {
    tag_e8m0(ctx, o.a_scales);
  }
}

std::optional<Failure> check_exact_fp4(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const GemmCase g = gemm_case_of(ctx, op, c);
  const std::string global = nvfp4_op(op) ? c.text("global") : "one";
  Fp4Operands o = fp4_exact_operands(op, g.a, g.m, g.n, g.k, c.num("seed"), global, g.gdtype);
  if (c.has("scales")) {
    if (c.text("scales") != "extreme" || !nvfp4_op(op)) {
      throw CaseError("case field 'scales' must be extreme, on an NVFP4 GEMM");
    }
    for (const std::string& code : plant_extreme_nvfp4_scales(o, c.num("seed"))) {
      ctx.tag("gemm_nvfp4:" + code);
    }
  }
  tag_operand_scales(ctx, o);
  return compare_outputs(op.name + " vs exact_gemm (exact mode)", exact_gemm(o.problem, g.format),
                         run_fp4_gemm_op(ctx.run(), op, o, g.format, g.layout, g.gdtype, 0xFF,
                                         scale_ld_field(ctx, c)));
}

// An op that declares its order follows it bit for bit; every op stays inside the bound of its
// accumulator model (impl/accumulator.h), alpha included (gemm_oracle.h compute_bounds).
std::optional<Failure> check_ordered_fp4(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const GemmCase g = gemm_case_of(ctx, op, c);
  const std::string global = nvfp4_op(op) ? c.text("global") : "one";
  const Fp4Operands o =
      fp4_general_operands(op, g.a, g.m, g.n, g.k, c.num("seed"), global, g.gdtype);
  tag_operand_scales(ctx, o);
  const GemmOutput got =
      run_fp4_gemm_op(ctx.run(), op, o, g.format, g.layout, g.gdtype, 0xFF, scale_ld_field(ctx, c));
  if (op.contract.order) {
    if (auto f = compare_outputs(op.name + " vs ordered_gemm (declared order)",
                                 ordered_gemm(o.problem, order_model(op, g.format)), got)) {
      return f;
    }
  }
  const AccumulatorModel model = impl::accum_model_for(op);
  const BoundVerdict v = check_bound(compute_bounds(o.problem, model, g.format), got);
  if (v.ok()) return std::nullopt;
  return Failure{
      op.name + " outside the error bound of accumulator " + model.name + ": " + v.summary(),
      std::nullopt, std::nullopt, got};
}

bool gemm_fp4_accepts(const Op& op) { return is_fp4_gemm(op); }

}  // namespace

void add_fp4_properties(std::vector<Property>& out) {
  out.push_back(
      {"quantize_fp4.bit_exact",
       "an MXFP4 / NVFP4 quantizer whose scale bytes or packed E2M1 codes differ from its "
       "convention's reference (nibble order, E2M1 ties, the NVFP4 block of 16, the "
       "global scale's dtype, a NaN scale for a zero block)",
       family_bit(Family::kQuantizeMx) | family_bit(Family::kQuantizeNvfp4), quantize_fp4_accepts,
       gen_quantize_fp4, check_quantize_fp4});
  out.push_back({"dequantize_fp4.bit_exact",
                 "an MXFP4 / NVFP4 dequantizer that unpacks the wrong nibble, decodes an E8M0 or "
                 "E4M3 (subnormal) scale wrongly, or applies the global scale twice or not at all",
                 family_bit(Family::kDequantize) | family_bit(Family::kDequantizeNvfp4),
                 dequantize_fp4_accepts, gen_dequantize_fp4, check_dequantize_fp4});
  out.push_back({"gemm_fp4.exact",
                 "an FP4 GEMM that reads a packed nibble or a scale from the wrong slot, applies "
                 "scale padding of the K tail, decodes an extreme UE4M3 scale or global scale "
                 "wrongly, or multiplies by the wrong global scales: exact-mode data makes any "
                 "of them a located bit difference",
                 family_bit(Family::kGemmMx) | family_bit(Family::kGemmNvfp4), gemm_fp4_accepts,
                 gen_exact_fp4, check_exact_fp4});
  out.push_back({"gemm_fp4.ordered_bound",
                 "an FP4 GEMM whose summation differs from its declared order, that decodes an "
                 "E4M3 scale code (a subnormal one) wrongly, or that leaves its accumulator "
                 "model's bound on general data",
                 family_bit(Family::kGemmMx) | family_bit(Family::kGemmNvfp4), gemm_fp4_accepts,
                 gen_ordered_fp4, check_ordered_fp4});
}

}  // namespace mxgate::properties
