// Speed of the exact GEMM oracle (exact_gemm, fp32 output rounded once) at production shapes,
// side by side with an Eigen fp64 GEMM (MatrixXd a * b.transpose()) of the same dequantized
// operands: the price of exactness over a plain double GEMM.
//   MXFP8      (M, N, K) = (256, 5120, 2304): 1x32 blocks, e8m0 scales (ocp_mx quantizer)
//   block FP8  (M, N, K) = (256, 7168, 2048): 1x128 / 128x128 blocks, fp32 non-power-of-two
//              scales (vllm_group_quant quantizer)
// Operands: quantize_mx / quantize_block of seeded N(0, 1) data; the seed is in every label.
//   build/h5/bench/bench_gemm_oracle      (about a minute on one core)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "reference/block_quant.h"
#include "reference/convention.h"
#include "reference/dequant.h"  // mx_gemm_problem, block_gemm_problem
#include "reference/gemm_oracle.h"
#include "reference/mx_quant.h"
#include "reference/quant_conventions.h"
#include "tests/normal_data.h"

#ifdef MXGATE_HAVE_EIGEN
#include <Eigen/Dense>
#endif

namespace mxgate {
namespace {

constexpr uint64_t kSeed = 20240611;

using test_support::normal_data;

// One shape's operands: the oracle's decoded problem (values and scales, as kernels see them).
struct Operands {
  std::string label;
  GemmProblem problem;
};

const Operands& mxfp8_operands() {
  static const Operands ops = [] {
    const std::size_t m = 256, n = 5120, k = 2304;
    const MxPolicy p = require_mx_policy(require_convention("ocp_mx"));
    const MxQuantized a = quantize_mx(normal_data(m * k, kSeed), m, k, Format::kE4M3FN, p);
    const MxQuantized b = quantize_mx(normal_data(n * k, kSeed + 1), n, k, Format::kE4M3FN, p);
    Operands o;
    o.label = "mxfp8 256x5120x2304 seed=" + std::to_string(kSeed);
    o.problem = mx_gemm_problem(a, b, E8m0Decode::kOcp);
    return o;
  }();
  return ops;
}

const Operands& block_fp8_operands() {
  static const Operands ops = [] {
    const std::size_t m = 256, n = 7168, k = 2048;
    const BlockPolicy p =
        require_block_policy(require_convention("vllm_group_quant"), Format::kE4M3FN, false);
    const BlockQuantized a =
        quantize_block(normal_data(m * k, kSeed + 2), m, k, 1, kBlockK, Format::kE4M3FN, p);
    const BlockQuantized b =
        quantize_block(normal_data(n * k, kSeed + 3), n, k, kBlockK, kBlockK, Format::kE4M3FN, p);
    Operands o;
    o.label = "block_fp8 256x7168x2048 fp32-scales seed=" + std::to_string(kSeed);
    o.problem = block_gemm_problem(a, b);
    return o;
  }();
  return ops;
}

void set_rate(benchmark::State& state, const GemmProblem& p) {
  state.counters["MAC/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(p.m) *
                             static_cast<double>(p.n) * static_cast<double>(p.k),
                         benchmark::Counter::kIsRate);
}

void BM_ExactOracle(benchmark::State& state, const Operands& (*operands)()) {
  const Operands& o = operands();
  ExactStats stats;
  for (auto _ : state) {
    stats = {};
    GemmOutput c = exact_gemm(o.problem, OutputFormat::kFp32, {false, &stats});
    benchmark::DoNotOptimize(c.fp32.data());
  }
  // Which exact path ran, per iteration (gemm_oracle.h ExactStats).
  state.counters["direct"] = static_cast<double>(stats.direct_elements);
  state.counters["range_sums"] = static_cast<double>(stats.range_sums);
  state.counters["general"] = static_cast<double>(stats.general_products);
  set_rate(state, o.problem);
  state.SetLabel(o.label);
}

#ifdef MXGATE_HAVE_EIGEN
// Dequantized operand value * scale in double: exact (24-bit x 4-bit significands), so Eigen
// multiplies the very operands the oracle sums; fp32 dequantization would round them (fp32
// scales) and change the problem.
Eigen::MatrixXd dequantized(const GemmProblem& p, bool a_side) {
  const std::size_t rows = a_side ? p.m : p.n;
  Eigen::MatrixXd out(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(p.k));
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t k = 0; k < p.k; ++k) {
      out(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(k)) =
          a_side ? static_cast<double>(p.a[r * p.k + k]) * p.scale_a(r, k)
                 : static_cast<double>(p.b[r * p.k + k]) * p.scale_b(r, k);
    }
  }
  return out;
}

void BM_EigenFp64(benchmark::State& state, const Operands& (*operands)()) {
  const Operands& o = operands();
  const GemmProblem& p = o.problem;
  const Eigen::MatrixXd a = dequantized(p, true);
  const Eigen::MatrixXd b = dequantized(p, false);
  Eigen::MatrixXd c;
  for (auto _ : state) {
    c.noalias() = a * b.transpose();
    benchmark::DoNotOptimize(c.data());
  }
  // Sanity: Eigen multiplied the same operands. Its double result against the exact one over the
  // first 4 rows, relative to their largest |C| (only double rounding in the sums differs).
  GemmProblem head = p;
  head.m = 4;
  head.a.resize(4 * p.k);
  head.a_scale.resize(head.a_scale_rows() * head.a_scale_cols());
  const std::vector<double> exact = exact_gemm_fp64(head);
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    const double e = c(static_cast<Eigen::Index>(i / p.n), static_cast<Eigen::Index>(i % p.n));
    worst = std::max(worst, std::fabs(e - exact[i]));
    scale = std::max(scale, std::fabs(exact[i]));
  }
  state.counters["max_rel_err"] = worst / scale;
  if (!(worst <= 1e-9 * scale)) state.SkipWithError("Eigen result differs from the oracle");
  set_rate(state, p);
  state.SetLabel(o.label);
}
#endif

// Each benchmark on each shape (names BM_ExactOracle/mxfp8 ...), three iterations: the operands
// are large and the timings steady.
void register_benchmarks() {
  using Bench = void (*)(benchmark::State&, const Operands& (*)());
  std::vector<std::pair<std::string, Bench>> benches = {{"BM_ExactOracle", BM_ExactOracle}};
#ifdef MXGATE_HAVE_EIGEN
  benches.emplace_back("BM_EigenFp64", BM_EigenFp64);
#endif
  const std::pair<const char*, const Operands& (*)()> shapes[] = {
      {"mxfp8", mxfp8_operands}, {"block_fp8", block_fp8_operands}};
  for (const auto& [bench_name, bench] : benches) {
    for (const auto& [shape, operands] : shapes) {
      benchmark::RegisterBenchmark((bench_name + "/" + shape).c_str(), bench, operands)
          ->Iterations(3)
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace
}  // namespace mxgate

int main(int argc, char** argv) {
  std::printf(
      "bench_gemm_oracle: operands from quantize_mx / quantize_block of N(0,1) data, "
      "std::mt19937_64 seed %llu (A: seed, B: seed+1; block FP8: seed+2, seed+3)\n",
      static_cast<unsigned long long>(mxgate::kSeed));
#ifndef MXGATE_HAVE_EIGEN
  std::printf("Eigen3 not found at configure time: the Eigen fp64 baseline is not built\n");
#endif
  mxgate::register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
