// Speed of the format encoders and of the exhaustive 2^32 sweep with its oracle check
// (goal: a full sweep of one format in at most 10 s on a 2-core CI machine).
//   build/default/bench/bench_encode_sweep --benchmark_filter=Throughput   (fast)
//   build/default/bench/bench_encode_sweep --benchmark_filter=FullSweep    (about a minute)
#include <benchmark/benchmark.h>

#include "reference/convention.h"
#include "reference/e8m0.h"
#include "reference/encode_oracle.h"

namespace mxgate {
namespace {

// Encoder alone: every 16th fp32 pattern of the whole space, one thread.
void BM_EncoderThroughput(benchmark::State& state, Format f, const char* convention) {
  const EncodePolicy p = require_convention(convention).element;
  uint64_t acc = 0;
  for (auto _ : state) {
    for (uint64_t b = 0; b < (1ull << 32); b += 4096) {
      acc += encode(f, float_of(static_cast<uint32_t>(b)), p);
    }
  }
  benchmark::DoNotOptimize(acc);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * (1 << 20));
}

void BM_E8m0Throughput(benchmark::State& state) {
  uint64_t acc = 0;
  for (auto _ : state) {
    for (uint64_t b = 0; b < (1ull << 32); b += 4096) {
      acc += encode_e8m0(float_of(static_cast<uint32_t>(b)), E8m0Encode::kCeilSat);
    }
  }
  benchmark::DoNotOptimize(acc);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * (1 << 20));
}

// The whole 2^32 sweep with the oracle check, on every core, as the exhaustive tests run it.
void BM_FullSweep(benchmark::State& state, Format f, const char* convention) {
  const EncodePolicy p = require_convention(convention).element;
  for (auto _ : state) {
    const SweepResult r = sweep_encoder(f, p, 0, 1ull << 32);
    if (r.mismatches) state.SkipWithError(r.describe("sweep").c_str());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) << 32);
}

void BM_FullSweepE8m0(benchmark::State& state) {
  for (auto _ : state) {
    const SweepResult r = sweep_e8m0(E8m0Encode::kCeilSat, 0, 1ull << 32);
    if (r.mismatches) state.SkipWithError(r.describe("sweep").c_str());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) << 32);
}

BENCHMARK_CAPTURE(BM_EncoderThroughput, e4m3fn_cuda_satfinite, Format::kE4M3FN, "cuda_satfinite");
BENCHMARK_CAPTURE(BM_EncoderThroughput, e5m2_torch_2_11, Format::kE5M2, "torch_2_11");
BENCHMARK_CAPTURE(BM_EncoderThroughput, e4m3fnuz_torch_2_11, Format::kE4M3FNUZ, "torch_2_11");
BENCHMARK_CAPTURE(BM_EncoderThroughput, bf16, Format::kBF16, "torch_2_11");
BENCHMARK(BM_E8m0Throughput);
BENCHMARK_CAPTURE(BM_FullSweep, e4m3fn_cuda_satfinite, Format::kE4M3FN, "cuda_satfinite")
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_FullSweep, e5m2_torch_2_11, Format::kE5M2, "torch_2_11")
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_FullSweepE8m0)->Iterations(1)->UseRealTime()->Unit(benchmark::kSecond);

}  // namespace
}  // namespace mxgate

BENCHMARK_MAIN();
