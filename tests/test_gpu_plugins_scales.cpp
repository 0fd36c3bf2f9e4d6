// Covers where the cublaslt plugin's scaled GEMM ops read their scales (test_gpu_plugins, cuda
// preset): a fingerprint in which every scale block is its own power of two, so that an output
// built from a misplaced scale names the two scales it used against the two the contract's
// layouts say. Every test SKIPS without a CUDA device.
// Reproduce: build/cuda/tests/test_gpu_plugins --gtest_filter=*GemmScaleLayoutFingerprint*.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/blocks.h"
#include "tests/gpu_plugins_gemm.h"

namespace mxgate {
namespace {

using namespace plugin_test;

// ---- Scale-layout fingerprint ------------------------------------------------------------------

// Every A scale 2^(i - oa) (i = its row-major grid index) and every B scale 2^(SA j - ob) (SA = the
// A grid's size); with the data one-hot in one K block (all ones there, zero elsewhere) each
// output is w * 2^(i + SA j - oa - ob), which names exactly the two scales the kernel applied.
// Returns "" when every output used the scales the contract's layouts say, else the first misplaced
// element.
std::string fingerprint(const mxgate_op& op, const GemmShape& s, size_t* checked) {
  const GemmOpInfo info = info_of(op);
  GemmCase c = make_case(op, s);
  const Grid ga{c.problem.a_scale_rows(), c.problem.a_scale_cols()};
  const Grid gb{c.problem.b_scale_rows(), c.problem.b_scale_cols()};
  const long sa_count = static_cast<long>(ga.rows * ga.cols);
  const long total = sa_count * static_cast<long>(gb.rows * gb.cols);
  const long offset = total / 2;  // centres every scale and product in the fp32 range
  const long offset_a = sa_count / 2, offset_b = offset - offset_a;
  for (size_t i = 0; i < c.problem.a_scale.size(); ++i) {
    c.problem.a_scale[i] = std::ldexp(1.0f, static_cast<int>(static_cast<long>(i) - offset_a));
  }
  for (size_t j = 0; j < c.problem.b_scale.size(); ++j) {
    c.problem.b_scale[j] =
        std::ldexp(1.0f, static_cast<int>(sa_count * static_cast<long>(j) - offset_b));
  }
  const BlockSizes bs = c.problem.blocks;
  const size_t kblocks = ceil_div(s.k, kBlockK);
  for (size_t kb = 0; kb < kblocks; ++kb) {
    GemmCase one = c;
    const size_t k0 = kb * 128, k1 = std::min(s.k, k0 + 128);
    for (size_t r = 0; r < s.m; ++r) {
      for (size_t kk = k0; kk < k1; ++kk) set_a(one, info.fa, r, kk, 1.0f);
    }
    for (size_t r = 0; r < s.n; ++r) {
      for (size_t kk = k0; kk < k1; ++kk) set_b(one, info.fb, r, kk, 1.0f);
    }
    const GemmRun r = run_gemm(op, one);
    if (r.status != MXGATE_DONE) return "call failed: " + r.message;
    if (!r.guards_ok) return "guard band damaged";
    const double w = static_cast<double>(k1 - k0);
    for (size_t i = 0; i < s.m; ++i) {
      for (size_t j = 0; j < s.n; ++j) {
        ++*checked;
        const size_t want_a = (i / bs.a_m) * ga.cols + k0 / bs.a_k;
        const size_t want_b = (j / bs.b_n) * gb.cols + k0 / bs.b_k;
        const double v = value_at(r.out, i, j) / w;
        int e = 0;
        const double frac = std::frexp(v, &e);
        char buf[320];
        if (!(v > 0) || frac != 0.5) {
          std::snprintf(buf, sizeof buf,
                        "C[%zu][%zu], K block %zu: %.9g is not w * a power of two (w = %g): "
                        "expected A scale #%zu, B scale #%zu",
                        i, j, kb, value_at(r.out, i, j), w, want_a, want_b);
          return buf;
        }
        const long code = (e - 1) + offset;
        const long got_b = code / sa_count, got_a = code % sa_count;
        if (code < 0 || got_a != static_cast<long>(want_a) || got_b != static_cast<long>(want_b)) {
          std::snprintf(buf, sizeof buf,
                        "C[%zu][%zu], K block %zu: applied A scale (%ld, %ld) and B scale "
                        "(%ld, %ld) of the logical grids; the layouts say A (%zu, %zu), B "
                        "(%zu, %zu)",
                        i, j, kb, got_a / static_cast<long>(ga.cols),
                        got_a % static_cast<long>(ga.cols), got_b / static_cast<long>(gb.cols),
                        got_b % static_cast<long>(gb.cols), want_a / ga.cols, want_a % ga.cols,
                        want_b / gb.cols, want_b % gb.cols);
          return buf;
        }
      }
    }
  }
  return "";
}

// Every scaled op reads its scales where its contract's layouts put them: M > 1 and K > 128 (a
// column- vs row-major confusion moves a scale), more than one 128-row weight block, and
// ceil(K/128) not a multiple of 4 (the BLK128x128 row stride padding).
TEST_F(GpuPlugins, GemmScaleLayoutFingerprint) {
  const mxgate_plugin* p = plugin("cublaslt");
  ASSERT_NE(p, nullptr);
  const std::vector<GemmShape> candidates = {{8, 256, 384}, {4, 264, 272}, {8, 136, 272},
                                             {4, 8, 384},   {8, 8, 272},   {4, 16, 272},
                                             {4, 8, 144},   {4, 4, 272}};
  for (const mxgate_op* op : ops_of(p)) {
    size_t tried = 0;
    for (const GemmShape& s : candidates) {
      if (!in_contract(op->contract, s) || tried == 2) continue;
      const Grid ga = scale_grid(op->contract.a_block_rows, op->contract.a_block_cols, s.m, s.k);
      const Grid gb = scale_grid(op->contract.b_block_rows, op->contract.b_block_cols, s.n, s.k);
      if (ga.rows * ga.cols * gb.rows * gb.cols > 200) continue;  // exponents must fit fp32
      ++tried;
      size_t checked = 0;
      const std::string bad = fingerprint(*op, s, &checked);
      std::printf(
          "FINGERPRINT %-24s %-20s A grid %zux%zu B grid %zux%zu: %s\n", op->name,
          shape_text(s).c_str(), ga.rows, ga.cols, gb.rows, gb.cols,
          bad.empty() ? ("ok, " + std::to_string(checked) + " outputs").c_str() : bad.c_str());
      EXPECT_EQ(bad, "") << op->name << " " << shape_text(s);
    }
    EXPECT_GT(tried, 0u) << op->name << ": no fingerprint shape fits its contract";
  }
}

}  // namespace
}  // namespace mxgate
