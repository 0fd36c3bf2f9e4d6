// Test helper for the GEMM oracle's tests (test_gemm_oracle_exact.cpp, test_gemm_oracle_modes.cpp):
// E4M3 values decoded by their defining formula (independent of the format codecs), random
// general (not exact-mode) problems, and a naive kernel summing in a random order.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "reference/exact_sum.h"
#include "reference/gemm_oracle.h"

namespace mxgate::test_support {

using std::size_t;

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

inline uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

// E4M3FN decoded by its defining formula (test-local, independent of the format codecs):
// exponent field e, mantissa m: e = 0 -> m * 2^-9, else (8 + m) * 2^(e - 10); 0x7F/0xFF = NaN.
inline float e4m3_value(uint8_t byte) {
  const int e = (byte >> 3) & 15, m = byte & 7;
  if (e == 15 && m == 7) {
    return kNan;
  }
  const float mag = e == 0 ? std::ldexp(static_cast<float>(m), -9)
                           : std::ldexp(static_cast<float>(8 + m), e - 10);
  return (byte & 0x80) != 0 ? -mag : mag;
}

inline float random_e4m3(std::mt19937_64& rng) {
  for (;;) {
    const float v = e4m3_value(static_cast<uint8_t>(rng()));
    if (!std::isnan(v)) {
      return v;
    }
  }
}

// General (not exact-mode) data: random finite E4M3 values and scales of one of three kinds.
enum class Scales {
  kPow2Narrow,  // e8m0-like 2^[-1, 1]: like quantized data, blocks of a row share a magnitude
  kPow2Wide,    // e8m0-like 2^[-8, 8]
  kFp32,        // arbitrary positive fp32 in [1e-3, 1e-1] (DeepSeek fp32 scales)
};

inline GemmProblem random_problem(size_t m, size_t n, size_t k, BlockSizes blocks, Scales scales,
                                  uint64_t seed) {
  std::mt19937_64 rng(seed);
  GemmProblem p = make_gemm_problem(m, n, k, blocks, true);
  for (float& x : p.a) {
    x = random_e4m3(rng);
  }
  for (float& x : p.b) {
    x = random_e4m3(rng);
  }
  std::uniform_int_distribution<int> narrow(-1, 1), wide(-8, 8);
  std::uniform_real_distribution<float> real(1e-3f, 1e-1f);
  for (auto* grid : {&p.a_scale, &p.b_scale}) {
    for (float& s : *grid) {
      s = scales == Scales::kFp32       ? real(rng)
          : scales == Scales::kPow2Wide ? std::ldexp(1.0f, wide(rng))
                                        : std::ldexp(1.0f, narrow(rng));
    }
  }
  return p;
}

// BF16 x BF16 (no scales), K = 384 (three 128-atoms of the engine): values 2^[-3, 3] with 8-bit
// significands, except rows i % 10 == 3 of A whose last atom spreads over 2^[-40, 40]. Tiles
// without such a row sum all of K in one exact double; tiles with one sum atoms 0-1 as a range
// and must add atom 2 product by product (general path).
inline GemmProblem random_mixed_bf16_problem(size_t m, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  GemmProblem p = make_gemm_problem(m, n, 384, kMxfp8Blocks, false);
  std::uniform_int_distribution<int> narrow(-3, 3), wide(-40, 40), mant(128, 255);
  auto value = [&](std::uniform_int_distribution<int>& exp) {
    const float sign = (rng() & 1) != 0 ? -1.0f : 1.0f;
    return sign * std::ldexp(static_cast<float>(mant(rng)), exp(rng) - 7);
  };
  for (size_t i = 0; i < m; ++i) {
    for (size_t kk = 0; kk < 384; ++kk) {
      p.a_at(i, kk) = value(i % 10 == 3 && kk >= 256 ? wide : narrow);
    }
  }
  for (float& x : p.b) {
    x = value(narrow);
  }
  return p;
}

// A kernel with an arbitrary summation order: dequantize (fp32), multiply, accumulate in the
// order of a random permutation of k.
inline std::vector<float> shuffled_naive_gemm(const GemmProblem& p, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<size_t> order(p.k);
  std::iota(order.begin(), order.end(), size_t{0});
  std::vector<float> c(p.m * p.n);
  for (size_t i = 0; i < p.m; ++i) {
    for (size_t j = 0; j < p.n; ++j) {
      std::shuffle(order.begin(), order.end(), rng);
      float acc = 0.0f;
      for (size_t kk : order) {
        const float x = p.a[i * p.k + kk] * p.scale_a(i, kk);
        const float y = p.b[j * p.k + kk] * p.scale_b(j, kk);
        acc += x * y;
      }
      c[i * p.n + j] = acc;
    }
  }
  return c;
}

inline std::vector<uint16_t> to_bf16(const std::vector<float>& x) {
  std::vector<uint16_t> out(x.size());
  for (size_t e = 0; e < x.size(); ++e) {
    out[e] = round_to_bf16_bits(x[e]);
  }
  return out;
}

}  // namespace mxgate::test_support
