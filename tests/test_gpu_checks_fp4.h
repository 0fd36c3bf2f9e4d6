// The checks every backend must pass on the built-in FP4 kernels (docs/fp4.md §12), included
// after test_gpu_checks.h by test_gpu_host.cpp (the host models) and test_gpu_device.cpp (HIP /
// CUDA). Launches go through Backend::run directly (no contract check), outputs compare bit for
// bit with the reference:
//   quantize_mxfp4   vs quantize_mx(E2M1, ocp_mx) on edge rows (NaN, +-Inf, zero blocks, E2M1
//                    ties, saturation, fp32 subnormals, FLT_MAX), odd and short K, fp32 / bf16 in
//   quantize_nvfp4   vs quantize_nvfp4(te_nvfp4_ref) on the same rows with global amaxes at the
//                    extremes (0, 2^-149, FLT_MAX, NaN) and in bf16; scales row-major and swizzled
//   dequant_mxfp4 / dequant_nvfp4   every E2M1 code times every E8M0 / E4M3 scale byte
//   gemm_mxfp4 (E2M1 and E4M3 A) / gemm_nvfp4   exact-mode operands vs exact_gemm, general data
//                    vs ordered_gemm and inside compute_bounds; row-major and swizzled scales; a
//                    production shape
// Does not cover: the planted faults (test_fp4_kernel_faults.cpp), the properties
// (props_fp4.cpp), speed.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "impl/accumulator.h"
#include "impl/builtin.h"
#include "properties/fp4_operands.h"
#include "reference/accumulator_bounds.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/fp4_pack.h"
#include "reference/gemm_oracle.h"
#include "reference/mx_quant.h"
#include "reference/nvfp4_quant.h"
#include "reference/quant_conventions.h"
#include "reference/scale_layout.h"
#include "reference/verdict.h"
#include "tests/test_gpu_checks.h"

namespace mxgate::gpu::checks {

// Rows of FP4 quantizer inputs: random magnitudes 2^-30 .. 2^30, and per row one hazard: an edge
// value per block (NaN, +-Inf, +-0, fp32 subnormal, FLT_MAX), a zero block, E2M1 midpoints times
// a power of two, saturating blocks (amax in (6, 8) times a power of two).
inline std::vector<float> fp4_quantize_input(std::size_t rows, std::size_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> x(rows * cols);
  for (float& v : x) {
    const uint32_t e = 97 + static_cast<uint32_t>(rng() % 60);
    v = float_of(static_cast<uint32_t>((rng() & 1) << 31) | (e << 23) | (rng() & 0x7FFFFF));
  }
  const float edges[] = {std::numeric_limits<float>::quiet_NaN(),
                         std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(),
                         0.0f,
                         -0.0f,
                         float_of(0x00000001),
                         float_of(0x807FFFFF),
                         std::numeric_limits<float>::max()};
  const float mids[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.0f};
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = x.data() + r * cols;
    switch (r % 5) {
      case 0:
        for (std::size_t c = 0; c < cols; c += 16)
          row[c + r % std::min<std::size_t>(16, cols - c)] = edges[(r / 5 + c / 16) % 8];
        break;
      case 1:
        for (std::size_t c = 0; c < std::min<std::size_t>(cols, 32); ++c) row[c] = 0.0f;
        break;
      case 2: {
        const int t = static_cast<int>(rng() % 20) - 10;
        for (std::size_t c = 0; c < cols; ++c) {
          row[c] = ((rng() & 1) ? -1.0f : 1.0f) * std::ldexp(mids[c % 16 == 0 ? 7 : rng() % 8], t);
        }
        break;
      }
      case 3:
        for (std::size_t c = 0; c < cols; ++c) row[c] = std::ldexp(7.5f, static_cast<int>(c % 7));
        break;
      default:
        break;
    }
  }
  return x;
}

inline std::vector<uint16_t> to_bf16(std::vector<float>& x) {
  std::vector<uint16_t> h(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    h[i] = bf16_of(x[i]);
    x[i] = float_of_bf16(h[i]);
  }
  return h;
}

struct Fp4QuantizeRun {
  std::vector<uint8_t> codes, scales;  // codes one per byte, scales logical row-major
};

