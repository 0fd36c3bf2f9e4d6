// Covers reference/mx_quant and the MX half of reference/quant_conventions: a table of named edge
// blocks (zero block, subnormal amax, amax 1.0 / 448 / 464 / 480 / 500 / FLT_MAX, 1.75 * 2^k,
// NaN and Inf in a block, exact element ties), each with the expected E8M0 scale byte and the
// E4M3FN element bytes of every convention that has an MX quantizer (ocp_mx, torchao_floor,
// torchao_rceil, transformer_engine, aiter_hip, aiter_triton, vllm_mxfp8_exp2), run as one
// value-parameterized test per (block, convention). Around it: the scale rules without a named
// convention (torchao CEIL / EVEN, vLLM gen-3 log2f RCEIL, vLLM ROCm Triton 1e-30 seed), element
// overflow per convention (docs/formats.md §1.3), AITER's subnormal ceil (§6 item 9), E4M3FNUZ (§6
// item 4), a short last block and its padding, the payload requantized with the final scale (BUG
// Z14), the scale chosen from the fp32 amax (Z15), the log2f ceil hazard (Z8), a (rows x 3 blocks)
// scale-index fingerprint, and shape validation.
// Expected bytes come from docs/formats.md (§1, §2.1, §3, table §3.7, §6) and
// docs/conventions.md §3, derived by hand in the comments, never from the code under test.
// Does not cover: dequantization (test_dequant.cpp), the exhaustive scale-rule sweeps
// (exhaustive_scale_rules.cpp), scale layouts, microxcaling's round-half-away elements, or E5M2
// edge blocks (only E5M2's emax is checked).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reference/convention.h"
#include "reference/format.h"
#include "reference/mx_quant.h"
#include "reference/quant_conventions.h"

