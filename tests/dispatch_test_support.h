// Test helpers shared by the dispatch tests on the host backend (test_dispatch.cpp) and on the
// device backend (test_gpu_dispatch_device.cpp): layer configs, their weights and activations,
// the reference result of apply through oracles that never touch a kernel's layout, and bit
// equality of outputs.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "properties/dispatch_apply_oracle.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/gemm_oracle.h"
#include "reference/quant_conventions.h"

namespace mxgate::dispatch::test_support {

// Bit equality of two fp32 outputs; the message names the first differing element.
inline ::testing::AssertionResult same(const GemmOutput& want, const GemmOutput& got) {
  if (want.fp32.size() != got.fp32.size()) {
    return ::testing::AssertionFailure()
           << "sizes " << want.fp32.size() << " vs " << got.fp32.size();
  }
  for (std::size_t i = 0; i < want.fp32.size(); ++i) {
    if (bits_of(want.fp32[i]) != bits_of(got.fp32[i])) {
      return ::testing::AssertionFailure()
             << "C[" << i / want.cols << "," << i % want.cols << "]: expected " << want.fp32[i]
             << " got " << got.fp32[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// Integers in [-8, 8]: MXFP8 (ocp_mx) and bf16 hold them exactly, and every fp32 sum of their
// products over K <= 2^18 is exact, so every correct MXFP8 / bf16 path equals exact_gemm.
inline std::vector<float> small_ints(std::size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(count);
  for (float& x : v) x = static_cast<float>(static_cast<int>(rng() % 17) - 8);
  return v;
}

// General values for block FP8 (scales amax/448 are not powers of two).
inline std::vector<float> general_values(std::size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-3.0f, 3.0f);
  std::vector<float> v(count);
  for (float& x : v) x = d(rng);
  return v;
}

// The (N, K) of vLLM PR #56560's regression test (docs/architecture.md §1.1): DeepSeek-V4.1-Flash's
// shared-expert down_proj at TP4 (K = 576, K % 128 = 64) and TP8 (K = 288, K % 128 = 32), and
// the aligned control (256, 2048).
inline std::vector<std::pair<std::size_t, std::size_t>> dot_scaled_shapes() {
  return {{5120, 576}, {5120, 288}, {256, 2048}};
}

// The layers whose load processing removes per-step work (I5): unaligned-K MXFP8 (dequantize
// once), aligned MXFP8, block FP8 with e8m0 weight scales (upcast once), on ROCm and sm90.
inline std::vector<LinearConfig> hot_path_configs() {
  return {
      config(Platform::kGfx950, Scheme::kMxfp8, 256, 288),
      config(Platform::kGfx950, Scheme::kMxfp8, 256, 256),
      config(Platform::kGfx950, Scheme::kFp8Block, 256, 256, WeightScaleDtype::kE8m0),
      config(Platform::kSm90, Scheme::kFp8Block, 256, 256, WeightScaleDtype::kE8m0),
      config(Platform::kSm90, Scheme::kMxfp8, 256, 288),
  };
}

// I5 on one apply of an M = 1 activation after load processing: no dequantize, upcast,
// preshuffle or MX dequantizing GEMM launch, and only activation-sized buffers (x in bf16, its
// codes and scales, the output).
inline void expect_no_rematerialization(const gpu::Counters& d, const LinearConfig& c) {
  for (gpu::Kernel k : {gpu::kernel("dequant_mx_to_bf16"), gpu::kernel("upcast_e8m0"),
                        gpu::kernel("preshuffle_weight"), gpu::kernel("gemm_mx_dequant")}) {
    EXPECT_EQ(d.launches_of(k), 0u) << gpu::kernel_name(k);
  }
  EXPECT_LT(d.bytes_allocated, c.k * 2 + c.k + c.k * 4 + c.n * 4 + 64);
}

// One layer's float weight and an M x K activation: small integers for MXFP8 / bf16 (exact),
// general values for block FP8.
struct Problem {
  LinearConfig c;
  std::vector<float> weight;
  Activation x;
};

inline Problem problem(const LinearConfig& c, std::size_t m, uint64_t seed) {
  const bool block = c.scheme == Scheme::kFp8Block;
  Problem p{c, block ? general_values(c.n * c.k, seed) : small_ints(c.n * c.k, seed), {}};
  const std::vector<float> xs =
      block ? general_values(m * c.k, seed + 1) : small_ints(m * c.k, seed + 1);
  p.x = make_activation(xs, m, c.k);
  return p;
}

}  // namespace mxgate::dispatch::test_support
