// Covers MXINT8 (OCP MX v1.0 §5.3 INT8 elements, §6.3 scale rule; docs/formats.md §1.5) in the
// reference: decode of all 256 codes against two's complement times 2^-6 written out here; the
// encoder (reference/fp_encode.h) under nearest-even, ties-away and truncation, int_symmetric and
// int_full_range, against a rule written out here in double arithmetic (std::nearbyint / std::round
// on |x| * 64, then the clamp), over every code, every midpoint and its neighbours, all 65536 bf16
// patterns and seeded random fp32 patterns; the encoder's named NaN / Inf / -0 policies; the
// value-search oracle (encode_oracle.h) against the encoder; ulp_distance_code's ordering; the MX
// scale rule (floor(log2 amax) - 0 on the bits, against std::frexp here), quantize_mx under
// ocp_mx (hand-computed blocks: plain, zero, NaN, Inf, saturating, short last block) and
// dequantize_mx. Does NOT cover: MXINT8 GEMM (out of scope: no op family multiplies MXINT8),
// casts of single values to MXINT8 under a convention (no convention defines one), the properties
// that reach MXINT8 through adapters (python/tests/test_mxint8.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/e8m0.h"
#include "reference/encode_oracle.h"
#include "reference/format.h"
#include "reference/fp_encode.h"
#include "reference/mx_quant.h"
#include "reference/quant_conventions.h"
#include "reference/verdict.h"