namespace mxgate {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kFltMax = std::numeric_limits<float>::max();

// Element expectations are 16-bit so a table cell can say "any NaN code" or "not specified".
constexpr uint16_t kAnyNan = 0x100;  // 0x7F or 0xFF: the sign of x * NaN is not specified
constexpr uint16_t kUnspecified = 0x200;

// The conventions that model an MX 1x32 quantizer (docs/formats.md §3.7 columns).
const std::vector<std::string_view> kMxConventions = {
    "ocp_mx",       "torchao_floor",   "torchao_rceil", "transformer_engine", "aiter_hip",
    "aiter_triton", "vllm_mxfp8_exp2", "torchao_ceil",  "torchao_even"};

struct Expect {
  std::vector<std::string_view> conventions;
  uint16_t scale;               // e8m0 byte, or kUnspecified
  std::vector<uint16_t> probe;  // bytes of x[0 .. probe.size())
  uint16_t rest;                // byte of every other (+0.0) element
};

struct EdgeBlock {
  std::string_view name;
  std::vector<float> probe;  // x[0 .. n); x[n .. 32) = +0.0
  std::vector<Expect> expect;
};

// E4M3FN reminders used below: value (8 + m) * 2^(e - 10) for code (e << 3) | m, e >= 1;
// subnormal m * 2^-9 (code m); 448 = 0x7E, 256 = 0x78, 240 = 0x77, 224 = 0x76, 128 = 0x70,
// 1.0 = 0x38, 0.5 = 0x30, 0x7F / 0xFF = NaN, 0x80 = -0. Byte b means scale 2^(b - 127); the
// element cast sees x * 2^(127 - b). fl32(1/448) = 2^-9 * (8/7 + (3/7) * 2^-23) (8/7 = 1.001001..b
// rounds up), so amax = 1.75 * 2^k gives amax * fl32(1/448) = 2^(k-8) * (1 + (3/8) * 2^-23),
// which rounds to exactly 2^(k-8): RCEIL does not bump at 1.75 * 2^k (docs/formats.md §3.6).
const std::vector<EdgeBlock>& edge_blocks() {
  static const std::vector<EdgeBlock> table = {
      // §3.7 row "0". FLOOR: amax 0 clamps to byte 0 (§3.3); RCEIL: ceil(0) = byte 0 (§2.1);
      // AITER HIP: amax seeded 1e-10, 1e-10 * fl32(1/448) = 2.23e-13 in (2^-43, 2^-42] -> 2^-42
      // = byte 85 (§3.6); AITER Triton: log2(0) = -inf clamps to byte 0 (§3.6); vLLM gen-2:
      // amax.clamp(tiny = 2^-126) -> floor(log2) + 127 = 1 (§3.5). Elements 0 * 2^n = 0 -> 0x00.
      {"zero_block",
       {},
       {{{"ocp_mx", "torchao_floor", "torchao_rceil", "transformer_engine", "aiter_triton",
          "torchao_ceil", "torchao_even"},
         0x00,
         {},
         0x00},
        {{"aiter_hip"}, 85, {}, 0x00},
        {{"vllm_mxfp8_exp2"}, 0x01, {}, 0x00}}},
      // Subnormal amax 2^-130 (fp32 bits 0x00080000). FLOOR: -130 - 8 clamps to -127 = byte 0;
      // RCEIL: 2^-130 * fl32(1/448) ~ 1.14 * 2^-139, an fp32 subnormal <= 2^-127 -> byte 0
      // (§2.1 "> 2^-127 -> 0x01, else 0x00"); AITER Triton: 0x00080000 + 0x200000 masked = 0
      // -> byte 0. Then x * 2^127: 2^-3 = 0x20, -2^-4 = 0x98. AITER HIP: the 1e-10 seed wins ->
      // byte 85, x * 2^42 underflows to +-0 (0x00, 0x80). vLLM gen-2: clamp to 2^-126 -> byte 1,
      // x * 2^126: 2^-4 = 0x18, -2^-5 = 0x90.
      {"subnormal_amax",
       {0x1p-130f, -0x1p-131f},
       {{{"ocp_mx", "torchao_floor", "torchao_rceil", "transformer_engine", "aiter_triton",
          "torchao_ceil", "torchao_even"},
         0x00,
         {0x20, 0x98},
         0x00},
        {{"aiter_hip"}, 85, {0x00, 0x80}, 0x00},
        {{"vllm_mxfp8_exp2"}, 0x01, {0x18, 0x90}, 0x00}}},
      // §3.7 row "1.0": FLOOR 0 - 8 -> 119; RCEIL fl32(1/448) ~ 2^-8.8 -> ceil 2^-8 -> 119; AITER
      // Triton significand 1.0 < 1.75, no bump -> 119. Elements x * 2^8: 256 = 0x78, 128 = 0x70,
      // 2^-2 = 0x28, 0.75 = 0x34. vLLM gen-2: 0 + 127 = 127 (elem 1.0, §3.7), x * 1: 1.0 = 0x38,
      // 0.5 = 0x30, 2^-10 = half of 2^-9, tie to even -> 0x00, 3 * 2^-10 = 1.5 * 2^-9 -> 0x02.
      {"amax_1",
       {1.0f, 0.5f, 0x1p-10f, 0x3p-10f},
       {{{"ocp_mx", "torchao_floor", "torchao_rceil", "transformer_engine", "aiter_hip",
          "aiter_triton", "torchao_ceil", "torchao_even"},
         119,
         {0x78, 0x70, 0x28, 0x34},
         0x00},
        {{"vllm_mxfp8_exp2"}, 127, {0x38, 0x30, 0x00, 0x02}, 0x00}}},
      // amax 1.75 * 2^0 (§6 item 11: AITER Triton bumps at significand >= 1.75). FLOOR and RCEIL
      // (see above): 119, x * 2^8: 448 = 0x7E, 256 = 0x78. AITER Triton: 0x3FE00000 + 0x200000
      // = 0x40000000 -> 2^1 -> 1 - 8 = -7 -> 120, x * 2^7: 224 = 0x76, 128 = 0x70 (device: "RCEIL
      // -> element 448, AITER-Triton -> element 224"). vLLM gen-2: 127, 1.75 = 0x3E, 1.0 = 0x38.
      {"amax_1p75",
       {1.75f, 1.0f},
       {{{"ocp_mx", "torchao_floor", "torchao_rceil", "transformer_engine", "aiter_hip",
          "torchao_even"},
         119,
         {0x7E, 0x78},
         0x00},
        {{"aiter_triton", "torchao_ceil"}, 120, {0x76, 0x70}, 0x00},
        {{"vllm_mxfp8_exp2"}, 127, {0x3E, 0x38}, 0x00}}},
      // amax 1.75 * 2^-100, far below AITER HIP's 1e-10 seed (2^-100 ~ 7.9e-31). FLOOR: -108 ->
      // 19; RCEIL: exactly 2^-108 (above) -> 19; x * 2^108: 448 = 0x7E, 256 = 0x78. AITER
      // Triton: bump to 2^-99 -> -107 -> 20: 224 = 0x76, 128 = 0x70. vLLM gen-2: -100 + 127 = 27:
      // 1.75 = 0x3E, 1.0 = 0x38. AITER HIP: amax = 1e-10 -> byte 85 (zero_block), x * 2^42 ~
      // 2^-58 -> 0x00: the seed flushes the whole block.
      {"amax_1p75_times_2_pow_minus100",
       {0x1.cp-100f, 0x1p-100f},
       {{{"ocp_mx", "torchao_floor", "torchao_rceil", "transformer_engine", "torchao_even"},
         19,
         {0x7E, 0x78},
         0x00},
        {{"aiter_triton", "torchao_ceil"}, 20, {0x76, 0x70}, 0x00},
        {{"vllm_mxfp8_exp2"}, 27, {0x3E, 0x38}, 0x00},
        {{"aiter_hip"}, 85, {0x00, 0x00}, 0x00}}},
      // §3.7 row "448" = 1.75 * 2^8. FLOOR: 8 - 8 -> 127; RCEIL: 448 * fl32(1/448) = 1 + (3/8)
      // ulp -> 1.0 -> 127; elements 448 = 0x7E, 1.0 = 0x38. AITER Triton: 0x43E00000 + 0x200000
      // = 0x44000000 -> 9 - 8 -> 128 (elem 224, §3.7): 0x76, 0.5 = 0x30. vLLM gen-2: 8 + 127 =
      // 135: 1.75 = 0x3E, 2^-8 = 2 * 2^-9 = 0x02.
      {"amax_448",
       {448.0f, 1.0f},
       {{{"ocp_mx", "torchao_floor", "torchao_rceil", "transformer_engine", "aiter_hip",
          "torchao_even"},
         127,
         {0x7E, 0x38},
         0x00},
        {{"aiter_triton", "torchao_ceil"}, 128, {0x76, 0x30}, 0x00},
        {{"vllm_mxfp8_exp2"}, 135, {0x3E, 0x02}, 0x00}}},
      // Saturation edge 464 = 1.8125 * 2^8, the midpoint of 448 and 480 (docs/formats.md §1.2.1:
      // "Exactly 464 takes the RNE path -> 448"). FLOOR: 127, 464 ties to even m=6 -> 0x7E.
      // RCEIL: 464 * fl32(1/448) = 1.036 -> 2^1 -> 128; AITER Triton: 1.8125 >= 1.75 bumps ->
      // 128; x / 2: 232 is the midpoint of 224 (m=6) and 240 (m=7) -> even -> 0x76; 0.5 = 0x30.
      // vLLM gen-2: 135, 1.8125 ties between 1.75 (m=6) and 1.875 -> 0x3E; 2^-8 -> 0x02.
      {"amax_464",
       {464.0f, 1.0f},
       {{{"ocp_mx", "torchao_floor", "torchao_even"}, 127, {0x7E, 0x38}, 0x00},
        {{"torchao_rceil", "transformer_engine", "aiter_hip", "aiter_triton", "torchao_ceil"},
         128,
         {0x76, 0x30},
         0x00},
        {{"vllm_mxfp8_exp2"}, 135, {0x3E, 0x02}, 0x00}}},
      // §3.7 row "480" = 1.875 * 2^8. FLOOR: 127 and 480 is clipped to 448 = 0x7E (both FLOOR
      // conventions saturate finite overflow, §3.1); RCEIL: 1.07 -> 2^1 -> 128, 240 = 0x77, 0.5 =
      // 0x30; AITER Triton: bump -> 128, same bytes. vLLM gen-2: 135, 1.875 = 0x3F, 2^-8 = 0x02.
      {"amax_480",
       {480.0f, 1.0f},
       {{{"ocp_mx", "torchao_floor", "torchao_even"}, 127, {0x7E, 0x38}, 0x00},
        {{"torchao_rceil", "transformer_engine", "aiter_hip", "aiter_triton", "torchao_ceil"},
         128,
         {0x77, 0x30},
         0x00},
        {{"vllm_mxfp8_exp2"}, 135, {0x3F, 0x02}, 0x00}}},
      // §3.7 row "500" = 1.953 * 2^8. FLOOR: 127, clipped to 0x7E. RCEIL / AITER Triton: 128,
      // 250 lies between 240 and 256, nearer 256 -> 0x78; 0.5 = 0x30. vLLM gen-2: 135, 1.953 ->
      // 2.0 (nearer than 1.875) = 0x40; 2^-8 = 0x02.
      {"amax_500",
       {500.0f, 1.0f},
       {{{"ocp_mx", "torchao_floor"}, 127, {0x7E, 0x38}, 0x00},
        {{"torchao_rceil", "transformer_engine", "aiter_hip", "aiter_triton", "torchao_ceil",
          "torchao_even"},
         128,
         {0x78, 0x30},
         0x00},
        {{"vllm_mxfp8_exp2"}, 135, {0x40, 0x02}, 0x00}}},
      // Largest finite amax FLT_MAX = (2 - 2^-23) * 2^127 (e8m0 never overflows from a finite
      // amax). FLOOR: 127 - 8 -> 246, x * 2^-119 = 511.99997 saturates to 0x7E; 1.0 -> 2^-119 ->
      // 0x00. RCEIL (incl. AITER ceil): FLT_MAX * fl32(1/448) ~ 1.14 * 2^119 -> 2^120 -> 247, x *
      // 2^-120 = 255.99998 -> 256 = 0x78. AITER Triton: 0x7F7FFFFF + 0x200000 masked = 0x7F800000
      // = +Inf, log2(Inf) = Inf clamps to 127 -> byte 254 (§3.6 formula), x * 2^-127 = 2 - 2^-23
      // -> 2.0 = 0x40. vLLM gen-2: floor(log2) = 127 -> 254, same element 0x40.
      {"amax_flt_max",
       {kFltMax, 1.0f},
       {{{"ocp_mx", "torchao_floor"}, 246, {0x7E, 0x00}, 0x00},
        {{"torchao_rceil", "transformer_engine", "aiter_hip", "torchao_ceil"},
         247,
         {0x78, 0x00},
         0x00},
        {{"aiter_triton", "vllm_mxfp8_exp2"}, 254, {0x40, 0x00}, 0x00},
        {{"torchao_even"}, 0xFF, {kAnyNan, kAnyNan}, kAnyNan}}},
      // Exact element ties under scale 2^0 (RNE everywhere, §1.2): 1.0625 between 1.0 (m=0) and
      // 1.125 -> 0x38; 1.1875 between 1.125 and 1.25 (m=2) -> 0x3A; 2^-10 between 0 and 2^-9 ->
      // 0x00; 3 * 2^-10 between 2^-9 and 2 * 2^-9 -> 0x02; -1.0625 -> 0xB8. AITER Triton (byte
      // 128, x / 2): 224 = 0x76; 0.53125 ties 0.5 / 0.5625 -> 0x30; 0.59375 ties 0.5625 / 0.625
      // -> 0x32; 2^-11 -> 0x00; 1.5 * 2^-10 = 0.75 * 2^-9 -> 0x01; -> 0xB0. vLLM gen-2 (135, x *
      // 2^-8): 1.75 = 0x3E; 2.125 * 2^-9 -> 0x02; 2.375 * 2^-9 -> 0x02; tiny -> 0x00; -> 0x82.
      {"element_ties",
       {448.0f, 1.0625f, 1.1875f, 0x1p-10f, 0x3p-10f, -1.0625f},
       {{{"ocp_mx", "torchao_floor", "torchao_rceil", "transformer_engine", "aiter_hip",
          "torchao_even"},
         127,
         {0x7E, 0x38, 0x3A, 0x00, 0x02, 0xB8},
         0x00},
        {{"aiter_triton", "torchao_ceil"}, 128, {0x76, 0x30, 0x32, 0x00, 0x01, 0xB0}, 0x00},
        {{"vllm_mxfp8_exp2"}, 135, {0x3E, 0x02, 0x02, 0x00, 0x00, 0x82}, 0x00}}},
      // §3.7 row "+Inf" with finite neighbours. FLOOR / torchao RCEIL / AITER HIP: non-finite
      // amax -> 0xFF (AITER: exponent 0xFF is never bumped), the reciprocal is NaN, so every
      // element is NaN. TE: saturating e8m0 -> 0xFE; x * 2^-127: Inf saturates to 448 = 0x7E
      // (§3.4 "Inf element -> +448"), 1.0 -> 0x00, -2.0 -> -2^-126 -> -0 = 0x80. AITER Triton:
      // +Inf + 0x200000 masked = +Inf -> 254; Inf element -> NaN under Triton-AMD's mode bit
      // (§1.2.4) = 0x7F. vLLM gen-2: clamp(0, 254) -> 254; Inf -> torch cast NaN 0x7F (device
      // "inf -> 7f").
      {"inf_in_block",
       {kInf, 1.0f, -2.0f},
       {{{"ocp_mx", "torchao_floor", "torchao_rceil", "aiter_hip", "torchao_ceil", "torchao_even"},
         0xFF,
         {kAnyNan, kAnyNan, kAnyNan},
         kAnyNan},
        {{"transformer_engine"}, 0xFE, {0x7E, 0x00, 0x80}, 0x00},
        {{"aiter_triton", "vllm_mxfp8_exp2"}, 254, {0x7F, 0x00, 0x80}, 0x00}}},
      // §3.7 row "NaN in the block". torchao / OCP: amax propagates NaN -> 0xFF, whole block
      // NaN (§3.3, §6 item 13). TE and AITER HIP: fmaxf ignores NaN, amax 448 -> 127; NaN
      // element -> 0x7F (§6 item 13 "TE stores it as 0x7F"), 448 = 0x7E, -1.0 = 0xB8. AITER
      // Triton (convention takes tl.max as propagating, §3.7 "254 or ignored"): NaN bits +
      // 0x200000 masked = +Inf -> 254
      // (§3.6), NaN -> 0x7F, 448 * 2^-127 -> 0x00, -1 -> 0x80. vLLM gen-2: no byte in the source
      // (§3.7 "—", NaN cast to uint8): unspecified.
      {"nan_in_block",
       {kNan, 448.0f, -1.0f},
       {{{"ocp_mx", "torchao_floor", "torchao_rceil", "torchao_ceil", "torchao_even"},
         0xFF,
         {kAnyNan, kAnyNan, kAnyNan},
         kAnyNan},
        {{"transformer_engine", "aiter_hip"}, 127, {0x7F, 0x7E, 0xB8}, 0x00},
        {{"aiter_triton"}, 254, {0x7F, 0x00, 0x80}, 0x00},
        {{"vllm_mxfp8_exp2"}, kUnspecified, {}, kUnspecified}}},
  };
  return table;
}

struct Param {
  std::size_t block;
  std::string_view convention;
  std::size_t expect;
};

void PrintTo(const Param& p, std::ostream* os) {
  *os << edge_blocks()[p.block].name << " / " << p.convention;
}

std::vector<Param> all_params() {
  std::vector<Param> out;
  const auto& t = edge_blocks();
  for (std::size_t b = 0; b < t.size(); ++b) {
    for (std::size_t e = 0; e < t[b].expect.size(); ++e) {
      for (std::string_view c : t[b].expect[e].conventions) out.push_back({b, c, e});
    }
  }
  return out;
}

bool byte_matches(uint16_t want, uint8_t got) {
  if (want == kUnspecified) return true;
  if (want == kAnyNan) return (got & 0x7F) == 0x7F;
  return want == got;
}

std::string hex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02X", v);
  return buf;
}

