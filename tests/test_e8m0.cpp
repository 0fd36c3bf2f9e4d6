// Covers reference/e8m0: every E8m0Encode rule on the edge inputs of docs/formats.md §2.1
// (zero, -0, negatives, fp32 subnormals around 2^-127, ties 1.5 * 2^e, 1.75 * 2^e, 2^127,
// 1.5 * 2^127, FLT_MAX, ±Inf, NaNs incl. a large payload), every E8m0Decode rule on the edge
// bytes and on every normal byte, the rule names and parsers ("truncate" = floor), and the
// log2-ceil hazard model log2f_rounds_to_floor (device examples, a cross-check against an
// extended-precision log2 near every power of two, and the measured count 91 over
// [2^-27, 2^14)).
// Does NOT cover: the count over all normal fp32 (3654, ~8 s: exhaustive_encoders.cpp), the
// full 2^32 sweeps of the rules (exhaustive_encoders.cpp), the measured device rows
// (test_conventions.cpp), conventions.
// Every expected byte below is derived by hand from the rule as docs/formats.md §2.1 states it; the
// arithmetic is in the comments. e8m0_oracle is held to the same table (it must agree too).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <set>
#include <string>

#include "reference/e8m0.h"
#include "reference/encode_oracle.h"
#include "reference/format.h"
#include "reference/measured_bytes.h"
#include "tests/hex.h"