namespace mxgate {
namespace {

constexpr Format kF = Format::kMXINT8;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// The spec's value of a code: the byte as a two's complement integer, times 2^-6.
double spec_value(uint32_t code) {
  const int v = code < 128 ? static_cast<int>(code) : static_cast<int>(code) - 256;
  return v / 64.0;
}

EncodePolicy policy(Rounding r, IntRange range) {
  EncodePolicy p{r, Overflow::kSaturate, NanPolicy::kToPosZero};
  p.int_range = range;
  return p;
}

// The encoder's rule written out for finite x: n = |x| * 64 (exact in double) rounded by `r`,
// clamped to 127 (positive) or 127 / 128 (negative, by range), negated modulo 256.
uint32_t written_rule(float x, Rounding r, IntRange range) {
  const bool negative = std::signbit(x);
  const double a = std::fabs(static_cast<double>(x)) * 64.0;
  double n = 0;
  switch (r) {
    case Rounding::kNearestEven:
      n = std::nearbyint(a);  // the default FE_TONEAREST mode: ties to even
      break;
    case Rounding::kNearestAway:
      n = std::round(a);  // ties away from zero
      break;
    case Rounding::kTowardZero:
      n = std::trunc(a);
      break;
  }
  const double limit = negative && range == IntRange::kFull ? 128 : 127;
  if (n > limit) n = limit;
  const int v = negative ? -static_cast<int>(n) : static_cast<int>(n);
  return static_cast<uint32_t>(v) & 0xFFu;
}

// The finite inputs the encoder tests walk: every code's value, every midpoint between adjacent
// codes and the fp32 neighbours of both, values past both ends, tiny and subnormal magnitudes.
std::vector<float> probe_inputs() {
  std::vector<float> out;
  for (int v = -130; v <= 130; ++v) {
    for (double d : {0.0, 0.5, 0.25, 0.75}) {
      const float x = static_cast<float>((v + d) / 64.0);
      out.push_back(x);
      out.push_back(std::nextafter(x, kInf));
      out.push_back(std::nextafter(x, -kInf));
    }
  }
  for (float x : {1e-3f, 1e-30f, 1e-45f, 0x1p-126f, 0x1p-7f, 0x1.000002p-7f, 0x1.fffffep-8f, 2.0f,
                  3.0f, 1e10f, 3.4e38f, 0x1.fep+0f, 0x1.fdp+0f}) {
    out.push_back(x);
    out.push_back(-x);
  }
  return out;
}

// Guards against a decoder that reads the byte as sign-magnitude or unsigned, or with another
// implicit scale: all 256 codes decode to their two's complement value times 2^-6, exactly.
TEST(Mxint8, DecodesEveryCode) {
  for (uint32_t code = 0; code < 256; ++code) {
    EXPECT_EQ(static_cast<double>(decode(kF, code)), spec_value(code)) << code;
    EXPECT_FALSE(is_nan_code(kF, code)) << code;
  }
  EXPECT_EQ(decode(kF, 0x80), -2.0f);  // the spec's asymmetric end
  EXPECT_EQ(decode(kF, 0x81), -127.0f / 64);
  EXPECT_EQ(decode(kF, 0x7F), 127.0f / 64);
  EXPECT_EQ(decode(kF, 0xFF), -1.0f / 64);
  EXPECT_EQ(decode(kF, 0x40), 1.0f);
  EXPECT_EQ(max_finite(kF), 127.0f / 64);
  EXPECT_TRUE(has_no_specials(kF));
  EXPECT_TRUE(is_twos_complement(kF));
  EXPECT_FALSE(is_twos_complement(Format::kE4M3FN));
  EXPECT_EQ(info(kF).name, "mxint8");
  EXPECT_EQ(info(kF).bits, 8);
  EXPECT_EQ(info(kF).man_bits, 6);
}

// Guards against a rounding or clamping bug of the encoder (ties, the saturating ends, the -128
// code under each range): every probe input, all bf16 patterns and 10^6 seeded random fp32
// patterns equal the written-out rule, for each rounding and range.
TEST(Mxint8, EncoderEqualsTheWrittenRule) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  std::vector<float> inputs = probe_inputs();
  for (uint32_t b = 0; b < 65536; ++b) inputs.push_back(float_of(b << 16));
  const uint64_t seed = 0x6d78696e7438;
  std::printf("random fp32 patterns from seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 1000000; ++i) inputs.push_back(float_of(static_cast<uint32_t>(rng())));
  for (Rounding r : {Rounding::kNearestEven, Rounding::kNearestAway, Rounding::kTowardZero}) {
    for (IntRange range : {IntRange::kSymmetric, IntRange::kFull}) {
      const EncodePolicy p = policy(r, range);
      int bad = 0;
      for (float x : inputs) {
        if (!std::isfinite(x)) continue;
        const uint32_t got = encode(kF, x, p), want = written_rule(x, r, range);
        if (got != want && ++bad <= 5) {
          ADD_FAILURE() << name(r) << " " << name(range) << " x=" << std::hexfloat << x << " got 0x"
                        << std::hex << got << " want 0x" << want;
        }
      }
      EXPECT_EQ(bad, 0) << name(r) << " " << name(range);
    }
  }
}

// Guards against the hand-checked edges drifting: ties to even and away, -2 and below under each
// range, the largest value that stays below 127.5/64, a value too small for the smallest code.
TEST(Mxint8, HandEdges) {
  const EncodePolicy rne = policy(Rounding::kNearestEven, IntRange::kSymmetric);
  const EncodePolicy rna = policy(Rounding::kNearestAway, IntRange::kSymmetric);
  const EncodePolicy full = policy(Rounding::kNearestEven, IntRange::kFull);
  EXPECT_EQ(encode(kF, 0.5f / 64, rne), 0x00u);      // 0.5: tie, 0 is even
  EXPECT_EQ(encode(kF, 0.5f / 64, rna), 0x01u);      // away from zero
  EXPECT_EQ(encode(kF, -0.5f / 64, rna), 0xFFu);     // -1
  EXPECT_EQ(encode(kF, 1.5f / 64, rne), 0x02u);      // 1.5 -> 2
  EXPECT_EQ(encode(kF, 2.5f / 64, rne), 0x02u);      // 2.5 -> 2
  EXPECT_EQ(encode(kF, 2.5f / 64, rna), 0x03u);      // 2.5 -> 3
  EXPECT_EQ(encode(kF, 126.5f / 64, rne), 0x7Eu);    // 126
  EXPECT_EQ(encode(kF, 127.5f / 64, rne), 0x7Fu);    // 128 saturates to 127
  EXPECT_EQ(encode(kF, -2.0f, rne), 0x81u);          // symmetric: -127
  EXPECT_EQ(encode(kF, -2.0f, full), 0x80u);         // the spec's -128
  EXPECT_EQ(encode(kF, -127.5f / 64, full), 0x80u);  // tie -127 / -128: -128 is even
  EXPECT_EQ(encode(kF, -127.5f / 64, rne), 0x81u);   // symmetric: clamped back to -127
  EXPECT_EQ(encode(kF, -100.0f, full), 0x80u);
  EXPECT_EQ(encode(kF, 0x1p-8f, rne), 0x00u);   // 0.25 of the smallest step
  EXPECT_EQ(encode(kF, -0x1p-8f, rne), 0x00u);  // no -0 code
  EXPECT_EQ(encode(kF, -0.0f, rne), 0x00u);
  EXPECT_EQ(encode(kF, 1.0f, rne), 0x40u);
  EXPECT_EQ(encode(kF, -1.0f, rne), 0xC0u);
}

// Guards against a NaN or Inf policy writing a code it does not name (0x80 = -2 for a "negative
// zero", a NaN code MXINT8 lacks): each policy's code or its refusal.
TEST(Mxint8, NamedSpecialPolicies) {
  EncodePolicy p = policy(Rounding::kNearestEven, IntRange::kSymmetric);
  EXPECT_EQ(encode(kF, kInf, p), 0x7Fu);
  EXPECT_EQ(encode(kF, -kInf, p), 0x81u);
  p.int_range = IntRange::kFull;
  EXPECT_EQ(encode(kF, -kInf, p), 0x80u);
  p.nan = NanPolicy::kToMaxKeepSign;
  EXPECT_EQ(encode(kF, -kNaN, p), 0x80u);
  p.int_range = IntRange::kSymmetric;
  EXPECT_EQ(encode(kF, -kNaN, p), 0x81u);
  EXPECT_EQ(encode(kF, kNaN, p), 0x7Fu);
  p.nan = NanPolicy::kToNegMax;
  EXPECT_EQ(encode(kF, kNaN, p), 0x81u);
  p.nan = NanPolicy::kToPosZero;
  EXPECT_EQ(encode(kF, -kNaN, p), 0x00u);
  for (NanPolicy n :
       {NanPolicy::kKeepSign, NanPolicy::kCanonical, NanPolicy::kUndefined,
        NanPolicy::kQuietKeepSign, NanPolicy::kToZeroSignFlipped, NanPolicy::kTorchaoNormalPath}) {
    p.nan = n;
    EXPECT_THROW(encode(kF, kNaN, p), UndefinedEncoding) << name(n);
  }
  p.nan = NanPolicy::kToPosZero;
  for (Overflow o : {Overflow::kToInf, Overflow::kToNaN, Overflow::kSaturateInfToNaN}) {
    p.overflow = o;
    EXPECT_THROW(encode(kF, kInf, p), UndefinedEncoding) << name(o);
  }
  p.overflow = Overflow::kSaturateInfToNaN;
  EXPECT_EQ(encode(kF, 5.0f, p), 0x7Fu);  // finite overflow still saturates
  p.overflow = Overflow::kToInf;
  EXPECT_THROW(encode(kF, 5.0f, p), UndefinedEncoding);
  EXPECT_THROW(nan_code(kF, false), std::invalid_argument);
  EXPECT_FALSE(inf_code(kF, false).has_value());
  EXPECT_EQ(max_code(kF, false), 0x7Fu);
  EXPECT_EQ(max_code(kF, true), 0x81u);
}

// Guards against the value-search oracle and the encoder sharing a blind spot on the two's
// complement negatives: they agree on every bf16 pattern and the probe inputs, each policy,
// specials included (both refusing counts as agreeing).
TEST(Mxint8, OracleAgreesWithEncoder) {
  std::vector<float> inputs = probe_inputs();
  for (uint32_t b = 0; b < 65536; ++b) inputs.push_back(float_of(b << 16));
  for (Rounding r : {Rounding::kNearestEven, Rounding::kNearestAway, Rounding::kTowardZero}) {
    for (IntRange range : {IntRange::kSymmetric, IntRange::kFull}) {
      for (NanPolicy n :
           {NanPolicy::kToPosZero, NanPolicy::kToMaxKeepSign, NanPolicy::kUndefined}) {
        EncodePolicy p = policy(r, range);
        p.nan = n;
        const EncodeOracle oracle(kF, p);
        int bad = 0;
        for (float x : inputs) {
          std::optional<uint32_t> got, want;
          try {
            got = encode(kF, x, p);
          } catch (const UndefinedEncoding&) {
          }
          try {
            want = oracle.expected(x);
          } catch (const UndefinedEncoding&) {
          }
          if (got != want && ++bad <= 5) {
            ADD_FAILURE() << name(r) << " " << name(range) << " " << name(n)
                          << " x=" << std::hexfloat << x;
          }
        }
        EXPECT_EQ(bad, 0);
      }
    }
  }
}

// Guards against a mismatch report ordering MXINT8 codes as sign-magnitude (0x7F next to 0x80):
// the distance is the difference of the signed integers.
TEST(Mxint8, UlpDistanceIsSigned) {
  EXPECT_EQ(ulp_distance_code(kF, 0xFF, 0x00), 1u);
  EXPECT_EQ(ulp_distance_code(kF, 0x7F, 0x81), 254u);
  EXPECT_EQ(ulp_distance_code(kF, 0x80, 0x81), 1u);
  EXPECT_EQ(ulp_distance_code(kF, 0x40, 0x40), 0u);
}

// The OCP scale byte written out: floor(log2 amax) from std::frexp (exact), emax_elem 0, +127,
// clamped to [0, 254]; 0xFF for NaN / Inf, 0 for zero.
uint8_t spec_scale_byte(float amax) {
  if (!std::isfinite(amax)) return 0xFF;
  if (amax == 0.0f) return 0;
  int e = 0;
  std::frexp(static_cast<double>(amax), &e);
  const int s = std::clamp(e - 1, -127, 127);
  return static_cast<uint8_t>(s + 127);
}

// Guards against an MXINT8 scale taken with another emax_elem (8 as E4M3's, or 1) or rounded up:
// element_emax is 0 and the byte equals the written-out rule at powers of two, just below them,
// for subnormal and huge amax, NaN and Inf.
TEST(Mxint8, ScaleRuleIsFloorWithEmaxZero) {
  EXPECT_EQ(element_emax(kF), 0);
  const MxPolicy p = *mx_policy(require_convention("ocp_mx"), kF);
  std::vector<float> amaxes = {
      1.0f,     2.0f,  0x1.fffffep0f, 3.0f,        0x1p-126f, 0x1p-149f, 0x1p-130f, 0x1.fffffep127f,
      0x1p127f, 1e-3f, 448.0f,        127.0f / 64, kNaN,      kInf};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) amaxes.push_back(float_of(static_cast<uint32_t>(rng()) >> 1));
  for (float a : amaxes) EXPECT_EQ(mx_scale_byte(a, kF, p), spec_scale_byte(a)) << a;
}

// Guards against the MXINT8 quantizer's policy drifting from OCP as named: ocp_mx has one
// (FLOOR, nearest even, saturating symmetric, NaN blocks' elements named 0); conventions that do
// not quantize MXINT8 have none.
TEST(Mxint8, OcpMxPolicy) {
  const auto p = mx_policy(require_convention("ocp_mx"), kF);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->rule, MxScaleRule::kFloor);
  EXPECT_EQ(p->element.rounding, Rounding::kNearestEven);
  EXPECT_EQ(p->element.overflow, Overflow::kSaturate);
  EXPECT_EQ(p->element.int_range, IntRange::kSymmetric);
  EXPECT_EQ(p->nan_block_code, std::optional<uint8_t>(0));
  EXPECT_FALSE(mx_policy(require_convention("transformer_engine"), kF).has_value());
  EXPECT_FALSE(mx_policy(require_convention("torchao_floor"), kF).has_value());
}

