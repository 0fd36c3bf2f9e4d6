// Seeded N(0, 1) data for the tests and benchmarks that quantize random operands
// (test_cli_gemm.cpp, test_cli_accumulators.cpp, bench/bench_gemm_oracle.cpp,
// bench/bench_gemm_threads.cpp): std::mt19937_64 of `seed` fixes the values, so a case or a
// benchmark label that names its seed names its data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace mxgate::test_support {

inline std::vector<float> normal_data(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

}  // namespace mxgate::test_support
