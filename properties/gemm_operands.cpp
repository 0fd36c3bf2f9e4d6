#include "properties/gemm_operands.h"

#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "common/blocks.h"
#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/fp_encode.h"
#include "reference/scale_layout.h"
#include "reference/weight_shuffle.h"

namespace mxgate::properties {

using gpu::ActScaleOrder;
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
  o.problem = bf16_gemm_problem(a, b, m, n, k);
  return o;
}

bool is_mx(Kernel k) { return gpu::contract(k).scale == gpu::ScaleDtype::kE8m0; }
bool is_block(Kernel k) { return gpu::contract(k).scale == gpu::ScaleDtype::kFp32; }
bool is_gemm(Kernel k) { return gpu::contract(k).accum.has_value(); }

uint8_t e4m3_code(float v) {
  static const auto table = [] {
    std::array<uint8_t, 33> t{};
    for (int i = -16; i <= 16; ++i) {
      t[i + 16] =
          static_cast<uint8_t>(encode(Format::kE4M3FN, static_cast<float>(i), EncodePolicy{}));
    }
    return t;
  }();
  if (v == std::floor(v) && std::fabs(v) <= 16.0f) return table[static_cast<int>(v) + 16];
  return static_cast<uint8_t>(encode(Format::kE4M3FN, v, EncodePolicy{}));
}

Bytes random_codes(std::size_t count, std::mt19937_64& rng) {
  Bytes out(count);
  for (uint8_t& c : out) {
    c = static_cast<uint8_t>(rng());
    if ((c & 0x7F) == 0x7F) c = 0;
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

// Fingerprint exponents: block (r, c) of an operand gets (r * 5 + c * 3 + salt) mod (span + 1),
// centred on 0. Consecutive blocks along K differ by 3 (mod span + 1), neighbouring rows by 5.
void fingerprint(GemmProblem& p, uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x9E3779B97F4A7C15ull);
  for (float& v : p.a) v = static_cast<float>(static_cast<int>(rng() % 5) - 2);
  for (float& v : p.b) v = static_cast<float>(static_cast<int>(rng() % 5) - 2);
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
  std::string why;
  if (!is_exact_mode(p, &why)) {
    throw std::logic_error("fingerprint operands are not exact-mode: " + why);
  }
}

}  // namespace

Operands exact_operands(Kernel kernel, std::size_t m, std::size_t n, std::size_t k, uint64_t seed,
                        bool fingerprint_scales) {
  if (kernel == Kernel::kGemmBf16) {
    const GemmProblem p = make_exact_mode_operands(m, n, k, kMxfp8Blocks, false, seed).problem;
    std::vector<uint16_t> a, b;
    for (float v : p.a) a.push_back(bf16_of(v));  // exact: the values are bf16 values
    for (float v : p.b) b.push_back(bf16_of(v));
    return bf16_operands(a, b, m, n, k);
  }
  const BlockSizes blocks = is_mx(kernel) ? kMxfp8Blocks : kDeepSeekBlocks;
  GemmProblem p = make_exact_mode_operands(m, n, k, blocks, true, seed).problem;
  if (fingerprint_scales) fingerprint(p, seed);
  Bytes a, b;
  a.reserve(p.a.size());
  b.reserve(p.b.size());
  for (float v : p.a) a.push_back(e4m3_code(v));
  for (float v : p.b) b.push_back(e4m3_code(v));
  if (is_mx(kernel)) {
    MxQuantized qa{m, k, Format::kE4M3FN, a, {}}, qb{n, k, Format::kE4M3FN, b, {}};
    for (float s : p.a_scale) qa.scales.push_back(static_cast<uint8_t>(bits_of(s) >> 23));
    for (float s : p.b_scale) qb.scales.push_back(static_cast<uint8_t>(bits_of(s) >> 23));
    return mx_operands(qa, qb);
  }
  BlockQuantized qa{m, k, 1, 128, Format::kE4M3FN, a, p.a_scale};
  BlockQuantized qb{n, k, 128, 128, Format::kE4M3FN, b, p.b_scale};
  return block_operands(qa, qb);
}