MxPolicy policy_of(std::string_view convention) {
  return require_mx_policy(require_convention(convention));
}

MxQuantized quantize_one_block(const std::vector<float>& probe, const MxPolicy& policy,
                               Format element = Format::kE4M3FN) {
  std::vector<float> x(kMxBlock, 0.0f);
  for (std::size_t i = 0; i < probe.size(); ++i) x[i] = probe[i];
  return quantize_mx(x, 1, kMxBlock, element, policy);
}

class MxEdgeBlock : public ::testing::TestWithParam<Param> {};

// Guards against a convention choosing the wrong scale byte or element byte on an edge block
// (every §3.7 row and §6 items 6-9, 11, 13, 14 as they show in a quantized block).
TEST_P(MxEdgeBlock, ScaleAndElementBytes) {
  const Param& p = GetParam();
  const EdgeBlock& blk = edge_blocks()[p.block];
  const Expect& want = blk.expect[p.expect];
  const MxQuantized q = quantize_one_block(blk.probe, policy_of(p.convention));
  ASSERT_EQ(q.scales.size(), 1u);
  ASSERT_EQ(q.data.size(), kMxBlock);
  EXPECT_TRUE(byte_matches(want.scale, q.scales[0]))
      << blk.name << " / " << p.convention << ": scale byte " << hex(q.scales[0]) << ", expected "
      << hex(want.scale);
  for (std::size_t i = 0; i < kMxBlock; ++i) {
    const uint16_t w = i < want.probe.size() ? want.probe[i] : want.rest;
    EXPECT_TRUE(byte_matches(w, q.data[i]))
        << blk.name << " / " << p.convention << ": element " << i << " byte " << hex(q.data[i])
        << ", expected " << (w == kAnyNan ? std::string("NaN") : hex(w));
  }
}

