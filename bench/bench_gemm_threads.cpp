// The exact GEMM engine and the bounds on 1 thread and on every core, side by side (wall time):
//   exact_gemm        block FP8 (M, N, K) = (1024, 7168, 2048), fp32 scales (vllm_group_quant):
//                     (N = 7168, K = 2048: a DeepSeek-V3 expert's down projection)
//   compute_bounds    fp32_rn at (256, 2048, 2048) (two exact fp64 GEMMs and the bound loop)
//   compute_bounds    sm90_fp8_mma at the check-gemm shape of docs/nvidia.md §4.2 (64, 256, 2048)
// Operands: quantize_block of seeded N(0, 1) data; the seed is in every label. The thread count
// of the "all" rows is parallel.h thread_count() (MXGATE_THREADS or every core).
//   build/default/bench/bench_gemm_threads      (about half a minute on two cores)
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "reference/accumulator.h"
#include "reference/accumulator_bounds.h"
#include "reference/block_quant.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/gemm_oracle.h"
#include "reference/parallel.h"
#include "reference/quant_conventions.h"
#include "tests/normal_data.h"

namespace mxgate {
namespace {

constexpr uint64_t kSeed = 20240611;

using test_support::normal_data;

GemmProblem block_problem(std::size_t m, std::size_t n, std::size_t k) {
  const BlockPolicy p = *block_policy(*find_convention("vllm_group_quant"), Format::kE4M3FN, false);
  const BlockQuantized a =
      quantize_block(normal_data(m * k, kSeed), m, k, 1, kBlockK, Format::kE4M3FN, p);
  const BlockQuantized b =
      quantize_block(normal_data(n * k, kSeed + 1), n, k, kBlockK, kBlockK, Format::kE4M3FN, p);
  return block_gemm_problem(a, b);
}

const GemmProblem& gemm_shape() {
  static const GemmProblem p = block_problem(1024, 7168, 2048);
  return p;
}
const GemmProblem& bounds_shape() {
  static const GemmProblem p = block_problem(256, 2048, 2048);
  return p;
}
const GemmProblem& stats_shape() {
  static const GemmProblem p = block_problem(64, 256, 2048);
  return p;
}

// state.range(0): threads (0 = every core).
unsigned threads_of(const benchmark::State& state) {
  return thread_count(static_cast<unsigned>(state.range(0)));
}

void label(benchmark::State& state, const GemmProblem& p, const char* what) {
  state.SetLabel(std::string(what) + " " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
                 std::to_string(p.k) + " threads=" + std::to_string(threads_of(state)) +
                 " seed=" + std::to_string(kSeed));
}

void BM_ExactGemmBlock(benchmark::State& state) {
  const GemmProblem& p = gemm_shape();
  ExactOptions o;
  o.threads = threads_of(state);
  for (auto _ : state) {
    GemmOutput c = exact_gemm(p, OutputFormat::kFp32, o);
    benchmark::DoNotOptimize(c.fp32.data());
  }
  label(state, p, "exact_gemm block_fp8");
}

void BM_BoundsFp32Rn(benchmark::State& state) {
  const GemmProblem& p = bounds_shape();
  const AccumulatorModel& m = *find_accumulator("fp32_rn");
  // compute_bounds(AccumModel) takes its thread count from MXGATE_THREADS.
  setenv("MXGATE_THREADS", std::to_string(threads_of(state)).c_str(), 1);
  for (auto _ : state) {
    GemmBounds b = compute_bounds(p, m, OutputFormat::kFp32);
    benchmark::DoNotOptimize(b.bound.data());
  }
  unsetenv("MXGATE_THREADS");
  label(state, p, "compute_bounds fp32_rn");
}

void BM_BoundsSm90(benchmark::State& state) {
  const GemmProblem& p = stats_shape();
  const AccumulatorModel& m = *find_accumulator("sm90_fp8_mma");
  for (auto _ : state) {
    GemmBounds b = compute_bounds(p, m, OutputFormat::kFp32, threads_of(state));
    benchmark::DoNotOptimize(b.bound.data());
  }
  label(state, p, "compute_bounds sm90_fp8_mma");
}

// Arg 1: one thread; Arg 0: every core.
BENCHMARK(BM_ExactGemmBlock)
    ->Arg(1)
    ->Arg(0)
    ->Iterations(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BoundsFp32Rn)
    ->Arg(1)
    ->Arg(0)
    ->Iterations(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BoundsSm90)
    ->Arg(1)
    ->Arg(0)
    ->Iterations(3)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mxgate

BENCHMARK_MAIN();
