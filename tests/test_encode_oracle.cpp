// Covers reference/encode_oracle: EncodeOracle::expected against hand-derived codes (ties,
// overflow, specials, signed zero, NaN sign, per policy and format), its constructor's
// refusal of E8M0 / FP32, e8m0_oracle on the log2 and NaN-payload hazards, build_runs on toy
// functions with known run boundaries (single-pattern runs, segment cuts at ±Inf / NaN,
// logarithmic number of oracle calls), SweepResult::describe text, and sweep_encoder /
// sweep_e8m0 bookkeeping (every input counted once, whatever the thread count) on small ranges.
// Does NOT cover: full 2^32 sweeps and the all-bf16/fp16 comparison (exhaustive_encoders.cpp);
// the e8m0_oracle edge table (test_e8m0.cpp holds it to the same hand table as the encoder).
// sweep_* accept only the real encoders, so the mismatch path is covered through describe()
// and the run boundaries, not by planting a wrong encoder.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reference/e8m0.h"
#include "reference/encode_oracle.h"
#include "reference/format.h"
#include "reference/fp_encode.h"
#include "tests/hex.h"

namespace mxgate {
namespace {

using test_support::hex;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

constexpr EncodePolicy kRneSat{Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kCanonical};
constexpr EncodePolicy kRneInf{Rounding::kNearestEven, Overflow::kToInf, NanPolicy::kKeepSign};
constexpr EncodePolicy kRneNaN{Rounding::kNearestEven, Overflow::kToNaN, NanPolicy::kKeepSign};
constexpr EncodePolicy kRneSatInfNaN{Rounding::kNearestEven, Overflow::kSaturateInfToNaN,
                                     NanPolicy::kCanonical};
constexpr EncodePolicy kAwayInf{Rounding::kNearestAway, Overflow::kToInf, NanPolicy::kKeepSign};
constexpr EncodePolicy kTzInf{Rounding::kTowardZero, Overflow::kToInf, NanPolicy::kKeepSign};
constexpr EncodePolicy kNegMax{Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kToNegMax};

struct OracleCase {
  Format format;
  EncodePolicy policy;
  float x;
  uint32_t code;
  const char* why;
};

// Every expected code derived by hand from docs/formats.md §1.1 layouts (arithmetic in `why`).
const OracleCase kCases[] = {
    // E4M3FN: max 448 = 0x7E (S.1111.110), next step would be 480 (the NaN pattern).
    {Format::kE4M3FN, kRneSat, 464.0f, 0x7E, "tie 448/480, 448 even"},
    {Format::kE4M3FN, kRneInf, 464.0f, 0x7E, "tie 448/480, 448 even, no overflow"},
    {Format::kE4M3FN, kRneInf, 0x1.d00002p+8f, 0x7F, "past the tie: overflow, no Inf -> NaN"},
    {Format::kE4M3FN, kRneInf, -0x1.d00002p+8f, 0xFF, "negative overflow -> 0xFF"},
    {Format::kE4M3FN, kRneNaN, 0x1.d00002p+8f, 0x7F, "to_nan"},
    {Format::kE4M3FN, kRneSatInfNaN, 0x1.d00002p+8f, 0x7E, "finite overflow saturates"},
    {Format::kE4M3FN, kRneSat, 0x1.d00002p+8f, 0x7E, "saturate"},
    {Format::kE4M3FN, kAwayInf, 464.0f, 0x7F, "tie goes away, past max"},
    {Format::kE4M3FN, kTzInf, 1e6f, 0x7E, "toward zero never overflows"},
    {Format::kE4M3FN, kTzInf, 479.0f, 0x7E, "toward zero: 448"},
    {Format::kE4M3FN, kRneInf, 0x1p-10f, 0x00, "half the min subnormal 2^-9: tie to 0"},
    {Format::kE4M3FN, kAwayInf, 0x1p-10f, 0x01, "tie away -> 2^-9"},
    {Format::kE4M3FN, kRneInf, -0x1p-10f, 0x80, "negative tie to -0"},
    {Format::kE4M3FN, kRneInf, 0x3p-10f, 0x02, "1.5 steps: tie 0x01 odd / 0x02 even"},
    {Format::kE4M3FN, kRneInf, 0x5p-10f, 0x02, "2.5 steps: tie 0x02 even / 0x03"},
    {Format::kE4M3FN, kAwayInf, 0x5p-10f, 0x03, "2.5 steps away"},
    {Format::kE4M3FN, kTzInf, 0x5p-10f, 0x02, "2.5 steps toward zero"},
    {Format::kE4M3FN, kRneInf, 0xfp-10f, 0x08, "7.5 steps: tie 0x07 / 0x08 = 2^-6"},
    {Format::kE4M3FN, kRneInf, 1.0625f, 0x38, "1 + 1/16: tie 1.0 (0x38 even) / 1.125"},
    {Format::kE4M3FN, kRneInf, 1.1875f, 0x3A, "1 + 3/16: tie 1.125 (0x39) / 1.25 (0x3A even)"},
    {Format::kE4M3FN, kRneInf, -0.0f, 0x80, "-0 kept"},
    {Format::kE4M3FN, kRneInf, -0x1p-149f, 0x80, "tiny negative underflows to -0"},
    {Format::kE4M3FN, kRneSat, kInf, 0x7E, "Inf saturates"},
    {Format::kE4M3FN, kRneInf, kInf, 0x7F, "Inf, no Inf code -> NaN"},
    {Format::kE4M3FN, kRneInf, -kInf, 0xFF, "-Inf -> NaN with sign"},
    {Format::kE4M3FN, kRneSatInfNaN, kInf, 0x7F, "Inf -> NaN, finite saturates"},
    {Format::kE4M3FN, kRneInf, -kNaN, 0xFF, "keep sign"},
    {Format::kE4M3FN, kRneSat, -kNaN, 0x7F, "canonical"},
    {Format::kE4M3FN, kNegMax, kNaN, 0xFE, "NaN -> -448"},
    // E5M2: max 57344 = 0x7B (S.11110.11, odd); 61440 is the tie with 65536 = Inf pattern.
    {Format::kE5M2, kRneInf, 61440.0f, 0x7C, "tie 57344 odd / 65536: overflow to Inf"},
    {Format::kE5M2, kRneInf, 0x1.dffffep+15f, 0x7B, "largest fp32 below 61440"},
    {Format::kE5M2, kRneSat, 61440.0f, 0x7B, "saturate"},
    {Format::kE5M2, kRneNaN, 61440.0f, 0x7F, "to_nan"},
    {Format::kE5M2, kRneInf, -kInf, 0xFC, "-Inf"},
    {Format::kE5M2, kRneSat, -kInf, 0xFB, "-Inf saturates"},
    {Format::kE5M2, kRneSatInfNaN, kInf, 0x7F, "Inf -> NaN 0x7F"},
    {Format::kE5M2, kNegMax, kNaN, 0xFB, "NaN -> -57344"},
    {Format::kE5M2, kRneInf, 0x1p-17f, 0x00, "half of 2^-16: tie to 0"},
    // E4M3FNUZ: max 240 = 0x7F (mantissa 111, odd); 248 is the tie with 256; 0x80 only NaN.
    {Format::kE4M3FNUZ, kRneInf, 248.0f, 0x80, "tie 240 odd / 256: overflow -> NaN"},
    {Format::kE4M3FNUZ, kRneInf, 247.0f, 0x7F, "below the tie"},
    {Format::kE4M3FNUZ, kRneSat, 248.0f, 0x7F, "saturate"},
    {Format::kE4M3FNUZ, kRneSat, -248.0f, 0xFF, "saturate negative: -240"},
    {Format::kE4M3FNUZ, kRneInf, -0.0f, 0x00, "no -0"},
    {Format::kE4M3FNUZ, kRneInf, -0x1p-12f, 0x00, "negative underflow -> +0, not NaN"},
    {Format::kE4M3FNUZ, kRneInf, -kNaN, 0x80, "single NaN whatever the sign"},
    {Format::kE4M3FNUZ, kRneInf, -kInf, 0x80, "-Inf -> NaN"},
    {Format::kE4M3FNUZ, kNegMax, kNaN, 0xFF, "NaN -> -240"},
    {Format::kE4M3FNUZ, kRneInf, 0x1p-11f, 0x00, "half of min subnormal 2^-10"},
    // E5M2FNUZ: max 57344 = 0x7F, 61440 overflows.
    {Format::kE5M2FNUZ, kRneInf, 61440.0f, 0x80, "overflow -> NaN"},
    {Format::kE5M2FNUZ, kRneInf, 0x1p-17f, 0x01, "min subnormal 2^-17"},
    // BF16 / FP16.
    {Format::kBF16, kIeeeDefault, float_of(0x3F808000), 0x3F80, "tie 0x3F80 even"},
    {Format::kBF16, kIeeeDefault, float_of(0x3F818000), 0x3F82, "tie 0x3F81 odd -> 0x3F82"},
    {Format::kBF16, kTzInf, float_of(0x3F81FFFF), 0x3F81, "toward zero"},
    {Format::kBF16, kIeeeDefault, float_of(0x7F7F8000), 0x7F80, "top tie overflows to Inf"},
    {Format::kBF16, kRneInf, -kNaN, 0xFFC0, "keep sign"},
    {Format::kFP16, kIeeeDefault, 65520.0f, 0x7C00, "tie 65504 odd / 65536 -> Inf"},
    {Format::kFP16, kIeeeDefault, 0x1.ffdffep+15f, 0x7BFF, "below the tie"},
    {Format::kFP16, kIeeeDefault, 0x3p-25f, 0x0002, "1.5 subnormal steps -> 2"},
    {Format::kFP16, kIeeeDefault, -kNaN, 0x7E00, "canonical"},
};

// Guards against an oracle that is wrong in the same way as the encoder it judges: each case
// is a hand-derived code (tie, overflow, special) for one policy and format.
TEST(EncodeOracle, HandDerivedCodes) {
  for (const OracleCase& c : kCases) {
    const EncodeOracle oracle(c.format, c.policy);
    EXPECT_EQ(hex(oracle.expected(c.x)), hex(c.code))
        << info(c.format).name << " " << std::hexfloat << c.x << " (" << c.why << ")";
  }
}

// Guards against the oracle silently accepting a format it cannot model (E8M0 has its own
// oracle; FP32 is the input type).
TEST(EncodeOracle, RefusesE8m0AndFp32) {
  EXPECT_THROW(EncodeOracle(Format::kE8M0, kRneSat), std::invalid_argument);
  EXPECT_THROW(EncodeOracle(Format::kFP32, kRneSat), std::invalid_argument);
}

// Guards against the e8m0 oracle modelling the log2 hazard or the NaN-payload wrap
// differently from the rule it judges: vLLM's exp2f(ceilf(log2f(0x1.000002p-8))) = 2^-8 (0x77;
// docs/conventions.md §3.6 torch.log2 example), bit ceil 2^-7 (0x78); AITER Triton on NaN
// 0x7FE00000: 0x7FE00000 + 0x200000 = 0x80000000 (-0.0) -> log2 = -inf -> 00, on NaN 0x7FC00000 ->
// Inf -> 254 (docs/formats.md §3.6).
TEST(E8m0Oracle, HazardsModelled) {
  EXPECT_EQ(e8m0_oracle(0x1.000002p-8f, E8m0Encode::kCeilViaLog2f), 0x77);
  EXPECT_EQ(e8m0_oracle(0x1.000002p-8f, E8m0Encode::kCeilSat), 0x78);
  EXPECT_EQ(e8m0_oracle(0x1.000002p-126f, E8m0Encode::kCeilViaLog2f), 0x01);
  EXPECT_EQ(e8m0_oracle(float_of(0x7FE00000), E8m0Encode::kAiterTritonBump), 0x00);
  EXPECT_EQ(e8m0_oracle(float_of(0x7FC00000), E8m0Encode::kAiterTritonBump), 0xFE);
  EXPECT_EQ(e8m0_oracle(float_of(0xFFE00000), E8m0Encode::kAiterTritonBump), 0x00);
}

// ---- build_runs ----

using RunStarts = std::vector<std::pair<uint64_t, uint32_t>>;

// Every run's (begin, code), in order; the count first.
void expect_runs(const std::vector<Run>& runs, const RunStarts& want) {
  ASSERT_EQ(runs.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(runs[i].begin, want[i].first) << i;
    EXPECT_EQ(runs[i].code, want[i].second) << i;
  }
}

// Guards against run boundaries off by one: b / 1000 has runs starting at multiples of 1000.
TEST(BuildRuns, ToyMonotoneFunction) {
  const auto thousands = [](uint32_t b) { return b / 1000; };
  expect_runs(build_runs(thousands, 0, 5000), {{0, 0}, {1000, 1}, {2000, 2}, {3000, 3}, {4000, 4}});
  expect_runs(build_runs(thousands, 100, 2600), {{100, 0}, {1000, 1}, {2000, 2}});
  EXPECT_TRUE(build_runs([](uint32_t b) { return b; }, 7, 7).empty());
}

// Guards against the galloping search stepping over a run one pattern long (the way a tie
// point or ±Inf is its own run): 0 below 1234, 7 at 1234 only, 9 above.
TEST(BuildRuns, SinglePatternRun) {
  auto f = [](uint32_t b) -> uint32_t { return b < 1234 ? 0 : (b == 1234 ? 7 : 9); };
  expect_runs(build_runs(f, 0, 100000), {{0, 0}, {1234, 7}, {1235, 9}});
  // The range starts on the single pattern.
  expect_runs(build_runs(f, 1234, 1236), {{1234, 7}, {1235, 9}});
}

// Guards against galloping across +Inf / NaN / sign boundaries, where the oracle is not
// monotone: a function that differs only at the two Inf patterns must still show them.
TEST(BuildRuns, SegmentCutsAtInfNanAndSign) {
  auto f = [](uint32_t b) -> uint32_t { return (b == 0x7F800000u || b == 0xFF800000u) ? 2 : 1; };
  const auto runs = build_runs(f, 0, 0x100000000ull);
  expect_runs(runs, {{0, 1},
                     {0x7F800000u, 2},
                     {0x7F800001u, 1},
                     {0x80000000u, 1},
                     {0xFF800000u, 2},
                     {0xFF800001u, 1}});
}

// Guards against a run builder that degrades to a linear scan (a 2^32 sweep would then call
// the slow oracle 2^32 times): a constant function over all positive finite patterns needs
// about 2 * 31 oracle calls.
TEST(BuildRuns, LogarithmicOracleCalls) {
  uint64_t calls = 0;
  const auto runs = build_runs(
      [&](uint32_t) -> uint32_t {
        ++calls;
        return 5;
      },
      0, 0x7F800000u);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].code, 5u);
  EXPECT_LE(calls, 80u);
}

