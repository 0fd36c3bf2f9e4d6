#include "properties/gemm_operands.h"

#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "impl/accumulator.h"
#include "impl/builtin.h"
#include "impl/calls.h"
#include "impl/harness.h"
#include "properties/random_draws.h"
#include "properties/scale_io.h"
#include "reference/accumulator_exact.h"
#include "reference/dequant.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/fp_encode.h"
#include "reference/weight_shuffle.h"

namespace mxgate::properties {

using gpu::Kernel;

namespace {

// The shape and codes the MX and block operands share.
template <class Quantized>
Operands coded_operands(const Quantized& a, const Quantized& b) {
  Operands o;
  o.m = a.rows;
  o.n = b.rows;
  o.k = a.cols;
  o.a = a.data;
  o.b = b.data;
  return o;
}

}  // namespace

Operands mx_operands(const MxQuantized& a, const MxQuantized& b) {
  Operands o = coded_operands(a, b);
  o.a_e8m0 = a.scales;
  o.b_e8m0 = b.scales;
  o.problem = mx_gemm_problem(a, b, E8m0Decode::kOcp);
  return o;
}

Operands block_operands(const BlockQuantized& a, const BlockQuantized& b) {
  Operands o = coded_operands(a, b);
  o.a_f32 = a.scales;
  o.b_f32 = b.scales;
  o.problem = block_gemm_problem(a, b);
  return o;
}

Operands bf16_operands(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                       std::size_t m, std::size_t n, std::size_t k) {
  Operands o;
  o.m = m;
  o.n = n;
  o.k = k;
  o.a.resize(a.size() * 2);
  o.b.resize(b.size() * 2);
  if (!a.empty()) std::memcpy(o.a.data(), a.data(), o.a.size());
  if (!b.empty()) std::memcpy(o.b.data(), b.data(), o.b.size());
  o.types = {impl::Dtype::kBf16, impl::Dtype::kBf16};
  o.problem = bf16_gemm_problem(a, b, m, n, k);
  return o;
}

Format gemm_element_format(impl::Dtype d) {
  switch (d) {
    case impl::Dtype::kE4m3fn:
      return Format::kE4M3FN;
    case impl::Dtype::kE5m2:
      return Format::kE5M2;
    case impl::Dtype::kE4m3fnuz:
      return Format::kE4M3FNUZ;
    case impl::Dtype::kE5m2fnuz:
      return Format::kE5M2FNUZ;
    default:
      throw std::invalid_argument("gemm_element_format: " + std::string(impl::to_string(d)) +
                                  " is not an FP8 element type of the GEMM properties");
  }
}

std::vector<impl::Dtype> fp8_element_types(impl::DtypeMask mask) {
  std::vector<impl::Dtype> out;
  for (impl::Dtype d :
       {impl::Dtype::kE4m3fn, impl::Dtype::kE5m2, impl::Dtype::kE4m3fnuz, impl::Dtype::kE5m2fnuz}) {
    if (mask & impl::dtype_bit(d)) out.push_back(d);
  }
  return out;
}

GemmKind gemm_kind(impl::Family f) {
  switch (impl::dense_family(f)) {  // a grouped family: the kind of one of its groups
    case impl::Family::kGemmMx:
      return GemmKind::kMx;
    case impl::Family::kGemmBlock:
      return GemmKind::kBlock;
    case impl::Family::kGemmBf16:
      return GemmKind::kBf16;
    default:
      throw std::invalid_argument("gemm_kind: " + std::string(impl::to_string(f)) +
                                  " is not a GEMM family");
  }
}

bool is_mx(Kernel k) { return k->family == impl::Family::kGemmMx; }
bool is_block(Kernel k) { return k->family == impl::Family::kGemmBlock; }
bool is_gemm(Kernel k) { return k->family && impl::is_gemm(*k->family); }

std::span<const Kernel> gemm_kernels() {
  static const std::vector<Kernel> kGemms = [] {
    std::vector<Kernel> v;
    for (const gpu::KernelDef& d : gpu::all_kernels()) {
      if (is_gemm(d)) v.emplace_back(d);
    }
    return v;
  }();
  return kGemms;
}

BlockSizes op_blocks(const impl::Op& op, std::size_t m, std::size_t n, std::size_t k) {
  const impl::Contract& c = op.contract;
  const impl::Family family = impl::dense_family(op.family);  // a grouped op: one group's
  if (family == impl::Family::kGemmMx) return kMxfp8Blocks;
  if (family == impl::Family::kGemmBf16) return {1, k, 1, k};
  const auto whole = [](uint32_t block, std::size_t extent) {
    return block == 0 ? extent : static_cast<std::size_t>(block);
  };
  return {whole(c.a_block_rows, m), whole(c.a_block_cols, k), whole(c.b_block_rows, n),
          whole(c.b_block_cols, k)};
}

namespace {

BlockSizes kernel_blocks(Kernel k) { return is_mx(k) ? kMxfp8Blocks : kDeepSeekBlocks; }

GemmKind kernel_kind(Kernel k) { return gemm_kind(*k->family); }

}  // namespace

namespace {

// The codes of the integers -16..16 in `f` (the values exact-mode operands draw), so laying out
// operands is a lookup instead of an encode per element.
std::array<uint8_t, 33> small_int_codes(Format f) {
  std::array<uint8_t, 33> t{};
  for (int i = -16; i <= 16; ++i) {
    t[i + 16] = static_cast<uint8_t>(encode(f, static_cast<float>(i), EncodePolicy{}));
  }
  return t;
}

bool small_int(float v) { return v == std::floor(v) && std::fabs(v) <= 16.0f; }

}  // namespace

uint8_t e4m3_code(float v) {
  static const std::array<uint8_t, 33> table = small_int_codes(Format::kE4M3FN);
  if (small_int(v)) return table[static_cast<int>(v) + 16];
  return static_cast<uint8_t>(encode(Format::kE4M3FN, v, EncodePolicy{}));
}

uint8_t fp8_code(Format f, float v) {
  if (f == Format::kE4M3FN) return e4m3_code(v);
  static const std::array<uint8_t, 33> e5m2 = small_int_codes(Format::kE5M2);
  // -0 is left to encode (its code is 0x80; the table's 0 is +0).
  if (f == Format::kE5M2 && small_int(v) && (v != 0 || !std::signbit(v))) {
    return e5m2[static_cast<int>(v) + 16];
  }
  return static_cast<uint8_t>(encode(f, v, EncodePolicy{}));
}

namespace {

// fp8_code of every value, the small integers (every value of exact-mode operands) by table.
Bytes fp8_codes(Format f, const std::vector<float>& values) {
  static const std::array<uint8_t, 33> e4m3 = small_int_codes(Format::kE4M3FN);
  static const std::array<uint8_t, 33> e5m2 = small_int_codes(Format::kE5M2);
  const std::array<uint8_t, 33>& table = f == Format::kE4M3FN ? e4m3 : e5m2;
  Bytes out(values.size());
  const bool tabled = f == Format::kE4M3FN || f == Format::kE5M2;
  const float* in = values.data();
  uint8_t* code = out.data();
  for (std::size_t i = 0; i < out.size(); ++i) {
    const float v = in[i];
    const int n = tabled && std::fabs(v) <= 16.0f ? static_cast<int>(v) : 0;
    const bool integer = static_cast<float>(n) == v && (n != 0 || !std::signbit(v));
    code[i] = tabled && integer ? table[n + 16] : fp8_code(f, v);  // -0: as fp8_code has it
  }
  return out;
}

}  // namespace

Bytes random_codes(std::size_t count, std::mt19937_64& rng) {
  return random_codes(Format::kE4M3FN, count, rng);
}

Bytes random_codes(Format f, std::size_t count, std::mt19937_64& rng) {
  // The finite codes of the format, so the draw is one table lookup.
  std::array<bool, 256> finite{};
  for (int c = 0; c < 256; ++c) finite[c] = std::isfinite(decode(f, static_cast<uint32_t>(c)));
  Bytes out(count);
  for (uint8_t& c : out) {
    c = static_cast<uint8_t>(rng());
    if (!finite[c]) c = 0;
  }
  return out;
}

Operands first_rows(const Operands& o, std::size_t m) {
  Operands r = o;
  const std::size_t elem = o.a.size() / (o.m * o.k);  // 1 (fp8) or 2 (bf16)
  r.m = m;
  r.a.resize(m * o.k * elem);
  if (!o.a_e8m0.empty()) r.a_e8m0.resize(m * (o.a_e8m0.size() / o.m));
  if (!o.a_f32.empty()) r.a_f32.resize(m * (o.a_f32.size() / o.m));
  r.problem.m = m;
  r.problem.a.resize(m * o.k);
  if (!o.problem.a_scale.empty()) r.problem.a_scale.resize(m * o.problem.a_scale_cols());
  return r;
}

namespace {

// The largest |value| of fingerprint operands exact in `model`: 2 ({-2..2}), or 1 where an
// aligned-chunk model keeps too few bits for products of 4 summed over one chunk
// (reference/accumulator_exact.h: sum over the chunk of |a b| < 2^precision_bits units).
int fingerprint_range(const AccumulatorModel& model, std::size_t k) {
  if (model.kind != AccumulatorKind::kAlignedChunks) return 2;
  const std::size_t len = model.chunks.chunk_k == 0 ? k : std::min(model.chunks.chunk_k, k);
  const std::size_t units = std::size_t{1} << model.chunks.precision_bits;
  if (4 * len < units) return 2;
  if (len < units) return 1;
  throw std::invalid_argument("no fingerprint operands: chunks of " + std::to_string(len) +
                              " k reach 2^precision_bits of " + model.name);
}

// Fingerprint exponents: block (r, c) of an operand gets (r * 5 + c * 3 + salt) mod (span + 1),
// centred on 0. Consecutive blocks along K differ by 3 (mod span + 1), neighbouring rows by 5.
// The values' codes in formats fa and fb are written beside them (a_codes, b_codes: what
// fp8_codes gives for these small integers, by the same table).
void fingerprint(GemmProblem& p, uint64_t seed, const AccumulatorModel& model, Format fa, Format fb,
                 Bytes& a_codes, Bytes& b_codes, bool self_check) {
  const int v = fingerprint_range(model, p.k);
  Mt64Batch rng(seed ^ 0x9E3779B97F4A7C15ull);  // std::mt19937_64's numbers
  // rng() % (2v + 1) - v, with the divisor a constant (v is 1 or 2): a multiply, not a division.
  const auto draw = [&rng, v] {
    const uint64_t r = rng();
    return v == 2 ? static_cast<int>(r % 5) - 2 : static_cast<int>(r % 3) - 1;
  };
  const auto values_and_codes = [&draw](std::vector<float>& values, Bytes& codes, Format f) {
    std::array<uint8_t, 5> table{};  // the codes of -2..2 (+0 for 0)
    for (int i = -2; i <= 2; ++i) table[i + 2] = fp8_code(f, static_cast<float>(i));
    codes.resize(values.size());
    for (std::size_t x = 0; x < values.size(); ++x) {
      const int d = draw();
      values[x] = static_cast<float>(d);
      codes[x] = table[d + 2];
    }
  };
  values_and_codes(p.a, a_codes, fa);
  values_and_codes(p.b, b_codes, fb);
  // sum |t| <= K * 4 * 2^(span_a + span_b) <= 2^24 units: span_a + span_b <= 22 - ceil(log2 K).
  int log2k = 0;
  while ((std::size_t{1} << log2k) < p.k) ++log2k;
  const int span = std::max(0, std::min(7, (22 - log2k) / 2));
  auto fill = [&](std::vector<float>& scales, std::size_t cols, int salt) {
    for (std::size_t i = 0; i < scales.size(); ++i) {
      const std::size_t r = i / cols, c = i % cols;
      const int e = static_cast<int>((r * 5 + c * 3 + static_cast<std::size_t>(salt)) %
                                     static_cast<std::size_t>(span + 1)) -
                    span / 2;
      scales[i] = std::ldexp(1.0f, e);
    }
  };
  fill(p.a_scale, p.a_scale_cols(), 0);
  fill(p.b_scale, p.b_scale_cols(), 1);
  // Self-check of the construction above (its bound depends on K only, not on the values or
  // the shape), on every problem up to 2^20 products (most random shapes).
  // Beyond, the O(M N K) check would cost more than the GEMM under test.
  std::string why;
  if (self_check && p.m * p.n * p.k <= (std::size_t{1} << 20) && !is_exact_mode(p, model, &why)) {
    throw std::logic_error("fingerprint operands are not exact-mode in " + model.name + ": " + why);
  }
}

}  // namespace

Operands exact_operands(GemmKind kind, const BlockSizes& blocks, std::size_t m, std::size_t n,
                        std::size_t k, uint64_t seed, bool fingerprint_scales, ElementTypes types,
                        const AccumulatorModel& model, bool self_check) {
  if (kind == GemmKind::kBf16) {
    const GemmProblem p =
        make_exact_mode_operands(m, n, k, kMxfp8Blocks, false, seed, model).problem;
    std::vector<uint16_t> a, b;
    for (float v : p.a) a.push_back(bf16_of(v));  // exact: the values are bf16 values
    for (float v : p.b) b.push_back(bf16_of(v));
    return bf16_operands(a, b, m, n, k);
  }
  GemmProblem p;
  // Integers in {-8..8} (fingerprint: {-2..2}) are exact in every FP8 format.
  const Format fa = gemm_element_format(types.a), fb = gemm_element_format(types.b);
  Bytes a, b;
  if (fingerprint_scales) {
    // fingerprint writes every value and scale: make_exact_mode_operands' refusals are needed,
    // not its draws.
    require_exact_mode_operands(k, blocks, true, model);
    p = make_gemm_problem(m, n, k, blocks, true);
    fingerprint(p, seed, model, fa, fb, a, b, self_check);
  } else {
    p = make_exact_mode_operands(m, n, k, blocks, true, seed, model).problem;
    a = fp8_codes(fa, p.a);
    b = fp8_codes(fb, p.b);
  }
  Operands o;
  if (kind == GemmKind::kMx) {
    MxQuantized qa{m, k, fa, std::move(a), {}}, qb{n, k, fb, std::move(b), {}};
    for (float s : p.a_scale) qa.scales.push_back(static_cast<uint8_t>(bits_of(s) >> 23));
    for (float s : p.b_scale) qb.scales.push_back(static_cast<uint8_t>(bits_of(s) >> 23));
    o = mx_operands(qa, qb);
  } else {
    BlockQuantized qa{m, k, blocks.a_m, blocks.a_k, fa, std::move(a), p.a_scale};
    BlockQuantized qb{n, k, blocks.b_n, blocks.b_k, fb, std::move(b), p.b_scale};
    o = block_operands(qa, qb);
  }
  o.types = types;
  return o;
}

Operands exact_operands(Kernel kernel, std::size_t m, std::size_t n, std::size_t k, uint64_t seed,
                        bool fingerprint_scales) {
  return exact_operands(kernel_kind(kernel), kernel_blocks(kernel), m, n, k, seed,
                        fingerprint_scales);
}

Operands exact_operands(const impl::Op& op, std::size_t m, std::size_t n, std::size_t k,
                        uint64_t seed, bool fingerprint_scales, ElementTypes types,
                        bool self_check) {
  const AccumulatorModel model = impl::accum_model_for(op);
  const GemmKind kind = gemm_kind(op.family);
  if (kind == GemmKind::kBf16) types = {impl::Dtype::kBf16, impl::Dtype::kBf16};
  try {
    Operands o = exact_operands(kind, op_blocks(op, m, n, k), m, n, k, seed, fingerprint_scales,
                                types, model, self_check);
    apply_scale_rule(op, o);
    return o;
  } catch (const std::invalid_argument& e) {
    throw impl::Unsupported(op.name + ": no exact-mode operands for accumulator " + model.name +
                            " at M=" + std::to_string(m) + " N=" + std::to_string(n) +
                            " K=" + std::to_string(k) + " (" + e.what() + ")");
  }
}

void apply_scale_rule(const impl::Op& op, Operands& o) {
  if (op.family != impl::Family::kGemmBlock || !op.contract.ue8m0_scales) return;
  const auto ue8m0 = [](float s) {
    return decode_e8m0(static_cast<uint8_t>((bits_of(s) >> 23) & 0xFFu), E8m0Decode::kOcp);
  };
  for (float& s : o.problem.a_scale) s = ue8m0(s);
  for (float& s : o.problem.b_scale) s = ue8m0(s);
}

Operands general_operands(GemmKind kind, const BlockSizes& blocks, std::size_t m, std::size_t n,
                          std::size_t k, uint64_t seed, ElementTypes types) {
  std::mt19937_64 rng(seed);
  if (kind == GemmKind::kBf16) {
    auto values = [&](std::size_t count) {
      std::vector<uint16_t> v(count);
      for (uint16_t& x : v) {
        x = static_cast<uint16_t>(((rng() & 1) << 15) | ((120 + rng() % 15) << 7) | (rng() & 0x7F));
      }
      return v;
    };
    const auto a = values(m * k);
    const auto b = values(n * k);
    return bf16_operands(a, b, m, n, k);
  }
  const Format fa = gemm_element_format(types.a), fb = gemm_element_format(types.b);
  Operands o;
  if (kind == GemmKind::kMx) {
    MxQuantized qa{m, k, fa, random_codes(fa, m * k, rng), {}};
    MxQuantized qb{n, k, fb, random_codes(fb, n * k, rng), {}};
    for (std::size_t i = 0; i < m * qa.scale_cols(); ++i) qa.scales.push_back(118 + rng() % 19);
    for (std::size_t i = 0; i < n * qb.scale_cols(); ++i) qb.scales.push_back(118 + rng() % 19);
    o = mx_operands(qa, qb);
  } else {
    auto scale = [&] {
      return float_of(static_cast<uint32_t>((119 + rng() % 6) << 23) | (rng() & 0x7FFFFF));
    };
    BlockQuantized qa{m, k, blocks.a_m, blocks.a_k, fa, random_codes(fa, m * k, rng), {}};
    BlockQuantized qb{n, k, blocks.b_n, blocks.b_k, fb, random_codes(fb, n * k, rng), {}};
    for (std::size_t i = 0; i < qa.scale_rows() * qa.scale_cols(); ++i) {
      qa.scales.push_back(scale());
    }
    for (std::size_t i = 0; i < qb.scale_rows() * qb.scale_cols(); ++i) {
      qb.scales.push_back(scale());
    }
    o = block_operands(qa, qb);
  }
  o.types = types;
  return o;
}

Operands general_operands(Kernel kernel, std::size_t m, std::size_t n, std::size_t k,
                          uint64_t seed) {
  return general_operands(kernel_kind(kernel), kernel_blocks(kernel), m, n, k, seed);
}

Operands general_operands(const impl::Op& op, std::size_t m, std::size_t n, std::size_t k,
                          uint64_t seed, ElementTypes types) {
  Operands o = general_operands(gemm_kind(op.family), op_blocks(op, m, n, k), m, n, k, seed, types);
  apply_scale_rule(op, o);
  return o;
}

impl::Layout b_scale_layout(const impl::Op& op, impl::Layout a_layout) {
  const impl::LayoutMask b = op.contract.b_scale_layouts;
  if (b & impl::layout_bit(a_layout)) return a_layout;
  const std::vector<impl::Layout> all = impl::layouts_in(b);
  return all.empty() ? impl::Layout::kRowMajor : all.front();
}

namespace {

// One call of `op` writing `out`; `scale_result` (FP8 output) goes into a 1 x 1 f32 out_scale.
Bytes run_gemm_raw(const impl::RunContext& run, const impl::Op& op, const Operands& o,
                   impl::Dtype out, const float* scale_result, const OpLayout& layout) {
  using impl::Call;
  using impl::Dtype;
  using impl::Layout;
  const impl::Contract& c = op.contract;
  impl::Invocation inv(op, run);
  const GemmKind kind = gemm_kind(op.family);
  inv.input(&Call::a, o.a, o.m, o.k, o.k, o.types.a, Layout::kRowMajor);
  const bool preshuffled = (c.b_layouts & impl::layout_bit(Layout::kRowMajor)) == 0 &&
                           (c.b_layouts & impl::layout_bit(Layout::kAiterShuffle16x16)) != 0;
  if (preshuffled) {
    inv.input(&Call::b, shuffle_weight(sp(o.b), o.n, o.k, kind == GemmKind::kBf16 ? 2 : 1), o.n,
              o.k, 0, o.types.b, Layout::kAiterShuffle16x16);
  } else {
    inv.input(&Call::b, o.b, o.n, o.k, o.k, o.types.b, Layout::kRowMajor);
  }
  const Layout bl = b_scale_layout(op, layout.scales);
  if (kind == GemmKind::kMx) {
    const std::size_t kb = (o.k + 31) / 32;
    auto sa = store_scales<uint8_t>(layout.scales, o.m, kb, o.a_e8m0, c.a_scale_ld_align,
                                    layout.e8m0_pad, layout.scale_ld_extra);
    auto sb = store_scales<uint8_t>(bl, o.n, kb, o.b_e8m0, c.b_scale_ld_align, layout.e8m0_pad,
                                    layout.scale_ld_extra);
    sa.values.insert(sa.values.end(), layout.slack, layout.e8m0_pad);
    sb.values.insert(sb.values.end(), layout.slack, layout.e8m0_pad);
    inv.input(&Call::a_scale, sa.values, o.m, kb, sa.ld, Dtype::kE8m0, layout.scales);
    if (!layout.omit_b_scale)
      inv.input(&Call::b_scale, sb.values, o.n, kb, sb.ld, Dtype::kE8m0, bl);
  } else if (kind == GemmKind::kBlock) {
    // Grid columns from the block shape along K; rows from the scales given (a TP shard of a
    // kernel that takes n_offset holds every 128-row block its rows touch).
    const BlockSizes blocks = op_blocks(op, o.m, o.n, o.k);
    const std::size_t a_cols = (o.k + blocks.a_k - 1) / blocks.a_k;
    const std::size_t b_cols = (o.k + blocks.b_k - 1) / blocks.b_k;
    const std::size_t a_rows = o.a_f32.size() / a_cols, b_rows = o.b_f32.size() / b_cols;
    auto sa = store_scales<float>(layout.scales, a_rows, a_cols, o.a_f32, c.a_scale_ld_align,
                                  layout.f32_pad, layout.scale_ld_extra);
    auto sb = store_scales<float>(bl, b_rows, b_cols, o.b_f32, c.b_scale_ld_align, layout.f32_pad,
                                  layout.scale_ld_extra);
    sa.values.insert(sa.values.end(), (layout.slack + 3) / 4, layout.f32_pad);
    sb.values.insert(sb.values.end(), (layout.slack + 3) / 4, layout.f32_pad);
    inv.input(&Call::a_scale, bytes_of(sa.values), a_rows, a_cols, sa.ld, Dtype::kF32,
              layout.scales);
    inv.input(&Call::b_scale, bytes_of(sb.values), b_rows, b_cols, sb.ld, Dtype::kF32, bl);
  }
  if (scale_result != nullptr) {
    inv.input(&Call::out_scale, bytes_of(std::vector<float>{*scale_result}), 1, 1, 1, Dtype::kF32,
              Layout::kRowMajor);
  }
  Call call = impl::gemm_call(inv, o.m, o.n, o.k, out);
  call.n_offset = layout.n_offset;
  return inv.run_and_read(call, &Call::out);
}

}  // namespace

GemmOutput run_gemm_op(const impl::RunContext& run, const impl::Op& op, const Operands& o,
                       OutputFormat format, const OpLayout& layout) {
  return gemm_output_of(run_gemm_raw(run, op, o, out_dtype(format), nullptr, layout), o.m, o.n,
                        format);
}

Bytes run_gemm_op_fp8(const impl::RunContext& run, const impl::Op& op, const Operands& o,
                      impl::Dtype out, float scale_result, const OpLayout& layout) {
  if (!impl::is_fp8_out(out)) {
    throw std::invalid_argument("run_gemm_op_fp8: " + std::string(impl::to_string(out)) +
                                " is no FP8 GEMM output");
  }
  return run_gemm_raw(run, op, o, out, &scale_result, layout);
}

impl::Dtype out_dtype(OutputFormat format) {
  return format == OutputFormat::kBf16 ? impl::Dtype::kBf16 : impl::Dtype::kF32;
}

GemmOutput gemm_output_of(const Bytes& raw, std::size_t m, std::size_t n, OutputFormat format) {
  GemmOutput out;
  out.rows = m;
  out.cols = n;
  out.format = format;
  if (format == OutputFormat::kBf16) {
    out.bf16.resize(m * n);
    std::memcpy(out.bf16.data(), raw.data(), out.bf16.size() * 2);
  } else {
    out.fp32.resize(m * n);
    std::memcpy(out.fp32.data(), raw.data(), out.fp32.size() * 4);
  }
  return out;
}

BitExactVerdict compare(const GemmOutput& expected, const GemmOutput& actual) {
  if (expected.format == OutputFormat::kBf16) {
    return compare_bf16(expected.rows, expected.cols, sp(expected.bf16), sp(actual.bf16));
  }
  return compare_fp32(expected.rows, expected.cols, sp(expected.fp32), sp(actual.fp32));
}

OrderModel order_model(const impl::Op& op, OutputFormat format) {
  if (!op.contract.order) {
    throw std::logic_error(op.impl + "/" + op.name + " declares no summation order");
  }
  const impl::DeclaredOrder& a = *op.contract.order;
  return {a.block_k, a.per_partial ? ScaleApplication::kPerPartial : ScaleApplication::kPerProduct,
          format};
}

OrderModel order_model(Kernel kernel, OutputFormat format) {
  return order_model(*impl::builtin().find_op(kernel.name()), format);
}

AccumModel accum_model(Kernel kernel, OutputFormat format) {
  const AccumulatorModel m = impl::accum_model_for(*impl::builtin().find_op(kernel.name()));
  if (m.kind != AccumulatorKind::kFloat) {
    throw std::logic_error(std::string(kernel.name()) + " declares accumulator " + m.name +
                           ", not a float model");
  }
  AccumModel fp = m.fp;
  fp.output = format;
  return fp;
}

}  // namespace mxgate::properties
