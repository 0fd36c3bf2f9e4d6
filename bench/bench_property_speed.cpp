// Property cases per second in process, the C++ figure beside mxgate.check's (docs/python.md
// §12; bench/python_check_speed.py runs both): gemm.exact on the example plugin's gemm_mx (C:
// dequantize, fp32 sums) with its contract limited to M, N, K <= 256, the shapes of the Python
// figures (and <= 64). Reported as items (cases) per second.
#include <benchmark/benchmark.h>

#include "gpu/host/host_backend.h"
#include "impl/registry.h"
#include "properties/property.h"

namespace {

using mxgate::impl::Implementation;

Implementation small_example(uint64_t limit) {
  return [limit] {
    const Implementation& example = *mxgate::impl::resolve("example").front();
    Implementation out;
    out.name = "example_small";
    out.spec = "example";
    mxgate::impl::Op op = *example.find_op("gemm_mx");
    op.contract.m.max = op.contract.n.max = op.contract.k.max = limit;
    op.impl = out.name;
    out.ops.push_back(op);
    return out;
  }();
}

void BM_GemmExactCases(benchmark::State& state) {
  mxgate::gpu::HostBackend be;
  const Implementation im = small_example(static_cast<uint64_t>(state.range(1)));
  const mxgate::properties::Context ctx{&be, {}, nullptr, &im};
  const auto* p = mxgate::properties::find_property("gemm.exact");
  mxgate::properties::RunOptions ro;
  ro.cases = static_cast<int>(state.range(0));
  int cases = 0;
  for (auto _ : state) {
    const auto r = mxgate::properties::run_property(*p, ctx, ro);
    if (!r.passed) state.SkipWithError("gemm.exact failed on the example plugin");
    cases += r.cases;
    ++ro.seed;
  }
  state.SetItemsProcessed(cases);
}
BENCHMARK(BM_GemmExactCases)->Args({200, 256})->Args({200, 64})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
