// Covers the encoders over their whole input space, against the value-search oracles of
// reference/encode_oracle (which share nothing with the encoders but decode()):
//   always:  all 2^32 fp32 patterns for E4M3FN / cuda_satfinite, E5M2 / torch_2_11 and the
//            e8m0 rule ceil_sat; the log2-ceil hazard count over all positive normal fp32
//            below 2^127 (3654, measured on the device); every 8-bit format x every convention
//            that defines it, and every e8m0 rule, on all 65536 bf16 and all 65536 fp16 values
//            (cheap: ~131k inputs each);
//   opt-in:  MXGATE_EXHAUSTIVE=all adds the full 2^32 sweep of every other distinct
//            (format, element policy) of the conventions, of bf16 / fp16, and of every other
//            e8m0 rule (GTEST_SKIP with a message otherwise).
// Each full sweep prints the seconds it took on stdout, so CI logs show the figure.
// Does NOT cover: hand-derived expectations (test_fp_encode.cpp, test_e8m0.cpp), the oracle's
// own correctness (test_encode_oracle.cpp), measured device bytes (test_conventions.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/convention.h"
#include "reference/e8m0.h"
#include "reference/encode_oracle.h"
#include "reference/format.h"
#include "reference/fp_encode.h"
#include "reference/measured_bytes.h"
#include "tests/hex.h"

