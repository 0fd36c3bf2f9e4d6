// Speed of the exact grouped-GEMM oracle (exact_grouped_gemm, docs/grouped.md §2) on one
// DeepSeek-V3 MoE w13 GEMM at TP 8 (N = 2 * 2048 / 8 = 512, K = hidden 7168, block FP8: 1x128
// activation and 128x128 weight scales, fp32 non-power-of-two, vllm_group_quant), side by side
// with the dense exact oracle (exact_gemm) on the same total FLOPs: one (T * top_k) x 512 x 7168
// GEMM of the same A against one expert's B. Routing: top-8 of E experts by std::mt19937_64
// random router logits per token, so group sizes are uneven and some may be empty.
//   Full layer: MXGATE_BENCH_MOE_TOKENS=4096 MXGATE_BENCH_MOE_EXPERTS=256 (32768 rows, 3.8 GB of
//   decoded expert weights); the default, 512 tokens over 32 experts, keeps the full layer's
//   rows per expert (128 on average) at an eighth of its FLOPs.
//   build/default/bench/bench_grouped_gemm_oracle
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "reference/block_quant.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/gemm_oracle.h"
#include "reference/grouped_gemm.h"
#include "reference/quant_conventions.h"
#include "tests/normal_data.h"

namespace mxgate {
namespace {

constexpr uint64_t kSeed = 20261207;
constexpr std::size_t kTopK = 8, kN = 512, kK = 7168;

using test_support::normal_data;

std::size_t env_size(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? static_cast<std::size_t>(std::strtoull(v, nullptr, 10))
                                    : fallback;
}

struct Operands {
  std::size_t tokens = 0, experts = 0;
  GemmProblem dense;           // (T * top_k) x N x K, expert 0's B
  GroupedGemmProblem grouped;  // the same A, rows sorted by expert, B per expert
  std::string label;
};

// Per-token top-k experts of random router logits -> rows per expert.
std::vector<std::int64_t> routed_counts(std::size_t tokens, std::size_t experts) {
  std::mt19937_64 rng(kSeed + 7);
  std::normal_distribution<float> logit(0.0f, 1.0f);
  std::vector<std::int64_t> counts(experts, 0);
  std::vector<float> l(experts);
  std::vector<std::size_t> order(experts);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (float& x : l) x = logit(rng);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::partial_sort(order.begin(), order.begin() + static_cast<long>(kTopK), order.end(),
                      [&](std::size_t a, std::size_t b) { return l[a] > l[b]; });
    for (std::size_t j = 0; j < kTopK; ++j) ++counts[order[j]];
  }
  return counts;
}

const Operands& operands() {
  static const Operands ops = [] {
    Operands o;
    o.tokens = env_size("MXGATE_BENCH_MOE_TOKENS", 512);
    o.experts = env_size("MXGATE_BENCH_MOE_EXPERTS", 32);
    const std::size_t rows = o.tokens * kTopK;
    const BlockPolicy p =
        require_block_policy(require_convention("vllm_group_quant"), Format::kE4M3FN, false);
    const BlockQuantized a =
        quantize_block(normal_data(rows * kK, kSeed), rows, kK, 1, kBlockK, Format::kE4M3FN, p);
    const BlockQuantized one_row =
        quantize_block(normal_data(kK, kSeed), 1, kK, 1, kBlockK, Format::kE4M3FN, p);
    const std::vector<std::int64_t> counts = routed_counts(o.tokens, o.experts);
    o.grouped = make_grouped_problem(m_contiguous_layout_from_counts(counts, rows), 0, kN, kK,
                                     kDeepSeekBlocks, true);
    for (std::size_t e = 0; e < o.experts; ++e) {
      const BlockQuantized b = quantize_block(normal_data(kN * kK, kSeed + 1 + e), kN, kK, kBlockK,
                                              kBlockK, Format::kE4M3FN, p);
      // Expert 0 with all of A is the dense problem; the others only need B decoded.
      GemmProblem d = block_gemm_problem(e == 0 ? a : one_row, b);
      if (e == 0) {
        o.grouped.a = d.a;  // rows in expert order: the routed activations, permuted
        o.grouped.a_scale = d.a_scale;
        o.dense = d;
      }
      std::copy(d.b.begin(), d.b.end(), o.grouped.b.begin() + static_cast<long>(e * kN * kK));
      std::copy(d.b_scale.begin(), d.b_scale.end(),
                o.grouped.b_scale.begin() + static_cast<long>(e * d.b_scale.size()));
    }
    const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
    const auto empty = std::count(counts.begin(), counts.end(), 0);
    o.label = "T=" + std::to_string(o.tokens) + " E=" + std::to_string(o.experts) +
              " top8 rows=" + std::to_string(rows) + " N=512 K=7168 group rows " +
              std::to_string(*lo) + ".." + std::to_string(*hi) + " empty " + std::to_string(empty) +
              " seed=" + std::to_string(kSeed);
    return o;
  }();
  return ops;
}

void set_rate(benchmark::State& state, std::size_t rows) {
  state.counters["MAC/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(rows) * kN * kK,
      benchmark::Counter::kIsRate);
}

void BM_DenseExact(benchmark::State& state) {
  const Operands& o = operands();
  for (auto _ : state) {
    GemmOutput c = exact_gemm(o.dense, OutputFormat::kBf16);
    benchmark::DoNotOptimize(c.bf16.data());
  }
  set_rate(state, o.dense.m);
  state.SetLabel(o.label);
}

void BM_GroupedExact(benchmark::State& state) {
  const Operands& o = operands();
  for (auto _ : state) {
    GemmOutput c = exact_grouped_gemm(o.grouped, OutputFormat::kBf16);
    benchmark::DoNotOptimize(c.bf16.data());
  }
  set_rate(state, o.dense.m);
  state.SetLabel(o.label);
}

}  // namespace
}  // namespace mxgate

int main(int argc, char** argv) {
  std::printf(
      "bench_grouped_gemm_oracle: DeepSeek-V3 MoE w13 at TP 8 (N=512, K=7168), block FP8 "
      "(vllm_group_quant) of N(0,1) data, seed %llu; grouped vs dense on the same FLOPs, bf16 "
      "output\n",
      static_cast<unsigned long long>(mxgate::kSeed));
  benchmark::RegisterBenchmark("BM_DenseExact", mxgate::BM_DenseExact)
      ->Iterations(2)
      ->Unit(benchmark::kSecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BM_GroupedExact", mxgate::BM_GroupedExact)
      ->Iterations(2)
      ->Unit(benchmark::kSecond)
      ->UseRealTime();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
