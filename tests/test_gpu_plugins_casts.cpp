// Covers the cast ops of the shipped cuda_fp8 plugin (test_gpu_plugins, cuda preset): every op
// swept over all 2^32 fp32 inputs on the device against its claimed convention
// (gpu/kernels/cast_sweep), mismatches compared with the figures measured on the H200 and
// documented in docs/nvidia.md §5, and matched against every other convention; and, without a
// GPU, the sweep's compare logic run on the CPU against planted mismatch ranges.
// GPU tests SKIP without a CUDA device. Not covered: speed (bench/bench_gpu_cast_sweep.cpp).
// Reproduce: build/cuda/tests/test_gpu_plugins --gtest_filter=<test>.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "reference/convention.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "tests/gpu_plugins_support.h"

namespace mxgate {
namespace {

using namespace plugin_test;

// ---- What the H200 measured (docs/nvidia.md). A change here is a change of documented fact. ----

// Mismatches of each cast op's exhaustive sweep against its claimed convention (docs/nvidia.md
// §5.1).
const std::map<std::string, uint64_t> kCastMismatches = {
    {"e4m3_satfinite", 0},    {"e4m3_nosat", 0},    {"e5m2_satfinite", 0},    {"e5m2_nosat", 0},
    {"e8m0_rz_satfinite", 0}, {"e8m0_rz_nosat", 0}, {"e8m0_rp_satfinite", 0}, {"e8m0_rp_nosat", 0},
};

// MXGATE_SWEEP_INPUTS=N sweeps only inputs [0, N) (compute-sanitizer runs); default all 2^32.
uint64_t sweep_end() {
  const char* s = std::getenv("MXGATE_SWEEP_INPUTS");
  const uint64_t all = uint64_t{1} << 32;
  return s ? std::min<uint64_t>(all, std::strtoull(s, nullptr, 0)) : all;
}

// All 2^32 inputs resident (16 GiB, generated once); a limited sweep regenerates small chunks,
// so sanitizer runs do not instrument a 2^32-element fill.
sweep::CastSweeper& sweeper() {
  const bool all = sweep_end() == uint64_t{1} << 32;
  static sweep::CastSweeper s(all ? uint64_t{1} << 28 : uint64_t{1} << 20, all);
  return s;
}

void print_ranges(const sweep::SweepResult& r, size_t limit) {
  for (size_t i = 0; i < r.ranges.size() && i < limit; ++i) {
    const sweep::MismatchRange& g = r.ranges[i];
    std::printf(
        "    inputs 0x%08x..0x%08x (%a .. %a, %llu values): expected 0x%02x, got 0x%02x\n", g.first,
        g.last, static_cast<double>(float_of(g.first)), static_cast<double>(float_of(g.last)),
        static_cast<unsigned long long>(uint64_t{g.last} - g.first + 1), g.expected, g.actual);
  }
  if (r.ranges.size() > limit) std::printf("    ... %zu ranges in all\n", r.ranges.size());
}

// Every cast op through all 2^32 inputs against its claimed convention: the mismatch count is
// what the H200 measured (a change means the library or the reference moved), and the
// mismatching ranges are printed as the finding.
TEST_F(GpuPlugins, CastOpsExhaustiveAgainstClaim) {
  const mxgate_plugin* p = plugin("cuda_fp8");
  ASSERT_NE(p, nullptr);
  std::printf("sweep: inputs %s, chunk 2^%d, one-time input fill %.2f ms\n",
              sweeper().inputs_resident() ? "resident" : "regenerated per chunk",
              static_cast<int>(std::log2(static_cast<double>(sweeper().chunk()))),
              sweeper().fill_ms());
  for (const mxgate_op* op : ops_of(p)) {
    ASSERT_EQ(op->family, MXGATE_OP_CAST) << op->name;
    const mxgate_dtype out = cast_target(*op);
    std::string why;
    const auto table = sweep::expected_runs(op->contract.convention, out, &why);
    ASSERT_TRUE(table.has_value())
        << op->name << " claims '" << op->contract.convention << "': " << why;
    const sweep::SweepResult r = sweeper().sweep(*op, out, *table, 0, sweep_end());
    std::printf("SWEEP %-18s vs %-32s %zu runs: %s\n", op->name, table->describes.c_str(),
                table->begin.size(), r.summary().c_str());
    print_ranges(r, 40);
    EXPECT_EQ(r.status, MXGATE_DONE) << op->name << ": " << r.message;
    EXPECT_EQ(r.checked, sweep_end()) << op->name;
    EXPECT_FALSE(r.guard_damaged) << op->name << " wrote outside its output";
    const auto documented = kCastMismatches.find(op->name);
    ASSERT_NE(documented, kCastMismatches.end()) << op->name << " has no documented figure";
    if (sweep_end() == uint64_t{1} << 32) {
      EXPECT_EQ(r.mismatches, documented->second)
          << op->name << " vs " << table->describes << ": " << r.summary()
          << " (documented in docs/nvidia.md §5.1)";
    } else {
      EXPECT_LE(r.mismatches, documented->second) << op->name << ": " << r.summary();
    }
  }
}

// Which existing conventions / e8m0 rules each cast op matches bit for bit over all 2^32 inputs:
// the evidence behind each claim (an op that matches none is a finding, not a new convention).
TEST_F(GpuPlugins, CastOpsAgainstEveryConvention) {
  const mxgate_plugin* p = plugin("cuda_fp8");
  ASSERT_NE(p, nullptr);
  for (const mxgate_op* op : ops_of(p)) {
    const mxgate_dtype out = cast_target(*op);
    std::vector<std::string> claims;
    for (const Convention& c : all_conventions()) claims.emplace_back(c.name);
    if (out == MXGATE_DTYPE_E8M0) {
      for (E8m0Encode r : all_e8m0_encodes()) claims.push_back("e8m0:" + std::string(name(r)));
    }
    std::string matches;
    size_t swept = 0;
    for (const std::string& claim : claims) {
      const auto table = sweep::expected_runs(claim, out);
      if (!table) continue;  // the convention does not define this format
      const sweep::SweepResult r = sweeper().sweep(*op, out, *table);
      ASSERT_EQ(r.status, MXGATE_DONE) << op->name << ": " << r.message;
      ++swept;
      std::printf("MATCH %-18s %-28s %llu mismatches in %zu%s ranges\n", op->name, claim.c_str(),
                  static_cast<unsigned long long>(r.mismatches), r.ranges.size(),
                  r.ranges_truncated ? "+" : "");
      if (r.mismatches == 0) matches += (matches.empty() ? "" : ", ") + claim;
    }
    EXPECT_GT(swept, 0u) << op->name;
    std::printf("MATCHES %-18s claims %-18s bit-exact with: %s\n", op->name,
                op->contract.convention, matches.empty() ? "(none)" : matches.c_str());
  }
}

// ---- The sweep's compare logic on the CPU (no GPU needed) --------------------------------------

std::vector<sweep::MismatchRange> brute_ranges(const std::vector<uint32_t>& codes, uint64_t base,
                                               const sweep::RunTable& t, uint64_t* count) {
  std::vector<sweep::MismatchRange> out;
  *count = 0;
  size_t r = 0;
  for (uint64_t i = 0; i < codes.size(); ++i) {
    const uint64_t x = base + i;
    while (r + 1 < t.begin.size() && t.begin[r + 1] <= x) ++r;
    const uint32_t want = t.code[r];
    if (codes[i] == want) continue;
    ++*count;
    if (!out.empty() && out.back().last + 1 == x && out.back().expected == want &&
        out.back().actual == codes[i]) {
      out.back().last = static_cast<uint32_t>(x);
    } else {
      out.push_back({static_cast<uint32_t>(x), static_cast<uint32_t>(x), want, codes[i]});
    }
  }
  return out;
}

// The device compare's per-thread code (run here on the CPU) finds every planted mismatch range
// exactly: single elements, ranges crossing 16-element thread and 4096-element block boundaries,
// ranges split where the expected code changes, the first and last element, 1- and 2-byte codes.
TEST(CastSweepLogic, HostCompareLocatesPlantedRanges) {
  for (uint32_t bytes : {1u, 2u}) {
    const uint64_t base = 0x7F7FB000u, count = 20000;
    sweep::RunTable t;
    t.begin = {0,
               static_cast<uint32_t>(base + 100),
               static_cast<uint32_t>(base + 5000),
               static_cast<uint32_t>(base + 5001),
               static_cast<uint32_t>(base + 12345),
               0x7F800000u,
               0x80000000u};
    t.code = {3, 4, 5, 6, 7, 8, 9};
    std::vector<uint32_t> codes(count);
    for (uint64_t i = 0; i < count; ++i) {
      size_t r = 0;
      while (r + 1 < t.begin.size() && t.begin[r + 1] <= base + i) ++r;
      codes[i] = t.code[r];
    }
    const uint32_t bad = bytes == 1 ? 0xEE : 0xBEEF;
    for (auto [from, to] : std::vector<std::pair<uint64_t, uint64_t>>{{0, 0},
                                                                      {16, 16},
                                                                      {30, 47},
                                                                      {99, 102},
                                                                      {200, 203},
                                                                      {4090, 4105},
                                                                      {4999, 5002},
                                                                      {8191, 8192},
                                                                      {12340, 12350},
                                                                      {19999, 19999}}) {
      for (uint64_t i = from; i <= to; ++i) codes[i] = bad;
    }
    for (uint64_t i = 204; i <= 207; ++i) codes[i] = 1;  // adjacent range, other actual code
    std::vector<uint8_t> raw(count * bytes);
    for (uint64_t i = 0; i < count; ++i) std::memcpy(&raw[i * bytes], &codes[i], bytes);
    uint64_t want_count = 0;
    const auto want = brute_ranges(codes, base, t, &want_count);
    const sweep::SweepResult got = sweep::compare_on_host(raw.data(), count, base, t, bytes);
    EXPECT_EQ(got.mismatches, want_count) << bytes << "-byte codes";
    ASSERT_TRUE(got.first.has_value());
    EXPECT_EQ(got.first->first, base) << bytes << "-byte codes";
    ASSERT_EQ(got.ranges.size(), want.size()) << bytes << "-byte codes";
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got.ranges[i].first, want[i].first) << "range " << i;
      EXPECT_EQ(got.ranges[i].last, want[i].last) << "range " << i;
      EXPECT_EQ(got.ranges[i].expected, want[i].expected) << "range " << i;
      EXPECT_EQ(got.ranges[i].actual, want[i].actual) << "range " << i;
    }
  }
}

}  // namespace
}  // namespace mxgate