INSTANTIATE_TEST_SUITE_P(Table, MxEdgeBlock, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return std::string(edge_blocks()[info.param.block].name) + "__" +
                                  std::string(info.param.convention);
                         });

// Guards against an MX convention silently missing from (or listed twice in) a table row.
TEST(MxEdgeTable, EveryRowNamesEveryMxConventionOnce) {
  for (const Convention& c : all_conventions()) {
    const bool listed =
        std::find(kMxConventions.begin(), kMxConventions.end(), c.name) != kMxConventions.end();
    EXPECT_EQ(mx_policy(c).has_value(), listed) << c.name;
  }
  for (const EdgeBlock& blk : edge_blocks()) {
    for (std::string_view c : kMxConventions) {
      int n = 0;
      for (const Expect& e : blk.expect) {
        n += static_cast<int>(std::count(e.conventions.begin(), e.conventions.end(), c));
      }
      EXPECT_EQ(n, 1) << blk.name << " / " << c;
    }
  }
}

// Guards against a wrong emax_elem (the "- 8" of FLOOR): docs/formats.md §1.1 max finite 448 =
// 1.75 * 2^8, 57344 = 1.75 * 2^15, fnuz 240 = 1.875 * 2^7, 57344.
TEST(MxScale, ElementEmaxFromMaxFinite) {
  EXPECT_EQ(element_emax(Format::kE4M3FN), 8);
  EXPECT_EQ(element_emax(Format::kE5M2), 15);
  EXPECT_EQ(element_emax(Format::kE4M3FNUZ), 7);
  EXPECT_EQ(element_emax(Format::kE5M2FNUZ), 15);
}