// ---- SweepResult and the sweeps ----

// Guards against a report that hides which input failed or how: the text names the input
// pattern, its value, the expected and the actual code.
TEST(SweepResult, DescribeText) {
  SweepResult ok;
  ok.checked = 10;
  EXPECT_EQ(ok.describe("e4m3fn/x"), "e4m3fn/x: 10 inputs, 0 mismatches");
  SweepResult bad;
  bad.checked = 10;
  bad.mismatches = 3;
  bad.first_bad_input = 0x3F800000;
  bad.first_expected = 0x38;
  bad.first_actual = 0x39;
  EXPECT_EQ(bad.describe("e4m3fn/x"),
            "e4m3fn/x: 3 of 10 inputs differ; first input 0x3f800000 (0x1p+0): expected 0x38, "
            "encoder gave 0x39");
}

// Guards against the threaded sweep losing or double-counting inputs at slice or run edges:
// every input of a range that crosses many runs and the +Inf / NaN cut is checked once, for
// any thread count; the encoder agrees with the oracle there.
TEST(Sweep, CountsEveryInputOnceAnyThreadCount) {
  const std::pair<uint64_t, uint64_t> ranges[] = {
      {0x43CFF000u, 0x43D01003u},  // around 416 = 0x43D00000
      {0x43E7F000u, 0x43E81001u},  // the 464 tie
      {0x7F7FF000u, 0x7F801001u},  // FLT_MAX, +Inf, first NaNs
      {0xFF7FFF00u, 0x100000000ull}};
  for (const auto& [b, e] : ranges) {
    for (unsigned threads : {1u, 2u, 3u, 7u}) {
      const SweepResult r = sweep_encoder(Format::kE4M3FN, kRneInf, b, e, threads);
      EXPECT_EQ(r.checked, e - b) << hex(static_cast<uint32_t>(b)) << " threads " << threads;
      EXPECT_EQ(r.mismatches, 0u) << r.describe("e4m3fn");
      const SweepResult s = sweep_e8m0(E8m0Encode::kCeilViaLog2f, b, e, threads);
      EXPECT_EQ(s.checked, e - b);
      EXPECT_EQ(s.mismatches, 0u) << s.describe("e8m0 ceil_via_log2f");
    }
  }
}

// Guards against an e8m0 rule and its oracle disagreeing at the places the rules differ:
// subnormals around 2^-127 and 1.5 * 2^-127, the normal boundary, 1.5 / 1.75 significands, the
// top binade, Inf and the NaN payloads where aiter_triton_bump wraps (0x7FE00000).
TEST(Sweep, E8m0RulesAgreeWithOracleAtTheirEdges) {
  const uint32_t centers[] = {0x00000000u, 0x00400000u, 0x00600000u, 0x00800000u, 0x3FC00000u,
                              0x3FE00000u, 0x7F000000u, 0x7F400000u, 0x7F800000u, 0x7FE00000u,
                              0x80000000u, 0x80400000u, 0xBFE00000u, 0xFF800000u, 0xFFE00000u};
  for (E8m0Encode rule : all_e8m0_encodes()) {
    for (uint32_t c : centers) {
      const uint64_t b = c >= 0x800u ? c - 0x800u : 0, e = uint64_t{c} + 0x800u;
      const SweepResult r = sweep_e8m0(rule, b, e, 2);
      EXPECT_EQ(r.checked, e - b);
      EXPECT_EQ(r.mismatches, 0u) << r.describe(name(rule));
    }
  }
}

}  // namespace
}  // namespace mxgate