inline Fp4QuantizeRun run_fp4_quantize(Backend& be, Kernel kernel, std::vector<float> x,
                                       std::size_t rows, std::size_t cols, bool bf16,
                                       std::optional<float> global, bool bf16_global, bool swizzled,
                                       std::vector<float>& reference_x) {
  ScopedBuffers buffers(be);
  Fp4QuantizeArgs a;
  a.p.rows = rows;
  a.p.cols = cols;
  a.p.input = bf16 ? InputDtype::kBf16 : InputDtype::kFp32;
  a.p.swizzled_scales = swizzled;
  if (bf16) {
    a.in = buffers.make(to_bf16(x), "x");
  } else {
    a.in = buffers.make(x, "x");
  }
  reference_x = x;
  const bool nv = kernel.name() == "quantize_nvfp4";
  const std::size_t sc = ceil_div(cols, nv ? kNvfp4Block : kMxBlock);
  if (global) {
    a.p.global_dtype = bf16_global ? GlobalDtype::kBf16 : GlobalDtype::kFp32;
    if (bf16_global) {
      a.global = buffers.make(std::vector<uint16_t>{bf16_of(*global)}, "global");
    } else {
      a.global = buffers.make(std::vector<float>{*global}, "global");
    }
  }
  a.codes = buffers.allocate(rows * ((cols + 1) / 2), "codes");
  a.scales = buffers.allocate(
      swizzled ? scale_storage_size(ScaleLayout::kNvSwizzle128x4, rows, sc) : rows * sc, "scales");
  be.run({kernel, a});
  std::vector<uint8_t> scales = be.download(a.scales);
  if (swizzled) {
    scales = unpack_scales<uint8_t>(ScaleLayout::kNvSwizzle128x4, rows, sc,
                                    std::span<const uint8_t>(scales));
  }
  return {unpack_fp4(be.download(a.codes), rows, cols, NibbleOrder::kLowFirst), scales};
}

inline void expect_bytes(const std::vector<uint8_t>& want, const std::vector<uint8_t>& got,
                         std::size_t cols, const char* what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  int bad = 0;
  for (std::size_t i = 0; i < want.size() && bad < 5; ++i) {
    if (want[i] != got[i]) {
      ++bad;
      ADD_FAILURE() << what << " (" << i / cols << "," << i % cols << ") expected 0x" << std::hex
                    << int(want[i]) << " actual 0x" << int(got[i]);
    }
  }
}

// Guards against the MXFP4 quantizer drifting from ocp_mx: FLOOR with emax 2, E2M1 RNE with
// saturation, a NaN / Inf block's scale 0xFF and codes 0, packing element 2i low, short and odd K.
TEST_F(BackendTest, QuantizeMxfp4MatchesOcpMx) {
  const MxPolicy policy = *mx_policy(require_convention("ocp_mx"), Format::kE2M1);
  for (auto [rows, cols] :
       {std::pair<std::size_t, std::size_t>{40, 100}, {7, 33}, {5, 1}, {3, 576}}) {
    for (bool bf16 : {false, true}) {
      SCOPED_TRACE("rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
                   " bf16=" + std::to_string(bf16));
      std::vector<float> ref_x;
      const Fp4QuantizeRun got = run_fp4_quantize(
          be(), gpu::kernel("quantize_mxfp4"), fp4_quantize_input(rows, cols, kSeed + cols), rows,
          cols, bf16, std::nullopt, false, false, ref_x);
      const MxQuantized want = quantize_mx(ref_x, rows, cols, Format::kE2M1, policy);
      expect_bytes(want.scales, got.scales, want.scale_cols(), "e8m0 scale");
      expect_bytes(want.data, got.codes, cols, "e2m1 code");
    }
  }
}

// Guards against the NVFP4 quantizer drifting from TE's reference recipe, above all at the global
// amax's extremes (a zero tensor must not give NaN scales), with a bf16 global amax, and with the
// scale factors written in the 128x4 swizzle.
TEST_F(BackendTest, QuantizeNvfp4MatchesTeReference) {
  const NvFp4Policy policy = *nvfp4_policy(require_convention("te_nvfp4_ref"));
  const float globals[] = {0.0f,
                           std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::max(),
                           std::numeric_limits<float>::quiet_NaN(),
                           2688.0f,
                           1.0e-3f,
                           3.0e9f};
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{40, 100}, {130, 33}, {3, 16}}) {
    for (bool bf16 : {false, true}) {
      for (std::size_t g = 0; g <= std::size(globals); ++g) {
        const bool swizzled = (g % 2) == 1;
        const bool bf16_global = g % 3 == 2;
        std::optional<float> global;
        if (g < std::size(globals)) global = globals[g];
        SCOPED_TRACE("rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
                     " bf16=" + std::to_string(bf16) + " global#" + std::to_string(g) +
                     " swizzled=" + std::to_string(swizzled));
        std::vector<float> ref_x;
        std::vector<float> x = fp4_quantize_input(rows, cols, kSeed + 3 * cols);
        if (!global) {  // the tensor's amax, as a calibrated global amax would be
          float amax = 0.0f;
          for (float v : x) amax = std::isfinite(v) ? std::max(amax, std::fabs(v)) : amax;
          global = amax;
        }
        const float seen = bf16_global ? float_of_bf16(bf16_of(*global)) : *global;
        const Fp4QuantizeRun got =
            run_fp4_quantize(be(), gpu::kernel("quantize_nvfp4"), x, rows, cols, bf16, global,
                             bf16_global, swizzled, ref_x);
        const NvFp4Quantized want = quantize_nvfp4(ref_x, rows, cols, policy, seen);
        expect_bytes(want.scales, got.scales, want.scale_cols(), "e4m3 scale");
        expect_bytes(want.data, got.codes, cols, "e2m1 code");
      }
    }
  }
}