// Guards against the scale rules drifting from §3.3 / §3.5 / §3.7: torchao CEIL and EVEN (named
// torchao_ceil / torchao_even, docs/conventions.md §2.27, §2.28), vLLM gen-3 torch path (log2f
// RCEIL) and vLLM ROCm Triton (no offset, amax >= 1e-30), which have no named convention.
TEST(MxScale, UnnamedRulesOnTheCanonicalAmaxColumn) {
  MxPolicy ceil;
  ceil.rule = MxScaleRule::kCeil;
  MxPolicy even;
  even.rule = MxScaleRule::kEven;
  MxPolicy log2f;
  log2f.rule = MxScaleRule::kRceilLog2f;
  struct Row {
    float amax;
    uint8_t ceil, even, log2f;
  };
  // CEIL = ceil(log2 amax) - 8 (§3.3): 1.0 -> 119; 448 (not a power of two) -> 9 - 8 -> 128;
  // 480, 500 -> 128; 0 -> -127 - 8 clamps to 0; non-finite -> 0xFF.
  // EVEN = (bits + 0x80000) & 0xFF800000 then FLOOR: bumps iff significand >= 1.9375 (§3.3):
  // 448 (1.75), 480 (1.875) stay 127 (480 clipped), 500 (1.953) -> 128.
  // log2f RCEIL = ceil(log2(amax / 448)) + 127, clamp(0, 254) (§3.5 gen 3): 1.0 -> 119,
  // 448 -> 127, 480 / 500 -> 128, zero block -> log2(0) = -inf -> clamp -> 0x00 (§3.5).
  const Row rows[] = {{1.0f, 119, 119, 119},
                      {448.0f, 128, 127, 127},
                      {480.0f, 128, 127, 128},
                      {500.0f, 128, 128, 128},
                      {0.0f, 0, 0, 0}};
  for (const Row& r : rows) {
    EXPECT_EQ(mx_scale_byte(r.amax, Format::kE4M3FN, ceil), r.ceil) << r.amax;
    EXPECT_EQ(mx_scale_byte(r.amax, Format::kE4M3FN, even), r.even) << r.amax;
    EXPECT_EQ(mx_scale_byte(r.amax, Format::kE4M3FN, log2f), r.log2f) << r.amax;
  }
  // §3.7 rows +Inf and NaN: CEIL and EVEN give 0xFF for both.
  for (float a : {kInf, kNan}) {
    EXPECT_EQ(mx_scale_byte(a, Format::kE4M3FN, ceil), 0xFF) << a;
    EXPECT_EQ(mx_scale_byte(a, Format::kE4M3FN, even), 0xFF) << a;
  }
  // vLLM ROCm Triton (§3.5 gen 3, §6 item 14): amax = max(amax, 1e-30), floor(log2) + 127 with no
  // emax offset: log2(1e-30) = -99.66 -> -100 -> byte 27 for a zero block.
  MxPolicy rocm;
  rocm.rule = MxScaleRule::kNoOffset;
  rocm.amax_floor = 1e-30f;
  const MxQuantized q = quantize_one_block({}, rocm);
  EXPECT_EQ(q.scales[0], 27);
}

