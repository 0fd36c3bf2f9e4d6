// The exhaustive device check of a cast op (gpu/kernels/cast_sweep) against the cast kernel
// alone, side by side in one run, for every op of plugins/cuda_fp8 (loaded with dlopen from the
// build tree, or MXGATE_PLUGIN_DIR). Per op, device milliseconds for all 2^32 fp32 inputs:
//   cast_alone/OP       op.run over the resident inputs, nothing else
//   checked_sweep/OP    poison + op.run + on-device compare with the reference's run tables
//   checked_sweep_regen/OP  the same with inputs regenerated per chunk (no 16 GiB resident set)
// Goal: checked_sweep <= 50 ms per format on the H200. Figures: docs/nvidia.md §5.
// Exit 3 without a CUDA device or when the plugin does not load.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gpu/kernels/cast_sweep/cast_sweep.h"
#include "mxgate/plugin.h"

namespace {

std::string plugin_path() {
  if (const char* dir = std::getenv("MXGATE_PLUGIN_DIR")) {
    return std::string(dir) + "/libmxgate_cuda_fp8.so";
  }
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string exe = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "./x";
  return exe.substr(0, exe.rfind('/')) + "/../plugins/cuda_fp8/libmxgate_cuda_fp8.so";
}

mxgate_dtype target(const mxgate_op& op) {
  for (uint32_t d = 1; d < 64; ++d) {
    if (op.contract.out_dtypes & MXGATE_DTYPE_BIT(d)) return static_cast<mxgate_dtype>(d);
  }
  return MXGATE_DTYPE_NONE;
}

struct OpCase {
  const mxgate_op* op;
  mxgate_dtype out;
  mxgate::sweep::RunTable table;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (!mxgate::sweep::CastSweeper::device_present()) {
    std::fprintf(stderr, "bench_gpu_cast_sweep: no CUDA device\n");
    return 3;
  }
  const std::string path = plugin_path();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  auto entry =
      h ? reinterpret_cast<mxgate_plugin_entry_fn>(dlsym(h, MXGATE_PLUGIN_ENTRY_SYMBOL)) : nullptr;
  const mxgate_plugin* p = entry ? entry() : nullptr;
  if (p == nullptr) {
    std::fprintf(stderr, "bench_gpu_cast_sweep: %s: %s\n", path.c_str(),
                 h ? "no entry" : dlerror());
    return 3;
  }
  if (const char* why = p->init ? p->init() : nullptr) {
    std::fprintf(stderr, "bench_gpu_cast_sweep: %s\n", why);
    return 3;
  }
  static std::vector<OpCase> cases;
  for (uint32_t j = 0; j < p->impls[0].op_count; ++j) {
    const mxgate_op& op = p->impls[0].ops[j];
    std::string why;
    auto t = mxgate::sweep::expected_runs(op.contract.convention, target(op), &why);
    if (!t) {
      std::fprintf(stderr, "bench_gpu_cast_sweep: %s: %s\n", op.name, why.c_str());
      return 2;
    }
    cases.push_back({&op, target(op), std::move(*t)});
  }
  static std::unique_ptr<mxgate::sweep::CastSweeper> resident;
  static std::unique_ptr<mxgate::sweep::CastSweeper> regen;
  try {
    resident = std::make_unique<mxgate::sweep::CastSweeper>();
    regen = std::make_unique<mxgate::sweep::CastSweeper>(uint64_t{1} << 28, false);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu_cast_sweep: %s\n", e.what());
    return 3;
  }
  std::printf("inputs %s; one-time fill of all 2^32 inputs: %.3f ms\n",
              resident->inputs_resident() ? "resident" : "NOT resident", resident->fill_ms());
  for (const OpCase& c : cases) {
    const OpCase* pc = &c;
    benchmark::RegisterBenchmark(
        ("cast_alone/" + std::string(c.op->name)).c_str(),
        [pc](benchmark::State& st) {
          for (auto _ : st) {
            st.SetIterationTime(resident->cast_only_ms(*pc->op, pc->out) / 1e3);
          }
        })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(10);
    for (int variant = 0; variant < 2; ++variant) {
      const std::string name =
          (variant == 0 ? "checked_sweep/" : "checked_sweep_regen/") + std::string(c.op->name);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [pc, variant](benchmark::State& st) {
                                     mxgate::sweep::CastSweeper& s =
                                         variant == 0 ? *resident : *regen;
                                     uint64_t mismatches = 0;
                                     for (auto _ : st) {
                                       const auto r = s.sweep(*pc->op, pc->out, pc->table);
                                       if (r.status != MXGATE_DONE) {
                                         st.SkipWithError(r.message.c_str());
                                         break;
                                       }
                                       mismatches = r.mismatches;
                                       st.SetIterationTime(r.device_ms / 1e3);
                                     }
                                     st.counters["mismatches"] = static_cast<double>(mismatches);
                                   })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(10);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
