// The checks every backend must pass (gpu/backend.h), included by test_gpu_host.cpp (the host
// models) and test_gpu_device.cpp (HIP / CUDA). Each program defines make_backend_under_test();
// the fixture skips (GTEST_SKIP) when the backend reports no device.
//
// Covers: every kernel against the reference bit for bit (quantize_mx with mx_policy(convention),
// dequantize_mx_bf16, decode_e8m0, shuffle_weight; GEMMs on exact-mode operands vs exact_gemm,
// on general data vs ordered_gemm with the kernel's declared order and inside compute_bounds),
// over small and production (N, K) shapes; the contracts (check_contract rejects dot_scaled with
// K % 128 != 0 and row-major As for bpreshuffle; launched anyway, the numbers catch it); guard
// bands and poison (planted faults); launch accounting.
// Does not cover: speed, multi-stream use, tensor-core kernels, e5m2 / fnuz elements, scale
// layouts other than row- and column-major As.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpu/backend.h"
#include "gpu/contract.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/gemm_oracle.h"
#include "reference/mx_quant.h"
#include "reference/quant_conventions.h"
#include "reference/scale_layout.h"
#include "reference/verdict.h"
#include "reference/weight_shuffle.h"

namespace mxgate::gpu {

// Defined by each test program.
std::unique_ptr<Backend> make_backend_under_test();

namespace checks {

using Bytes = std::vector<uint8_t>;

inline constexpr uint64_t kSeed = 20260917;

class BackendTest : public testing::Test {
 protected:
  void SetUp() override {
    be_ = make_backend_under_test();
    if (be_ == nullptr || !be_->available()) GTEST_SKIP() << "no device for this backend";
  }
  Backend& be() { return *be_; }
  std::unique_ptr<Backend> be_;
};

template <class T>
std::span<const T> sp(const std::vector<T>& v) {
  return {v.data(), v.size()};
}

// Random finite E4M3FN codes (NaN codes 0x7F / 0xFF replaced by 0).
inline Bytes random_codes(std::size_t count, std::mt19937_64& rng) {
  Bytes out(count);
  for (uint8_t& c : out) {
    c = static_cast<uint8_t>(rng());
    if ((c & 0x7F) == 0x7F) c = 0;
  }
  return out;
}

// ---- GEMM operands --------------------------------------------------------------------------

// Logical operands (A m x k, B n x k row-major; scales as logical row-major grids) and the
// decoded problem the reference sees.
struct Operands {
  std::size_t m = 0, n = 0, k = 0;
  Bytes a, b;  // E4M3FN codes, or bf16 bits (2 bytes per element)
  Bytes a_e8m0, b_e8m0;
  std::vector<float> a_f32, b_f32;
  GemmProblem problem;
};

inline Operands mx_operands(const MxQuantized& a, const MxQuantized& b) {
  Operands o;
  o.m = a.rows;
  o.n = b.rows;
  o.k = a.cols;
  o.a = a.data;
  o.b = b.data;
  o.a_e8m0 = a.scales;
  o.b_e8m0 = b.scales;
  o.problem = mx_gemm_problem(a, b, E8m0Decode::kOcp);
  return o;
}

inline Operands block_operands(const BlockQuantized& a, const BlockQuantized& b) {
  Operands o;
  o.m = a.rows;
  o.n = b.rows;
  o.k = a.cols;
  o.a = a.data;
  o.b = b.data;
  o.a_f32 = a.scales;
  o.b_f32 = b.scales;
  o.problem = block_gemm_problem(a, b);
  return o;
}

inline Operands bf16_operands(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                              std::size_t m, std::size_t n, std::size_t k) {
  Operands o;
  o.m = m;
  o.n = n;
  o.k = k;
  o.a.resize(a.size() * 2);
  o.b.resize(b.size() * 2);
  std::memcpy(o.a.data(), a.data(), o.a.size());
  std::memcpy(o.b.data(), b.data(), o.b.size());
  o.problem = bf16_gemm_problem(a, b, m, n, k);
  return o;
}

inline bool is_mx(Kernel k) { return contract(k).scale == ScaleDtype::kE8m0; }
inline bool is_block(Kernel k) { return contract(k).scale == ScaleDtype::kFp32; }

// Exact-mode values are small integers: encode each distinct one once.
inline uint8_t e4m3_code(float v) {
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

// The first m rows of A (with their scales): still valid operands of the same kind, so one
// generation serves every M of a shape.
inline Operands first_rows(const Operands& o, std::size_t m) {
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

// Exact-mode operands (gemm_oracle.h) in the kernel's input formats.
inline Operands exact_operands(Kernel kernel, std::size_t m, std::size_t n, std::size_t k,
                               uint64_t seed) {
  if (kernel == Kernel::kGemmBf16) {
    const GemmProblem p = make_exact_mode_operands(m, n, k, kMxfp8Blocks, false, seed).problem;
    std::vector<uint16_t> a, b;
    for (float v : p.a) a.push_back(static_cast<uint16_t>(bits_of(v) >> 16));
    for (float v : p.b) b.push_back(static_cast<uint16_t>(bits_of(v) >> 16));
    return bf16_operands(a, b, m, n, k);
  }
  const BlockSizes blocks = is_mx(kernel) ? kMxfp8Blocks : kDeepSeekBlocks;
  const GemmProblem p = make_exact_mode_operands(m, n, k, blocks, true, seed).problem;
  Bytes a, b;
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

// General data: random finite codes; MX scale bytes in [118, 136]; fp32 scales with random
// mantissas in [2^-8, 2^-2); bf16 values with random mantissas. Products round, sums round.
inline Operands general_operands(Kernel kernel, std::size_t m, std::size_t n, std::size_t k,
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

template <class T>
Bytes as_bytes(const std::vector<T>& v) {
  Bytes out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// Lays the operands out as `kernel` reads them (its contract: column-major As, preshuffled B),
// unless `as_layout` overrides the activation-scale order (to hand a kernel the wrong one).
// Uploads, runs, downloads. Buffers are released afterwards.
inline GemmOutput run_gemm(Backend& be, Kernel kernel, const Operands& o, OutputFormat format,
                           ActScaleOrder as_layout = ActScaleOrder::kNone) {
  const Contract& c = contract(kernel);
  const ActScaleOrder order = as_layout == ActScaleOrder::kNone ? c.act_scale : as_layout;
  Bytes b = o.b;
  if (c.weight == WeightLayout::kAiterPreshuffled) b = shuffle_weight(sp(o.b), o.n, o.k, 1);
  Bytes sa, sb;
  if (is_mx(kernel)) {
    sa = o.a_e8m0;
    sb = o.b_e8m0;
  } else if (is_block(kernel)) {
    const std::size_t kb = (o.k + 127) / 128;
    const std::vector<float> as =
        order == ActScaleOrder::kColMajor
            ? pack_scales(ScaleLayout::kColMajor, o.m, kb, sp(o.a_f32), 0.0f)
            : o.a_f32;
    sa = as_bytes(as);
    sb = as_bytes(o.b_f32);
  }
  GemmArgs args;
  args.p = {o.m, o.n, o.k, format == OutputFormat::kBf16 ? OutDtype::kBf16 : OutDtype::kFp32};
  args.a = be.make_buffer(sp(o.a), "A");
  args.b = be.make_buffer(sp(b), "B");
  if (!sa.empty()) args.a_scale = be.make_buffer(sp(sa), "As");
  if (!sb.empty()) args.b_scale = be.make_buffer(sp(sb), "Bs");
  args.out = be.allocate(o.m * o.n * (format == OutputFormat::kBf16 ? 2 : 4), "C");
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
  for (BufferId id : {args.a, args.b, args.a_scale, args.b_scale, args.out}) {
    if (id != kNoBuffer) be.release(id);
  }
  return out;
}

inline BitExactVerdict compare(const GemmOutput& expected, const GemmOutput& actual) {
  if (expected.format == OutputFormat::kBf16) {
    return compare_bf16(expected.rows, expected.cols, sp(expected.bf16), sp(actual.bf16));
  }
  return compare_fp32(expected.rows, expected.cols, sp(expected.fp32), sp(actual.fp32));
}

inline OrderModel order_model(Kernel kernel, OutputFormat format) {
  const AccumOrder a = *contract(kernel).accum;
  return {a.block_k, a.per_partial ? ScaleApplication::kPerPartial : ScaleApplication::kPerProduct,
          format};
}

inline AccumModel accum_model(Kernel kernel, OutputFormat format) {
  const AccumOrder a = *contract(kernel).accum;
  AccumModel m;
  m.block_k = a.block_k;
  m.product_roundings = a.product_roundings;
  m.partial_roundings = a.partial_roundings;
  m.output = format;
  return m;
}

struct GemmCase {
  Kernel kernel;
  std::size_t m, n, k;
  OutputFormat format;
};

inline std::string describe(const GemmCase& c, uint64_t seed) {
  return std::string(kernel_name(c.kernel)) + " M=" + std::to_string(c.m) +
         " N=" + std::to_string(c.n) + " K=" + std::to_string(c.k) +
         (c.format == OutputFormat::kBf16 ? " out=bf16" : " out=fp32") +
         " seed=" + std::to_string(seed);
}

// Exact-mode operands: the kernel equals exact_gemm bit for bit.
// `all` holds at least c.m rows of A (generated by exact_operands with `seed`).
inline void check_exact(Backend& be, const GemmCase& c, const Operands& all, uint64_t seed) {
  SCOPED_TRACE(describe(c, seed) + " (exact mode, first " + std::to_string(c.m) + " of " +
               std::to_string(all.m) + " rows)");
  const Operands o = first_rows(all, c.m);
  const BitExactVerdict v =
      compare(exact_gemm(o.problem, c.format), run_gemm(be, c.kernel, o, c.format));
  EXPECT_TRUE(v.ok()) << v.summary();
}

// General data: the kernel equals ordered_gemm with its declared order, and lies inside the
// bound of its declared accumulation model.
// `all` holds at least c.m rows of A (generated by general_operands with `seed`).
inline void check_ordered_and_bound(Backend& be, const GemmCase& c, const Operands& all,
                                    uint64_t seed, bool with_bound) {
  SCOPED_TRACE(describe(c, seed) + " (ordered emulation, first " + std::to_string(c.m) + " of " +
               std::to_string(all.m) + " rows)");
  const Operands o = first_rows(all, c.m);
  const GemmOutput actual = run_gemm(be, c.kernel, o, c.format);
  const BitExactVerdict v =
      compare(ordered_gemm(o.problem, order_model(c.kernel, c.format)), actual);
  EXPECT_TRUE(v.ok()) << v.summary();
  if (with_bound) {
    const BoundVerdict b =
        check_bound(compute_bounds(o.problem, accum_model(c.kernel, c.format)), actual);
    EXPECT_TRUE(b.ok()) << b.summary();
  }
}

// ---- Tests ----------------------------------------------------------------------------------

// Rows that exercise every edge of the MX quantizer: NaN, +-Inf, zero blocks, fp32 subnormals,
// saturation, ties, huge values, and a short last block (cols % 32 != 0).
inline std::vector<float> quantize_input(std::size_t rows, std::size_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> x(rows * cols);
  for (float& v : x) {
    const uint32_t e = 100 + static_cast<uint32_t>(rng() % 60);  // 2^-27 .. 2^32
    v = float_of(static_cast<uint32_t>((rng() & 1) << 31) | (e << 23) | (rng() & 0x7FFFFF));
  }
  const std::vector<float> edges = {std::numeric_limits<float>::quiet_NaN(),
                                    -std::numeric_limits<float>::infinity(),
                                    std::numeric_limits<float>::infinity(),
                                    0.0f,
                                    -0.0f,
                                    float_of(0x00000001),
                                    float_of(0x80400000),
                                    448.0f,
                                    464.0f,
                                    465.0f,
                                    480.0f,
                                    -1e30f,
                                    3.0e38f,
                                    1.5f * 448.0f,
                                    0x1.c0p-9f,
                                    0x1.20p-9f};
  for (std::size_t r = 0; r < rows; ++r) {
    switch (r % 6) {
      case 0:  // one edge value per block
        for (std::size_t c = 0; c < cols; c += 32)
          x[r * cols + c + (r % 32) % (cols - c)] = edges[(r / 6 + c / 32) % edges.size()];
        break;
      case 1:  // zero block first, then subnormal-only
        for (std::size_t c = 0; c < cols && c < 64; ++c)
          x[r * cols + c] = c < 32 ? 0.0f : float_of(static_cast<uint32_t>(rng() & 0x7FFFFF));
        break;
      case 2:  // the whole row at one binade: many ties after scaling
        for (std::size_t c = 0; c < cols; ++c)
          x[r * cols + c] = static_cast<float>(static_cast<int>(rng() % 4096) - 2048) * 0.125f;
        break;
      default:
        break;
    }
  }
  return x;
}

inline void check_quantize(Backend& be, Kernel kernel, const MxPolicy& policy,
                           QuantConvention convention, InputDtype dtype, std::size_t rows,
                           std::size_t cols, uint64_t seed) {
  SCOPED_TRACE(std::string(kernel_name(kernel)) + " rows=" + std::to_string(rows) + " cols=" +
               std::to_string(cols) + " bf16=" + std::to_string(dtype == InputDtype::kBf16) +
               " seed=" + std::to_string(seed));
  std::vector<float> x = quantize_input(rows, cols, seed);
  QuantizeArgs args;
  args.p = {rows, cols, dtype, convention};
  if (dtype == InputDtype::kBf16) {
    std::vector<uint16_t> h(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      h[i] = static_cast<uint16_t>(encode(Format::kBF16, x[i], kIeeeDefault));
      x[i] = float_of(static_cast<uint32_t>(h[i]) << 16);
    }
    args.in = be.make_buffer(sp(h), "x");
  } else {
    args.in = be.make_buffer(sp(x), "x");
  }
  const MxQuantized want = quantize_mx(sp(x), rows, cols, Format::kE4M3FN, policy);
  args.codes = be.allocate(rows * cols, "codes");
  args.scales = be.allocate(want.scales.size(), "scales");
  be.run({kernel, args});
  const Bytes codes = be.download(args.codes);
  const Bytes scales = be.download(args.scales);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < scales.size() && bad < 5; ++i) {
    if (scales[i] != want.scales[i]) {
      ++bad;
      ADD_FAILURE() << "scale (" << i / want.scale_cols() << "," << i % want.scale_cols()
                    << ") expected 0x" << std::hex << int(want.scales[i]) << " actual 0x"
                    << int(scales[i]);
    }
  }
  for (std::size_t i = 0; i < codes.size() && bad < 5; ++i) {
    if (codes[i] != want.data[i]) {
      ++bad;
      ADD_FAILURE() << "code (" << i / cols << "," << i % cols << ") x=" << x[i] << " expected 0x"
                    << std::hex << int(want.data[i]) << " actual 0x" << int(codes[i]);
    }
  }
  for (BufferId id : {args.in, args.codes, args.scales}) be.release(id);
}

// Guards against a quantizer whose scale rule, element rounding or edge policy (NaN, Inf, zero
// block, saturation, short block) differs from the named convention.
TEST_F(BackendTest, QuantizeMxMatchesReferenceConventions) {
  const std::pair<const char*, QuantConvention> conventions[] = {
      {"ocp_mx", QuantConvention::kOcpMx}, {"torchao_rceil", QuantConvention::kTorchaoRceil}};
  for (const auto& [name, conv] : conventions) {
    const MxPolicy policy = *mx_policy(*find_convention(name));
    for (InputDtype dtype : {InputDtype::kFp32, InputDtype::kBf16}) {
      check_quantize(be(), Kernel::kQuantizeMx, policy, conv, dtype, 37, 100, kSeed);
      check_quantize(be(), Kernel::kQuantizeMx, policy, conv, dtype, 3, 576, kSeed + 1);
      check_quantize(be(), Kernel::kQuantizeMx, policy, conv, dtype, 2, 2048, kSeed + 2);
    }
  }
}

// Guards against the hardware satfinite cast (or its host model) drifting from the CUDA
// satfinite convention: RNE, overflow and Inf -> +-448, NaN -> 0x7F; scales as torchao RCEIL.
TEST_F(BackendTest, QuantizeMxHwMatchesSatfiniteConvention) {
  if (!be().supports(Kernel::kQuantizeMxHw)) GTEST_SKIP() << "no cvt.rn.satfinite on this device";
  MxPolicy policy = *mx_policy(*find_convention("torchao_rceil"));
  policy.element = {Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kCanonical};
  check_quantize(be(), Kernel::kQuantizeMxHw, policy, QuantConvention::kTorchaoRceil,
                 InputDtype::kFp32, 37, 100, kSeed);
  check_quantize(be(), Kernel::kQuantizeMxHw, policy, QuantConvention::kTorchaoRceil,
                 InputDtype::kBf16, 3, 576, kSeed + 1);
}

// Guards against a dequantizer that rounds twice, decodes e8m0 0x00 / 0xFF wrongly, or indexes
// the scale of the wrong 32-block.
TEST_F(BackendTest, DequantMxToBf16MatchesReference) {
  std::mt19937_64 rng(kSeed);
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{5, 96}, {3, 576}, {2, 100}}) {
    MxQuantized q{rows, cols, Format::kE4M3FN, {}, {}};
    for (std::size_t i = 0; i < rows * cols; ++i) q.data.push_back(static_cast<uint8_t>(rng()));
    for (std::size_t i = 0; i < rows * q.scale_cols(); ++i)
      q.scales.push_back(static_cast<uint8_t>(rng()));
    q.scales[0] = 0x00;
    q.scales[1] = 0xFF;
    for (E8m0Upcast up : {E8m0Upcast::kCorrect, E8m0Upcast::kShift}) {
      SCOPED_TRACE("rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
                   " shift=" + std::to_string(up == E8m0Upcast::kShift));
      DequantArgs args;
      args.p = {rows, cols, up};
      args.codes = be().make_buffer(sp(q.data), "codes");
      args.scales = be().make_buffer(sp(q.scales), "scales");
      args.out = be().allocate(rows * cols * 2, "out");
      be().run({Kernel::kDequantMxToBf16, args});
      const auto want =
          dequantize_mx_bf16(q, up == E8m0Upcast::kShift ? E8m0Decode::kShift : E8m0Decode::kOcp);
      const auto got = be().download_as<uint16_t>(args.out);
      const BitExactVerdict v = compare_bf16(rows, cols, sp(want), sp(got));
      EXPECT_TRUE(v.ok()) << v.summary();
      for (BufferId id : {args.codes, args.scales, args.out}) be().release(id);
    }
  }
}

// Guards against the e8m0 upcast confusing the correct rule (0x00 = 2^-127, 0xFF = NaN) with
// the shift (0x00 = +0, 0xFF = +Inf), for every byte.
TEST_F(BackendTest, UpcastE8m0MatchesReferenceForEveryByte) {
  Bytes all(256);
  for (int i = 0; i < 256; ++i) all[i] = static_cast<uint8_t>(i);
  for (E8m0Upcast up : {E8m0Upcast::kCorrect, E8m0Upcast::kShift}) {
    UpcastArgs args;
    args.p = {256, up};
    args.in = be().make_buffer(sp(all), "bytes");
    args.out = be().allocate(256 * 4, "out");
    be().run({Kernel::kUpcastE8m0, args});
    const auto got = be().download_as<float>(args.out);
    std::vector<float> want;
    for (int i = 0; i < 256; ++i) {
      want.push_back(decode_e8m0(static_cast<uint8_t>(i),
                                 up == E8m0Upcast::kShift ? E8m0Decode::kShift : E8m0Decode::kOcp));
    }
    const BitExactVerdict v = compare_fp32(1, 256, sp(want), sp(got));
    EXPECT_TRUE(v.ok()) << v.summary();
    be().release(args.in);
    be().release(args.out);
  }
}

// Guards against a preshuffle whose index math differs from AITER shuffle_weight (16,16).
TEST_F(BackendTest, PreshuffleWeightMatchesReference) {
  std::mt19937_64 rng(kSeed);
  for (auto [n, k] : {std::pair<std::size_t, std::size_t>{16, 32},
                      {48, 96},
                      {5120, 576},
                      {5120, 288},
                      {256, 2048}}) {
    SCOPED_TRACE("N=" + std::to_string(n) + " K=" + std::to_string(k));
    Bytes w(n * k);
    for (uint8_t& b : w) b = static_cast<uint8_t>(rng());
    PreshuffleArgs args;
    args.p = {n, k};
    args.in = be().make_buffer(sp(w), "W");
    args.out = be().allocate(n * k, "W_shuffled");
    be().run({Kernel::kPreshuffleWeight, args});
    EXPECT_EQ(be().download(args.out), shuffle_weight(sp(w), n, k, 1));
    be().release(args.in);
    be().release(args.out);
  }
}

inline constexpr Kernel kGemms[] = {Kernel::kGemmMxDotScaled, Kernel::kGemmMxDequant,
                                    Kernel::kGemmBlockscale, Kernel::kGemmBlockscaleBpreshuffle,
                                    Kernel::kGemmBf16};

inline bool allowed(Kernel k, std::size_t m, std::size_t n, std::size_t kk) {
  return !check_contract(k, {m, n, kk}, {}).has_value();
}

// Guards against structural GEMM bugs (layout, scale indexing, dropped tail block) on small
// shapes: on exact-mode operands every correct kernel equals the exact result bit for bit.
TEST_F(BackendTest, GemmsEqualExactGemmOnExactModeOperandsSmallShapes) {
  const std::pair<std::size_t, std::size_t> nk[] = {{16, 128}, {48, 256}, {32, 96}, {130, 160}};
  for (Kernel kernel : kGemms) {
    for (auto [n, k] : nk) {
      if (!allowed(kernel, 1, n, k)) continue;
      const uint64_t seed = kSeed + n + k;
      const Operands all = exact_operands(kernel, 257, n, k, seed);
      for (std::size_t m : {1, 2, 3, 64, 257}) {
        for (OutputFormat f : {OutputFormat::kFp32, OutputFormat::kBf16}) {
          check_exact(be(), {kernel, m, n, k, f}, all, seed);
        }
      }
    }
  }
}

// Guards against GEMM bugs that only show at production (N, K) shapes (TP-sharded K = 576, 288;
// N spanning many 128-row scale blocks).
TEST_F(BackendTest, GemmsEqualExactGemmOnExactModeOperandsProductionShapes) {
  const std::pair<std::size_t, std::size_t> nk[] = {
      {5120, 576}, {5120, 288}, {256, 2048}, {7168, 2048}};
  for (Kernel kernel : kGemms) {
    for (auto [n, k] : nk) {
      if (!allowed(kernel, 1, n, k)) continue;
      // M = 64 only where N*K is small: the file stays fast.
      const std::size_t max_m = n == 256 ? 64 : 3;
      const Operands all = exact_operands(kernel, max_m, n, k, kSeed + n);
      for (std::size_t m : {1, 2, 3, 64}) {
        if (m <= max_m) check_exact(be(), {kernel, m, n, k, OutputFormat::kFp32}, all, kSeed + n);
      }
    }
  }
}

// Guards against a kernel whose summation order differs from the one it declares: on general
// data it must equal ordered_gemm bit for bit, and lie inside the rigorous bound.
TEST_F(BackendTest, GemmsEqualOrderedEmulationAndStayInsideBound) {
  const std::pair<std::size_t, std::size_t> nk[] = {{16, 128}, {48, 256}, {32, 96}, {130, 160}};
  for (Kernel kernel : kGemms) {
    for (auto [n, k] : nk) {
      if (!allowed(kernel, 1, n, k)) continue;
      const uint64_t seed = kSeed + 7 * n + k;
      const Operands all = general_operands(kernel, 257, n, k, seed);
      for (std::size_t m : {1, 2, 3, 64, 257}) {
        check_ordered_and_bound(be(), {kernel, m, n, k, OutputFormat::kFp32}, all, seed, m < 64);
        if (m == 3) {
          check_ordered_and_bound(be(), {kernel, m, n, k, OutputFormat::kBf16}, all, seed, true);
        }
      }
    }
    const std::pair<std::size_t, std::size_t> production[] = {
        {5120, 576}, {5120, 288}, {256, 2048}, {7168, 2048}};
    for (auto [n, k] : production) {
      if (!allowed(kernel, 1, n, k)) continue;
      const Operands all = general_operands(kernel, 3, n, k, kSeed + n + k);
      for (std::size_t m : {1, 3}) {
        check_ordered_and_bound(be(), {kernel, m, n, k, OutputFormat::kFp32}, all, kSeed + n + k,
                                m == 1 && n * k < 4000000);
      }
    }
  }
}

// Guards against dispatching the dot_scaled-style MXFP8 GEMM at K % 128 != 0 (TP-sharded K):
// the contract rejects it, and a launch anyway gives wrong numbers (unmasked K tiles read the
// next row / the guard band), never the right answer silently.
TEST_F(BackendTest, DotScaledWithKNotMultipleOf128IsRejectedAndCaught) {
  const auto clause = check_contract(Kernel::kGemmMxDotScaled, {4, 32, 160}, {});
  ASSERT_TRUE(clause.has_value());
  EXPECT_NE(clause->find("K % 128 == 0"), std::string::npos) << *clause;
  EXPECT_FALSE(check_contract(Kernel::kGemmMxDotScaled, {4, 32, 256}, {}).has_value());
  EXPECT_TRUE(check_contract(Kernel::kGemmMxDotScaled, {1, 5120, 576}, {}).has_value());
  EXPECT_FALSE(check_contract(Kernel::kGemmMxDequant, {1, 5120, 576}, {}).has_value());
  const Operands o = exact_operands(Kernel::kGemmMxDotScaled, 4, 32, 160, kSeed);
  bool caught = false;
  try {
    const GemmOutput got = run_gemm(be(), Kernel::kGemmMxDotScaled, o, OutputFormat::kFp32);
    caught = !compare(exact_gemm(o.problem, OutputFormat::kFp32), got).ok();
  } catch (const GpuError& e) {
    caught = std::string(e.what()).find("gemm_mx_dot_scaled") != std::string::npos;
  }
  EXPECT_TRUE(caught) << "a K = 160 launch of gemm_mx_dot_scaled matched the reference";
}

// Guards against handing the bpreshuffle GEMM row-major As (bug class (a)): the contract names
// the clause, and the numbers are wrong for M > 1 (M = 1 is byte-identical, layouts.md §2).
TEST_F(BackendTest, BpreshuffleWithRowMajorActivationScalesIsRejectedAndWrong) {
  const auto clause = check_contract(
      Kernel::kGemmBlockscaleBpreshuffle, {8, 256, 512},
      {ActScaleOrder::kRowMajor, WeightLayout::kAiterPreshuffled, ScaleDtype::kFp32});
  ASSERT_TRUE(clause.has_value());
  EXPECT_NE(clause->find("col_major"), std::string::npos) << *clause;
  const auto weight =
      check_contract(Kernel::kGemmBlockscaleBpreshuffle, {8, 256, 512},
                     {ActScaleOrder::kColMajor, WeightLayout::kPlain, ScaleDtype::kFp32});
  ASSERT_TRUE(weight.has_value());
  EXPECT_NE(weight->find("aiter_preshuffled"), std::string::npos) << *weight;
  for (std::size_t m : {1, 8}) {
    const Operands o = exact_operands(Kernel::kGemmBlockscaleBpreshuffle, m, 256, 512, kSeed);
    const GemmOutput got = run_gemm(be(), Kernel::kGemmBlockscaleBpreshuffle, o,
                                    OutputFormat::kFp32, ActScaleOrder::kRowMajor);
    EXPECT_EQ(compare(exact_gemm(o.problem, OutputFormat::kFp32), got).ok(), m == 1) << "M=" << m;
  }
}

// Guards against the harness missing an out-of-bounds write: one element past the output must
// be reported with the kernel, the buffer and the byte offset.
TEST_F(BackendTest, WritePastEndIsCaughtByGuardCheck) {
  FaultArgs args;
  args.p = {64, 0};
  args.out = be().allocate(64 * 4, "victim");
  try {
    be().run({Kernel::kFaultWritePastEnd, args});
    ADD_FAILURE() << "the guard check did not fire";
  } catch (const GpuError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("fault_write_past_end"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'victim'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("byte offset 256"), std::string::npos) << msg;
  }
  be().release(args.out);
}

// Guards against the harness missing an unwritten output element: the NaN poison survives in
// exactly that element.
TEST_F(BackendTest, SkippedElementIsCaughtByPoison) {
  FaultArgs args;
  args.p = {64, 17};
  args.out = be().allocate(64 * 4, "out");
  be().run({Kernel::kFaultSkipElement, args});
  const auto got = be().download_as<float>(args.out);
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(std::isnan(got[i]), i == 17) << "element " << i;
  }
  EXPECT_TRUE(be().check_guards().empty());
  be().release(args.out);
}

// Guards against losing the hot-path accounting (I5 counts launches, not time).
TEST_F(BackendTest, CountsLaunchesByKernelAndBytesAllocated) {
  be().reset_counters();
  Bytes all(32, 0x7F);
  UpcastArgs args;
  args.p = {32, E8m0Upcast::kCorrect};
  args.in = be().make_buffer(sp(all), "in");
  args.out = be().allocate(32 * 4, "out");
  be().run({Kernel::kUpcastE8m0, args});
  be().run({Kernel::kUpcastE8m0, args});
  EXPECT_EQ(be().counters().launches_of(Kernel::kUpcastE8m0), 2u);
  EXPECT_EQ(be().counters().launches_of(Kernel::kGemmBf16), 0u);
  EXPECT_EQ(be().counters().allocations, 2u);
  EXPECT_EQ(be().counters().bytes_allocated, 32u + 128u);
  be().release(args.in);
  be().release(args.out);
}

// Guards against a launch whose output buffer is too small reaching the kernel.
TEST_F(BackendTest, UndersizedOutputIsRefusedBeforeLaunch) {
  UpcastArgs args;
  args.p = {32, E8m0Upcast::kCorrect};
  args.in = be().allocate(32, "in");
  args.out = be().allocate(16, "out");
  EXPECT_THROW(be().run({Kernel::kUpcastE8m0, args}), GpuError);
  be().release(args.in);
  be().release(args.out);
}

}  // namespace checks
}  // namespace mxgate::gpu