namespace mxgate {
namespace {

using test_support::hex;

// Edge inputs, by fp32 bit pattern (the label says what the pattern is).
struct Input {
  const char* label;
  uint32_t bits;
};
constexpr Input kInputs[] = {
    {"+0", 0x00000000},
    {"-0", 0x80000000},
    {"-1", 0xBF800000},
    {"-3", 0xC0400000},
    {"1", 0x3F800000},
    {"1.5", 0x3FC00000},
    {"1.5+ulp", 0x3FC00001},
    {"1.5-ulp", 0x3FBFFFFF},
    {"3", 0x40400000},
    {"1.75", 0x3FE00000},
    {"1.75-ulp", 0x3FDFFFFF},
    {"2^-127", 0x00400000},      // fp32 subnormal, mantissa 0x400000
    {"1.2*2^-127", 0x004CCCCD},  // 0x1.333334p-127
    {"1.5*2^-127", 0x00600000},
    {"2^-128", 0x00200000},
    {"2^-149", 0x00000001},
    {"2^-126", 0x00800000},  // min normal
    {"2^127", 0x7F000000},
    {"1.5*2^127", 0x7F400000},
    {"FLT_MAX", 0x7F7FFFFF},
    {"+inf", 0x7F800000},
    {"-inf", 0xFF800000},
    {"nan", 0x7FC00000},
    {"nan 0x7fe00000", 0x7FE00000},  // payload large enough to carry in aiter_triton_bump
    {"-nan", 0xFFC00000},
};
constexpr size_t kN = sizeof(kInputs) / sizeof(kInputs[0]);

struct RuleRow {
  E8m0Encode rule;
  uint8_t bytes[kN];
};

// One byte per input of kInputs, in order (13 per line: +0 .. 1.2*2^-127, then 1.5*2^-127 ..
// -nan).
const RuleRow kRows[] = {
    // floor (docs/formats.md §2.1 CUDA cudaRoundZero row, oneDNN truncation, OCP/torchao FLOOR):
    // byte = exponent field of |x|; subnormals -> 00; finite never overflows (FLT_MAX -> fe);
    // Inf and NaN have exponent ff -> ff (NOSAT). -3 = 1.5 * 2^1 -> 1 + 127 = 0x80.
    {E8m0Encode::kFloor,
     {0x00, 0x00, 0x7f, 0x80, 0x7f, 0x7f, 0x7f, 0x7f, 0x80, 0x7f, 0x7f, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x01, 0xfe, 0xfe, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff}},
    // floor_sat (CUDA cudaRoundZero + SATFINITE, §2.1): as floor, but ±Inf -> fe; NaN -> ff.
    {E8m0Encode::kFloorSat,
     {0x00, 0x00, 0x7f, 0x80, 0x7f, 0x7f, 0x7f, 0x7f, 0x80, 0x7f, 0x7f, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x01, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xff, 0xff, 0xff}},
    // ceil_sat (CUDA RoundPosInf + SATFINITE, TE float_to_e8m0, §2.1): ceil(log2|x|) on bits;
    // 1.5 -> 2^1 = 0x80, 3 -> 2^2 = 0x81; a subnormal rounds up to 2^-126 (01) iff it is above
    // 2^-127 (TE: !(exponent == 0 && mantissa <= 0x400000)), so 2^-127 and 2^-128 -> 00;
    // 1.5 * 2^127 needs 2^128 -> saturates to fe, FLT_MAX too; Inf -> fe; NaN -> ff.
    {E8m0Encode::kCeilSat,
     {0x00, 0x00, 0x7f, 0x81, 0x7f, 0x80, 0x80, 0x80, 0x81, 0x80, 0x80, 0x00, 0x01,
      0x01, 0x00, 0x00, 0x01, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xff, 0xff, 0xff}},
    // ceil_nosat (torchao _f32_to_e8m0_rceil, CUDA RoundPosInf NOSAT, §2.1): as ceil_sat but
    // exponent 254 + 1 = 255 -> ff for 1.5 * 2^127 and FLT_MAX; Inf -> ff. 2^127 is exact: fe.
    {E8m0Encode::kCeilNoSat,
     {0x00, 0x00, 0x7f, 0x81, 0x7f, 0x80, 0x80, 0x80, 0x81, 0x80, 0x80, 0x00, 0x01,
      0x01, 0x00, 0x00, 0x01, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
    // nearest_torch (PyTorch fp8e8m0fnu_from_fp32_value, §2.1): normals go up iff the fraction
    // is >= 0.5, so 1.5 (tie) -> 0x80, 1.5-ulp -> 0x7f, 1.75 -> 0x80, 3 -> 0x81; sign ignored
    // (-3 -> 0x81); subnormals: <= 2^-127 -> 00, in (2^-127, 2^-126) -> 01; 1.5 * 2^127 rounds to
    // 2^128 -> ff; Inf/NaN -> ff; 0 -> 00.
    {E8m0Encode::kNearestTorch,
     {0x00, 0x00, 0x7f, 0x81, 0x7f, 0x80, 0x80, 0x7f, 0x81, 0x80, 0x80, 0x00, 0x01,
      0x01, 0x00, 0x00, 0x01, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
    // nearest_ml_dtypes (ml_dtypes ConvertImpl, §2.1): as PyTorch for positives; 0, -0 and every
    // negative -> ff ("target has no zero ... quiet_NaN").
    {E8m0Encode::kNearestMlDtypes,
     {0xff, 0xff, 0xff, 0xff, 0x7f, 0x80, 0x80, 0x7f, 0x81, 0x80, 0x80, 0x00, 0x01,
      0x01, 0x00, 0x00, 0x01, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
    // deepgemm_clamp (DeepGEMM ceil_to_ue8m0, §5.2): exp = field(|x|) + (mantissa != 0), then
    // clamp(1, 254): 0 -> 0 -> 01; every subnormal -> 0 + 1 = 01; 2^-126 -> 01; 1.5 * 2^127
    // -> 255 -> fe; Inf -> 255 -> fe; NaN -> 256 -> fe ("NaN/Inf amax -> 2^127").
    {E8m0Encode::kDeepGemmClamp,
     {0x01, 0x01, 0x7f, 0x81, 0x7f, 0x80, 0x80, 0x80, 0x81, 0x80, 0x80, 0x01, 0x01,
      0x01, 0x01, 0x01, 0x01, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe}},
    // aiter_ceil (AITER fp_f32_to_e8m0_scale<RoundUp>, §2.1, §6 item 9): `if (exponent < 0xFF &&
    // mantissa) exponent += 1`: any nonzero subnormal (even 2^-128, 2^-149, 2^-127) -> 01;
    // 254 + 1 = 255 -> ff for 1.5 * 2^127 and FLT_MAX; Inf (mantissa 0) -> ff; NaN -> ff.
    {E8m0Encode::kAiterCeil,
     {0x00, 0x00, 0x7f, 0x81, 0x7f, 0x80, 0x80, 0x80, 0x81, 0x80, 0x80, 0x01, 0x01,
      0x01, 0x01, 0x01, 0x01, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
    // aiter_triton_bump (AITER Triton _mxfp8_quant_op, §3.6): t = (bits(|x|) + 0x200000) &
    // 0xFF800000, byte = floor(log2 t) + 127 clamped to [0, 254]. 1.5: 0x3FE00000 -> 0x3F800000
    // -> 7f (no bump below 1.75); 1.75: 0x3FE00000 + 0x200000 = 0x40000000 -> 0x80; 1.75-ulp:
    // 0x3FFFFFFF -> 7f; -3: 0x40600000 -> 0x40000000 -> 0x80; 1.5 * 2^-127: 0x00600000 +
    // 0x200000 = 0x00800000 -> 01; 1.2 * 2^-127: 0x006CCCCD -> 0 -> log2(0) = -inf -> 00;
    // FLT_MAX: 0x7F9FFFFF -> 0x7F800000 = Inf -> clamp 254 = fe; Inf -> fe; NaN 0x7FC00000 ->
    // 0x7FE00000 & mask = Inf -> fe ("amax = NaN -> byte 254"); NaN 0x7FE00000 + 0x200000 =
    // 0x80000000 = -0.0 -> log2 = -inf -> 00.
    {E8m0Encode::kAiterTritonBump,
     {0x00, 0x00, 0x7f, 0x80, 0x7f, 0x7f, 0x7f, 0x7f, 0x80, 0x80, 0x7f, 0x00, 0x00,
      0x01, 0x00, 0x00, 0x01, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0x00, 0xfe}},
    // ceil_via_log2f (vLLM exp2f(ceilf(log2f(fabsf(y)))), §5.1, byte = bits >> 23): on these
    // inputs log2f is exact or far from an integer, so this is ceil: 2^-127 -> exp2f(-127) is
    // the subnormal 0x00400000 -> byte 00; 2^-128, 2^-149 -> subnormal results -> 00; 1.2 *
    // 2^-127 -> ceil(-126.74) = -126 -> 01; 1.5 * 2^127 and FLT_MAX -> ceil = 128 -> exp2f
    // overflows to +Inf -> ff; 0 -> exp2f(-inf) = +0 -> 00; Inf, NaN -> ff.
    {E8m0Encode::kCeilViaLog2f,
     {0x00, 0x00, 0x7f, 0x81, 0x7f, 0x80, 0x80, 0x80, 0x81, 0x80, 0x80, 0x00, 0x01,
      0x01, 0x00, 0x00, 0x01, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
};

void PrintTo(const RuleRow& r, std::ostream* os) { *os << name(r.rule); }

class E8m0Rule : public ::testing::TestWithParam<RuleRow> {};

// Guards against any rule mishandling one of the §2.1 edge inputs (zero, sign, subnormal
// boundary at 2^-127, the 1.5 / 1.75 thresholds, overflow, Inf, NaN).
TEST_P(E8m0Rule, EdgeTable) {
  const RuleRow& row = GetParam();
  for (size_t i = 0; i < kN; ++i) {
    EXPECT_EQ(hex(encode_e8m0(float_of(kInputs[i].bits), row.rule)), hex(row.bytes[i]))
        << name(row.rule) << " on " << kInputs[i].label;
  }
}

// Guards against the value-search oracle (used by every sweep) disagreeing with the hand table.
TEST_P(E8m0Rule, OracleAgreesWithEdgeTable) {
  const RuleRow& row = GetParam();
  for (size_t i = 0; i < kN; ++i) {
    EXPECT_EQ(hex(e8m0_oracle(float_of(kInputs[i].bits), row.rule)), hex(row.bytes[i]))
        << name(row.rule) << " on " << kInputs[i].label;
  }
}

INSTANTIATE_TEST_SUITE_P(Rules, E8m0Rule, ::testing::ValuesIn(kRows),
                         [](const ::testing::TestParamInfo<RuleRow>& p) {
                           return std::string(name(p.param.rule));
                         });

// Guards against a rule missing from the table above (a new rule without hand-derived bytes).
TEST(E8m0Encode, TableCoversEveryRule) {
  std::set<E8m0Encode> in_table;
  for (const RuleRow& r : kRows) in_table.insert(r.rule);
  for (E8m0Encode r : all_e8m0_encodes()) EXPECT_TRUE(in_table.count(r)) << name(r);
  EXPECT_EQ(all_e8m0_encodes().size(), std::size(kRows));
}

// Guards against rules that differ on ordinary powers of two: every rule maps 2^k (k in
// [-126, 127]) to k + 127, and so do negatives for the sign-ignoring rules.
TEST(E8m0Encode, ExactPowersOfTwoAgreeEverywhere) {
  for (int k = -126; k <= 127; ++k) {
    const float x = std::ldexp(1.0f, k);
    for (E8m0Encode r : all_e8m0_encodes()) {
      EXPECT_EQ(encode_e8m0(x, r), k + 127) << name(r) << " 2^" << k;
      if (r != E8m0Encode::kNearestMlDtypes) {
        EXPECT_EQ(encode_e8m0(-x, r), k + 127) << name(r) << " -2^" << k;
      }
    }
  }
}

// Guards against ceil vs nearest confusion on the most common MX input: 2.9 -> 2 under PyTorch
// nearest but 4 under every ceil (docs/formats.md §2.1 "3.0 gives 4.0 (0x81) but 2.9 gives 2.0").
TEST(E8m0Encode, NearestVsCeilAt2p9) {
  EXPECT_EQ(encode_e8m0(2.9f, E8m0Encode::kNearestTorch), 0x80);
  EXPECT_EQ(encode_e8m0(3.0f, E8m0Encode::kNearestTorch), 0x81);
  EXPECT_EQ(encode_e8m0(2.9f, E8m0Encode::kCeilSat), 0x81);
  EXPECT_EQ(encode_e8m0(2.9f, E8m0Encode::kFloor), 0x80);
}

struct DecodeRow {
  E8m0Decode rule;
  uint32_t bits[5];  // fp32 bits for bytes 0x00, 0x01, 0x7f, 0xfe, 0xff; kAnyNaN = any NaN
};
constexpr uint32_t kAnyNaN = 0xFFFFFFFF;
// 0x01 = 2^-126 = 0x00800000, 0x7f = 1.0 = 0x3F800000, 0xfe = 2^127 = 0x7F000000 everywhere.
constexpr DecodeRow kDecodeRows[] = {
    // OCP / PyTorch (docs/formats.md §2.2: fp32_from_bits(0x00400000) = 2^-127; 0xff NaN).
    {E8m0Decode::kOcp, {0x00400000, 0x00800000, 0x3F800000, 0x7F000000, kAnyNaN}},
    // vLLM _upcast_e8m0_to_fp32 byte << 23 (§2.2): 0x00 -> +0.0, 0xff -> 0x7F800000 = +Inf.
    {E8m0Decode::kShift, {0x00000000, 0x00800000, 0x3F800000, 0x7F000000, 0x7F800000}},
    // torch.exp2(e - 127) on CUDA (docs/conventions.md §3.5: 0x1.fffff8p-128 (!) ... inf):
    // 0x1.fffff8p-128 = 2^-127 - 2^-149 = 0x003FFFFF.
    {E8m0Decode::kExp2Cuda, {0x003FFFFF, 0x00800000, 0x3F800000, 0x7F000000, 0x7F800000}},
    // Triton dot_scaled emulation: shift, then maskNan selects NaN for 0xff (§4): 0x00 -> +0.0.
    {E8m0Decode::kShiftMaskNan, {0x00000000, 0x00800000, 0x3F800000, 0x7F000000, kAnyNaN}},
};

// Guards against a decode rule that reads 0x00 or 0xff the way another rule does (§6 item 10).
TEST(E8m0DecodeRules, EdgeBytes) {
  const uint8_t bytes[] = {0x00, 0x01, 0x7F, 0xFE, 0xFF};
  for (const DecodeRow& row : kDecodeRows) {
    for (int i = 0; i < 5; ++i) {
      const float got = decode_e8m0(bytes[i], row.rule);
      if (row.bits[i] == kAnyNaN) {
        EXPECT_TRUE(std::isnan(got)) << name(row.rule) << " " << hex(bytes[i]);
      } else {
        EXPECT_EQ(hex(bits_of(got)), hex(row.bits[i])) << name(row.rule) << " " << hex(bytes[i]);
      }
    }
  }
  EXPECT_EQ(std::size(kDecodeRows), all_e8m0_decodes().size());
}

// Guards against the rules disagreeing anywhere but 0x00 / 0xff: 0x01..0xfe are 2^(e - 127).
TEST(E8m0DecodeRules, NormalBytesArePowersOfTwo) {
  for (E8m0Decode r : all_e8m0_decodes()) {
    for (int e = 1; e <= 254; ++e) {
      EXPECT_EQ(decode_e8m0(static_cast<uint8_t>(e), r), std::ldexp(1.0f, e - 127))
          << name(r) << " " << e;
    }
  }
}

// Guards against the printed rule names and their parsers drifting apart, and against
// "truncate" (oneDNN RZ, docs/formats.md §2.1) parsing to anything but floor.
TEST(E8m0Names, ParseRoundTrip) {
  const std::pair<E8m0Encode, const char*> enc[] = {
      {E8m0Encode::kFloor, "floor"},
      {E8m0Encode::kFloorSat, "floor_sat"},
      {E8m0Encode::kCeilSat, "ceil_sat"},
      {E8m0Encode::kCeilNoSat, "ceil_nosat"},
      {E8m0Encode::kNearestTorch, "nearest_torch"},
      {E8m0Encode::kNearestMlDtypes, "nearest_ml_dtypes"},
      {E8m0Encode::kDeepGemmClamp, "deepgemm_clamp"},
      {E8m0Encode::kAiterCeil, "aiter_ceil"},
      {E8m0Encode::kAiterTritonBump, "aiter_triton_bump"},
      {E8m0Encode::kCeilViaLog2f, "ceil_via_log2f"}};
  for (const auto& [r, text] : enc) {
    EXPECT_EQ(name(r), text);
    ASSERT_TRUE(parse_e8m0_encode(text).has_value()) << text;
    EXPECT_EQ(*parse_e8m0_encode(text), r) << text;
  }
  ASSERT_TRUE(parse_e8m0_encode("truncate").has_value());
  EXPECT_EQ(*parse_e8m0_encode("truncate"), E8m0Encode::kFloor);
  const std::pair<E8m0Decode, const char*> dec[] = {{E8m0Decode::kOcp, "ocp"},
                                                    {E8m0Decode::kShift, "shift"},
                                                    {E8m0Decode::kExp2Cuda, "exp2_cuda"},
                                                    {E8m0Decode::kShiftMaskNan, "shift_mask_nan"}};
  for (const auto& [r, text] : dec) {
    EXPECT_EQ(name(r), text);
    ASSERT_TRUE(parse_e8m0_decode(text).has_value()) << text;
    EXPECT_EQ(*parse_e8m0_decode(text), r) << text;
  }
  for (const char* bad : {"", "ceil", "round_up", "Floor", "rceil", "nearest"}) {
    EXPECT_FALSE(parse_e8m0_encode(bad).has_value()) << bad;
  }
  for (const char* bad : {"", "exp2", "OCP", "truncate"}) {
    EXPECT_FALSE(parse_e8m0_decode(bad).has_value()) << bad;
  }
}

// Guards against the log2 hazard model missing the measured cases: docs/conventions.md §3.6 "first:
// 0x1.000002p-126" (CUDA log2f) and torch.log2 "y = 0x1.000002p-8, 0x1.000002p-7,
// 0x1.000002p+4". Arithmetic for 0x1.000002p-8: log2 y = -8 + 2^-23 / ln 2 = -8 + 1.7e-7;
// fp32 spacing just inside |-8| is 2^-21 = 4.8e-7, half of it 2.4e-7 > 1.7e-7 -> rounds to -8.
TEST(Log2Hazard, MeasuredExamplesRoundToFloor) {
  for (float y : {0x1.000002p-126f, 0x1.000002p-8f, 0x1.000002p-7f, 0x1.000002p+4f}) {
    EXPECT_TRUE(log2f_rounds_to_floor(y)) << y;
  }
  // The encoder built on it gives one binade less than the bit ceil for exactly these inputs:
  // 0x1.000002p-126 -> bit ceil 2^-125 = 0x02, log2f -> 2^-126 = 0x01; 0x1.000002p-8 -> 0x78
  // vs 0x77; 0x1.000002p+4 -> 2^5 = 0x84 vs 0x83.
  EXPECT_EQ(encode_e8m0(0x1.000002p-126f, E8m0Encode::kCeilSat), 0x02);
  EXPECT_EQ(encode_e8m0(0x1.000002p-126f, E8m0Encode::kCeilViaLog2f), 0x01);
  EXPECT_EQ(encode_e8m0(0x1.000002p-8f, E8m0Encode::kCeilSat), 0x78);
  EXPECT_EQ(encode_e8m0(0x1.000002p-8f, E8m0Encode::kCeilViaLog2f), 0x77);
  EXPECT_EQ(encode_e8m0(0x1.000002p+4f, E8m0Encode::kCeilSat), 0x84);
  EXPECT_EQ(encode_e8m0(0x1.000002p+4f, E8m0Encode::kCeilViaLog2f), 0x83);
}

// Guards against a hazard model that fires where log2 is exact or far from an integer:
// powers of two (log2 exact), k = 0 (log2f(1 + 2^-23) = 1.7e-7 is representable), 1.5, 3,
// zero, Inf, NaN.
TEST(Log2Hazard, NeverForPowersOfTwoOrNonFinite) {
  for (int k = -149; k <= 127; ++k) {
    EXPECT_FALSE(log2f_rounds_to_floor(std::ldexp(1.0f, k))) << "2^" << k;
  }
  for (float y : {0x1.000002p+0f, 1.5f, 3.0f, 0.75f, 0.0f, INFINITY, NAN, 0x1.fffffep127f}) {
    EXPECT_FALSE(log2f_rounds_to_floor(y)) << y;
  }
}

// Guards against an error in the threshold table of log2f_rounds_to_floor: near every power of
// two (the first 2047 fp32 above 2^k, k in [-126, 127], and small subnormals) it must say
// exactly whether fl32(log2 y) == floor(log2 y), with log2 computed in long double and rounded
// once to fp32 (a correctly rounded log2f, as the model states).
TEST(Log2Hazard, AgreesWithExtendedPrecisionLog2NearPowersOfTwo) {
  uint64_t bad = 0, hits = 0;
  auto check = [&](uint32_t b, int k) {
    const float y = float_of(b);
    const float l = static_cast<float>(std::log2(static_cast<long double>(y)));
    const bool want = l == static_cast<float>(k);
    const bool got = log2f_rounds_to_floor(y);
    hits += want;
    if (got != want && bad++ < 10) {
      ADD_FAILURE() << "y = " << std::hexfloat << y << ": model " << got << ", log2l " << want;
    }
  };
  for (int k = -126; k <= 127; ++k) {
    const uint32_t base = static_cast<uint32_t>(k + 127) << 23;
    for (uint32_t m = 1; m < 2048; ++m) check(base | m, k);
  }
  for (int j = 1; j <= 22; ++j) {  // subnormals 2^(j-149) * (1 + m 2^-j)
    const uint32_t base = 1u << j;
    for (uint32_t m = 1; m < std::min<uint32_t>(base, 2048); ++m) check(base | m, j - 149);
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(hits, 0u);  // the scan did reach the hazard
}

// Guards against the hazard count drifting from the device measurement: torch.log2 on CUDA,
// exp2(ceil(log2 y)) != bitceil(y) for 91 y in [2^-27, 2^14) (docs/conventions.md §3.6,
// kLog2CeilMismatchesTorchRange). [2^-27, 2^14) = fp32 patterns [0x32000000, 0x46800000).
TEST(Log2Hazard, CountOverTorchRangeIs91) {
  uint64_t hits = 0;
  for (uint32_t b = 0x32000000u; b < 0x46800000u; ++b) hits += log2f_rounds_to_floor(float_of(b));
  EXPECT_EQ(hits, 91u);
  EXPECT_EQ(kLog2CeilMismatchesTorchRange, 91u);
}

}  // namespace
}  // namespace mxgate