// Guards against the wrong finite-overflow policy per convention (docs/formats.md §6 item 1, table
// §1.3): a FLOOR block with amax 480 keeps scale 2^0, so 480 / 470 / -480 reach the element cast
// unscaled. Saturating casts (CUDA SATFINITE, Triton, TE, AITER, DeepGEMM, torchao's clamp,
// vLLM's clamp) give 0x7E / 0xFE; PyTorch <= 2.11, ml_dtypes, CUDA NOSAT give NaN 0x7F / 0xFF
// (device: "470 -> 7f", "-470 -> fe ff" SAT / NOSAT). 464 is the RNE midpoint -> 448 everywhere.
TEST(MxElementOverflow, PerConventionOnAFloorScaledBlock) {
  struct Row {
    std::string_view convention;
    bool saturates;
  };
  const Row rows[] = {{"ocp_mx", true},           {"torchao_floor", true},
                      {"torchao_rceil", true},    {"transformer_engine", true},
                      {"cuda_satfinite", true},   {"cuda_nosat", false},
                      {"torch_2_11", false},      {"ml_dtypes", false},
                      {"triton_nvidia", true},    {"aiter_hip", true},
                      {"aiter_triton", true},     {"vllm_group_quant", true},
                      {"vllm_e8m0_shift", false}, {"vllm_mxfp8_exp2", false},
                      {"deepgemm", true}};
  for (const Row& r : rows) {
    const Convention* c = find_convention(r.convention);
    ASSERT_NE(c, nullptr) << r.convention;
    MxPolicy p;  // FLOOR
    p.element = c->element;
    const MxQuantized q = quantize_one_block({480.0f, 470.0f, 464.0f, -480.0f}, p);
    EXPECT_EQ(q.scales[0], 127) << r.convention;
    const uint8_t pos = r.saturates ? 0x7E : 0x7F;
    const uint8_t neg = r.saturates ? 0xFE : 0xFF;
    EXPECT_EQ(q.data[0], pos) << r.convention << " 480";
    EXPECT_EQ(q.data[1], pos) << r.convention << " 470";
    EXPECT_EQ(q.data[2], 0x7E) << r.convention << " 464";
    EXPECT_EQ(q.data[3], neg) << r.convention << " -480";
  }
}

// Guards against AITER's subnormal ceil being replaced by the TE / torchao one (§6 item 9): with
// the 1e-10 seed removed, amax 2^-119 gives y = amax * fl32(1/448) = (4/7) * 2^-127 (1 + tiny), an
// fp32 subnormal with mantissa ~0x249249 <= 0x400000. TE / torchao: fits 2^-127 -> byte 0;
// AITER "if (exponent < 0xFF && mantissa) exponent += 1" -> byte 1. Above 2^-127 both give 1.
TEST(MxScale, AiterSubnormalCeilDiffersFromTe) {
  MxPolicy aiter = policy_of("aiter_hip");
  aiter.amax_floor = 0.0f;
  const MxPolicy te = policy_of("transformer_engine");
  const MxPolicy torchao = policy_of("torchao_rceil");
  EXPECT_EQ(mx_scale_byte(0x1p-119f, Format::kE4M3FN, aiter), 1);
  EXPECT_EQ(mx_scale_byte(0x1p-119f, Format::kE4M3FN, te), 0);
  EXPECT_EQ(mx_scale_byte(0x1p-119f, Format::kE4M3FN, torchao), 0);
  // 2^-118 * fl32(1/448) = (8/7) * 2^-127 (1 + tiny) > 2^-127: byte 1 for all three.
  EXPECT_EQ(mx_scale_byte(0x1p-118f, Format::kE4M3FN, aiter), 1);
  EXPECT_EQ(mx_scale_byte(0x1p-118f, Format::kE4M3FN, te), 1);
  EXPECT_EQ(mx_scale_byte(0x1p-118f, Format::kE4M3FN, torchao), 1);
  // The seeded convention hides it: max(2^-119, 1e-10) = 1e-10 -> byte 85 (§3.6).
  EXPECT_EQ(mx_scale_byte(1e-10f, Format::kE4M3FN, policy_of("aiter_hip")), 85);
}