// Guards against a dequantizer that unpacks the wrong nibble or decodes a scale wrongly: every
// E2M1 code against every E8M0 byte (MXFP4) and every E4M3 code 0x00..0x7F (NVFP4, subnormals
// and NaN included), times global decode scales at the extremes, fp32 and bf16 out.
TEST_F(BackendTest, DequantFp4EveryCodeTimesEveryScale) {
  for (bool nv : {false, true}) {
    const std::size_t rows = nv ? 128 : 256, cols = nv ? 33 : 65;
    const std::size_t sc = ceil_div(cols, nv ? kNvfp4Block : kMxBlock);
    std::vector<uint8_t> codes(rows * cols), scales(rows * sc);
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint8_t>((i * 7) % 16);
    for (std::size_t i = 0; i < scales.size(); ++i) scales[i] = static_cast<uint8_t>(i / sc);
    for (float global : {1.0f, 0x1p-20f, std::numeric_limits<float>::max(), 1.0f / 3.0f}) {
      for (OutDtype out : {OutDtype::kFp32, OutDtype::kBf16}) {
        if (!nv && global != 1.0f) continue;
        SCOPED_TRACE(std::string(nv ? "nvfp4" : "mxfp4") + " global=" + std::to_string(global) +
                     " bf16=" + std::to_string(out == OutDtype::kBf16));
        ScopedBuffers buffers(be());
        Fp4DequantArgs a;
        a.p = {rows, cols, out};
        a.codes = buffers.make(pack_fp4(codes, rows, cols, NibbleOrder::kLowFirst, 0xF), "codes");
        a.scales = buffers.make(scales, "scales");
        a.global = buffers.make(std::vector<float>{global}, "global");
        a.out = buffers.allocate(rows * cols * (out == OutDtype::kBf16 ? 2 : 4), "out");
        be().run({gpu::kernel(nv ? "dequant_nvfp4" : "dequant_mxfp4"), a});
        BitExactVerdict v;
        if (nv) {
          const NvFp4Quantized q{rows, cols, false, codes, scales, 1.0f, global};
          v = out == OutDtype::kBf16 ? compare_bf16(rows, cols, sp(dequantize_nvfp4_bf16(q)),
                                                    sp(be().download_as<uint16_t>(a.out)))
                                     : compare_fp32(rows, cols, sp(dequantize_nvfp4(q)),
                                                    sp(be().download_as<float>(a.out)));
        } else {
          const MxQuantized q{rows, cols, Format::kE2M1, codes, scales};
          v = out == OutDtype::kBf16
                  ? compare_bf16(rows, cols, sp(dequantize_mx_bf16(q, E8m0Decode::kOcp)),
                                 sp(be().download_as<uint16_t>(a.out)))
                  : compare_fp32(rows, cols, sp(dequantize_mx(q, E8m0Decode::kOcp)),
                                 sp(be().download_as<float>(a.out)));
        }
        EXPECT_TRUE(v.ok()) << v.summary();
      }
    }
  }
}

struct Fp4GemmCase {
  const char* kernel;
  impl::Dtype a;
  std::size_t m, n, k;
};

inline std::string describe(const Fp4GemmCase& c, bool swizzled, OutputFormat f,
                            const std::string& global) {
  return std::string(c.kernel) + " a=" + std::string(impl::to_string(c.a)) +
         " M=" + std::to_string(c.m) + " N=" + std::to_string(c.n) + " K=" + std::to_string(c.k) +
         (swizzled ? " swizzled" : " row-major") + (f == OutputFormat::kBf16 ? " bf16" : " fp32") +
         " global=" + global;
}