namespace mxgate {
namespace {

using test_support::hex;
using test_support::hexfloat;

constexpr uint64_t kAll = 0x100000000ull;

bool all_requested() {
  const char* v = std::getenv("MXGATE_EXHAUSTIVE");
  return v && std::string(v) == "all";
}

// Runs `sweep` over all 2^32 fp32 patterns, prints its result and time, and expects every
// pattern checked and none mismatched.
template <class F>
void expect_clean_full_sweep(const std::string& what, F sweep) {
  const auto t0 = std::chrono::steady_clock::now();
  const SweepResult r = sweep();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char line[64];
  std::snprintf(line, sizeof line, "%.1f s", s);
  std::cout << "[ SWEEP    ] " << r.describe(what) << " in " << line << std::endl;
  EXPECT_EQ(r.checked, kAll) << what;
  EXPECT_EQ(r.mismatches, 0u) << r.describe(what);
}

bool same_policy(const EncodePolicy& a, const EncodePolicy& b) {
  return a.rounding == b.rounding && a.overflow == b.overflow && a.nan == b.nan;
}

// ---- Always-run full sweeps ----

// Guards against any fp32 input (every NaN payload, subnormal, tie and overflow) on which the
// CUDA SATFINITE e4m3 cast disagrees with the oracle.
TEST(FullSweep, E4m3fnCudaSatfinite) {
  const EncodePolicy& p = require_convention("cuda_satfinite").element;
  expect_clean_full_sweep("e4m3fn/cuda_satfinite",
                          [&] { return sweep_encoder(Format::kE4M3FN, p, 0, kAll); });
}

// Guards against any fp32 input on which the non-saturating PyTorch 2.11 e5m2 cast (overflow to
// Inf, NaN keeps its sign) disagrees with the oracle.
TEST(FullSweep, E5m2Torch211) {
  const EncodePolicy& p = require_convention("torch_2_11").element;
  expect_clean_full_sweep("e5m2/torch_2_11",
                          [&] { return sweep_encoder(Format::kE5M2, p, 0, kAll); });
}

// Guards against any fp32 input on which the RCEIL + SATFINITE e8m0 rule (TE, CUDA) disagrees
// with the e8m0 oracle.
TEST(FullSweep, E8m0CeilSat) {
  expect_clean_full_sweep("e8m0/ceil_sat",
                          [] { return sweep_e8m0(E8m0Encode::kCeilSat, 0, kAll); });
}

// Guards against the log2 hazard model drifting from the device: exp2f(ceilf(log2f(y))) !=
// bitceil(y) for 3654 positive normal fp32 y < 2^127 (docs/conventions.md §3.6, CUDA log2f and
// Triton tl.log2; kLog2CeilMismatchesAllNormals). Patterns [0x00800000, 0x7F000000).
TEST(Log2HazardCount, AllPositiveNormalsIs3654) {
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t hits = 0;
  uint32_t first = 0, last = 0;
  for (uint32_t b = 0x00800000u; b < 0x7F000000u; ++b) {
    if (log2f_rounds_to_floor(float_of(b))) {
      if (!hits) first = b;
      last = b;
      ++hits;
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char line[64];
  std::snprintf(line, sizeof line, "%.1f s", s);
  std::cout << "[ SWEEP    ] log2 hazard: " << hits << " of all positive normal fp32 < 2^127 in "
            << line << std::endl;
  EXPECT_EQ(hits, 3654u);
  EXPECT_EQ(kLog2CeilMismatchesAllNormals, 3654u);
  // docs/conventions.md §3.6: "(first: 0x1.000002p-126 .. 0x1.00002p-126)".
  EXPECT_EQ(hexfloat(float_of(first)), "0x1.000002p-126");
  std::cout << "[ SWEEP    ] first " << hexfloat(float_of(first)) << ", last "
            << hexfloat(float_of(last)) << std::endl;
}

// ---- Opt-in full sweeps (MXGATE_EXHAUSTIVE=all) ----

struct ElementSweep {
  Format format;
  EncodePolicy policy;
  std::string conventions;  // every convention (or "ieee_default") sharing this policy
};

// The distinct (format, policy) pairs of the conventions, minus the two always-run sweeps,
// plus bf16 and fp16 under kIeeeDefault (what every convention uses for them).
std::vector<ElementSweep> opt_in_element_sweeps() {
  const EncodePolicy sat = require_convention("cuda_satfinite").element;
  const EncodePolicy torch = require_convention("torch_2_11").element;
  std::vector<ElementSweep> out;
  for (const FormatInfo& fi : all_formats()) {
    if (fi.bits != 8 || fi.format == Format::kE8M0) continue;
    for (const Convention& c : all_conventions()) {
      if (!defines(c, fi.format)) continue;
      if (fi.format == Format::kE4M3FN && same_policy(c.element, sat)) continue;
      if (fi.format == Format::kE5M2 && same_policy(c.element, torch)) continue;
      bool merged = false;
      for (ElementSweep& s : out) {
        if (s.format == fi.format && same_policy(s.policy, c.element)) {
          s.conventions += "_" + std::string(c.name);
          merged = true;
        }
      }
      if (!merged) out.push_back({fi.format, c.element, std::string(c.name)});
    }
  }
  out.push_back({Format::kBF16, kIeeeDefault, "ieee_default"});
  out.push_back({Format::kFP16, kIeeeDefault, "ieee_default"});
  return out;
}

void PrintTo(const ElementSweep& s, std::ostream* os) {
  *os << info(s.format).name << " " << name(s.policy.rounding) << "/" << name(s.policy.overflow)
      << "/" << name(s.policy.nan) << " (" << s.conventions << ")";
}

class OptInElementSweep : public ::testing::TestWithParam<ElementSweep> {};

// Guards against any fp32 input on which one of the remaining element encoders disagrees with
// the oracle.
TEST_P(OptInElementSweep, AllFp32Patterns) {
  if (!all_requested()) GTEST_SKIP() << "set MXGATE_EXHAUSTIVE=all to run this 2^32 sweep";
  const ElementSweep& s = GetParam();
  const std::string what = std::string(info(s.format).name) + "/" + s.conventions;
  expect_clean_full_sweep(what, [&] { return sweep_encoder(s.format, s.policy, 0, kAll); });
}

INSTANTIATE_TEST_SUITE_P(Pairs, OptInElementSweep, ::testing::ValuesIn(opt_in_element_sweeps()),
                         [](const ::testing::TestParamInfo<ElementSweep>& p) {
                           return std::string(mxgate::info(p.param.format).name) + "_" +
                                  p.param.conventions;
                         });

// An e8m0 rule as a test parameter (printed by name).
struct Rule {
  E8m0Encode rule;
};
void PrintTo(const Rule& r, std::ostream* os) { *os << name(r.rule); }

std::vector<Rule> e8m0_rules(bool except_ceil_sat) {
  std::vector<Rule> out;
  for (E8m0Encode r : all_e8m0_encodes()) {
    if (!except_ceil_sat || r != E8m0Encode::kCeilSat) out.push_back({r});
  }
  return out;
}

class OptInE8m0Sweep : public ::testing::TestWithParam<Rule> {};

// Guards against any fp32 input on which one of the other e8m0 rules disagrees with the
// e8m0 oracle.
TEST_P(OptInE8m0Sweep, AllFp32Patterns) {
  if (!all_requested()) GTEST_SKIP() << "set MXGATE_EXHAUSTIVE=all to run this 2^32 sweep";
  const std::string what = "e8m0/" + std::string(name(GetParam().rule));
  expect_clean_full_sweep(what, [&] { return sweep_e8m0(GetParam().rule, 0, kAll); });
}

INSTANTIATE_TEST_SUITE_P(Rules, OptInE8m0Sweep, ::testing::ValuesIn(e8m0_rules(true)),
                         [](const ::testing::TestParamInfo<Rule>& p) {
                           return std::string(name(p.param.rule));
                         });

// ---- Always-run cheap sweeps: every bf16 and fp16 value ----

// The 131072 fp32 values that bf16 and fp16 can hold (what most kernels feed the casts).
const std::vector<float>& sixteen_bit_values() {
  static const std::vector<float> v = [] {
    std::vector<float> out;
    for (uint32_t b = 0; b < 65536; ++b) {
      out.push_back(float_of(b << 16));         // bf16: the top half of an fp32
      out.push_back(decode(Format::kFP16, b));  // fp16: exact in fp32
    }
    return out;
  }();
  return v;
}

struct ConventionFormat {
  const Convention* convention;
  Format format;
};

std::vector<ConventionFormat> defined_pairs() {
  std::vector<ConventionFormat> out;
  for (const Convention& c : all_conventions()) {
    for (const FormatInfo& fi : all_formats()) {
      if (fi.bits == 8 && fi.format != Format::kE8M0 && defines(c, fi.format)) {
        out.push_back({&c, fi.format});
      }
    }
  }
  return out;
}

void PrintTo(const ConventionFormat& p, std::ostream* os) {
  *os << p.convention->name << " " << info(p.format).name;
}

class SixteenBitInputs : public ::testing::TestWithParam<ConventionFormat> {};

// Guards against a convention's element cast disagreeing with the oracle on any bf16 or fp16
// value (exact ties of the 8-bit grid, overflow, subnormals, Inf, NaN all occur among them).
TEST_P(SixteenBitInputs, EveryBf16AndFp16Value) {
  const auto [c, f] = GetParam();
  const EncodeOracle oracle(f, c->element);
  uint64_t bad = 0;
  for (float x : sixteen_bit_values()) {
    const uint32_t got = encode_with(*c, f, x);
    // The convention's own clamp before the cast (vLLM: NaN -> -max, 224 for fnuz) is applied
    // first; pre_cast is checked by hand in test_convention_edges.cpp.
    const uint32_t want = oracle.expected(pre_cast(*c, f, x));
    if (got != want && bad++ < 5) {
      ADD_FAILURE() << info(f).name << "/" << c->name << ": " << hexfloat(x) << " gives "
                    << hex(got) << ", oracle " << hex(want);
    }
  }
  EXPECT_EQ(bad, 0u);
}

INSTANTIATE_TEST_SUITE_P(Pairs, SixteenBitInputs, ::testing::ValuesIn(defined_pairs()),
                         [](const ::testing::TestParamInfo<ConventionFormat>& p) {
                           return std::string(p.param.convention->name) + "_" +
                                  std::string(mxgate::info(p.param.format).name);
                         });

class SixteenBitInputsE8m0 : public ::testing::TestWithParam<Rule> {};

// Guards against an e8m0 rule disagreeing with its oracle on any bf16 or fp16 value.
TEST_P(SixteenBitInputsE8m0, EveryBf16AndFp16Value) {
  uint64_t bad = 0;
  for (float x : sixteen_bit_values()) {
    const uint8_t got = encode_e8m0(x, GetParam().rule);
    const uint8_t want = e8m0_oracle(x, GetParam().rule);
    if (got != want && bad++ < 5) {
      ADD_FAILURE() << name(GetParam().rule) << ": " << hexfloat(x) << " gives " << hex(got)
                    << ", oracle " << hex(want);
    }
  }
  EXPECT_EQ(bad, 0u);
}

INSTANTIATE_TEST_SUITE_P(Rules, SixteenBitInputsE8m0, ::testing::ValuesIn(e8m0_rules(false)),
                         [](const ::testing::TestParamInfo<Rule>& p) {
                           return std::string(name(p.param.rule));
                         });

}  // namespace
}  // namespace mxgate
