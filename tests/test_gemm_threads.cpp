// Covers the multi-threaded exact GEMM engine (reference/gemm_oracle_engine.cpp with
// reference/parallel.h): exact_gemm (fp32, bf16), exact_gemm_fp64, its path statistics and
// compute_bounds give identical results for 1, 2, 3 and 8 threads on problems that take every
// path (direct double sums under power-of-two scales, exact range sums under fp32 scales, the
// general path with NaN / Inf and forced) at shapes with partial tiles (M not a multiple of 8, N
// not a multiple of 64, M = 1); parallel_for visits every item once and rethrows a worker's
// exception.
// Does not cover: the engine's exactness (test_gemm_oracle_exact), speed
// (bench/bench_gemm_threads).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/format.h"
#include "reference/gemm_oracle.h"
#include "reference/parallel.h"

namespace mxgate {
namespace {

using std::size_t;

float random_e4m3(std::mt19937_64& rng) {
  for (;;) {
    const float v = decode(Format::kE4M3FN, static_cast<uint32_t>(rng() & 0xFF));
    if (!std::isnan(v)) return v;
  }
}

enum class Kind { kPow2Scales, kFp32Scales, kSpecials };

GemmProblem problem(size_t m, size_t n, size_t k, Kind kind, uint64_t seed) {
  const BlockSizes blocks = kind == Kind::kPow2Scales ? kMxfp8Blocks : kDeepSeekBlocks;
  GemmProblem p = make_gemm_problem(m, n, k, blocks, true);
  std::mt19937_64 rng(seed);
  for (float& x : p.a) x = random_e4m3(rng);
  for (float& x : p.b) x = random_e4m3(rng);
  for (float& s : p.a_scale) {
    s = kind == Kind::kPow2Scales ? std::ldexp(1.0f, static_cast<int>(rng() % 9) - 4)
                                  : 0.001f + static_cast<float>(rng() % 1000) / 7919;
  }
  for (float& s : p.b_scale) {
    s = kind == Kind::kPow2Scales ? std::ldexp(1.0f, static_cast<int>(rng() % 9) - 4)
                                  : 0.002f + static_cast<float>(rng() % 1000) / 6007;
  }
  if (kind == Kind::kSpecials) {
    p.a[3] = std::numeric_limits<float>::infinity();
    p.b[5 * k + 7] = std::numeric_limits<float>::quiet_NaN();
    p.a[(m - 1) * k] = 0x1p100f;  // a range too wide for one double sum
  }
  return p;
}

struct EngineRun {
  std::vector<float> fp32;
  std::vector<uint16_t> bf16;
  std::vector<double> fp64;
  ExactStats stats;
};

EngineRun run(const GemmProblem& p, unsigned threads, bool general) {
  EngineRun r;
  ExactOptions o;
  o.threads = threads;
  o.force_general_path = general;
  o.stats = &r.stats;
  r.fp32 = exact_gemm(p, OutputFormat::kFp32, o).fp32;
  r.bf16 = exact_gemm(p, OutputFormat::kBf16, o).bf16;
  r.fp64 = exact_gemm_fp64(p, o);
  return r;
}

// Bitwise equality of float vectors (NaN == NaN).
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Guards against results or path statistics that depend on the thread count (a tile computed
// twice, skipped, or by a worker with stale packed panels).
TEST(GemmThreads, ResultsIndependentOfTheThreadCount) {
  struct Case {
    size_t m, n, k;
    Kind kind;
    bool general;
  };
  const std::vector<Case> cases = {
      {37, 150, 700, Kind::kPow2Scales, false}, {1, 333, 256, Kind::kFp32Scales, false},
      {130, 70, 300, Kind::kFp32Scales, false}, {20, 90, 160, Kind::kSpecials, false},
      {9, 17, 96, Kind::kPow2Scales, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("M=" + std::to_string(c.m) + " N=" + std::to_string(c.n) +
                 " K=" + std::to_string(c.k) + " kind=" + std::to_string(int(c.kind)));
    const GemmProblem p = problem(c.m, c.n, c.k, c.kind, c.m + c.n);
    const EngineRun one = run(p, 1, c.general);
    for (unsigned t : {2u, 3u, 8u}) {
      const EngineRun many = run(p, t, c.general);
      EXPECT_TRUE(same_bits(many.fp32, one.fp32)) << t;
      EXPECT_TRUE(same_bits(many.bf16, one.bf16)) << t;
      EXPECT_TRUE(same_bits(many.fp64, one.fp64)) << t;
      EXPECT_EQ(many.stats.direct_elements, one.stats.direct_elements) << t;
      EXPECT_EQ(many.stats.range_sums, one.stats.range_sums) << t;
      EXPECT_EQ(many.stats.general_products, one.stats.general_products) << t;
    }
  }
}

// Guards against compute_bounds depending on the thread count (it runs the engine twice);
// the count comes from MXGATE_THREADS here.
TEST(GemmThreads, BoundsIndependentOfTheThreadCount) {
  const GemmProblem p = problem(19, 80, 400, Kind::kFp32Scales, 4);
  const char* saved = std::getenv("MXGATE_THREADS");
  const std::string restore = saved ? saved : "";
  setenv("MXGATE_THREADS", "1", 1);
  const GemmBounds one = compute_bounds(p, AccumModel{});
  setenv("MXGATE_THREADS", "3", 1);
  EXPECT_EQ(thread_count(), 3u);
  const GemmBounds three = compute_bounds(p, AccumModel{});
  if (saved) {
    setenv("MXGATE_THREADS", restore.c_str(), 1);
  } else {
    unsetenv("MXGATE_THREADS");
  }
  EXPECT_EQ(three.exact, one.exact);
  EXPECT_EQ(three.abs_sum, one.abs_sum);
  EXPECT_EQ(three.bound, one.bound);
}

// Guards against a work splitter that skips or repeats items, or swallows a worker's exception.
TEST(GemmThreads, ParallelForVisitsEveryItemOnceAndRethrows) {
  for (unsigned threads : {1u, 2u, 7u}) {
    std::vector<std::atomic<int>> seen(1000);
    parallel_for(seen.size(), threads, [&](size_t i, unsigned w) {
      ASSERT_LT(w, worker_count(seen.size(), threads));
      seen[i].fetch_add(1);
    });
    for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << i;
    EXPECT_THROW(parallel_for(100, threads,
                              [](size_t i, unsigned) {
                                if (i == 42) throw std::runtime_error("item 42");
                              }),
                 std::runtime_error);
  }
  EXPECT_EQ(worker_count(3, 8), 3u);
  EXPECT_EQ(worker_count(0, 8), 1u);
  EXPECT_EQ(thread_count(5), 5u);
}

}  // namespace
}  // namespace mxgate