inline const Fp4GemmCase kFp4Gemms[] = {
    {"gemm_mxfp4", impl::Dtype::kE2m1, 1, 1, 1},
    {"gemm_mxfp4", impl::Dtype::kE2m1, 3, 5, 17},
    {"gemm_mxfp4", impl::Dtype::kE2m1, 2, 16, 33},
    {"gemm_mxfp4", impl::Dtype::kE4m3fn, 5, 48, 256},
    {"gemm_mxfp4", impl::Dtype::kE4m3fn, 130, 3, 97},
    {"gemm_nvfp4", impl::Dtype::kE2m1, 1, 1, 1},
    {"gemm_nvfp4", impl::Dtype::kE2m1, 3, 5, 17},
    {"gemm_nvfp4", impl::Dtype::kE2m1, 2, 16, 48},
    {"gemm_nvfp4", impl::Dtype::kE2m1, 130, 7, 257},
};

// Guards against structural FP4 GEMM bugs (nibble order, scale slot, swizzle, K tail, the
// global scales' alpha): on exact-mode operands every correct kernel equals exact_gemm.
TEST_F(BackendTest, Fp4GemmsEqualExactGemmOnExactModeOperands) {
  for (const Fp4GemmCase& c : kFp4Gemms) {
    const impl::Op& op = *impl::builtin().find_op(c.kernel);
    for (const std::string global : {"one", "pow2", "random", "max", "tiny"}) {
      if (op.family != impl::Family::kGemmNvfp4 && global != "one") continue;
      const properties::Fp4Operands o = properties::fp4_exact_operands(
          op, c.a, c.m, c.n, c.k, kSeed + c.k, global, impl::Dtype::kF32);
      for (bool swizzled : {false, true}) {
        for (OutputFormat f : {OutputFormat::kFp32, OutputFormat::kBf16}) {
          SCOPED_TRACE(describe(c, swizzled, f, global));
          const BitExactVerdict v =
              compare(exact_gemm(o.problem, f),
                      properties::run_fp4_gemm_kernel(be(), gpu::kernel(c.kernel), o, f, swizzled));
          EXPECT_TRUE(v.ok()) << v.summary();
        }
      }
    }
  }
}

// Guards against an FP4 GEMM whose summation differs from its declared order or leaves its
// accumulator model's bound, on general data (every E4M3 scale code, E8M0 96..158).
TEST_F(BackendTest, Fp4GemmsEqualOrderedEmulationAndStayInsideBound) {
  for (const Fp4GemmCase& c : kFp4Gemms) {
    const impl::Op& op = *impl::builtin().find_op(c.kernel);
    for (const std::string global : {"one", "random", "max"}) {
      if (op.family != impl::Family::kGemmNvfp4 && global != "one") continue;
      const properties::Fp4Operands o = properties::fp4_general_operands(
          op, c.a, c.m, c.n, c.k, kSeed + 3 * c.k, global, impl::Dtype::kF32);
      for (OutputFormat f : {OutputFormat::kFp32, OutputFormat::kBf16}) {
        SCOPED_TRACE(describe(c, true, f, global));
        const GemmOutput got =
            properties::run_fp4_gemm_kernel(be(), gpu::kernel(c.kernel), o, f, true);
        const BitExactVerdict v =
            compare(ordered_gemm(o.problem, properties::order_model(op, f)), got);
        EXPECT_TRUE(v.ok()) << v.summary();
        const BoundVerdict b =
            check_bound(compute_bounds(o.problem, impl::accum_model_for(op), f), got);
        EXPECT_TRUE(b.ok()) << b.summary();
      }
    }
  }
}

// Guards against FP4 GEMM bugs that show only at production shapes: the gpt-oss MXFP4 expert
// (N = K = 2880, K % 128 = 64) and an NVFP4 projection (N = 2048, K = 7168), M = 1.
TEST_F(BackendTest, Fp4GemmsAtProductionShapes) {
  const Fp4GemmCase cases[] = {{"gemm_mxfp4", impl::Dtype::kE2m1, 1, 2880, 2880},
                               {"gemm_mxfp4", impl::Dtype::kE4m3fn, 1, 2880, 2880},
                               {"gemm_nvfp4", impl::Dtype::kE2m1, 1, 2048, 7168}};
  for (const Fp4GemmCase& c : cases) {
    const impl::Op& op = *impl::builtin().find_op(c.kernel);
    SCOPED_TRACE(describe(c, true, OutputFormat::kFp32, "random"));
    const properties::Fp4Operands o = properties::fp4_general_operands(
        op, c.a, c.m, c.n, c.k, kSeed + c.n, "random", impl::Dtype::kF32);
    const GemmOutput got =
        properties::run_fp4_gemm_kernel(be(), gpu::kernel(c.kernel), o, OutputFormat::kFp32, true);
    const BitExactVerdict v =
        compare(ordered_gemm(o.problem, properties::order_model(op, OutputFormat::kFp32)), got);
    EXPECT_TRUE(v.ok()) << v.summary();
  }
}

}  // namespace mxgate::gpu::checks