Operands general_operands(Kernel kernel, std::size_t m, std::size_t n, std::size_t k,
                          uint64_t seed) {
  std::mt19937_64 rng(seed);
  if (kernel == Kernel::kGemmBf16) {
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
  if (is_mx(kernel)) {
    MxQuantized qa{m, k, Format::kE4M3FN, random_codes(m * k, rng), {}};
    MxQuantized qb{n, k, Format::kE4M3FN, random_codes(n * k, rng), {}};
    for (std::size_t i = 0; i < m * qa.scale_cols(); ++i) qa.scales.push_back(118 + rng() % 19);
    for (std::size_t i = 0; i < n * qb.scale_cols(); ++i) qb.scales.push_back(118 + rng() % 19);
    return mx_operands(qa, qb);
  }
  auto scale = [&] {
    return float_of(static_cast<uint32_t>((119 + rng() % 6) << 23) | (rng() & 0x7FFFFF));
  };
  BlockQuantized qa{m, k, 1, 128, Format::kE4M3FN, random_codes(m * k, rng), {}};
  BlockQuantized qb{n, k, 128, 128, Format::kE4M3FN, random_codes(n * k, rng), {}};
  for (std::size_t i = 0; i < qa.scale_rows() * qa.scale_cols(); ++i) qa.scales.push_back(scale());
  for (std::size_t i = 0; i < qb.scale_rows() * qb.scale_cols(); ++i) qb.scales.push_back(scale());
  return block_operands(qa, qb);
}

namespace {

template <class T>
Bytes as_bytes(const std::vector<T>& v) {
  Bytes out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

}  // namespace

GemmOutput run_gemm(gpu::Backend& be, Kernel kernel, const Operands& o, OutputFormat format,
                    const LaunchLayout& layout) {
  const gpu::Contract& c = gpu::contract(kernel);
  const ActScaleOrder order =
      layout.as_order == ActScaleOrder::kNone ? c.act_scale : layout.as_order;
  Bytes b = o.b;
  if (c.weight == gpu::WeightLayout::kAiterPreshuffled) b = shuffle_weight(sp(o.b), o.n, o.k, 1);
  Bytes sa, sb;
  gpu::GemmArgs args;
  args.p = {o.m, o.n, o.k,
            format == OutputFormat::kBf16 ? gpu::OutDtype::kBf16 : gpu::OutDtype::kFp32};
  if (is_mx(kernel)) {
    if (layout.swizzled_mx_scales) {
      const std::size_t kb = ceil_div(o.k, kMxBlock);
      sa = pack_scales<uint8_t>(ScaleLayout::kNvSwizzle128x4, o.m, kb, sp(o.a_e8m0), layout.mx_pad);
      sb = pack_scales<uint8_t>(ScaleLayout::kNvSwizzle128x4, o.n, kb, sp(o.b_e8m0), layout.mx_pad);
      args.p.mx_scales_swizzled = true;
    } else {
      sa = o.a_e8m0;
      sb = o.b_e8m0;
    }
  } else if (is_block(kernel)) {
    const std::size_t kb = ceil_div(o.k, kBlockK);
    std::vector<float> as = o.a_f32;
    if (order == ActScaleOrder::kColMajor) {
      if (layout.tma_aligned_as) {
        as = pack_scales(ScaleLayout::kTmaColMajor, o.m, kb, sp(o.a_f32), layout.as_pad);
        args.p.as_ld = (o.m + 3) / 4 * 4;
      } else {
        as = pack_scales(ScaleLayout::kColMajor, o.m, kb, sp(o.a_f32), 0.0f);
      }
    }
    sa = as_bytes(as);
    sb = as_bytes(o.b_f32);
  }
  args.p.faults = layout.faults;
  args.p.n_offset = layout.n_offset;
  gpu::ScopedBuffers buffers(be);
  args.a = buffers.make(o.a, "A");
  args.b = buffers.make(b, "B");
  if (!sa.empty()) args.a_scale = buffers.make(sa, "As");
  if (!sb.empty()) args.b_scale = buffers.make(sb, "Bs");
  args.out = buffers.allocate(o.m * o.n * (format == OutputFormat::kBf16 ? 2 : 4), "C");
  be.run({kernel, args});
  GemmOutput out;
  out.rows = o.m;
  out.cols = o.n;
  out.format = format;
  if (format == OutputFormat::kBf16) {
    out.bf16 = be.download_as<uint16_t>(args.out);
  } else {
    out.fp32 = be.download_as<float>(args.out);
  }
  return out;
}

BitExactVerdict compare(const GemmOutput& expected, const GemmOutput& actual) {
  if (expected.format == OutputFormat::kBf16) {
    return compare_bf16(expected.rows, expected.cols, sp(expected.bf16), sp(actual.bf16));
  }
  return compare_fp32(expected.rows, expected.cols, sp(expected.fp32), sp(actual.fp32));
}

OrderModel order_model(Kernel kernel, OutputFormat format) {
  const gpu::AccumOrder a = *gpu::contract(kernel).accum;
  return {a.block_k, a.per_partial ? ScaleApplication::kPerPartial : ScaleApplication::kPerProduct,
          format};
}

AccumModel accum_model(Kernel kernel, OutputFormat format) {
  const gpu::AccumOrder a = *gpu::contract(kernel).accum;
  AccumModel m;
  m.block_k = a.block_k;
  m.product_roundings = a.product_roundings;
  m.partial_roundings = a.partial_roundings;
  m.output = format;
  return m;
}

}  // namespace mxgate::properties