// Guards against E4M3FNUZ MX blocks using the OCP max 448 / emax 8 (§6 item 4; AITER picks
// FP8_E4M3_FNUZ with 240 / pow2 7 on gfx942, §3.6). RCEIL with max 240: 240 * fl32(1/240) =
// 1 + (7/16) ulp -> 1.0 -> byte 127, element 240 = fnuz 0x7F; 448 * fl32(1/240) = 1.87 -> 2^1
// -> 128, 224 = 1.75 * 2^7 -> fnuz (bias 8) e=15, m=6 = 0x7E. FLOOR: floor(log2 240) - 7 = 0.
TEST(MxScale, AiterOnE4m3fnuzUses240) {
  const MxPolicy aiter = policy_of("aiter_hip");
  MxQuantized q = quantize_one_block({240.0f}, aiter, Format::kE4M3FNUZ);
  EXPECT_EQ(q.scales[0], 127);
  EXPECT_EQ(q.data[0], 0x7F);
  q = quantize_one_block({448.0f}, aiter, Format::kE4M3FNUZ);
  EXPECT_EQ(q.scales[0], 128);
  EXPECT_EQ(q.data[0], 0x7E);
  EXPECT_EQ(mx_scale_byte(240.0f, Format::kE4M3FNUZ, MxPolicy{}), 127);
  // On E4M3FN the same 448 block is byte 127, element 0x7E (amax_448 row).
  EXPECT_EQ(mx_scale_byte(448.0f, Format::kE4M3FN, aiter), 127);
}

// Guards against a short last block (K % 32 != 0) being dropped or scaled from garbage: K = 40
// gives ceil(40/32) = 2 scales; the 8 real elements of block 1 are 1.0 (byte 119, 0x78) and the
// pad value takes part in amax: zero padding changes nothing, pad 1000 makes floor(log2 1000) - 8
// = 1 -> byte 128 and 1.0 -> 0.5 = 0x30 (mx_quant.h pad_value; DeepGEMM pads with zeros, §5.2).
TEST(MxPartialBlock, PadValueTakesPartInAmax) {
  std::vector<float> x(40, 0.0f);
  x[0] = 448.0f;                                      // block 0: byte 127
  for (std::size_t k = 32; k < 40; ++k) x[k] = 1.0f;  // block 1: 8 real elements
  for (std::string_view conv : {"ocp_mx", "transformer_engine"}) {
    MxPolicy p = policy_of(conv);
    MxQuantized q = quantize_mx(x, 1, 40, Format::kE4M3FN, p);
    ASSERT_EQ(q.scale_cols(), 2u) << conv;
    ASSERT_EQ(q.scales.size(), 2u) << conv;
    ASSERT_EQ(q.data.size(), 40u) << conv;
    EXPECT_EQ(q.scales[0], 127) << conv;
    EXPECT_EQ(q.scales[1], 119) << conv;
    for (std::size_t k = 32; k < 40; ++k) EXPECT_EQ(q.data[k], 0x78) << conv << " k=" << k;
    // A pad below the real amax does not change the scale either.
    p.pad_value = 0.5f;
    q = quantize_mx(x, 1, 40, Format::kE4M3FN, p);
    EXPECT_EQ(q.scales[1], 119) << conv;
    // FLOOR: floor(log2 1000) = 9 -> 1 -> 128. RCEIL: 1000 * fl32(1/448) = 2.23 -> 2^2 -> 129,
    // 1.0 * 2^-2 = 0x28.
    p.pad_value = 1000.0f;
    q = quantize_mx(x, 1, 40, Format::kE4M3FN, p);
    const bool floor = conv == "ocp_mx";
    EXPECT_EQ(q.scales[1], floor ? 128 : 129) << conv;
    for (std::size_t k = 32; k < 40; ++k) {
      EXPECT_EQ(q.data[k], floor ? 0x30 : 0x28) << conv << " k=" << k;
    }
    EXPECT_EQ(q.scales[0], 127) << conv;  // the full block never sees the pad
  }
}

// Guards against BUG Z14 (payload quantized with the unrounded scale): amax 300, so amax / 448
// = 0.6696 is not a power of two. RCEIL: 300 * fl32(1/448) -> ceil 2^0 -> byte 127; FLOOR:
// floor(log2 300) - 8 = 0 -> 127. With the final scale 1.0: 300 lies between 288 (e=15, m=1)
// and 320 -> 288 = 0x79; 100 ties 96 (m=4) / 104 -> 96 = 0x6C. With the unrounded scale the
// payload would be 300 / 0.6696 = 448 = 0x7E and 100 / 0.6696 = 149.3 -> 144 = 0x71.
TEST(MxPayload, RequantizedWithTheFinalScale) {
  for (std::string_view conv : {"transformer_engine", "ocp_mx", "torchao_rceil"}) {
    const MxQuantized q = quantize_one_block({300.0f, 100.0f}, policy_of(conv));
    EXPECT_EQ(q.scales[0], 127) << conv;
    EXPECT_EQ(q.data[0], 0x79) << conv;
    EXPECT_EQ(q.data[1], 0x6C) << conv;
    EXPECT_NE(q.data[0], 0x7E) << conv << ": payload used the unrounded scale 300/448";
    EXPECT_NE(q.data[1], 0x71) << conv << ": payload used the unrounded scale 300/448";
  }
}

