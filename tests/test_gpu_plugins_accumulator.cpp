// Covers the Hopper FP8 accumulator as cuBLASLt runs it (test_gpu_plugins, cuda preset), probed
// through the cublaslt plugin's GEMM ops (Fasi et al., PeerJ CS 2021 method): the significant
// bits kept relative to the largest term, how the dropped bits go and the promotion chunk must
// equal what docs/nvidia.md §4 documents (gpu_plugins_gemm.h holds the figures).
// Every test SKIPS without a CUDA device.
// Reproduce: build/cuda/tests/test_gpu_plugins --gtest_filter=*AccumulatorProbe*.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/gpu_plugins_gemm.h"

namespace mxgate {
namespace {

using namespace plugin_test;

// ---- The accumulator probe ---------------------------------------------------------------------

struct Term {
  size_t k;
  float a, b;
};

// C[0][0] of a 4 x 8 x K product whose only nonzero entries are `terms` in row 0 of A and B,
// every scale 1. Also returns cuBLASLt's note on the algorithm it ran.
double probe(const mxgate_op& op, size_t k, const std::vector<Term>& terms, std::string* note) {
  const GemmOpInfo info = info_of(op);
  GemmCase c = make_case(op, {4, 8, k});
  for (const Term& t : terms) {
    set_a(c, info.fa, 0, t.k, t.a);
    set_b(c, info.fb, 0, t.k, t.b);
  }
  const GemmRun r = run_gemm(op, c);
  if (note) *note = r.message;
  if (r.status != MXGATE_DONE) return std::nan("");
  return value_at(r.out, 0, 0);
}

// A product of value s * 2^e (s in {1, 1.25, 1.5, 1.75}, sign included) as two e4m3 factors.
Term small_term(size_t k, double s, int e) {
  int ea = std::clamp(e, -6, 7);
  int eb = e - ea;
  if (eb < -9) {
    ea = e + 9;
    eb = -9;
  }
  return {k, static_cast<float>(s * std::ldexp(1.0, ea)), std::ldexp(1.0f, eb)};
}

// The Hopper FP8 tensor-core accumulation as cuBLASLt runs it (Fasi, Higham, Mikaitis, Pranesh,
// "Numerical behavior of NVIDIA tensor cores", PeerJ CS 2021): 256*256 at k = 0 plus crafted
// small products. Prints every probe; the derived parameters must equal docs/nvidia.md §4.
TEST_F(GpuPlugins, AccumulatorProbe) {
  const mxgate_plugin* p = plugin("cublaslt");
  ASSERT_NE(p, nullptr);
  for (const char* name : {"tensor_e4m3_e4m3_f32", "block_e4m3_e4m3_f32"}) {
    const mxgate_op* op = nullptr;
    for (const mxgate_op* o : ops_of(p)) {
      if (std::string(o->name) == name) op = o;
    }
    ASSERT_NE(op, nullptr) << name;
    const size_t K = 1024;
    const Term big{0, 256.0f, 256.0f};
    std::string note;
    const double base = probe(*op, K, {big}, &note);
    std::printf("PROBE %s K=%zu: 256*256 alone = %.10g [%s]\n", name, K, base, note.c_str());
    if (base != 65536.0) {
      ADD_FAILURE() << name << ": 256*256 alone gave " << base << " [" << note << "]";
      continue;
    }

    // 1. Precision relative to the largest term: 2^16 + 2^e in the same k-group.
    int lowest_kept = 16;  // the lowest e with every 2^e' (e' >= e) kept whole
    bool contiguous = true;
    for (int e = 15; e >= -18; --e) {
      const double got = probe(*op, K, {big, small_term(1, 1.0, e)}, nullptr) - 65536.0;
      const double t = std::ldexp(1.0, e);
      std::printf("PROBE %s precision: 2^16 + 2^%d (k=1) -> 2^16 + %.10g (%s)\n", name, e, got,
                  got == t   ? "kept"
                  : got == 0 ? "lost"
                             : "partial");
      if (got == t && contiguous) {
        lowest_kept = e;
      } else {
        contiguous = false;
      }
    }
    const int bits = 16 - lowest_kept + 1;
    std::printf("PROBE %s: lowest kept 2^%d: %d significant bits relative to the largest term\n",
                name, lowest_kept, bits);

    // 2. What happens to the dropped bits: s * 2^e0 with e0 the lowest kept bit.
    const int e0 = lowest_kept;
    const double u = std::ldexp(1.0, e0);
    std::map<double, double> units;
    for (double s : {1.25, 1.5, 1.75, -0.25, -0.75, -1.25}) {
      const Term t = std::fabs(s) < 1 ? small_term(1, s * 4, e0 - 2) : small_term(1, s, e0);
      const double got = (probe(*op, K, {big, t}, nullptr) - 65536.0) / u;
      units[s] = got;
      std::printf("PROBE %s rounding: 2^16 + %g * 2^%d -> 2^16 + %g * 2^%d\n", name, s, e0, got,
                  e0);
    }
    const bool rz = units[1.25] == 1 && units[1.5] == 1 && units[1.75] == 1 && units[-0.25] == 0 &&
                    units[-0.75] == 0 && units[-1.25] == -1;
    const bool rn = units[1.25] == 1 && units[1.5] == 2 && units[1.75] == 2 && units[-0.25] == 0 &&
                    units[-0.75] == -1 && units[-1.25] == -1;
    const bool rd = units[1.25] == 1 && units[1.5] == 1 && units[1.75] == 1 && units[-0.25] == -1 &&
                    units[-0.75] == -1 && units[-1.25] == -2;
    const std::string rounding = rz ? "truncate" : rn ? "nearest_even" : rd ? "floor" : "other";
    std::printf("PROBE %s: dropped bits: %s\n", name, rounding.c_str());

    // 3. The promotion chunk: 2^-2 at position p after the big term (and pairs across chunks).
    int chunk = 0;
    for (size_t pos : {1,  2,  4,  8,   15,  16,  17,  31,  32,  33,  63,
                       64, 65, 95, 127, 128, 129, 191, 255, 256, 384, 512}) {
      const double got = probe(*op, K, {big, small_term(pos, 1.0, -2)}, nullptr);
      std::printf("PROBE %s chunk: 2^16 (k=0) + 2^-2 (k=%zu) -> %.10g\n", name, pos, got);
      if (chunk == 0 && got != 65536.0) chunk = static_cast<int>(pos);
    }
    for (auto [kb, ks] : std::vector<std::pair<size_t, size_t>>{
             {100, 127}, {127, 128}, {64, 130}, {130, 250}, {255, 256}, {200, 383}}) {
      const double got =
          probe(*op, K, {Term{kb, 256.0f, 256.0f}, small_term(ks, 1.0, -2)}, nullptr);
      std::printf("PROBE %s chunk: 2^16 (k=%zu) + 2^-2 (k=%zu) -> %.10g\n", name, kb, ks, got);
    }
    // 4. Many dropped terms: summed before alignment, or each dropped?
    for (auto [from, count] : std::vector<std::pair<size_t, size_t>>{{1, 31}, {32, 32}, {1, 64}}) {
      std::vector<Term> ts{big};
      for (size_t q = 0; q < count; ++q) ts.push_back(small_term(from + q, 1.0, -2));
      const double got = probe(*op, K, ts, nullptr);
      std::printf("PROBE %s group: 2^16 + %zu x 2^-2 at k=%zu..%zu -> 2^16 + %.10g\n", name, count,
                  from, from + count - 1, got - 65536.0);
    }
    std::printf("ACCUMULATOR %s: bits_kept=%d rounding=%s chunk=%d\n", name, bits, rounding.c_str(),
                chunk);
    EXPECT_EQ(bits, kAccumBitsKept) << name;
    EXPECT_EQ(rounding, kAccumRounding) << name;
    EXPECT_EQ(chunk, kAccumChunk) << name;
  }
}

}  // namespace
}  // namespace mxgate
