// The host cast survey's own cost against the op's: `survey_cast` over all 2^32 fp32 inputs
// (properties/cast_survey.h, the path of `mxgate survey --cast-inputs all` for a host op) beside
// the op's own call loop over the same inputs, the survey's goal being at most 2x the op's time
// (docs/python.md §14.5). The op is this file's: a branch-free fp32 -> e4m3fn cast (RNE, finite
// overflow and Inf -> 448, NaN -> 0x7F: the cuda_satfinite claim) spread over every core by its
// own threads, as torch's CPU cast is; a fast op, so the survey's work shows. The op's loop
// generates each chunk's inputs outside the clock (as scripts/h200/own_cast_time.py does for the
// libraries). The survey must find the op bit-exact with cuda_satfinite, else the benchmark
// reports an error; its label lists every claim table's mismatches and first differing input
// (count@input). Uses only survey_cast's signature, so older trees build it too
// (bench/README.md).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "gpu/host/host_backend.h"
#include "impl/op.h"
#include "properties/cast_survey.h"
#include "properties/worker_pool.h"

namespace {

using mxgate::impl::Dtype;

// The op's threads (persistent, as a library's intra-op pool): a pool of its own, apart from the
// survey's (properties::WorkerPool::shared()), as torch's intra-op threads are.
mxgate::properties::WorkerPool& op_threads() {
  static mxgate::properties::WorkerPool t;
  return t;
}

// fp32 bits -> e4m3fn code, cuda_satfinite: RNE, |x| >= 448 (Inf included) -> 448, NaN -> 0x7F.
inline uint8_t e4m3_satfinite(uint32_t u) {
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t a = u & 0x7FFFFFFFu;
  const uint32_t normal = ((a + 0x7FFFFu + ((a >> 20) & 1u)) >> 20) - (120u << 3);
  float f;
  std::memcpy(&f, &a, 4);
  const float y = f * 512.0f + 8388608.0f;  // below 2^-6: |x| in units of 2^-9, RNE
  uint32_t yb;
  std::memcpy(&yb, &y, 4);
  const uint32_t sub = yb - 0x4B000000u;
  uint32_t code = a < 0x3C800000u ? sub : normal;
  code = a >= 0x43E00000u ? 0x7Eu : code;
  return a > 0x7F800000u ? uint8_t{0x7F} : static_cast<uint8_t>(sign | code);
}

// `count` inputs to codes on every core.
void cast_all(const uint32_t* in, uint8_t* out, std::size_t count) {
  mxgate::properties::WorkerPool& t = op_threads();
  const std::size_t parts = t.size() * 4;
  t.run(parts, [&](std::size_t p) {
    const std::size_t lo = count * p / parts, hi = count * (p + 1) / parts;
    for (std::size_t i = lo; i < hi; ++i) out[i] = e4m3_satfinite(in[i]);
  });
}

mxgate::impl::Op bench_op() {
  mxgate::impl::Op op;
  op.name = "cast_e4m3fn_fast";
  op.impl = "bench";
  op.family = mxgate::impl::Family::kCast;
  op.memory = mxgate::impl::Memory::kHost;
  op.contract.a_dtypes = mxgate::impl::dtype_bit(Dtype::kF32);
  op.contract.out_dtypes = mxgate::impl::dtype_bit(Dtype::kE4m3fn);
  op.contract.conventions = {"cuda_satfinite"};
  op.run = [](mxgate::gpu::Backend& be, const mxgate::impl::Call& call, std::string&) {
    cast_all(static_cast<const uint32_t*>(be.address(call.a.buffer)),
             static_cast<uint8_t*>(be.address(call.out.buffer)), call.k);
    return mxgate::impl::Status::kDone;
  };
  return op;
}

constexpr uint64_t kAll = uint64_t{1} << 32;

// The op's own loop over all inputs in chunks of 2^range(0), inputs made outside the clock.
void BM_OpAlone(benchmark::State& state) {
  const std::size_t chunk = std::size_t{1} << state.range(0);
  std::vector<uint32_t> in(chunk);
  std::vector<uint8_t> out(chunk);
  for (auto _ : state) {
    double spent = 0;
    for (uint64_t lo = 0; lo < kAll; lo += chunk) {
      for (std::size_t i = 0; i < chunk; ++i) in[i] = static_cast<uint32_t>(lo + i);
      const auto t0 = std::chrono::steady_clock::now();
      cast_all(in.data(), out.data(), chunk);
      spent += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      benchmark::DoNotOptimize(out.data());
    }
    state.SetIterationTime(spent);
  }
}

// The survey of the same op over all inputs (its timed sweep; setup apart), chunks of 2^range(0).
void BM_Survey(benchmark::State& state) {
  mxgate::gpu::HostBackend be;
  const mxgate::impl::Op op = bench_op();
  for (auto _ : state) {
    const mxgate::properties::CastSurvey s = mxgate::properties::survey_cast(
        be, op, Dtype::kE4m3fn, mxgate::properties::CastInputs::kAll,
        uint64_t{1} << state.range(0));
    const std::vector<std::string> m = s.matches();
    if (!s.error.empty() || s.inputs != kAll ||
        std::find(m.begin(), m.end(), "cuda_satfinite") == m.end()) {
      state.SkipWithError(
          ("the survey did not find the op bit-exact with cuda_satfinite: " + s.error).c_str());
      break;
    }
    state.SetIterationTime(s.seconds);
    state.counters["setup_s"] = s.setup_seconds;
    // Every table's count and first difference, so two builds' results can be compared too.
    std::string label;
    for (const mxgate::properties::ClaimResult& r : s.results) {
      label += std::to_string(r.mismatches) + "@" +
               (r.first_input ? std::to_string(*r.first_input) : std::string("-")) + " ";
    }
    state.SetLabel(label);
  }
}

BENCHMARK(BM_OpAlone)->Arg(22)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);
BENCHMARK(BM_Survey)->Arg(22)->Arg(24)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