// Guards against the quantizer scaling, rounding or saturating MXINT8 elements wrongly, and
// against a NaN / Inf block or the short last block going astray: hand-computed blocks.
TEST(Mxint8, QuantizesHandBlocks) {
  const MxPolicy p = *mx_policy(require_convention("ocp_mx"), kF);
  // Row 0, block 0: amax 3 -> floor(log2 3) = 1 -> byte 128, elements x / 2 * 64 = 32x.
  // Row 0, block 1 (2 elements, K = 34): amax 0.75 -> -1 -> byte 126, elements 128x.
  std::vector<float> x(2 * 34, 0.0f);
  x[0] = 3.0f;                   // 96 = 0x60
  x[1] = -3.0f;                  // -96 = 0xA0
  x[2] = 0.01f;                  // 0.32 -> 0
  x[3] = 3.0f * 127.5f / 128;    // 95.625 -> 96
  x[4] = 2.0f * 1.5f / 64;       // 1.5 -> 2 (tie, even)
  x[5] = 2.0f * 2.5f / 64;       // 2.5 -> 2 (tie, even)
  x[32] = 0.75f;                 // 96
  x[33] = -0.75f * 127.9f / 96;  // -127.9 -> -128 -> clamped to -127 (0x81)
  // Row 1: block 0 holds a NaN (byte 0xFF, elements 0); block 1 is zero (byte 0, elements 0).
  x[34 + 5] = kNaN;
  x[34 + 6] = 1.0f;
  const MxQuantized q = quantize_mx(x, 2, 34, kF, p);
  ASSERT_EQ(q.scales.size(), 4u);
  EXPECT_EQ(q.scales[0], 128);
  EXPECT_EQ(q.scales[1], 126);
  EXPECT_EQ(q.scales[2], 0xFF);
  EXPECT_EQ(q.scales[3], 0);
  EXPECT_EQ(q.data[0], 0x60);
  EXPECT_EQ(q.data[1], 0xA0);
  EXPECT_EQ(q.data[2], 0x00);
  EXPECT_EQ(q.data[3], 0x60);
  EXPECT_EQ(q.data[4], 0x02);
  EXPECT_EQ(q.data[5], 0x02);
  EXPECT_EQ(q.data[32], 0x60);
  EXPECT_EQ(q.data[33], 0x81);
  for (std::size_t k = 0; k < 34; ++k) EXPECT_EQ(q.data[34 + k], 0x00) << k;
  // Inf in a block: scale 0xFF as for NaN.
  std::vector<float> y(32, 1.0f);
  y[7] = -kInf;
  const MxQuantized qi = quantize_mx(y, 1, 32, kF, p);
  EXPECT_EQ(qi.scales[0], 0xFF);
  EXPECT_EQ(qi.data[0], 0x00);
}

// Guards against a dequantizer that ignores the two's complement or the 2^-6: code / 64 times
// 2^(byte - 127), one fp32 product, for every code under two scales.
TEST(Mxint8, Dequantizes) {
  MxQuantized q{2, 256, kF, {}, {}};
  for (int r = 0; r < 2; ++r) {
    for (uint32_t c = 0; c < 256; ++c) q.data.push_back(static_cast<uint8_t>(c));
  }
  // Row 0: every block scaled by 2^3 (byte 130); row 1: the NaN scale 0xFF.
  for (std::size_t i = 0; i < 2 * q.scale_cols(); ++i) {
    q.scales.push_back(i < q.scale_cols() ? 130 : 0xFF);
  }
  const std::vector<float> y = dequantize_mx(q, E8m0Decode::kOcp);
  for (uint32_t c = 0; c < 256; ++c) {
    EXPECT_EQ(static_cast<double>(y[c]), spec_value(c) * 8.0) << c;
    EXPECT_TRUE(std::isnan(y[256 + c])) << c;
  }
}

}  // namespace
}  // namespace mxgate