// Guards against BUG Z15 (amax rounded to bf16 before the e8m0 scale is chosen): the scale comes
// from the fp32 amax (§3.3 "computed in fp32", §3.4 thread_amax in float).
// RCEIL: amax 0x1.c00002p+8 = 448 + 2^-15: amax * fl32(1/448) = 1 + 0.946 ulp -> 1 + 2^-23 ->
// ceil 2^1 -> byte 128, element 224.00002 -> 0x76. bf16(amax) = 448 would give byte 127 and
// element 0x7E. FLOOR: amax 0x1.fffffep+8 (512 - 2^-15): floor(log2) = 8 -> 127 (saturates to
// 0x7E); bf16 rounds it to 512 -> 128.
TEST(MxScale, ChosenFromTheFp32AmaxNotItsBf16Rounding) {
  MxQuantized q = quantize_one_block({0x1.c00002p+8f}, policy_of("transformer_engine"));
  EXPECT_EQ(q.scales[0], 128);
  EXPECT_EQ(q.data[0], 0x76);
  q = quantize_one_block({0x1.fffffep+8f}, policy_of("torchao_floor"));
  EXPECT_EQ(q.scales[0], 127);
  EXPECT_EQ(q.data[0], 0x7E);
}

// Guards against BUG Z8 in the MX path (vLLM gen-3 torch RCEIL through log2, §3.5, §5.3): amax
// 0x1.c00002p+0 (1.75 + 2^-23) gives amax / 448 = 2^-8 (1 + 2^-23 / 1.75) -> 0x1.000002p-8;
// log2f of it is -8 + 1.7e-7, within half an ulp (2^-22) of -8, so ceil(log2f) = -8 -> byte
// 119 (device: "y = 0x1.000002p-8 -> 2^-8"), where the bit ceil (TE's RCEIL, multiply by
// fl32(1/448): 1 + 0.946 ulp -> 1 + 2^-23) gives 2^-7 -> byte 120.
TEST(MxScale, Log2fCeilHazard) {
  MxPolicy log2f;
  log2f.rule = MxScaleRule::kRceilLog2f;
  const float amax = 0x1.c00002p+0f;
  ASSERT_EQ(amax / 448.0f, 0x1.000002p-8f);
  EXPECT_EQ(mx_scale_byte(amax, Format::kE4M3FN, log2f), 119);
  EXPECT_EQ(mx_scale_byte(amax, Format::kE4M3FN, policy_of("transformer_engine")), 120);
}

// Guards against scales landing at the wrong (row, block) index or elements in the wrong block:
// 4 rows x 3 blocks, block (r, g) has amax 2^n with n = 3r + g at a position that varies with
// (r, g) and 2^(n-1) right after it. FLOOR and RCEIL both give byte n - 8 + 127 = 119 + n
// (all distinct), the amax element 256 = 0x78, its neighbour 128 = 0x70, everything else 0x00.
TEST(MxFingerprint, EveryScaleAtItsOwnRowAndBlock) {
  constexpr std::size_t kRows = 4, kBlocks = 3, kCols = kBlocks * kMxBlock;
  std::vector<float> x(kRows * kCols, 0.0f);
  auto pos = [](std::size_t r, std::size_t g) { return (5 * r + 7 * g) % 31; };
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::size_t g = 0; g < kBlocks; ++g) {
      const int n = static_cast<int>(3 * r + g);
      x[r * kCols + g * kMxBlock + pos(r, g)] = std::ldexp(1.0f, n);
      x[r * kCols + g * kMxBlock + pos(r, g) + 1] = std::ldexp(1.0f, n - 1);
    }
  }
  for (std::string_view conv : {"ocp_mx", "transformer_engine"}) {
    const MxQuantized q = quantize_mx(x, kRows, kCols, Format::kE4M3FN, policy_of(conv));
    ASSERT_EQ(q.scales.size(), kRows * kBlocks);
    for (std::size_t r = 0; r < kRows; ++r) {
      for (std::size_t g = 0; g < kBlocks; ++g) {
        EXPECT_EQ(q.scales[r * kBlocks + g], 119 + 3 * r + g) << conv << " r=" << r << " g=" << g;
        for (std::size_t i = 0; i < kMxBlock; ++i) {
          const uint8_t want = i == pos(r, g) ? 0x78 : (i == pos(r, g) + 1 ? 0x70 : 0x00);
          EXPECT_EQ(q.data[r * kCols + g * kMxBlock + i], want)
              << conv << " r=" << r << " g=" << g << " i=" << i;
        }
      }
    }
  }
}

// Guards against a silently accepted wrong shape or a non-FP8 element format.
TEST(MxQuantize, RejectsBadShapesAndFormats) {
  const std::vector<float> x(64, 1.0f);
  EXPECT_THROW(quantize_mx(x, 3, 32, Format::kE4M3FN, MxPolicy{}), std::invalid_argument);
  EXPECT_THROW(quantize_mx(x, 1, 32, Format::kE4M3FN, MxPolicy{}), std::invalid_argument);
  EXPECT_THROW(quantize_mx(x, 2, 32, Format::kBF16, MxPolicy{}), std::invalid_argument);
  EXPECT_THROW(quantize_mx(x, 2, 32, Format::kE8M0, MxPolicy{}), std::invalid_argument);
  const MxQuantized q = quantize_mx(x, 2, 32, Format::kE5M2, MxPolicy{});
  EXPECT_EQ(q.scales.size(), 2u);
  // E5M2 FLOOR: floor(log2 1) - 15 = -15 -> byte 112; 1.0 * 2^15 = 32768 = e5m2 (30 << 2) = 0x78.
  EXPECT_EQ(q.scales[0], 112);
  EXPECT_EQ(q.data[0], 0x78);
}

}  // namespace
}  // namespace mxgate
