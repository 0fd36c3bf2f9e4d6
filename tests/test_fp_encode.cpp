// Covers reference/fp_encode: encode() of fp32 into E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ, BF16 and
// FP16 under every rounding x overflow x NaN policy — round trip of every finite code, ties
// (even vs away vs toward zero) on every pair of neighbouring codes, the saturation ties of
// docs/formats.md §1.2 (464, 61440, 248), subnormal ties, signed zero and underflow, NaN signs,
// ±Inf under the four overflow policies, bf16 double rounding and bf16 RNE vs truncation; the code
// helpers nan_code / max_code / inf_code and the policy names.
// Does NOT cover: E8M0 (test_e8m0.cpp), conventions and measured device bytes
// (test_conventions.cpp, test_convention_edges.cpp), the full 2^32 input sweeps
// (exhaustive_encoders.cpp).
// Expected codes come from the layout (docs/formats.md §1.1) with the arithmetic in the comments,
// or from docs/conventions.md §3; decode() (checked by hand in test_format.cpp) turns codes into
// values where a loop needs them. No expected value is computed with encode().
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "reference/format.h"
#include "reference/fp_encode.h"
#include "tests/hex.h"
#include "tests/typed_test_names.h"

namespace mxgate {
namespace {

using test_support::hex;
using test_support::hexfloat;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kFltMax = 0x1.fffffep127f;

// Per-format facts, from docs/formats.md §1.1 (fp8) and IEEE-754 (bf16, fp16). kNoInf marks formats
// without an Inf code. kTopTieOverflows: the midpoint between max and the next (unrepresentable)
// step rounds to even; it overflows iff the max code's mantissa LSB is odd.
constexpr uint32_t kNoInf = ~0u;
struct E4M3FN {
  static constexpr Format kFormat = Format::kE4M3FN;
  static constexpr const char* kName = "e4m3fn";
  static constexpr uint32_t kSign = 0x80, kMaxCode = 0x7E, kInfCode = kNoInf;
  static constexpr uint32_t kNan = 0x7F, kNegNan = 0xFF;  // S.1111.111
  static constexpr float kMax = 448.0f;
  static constexpr bool kFnuz = false;
  static constexpr bool kTopTieOverflows = false;  // 0x7E = S.1111.110: even, 464 -> 448
};
struct E5M2 {
  static constexpr Format kFormat = Format::kE5M2;
  static constexpr const char* kName = "e5m2";
  static constexpr uint32_t kSign = 0x80, kMaxCode = 0x7B, kInfCode = 0x7C;
  static constexpr uint32_t kNan = 0x7F, kNegNan = 0xFF;  // quiet, every mantissa bit set
  static constexpr float kMax = 57344.0f;
  static constexpr bool kFnuz = false;
  static constexpr bool kTopTieOverflows = true;  // 0x7B = S.11110.11: odd, 61440 overflows
};
struct E4M3FNUZ {
  static constexpr Format kFormat = Format::kE4M3FNUZ;
  static constexpr const char* kName = "e4m3fnuz";
  static constexpr uint32_t kSign = 0x80, kMaxCode = 0x7F, kInfCode = kNoInf;
  static constexpr uint32_t kNan = 0x80, kNegNan = 0x80;  // the only NaN
  static constexpr float kMax = 240.0f;
  static constexpr bool kFnuz = true;
  static constexpr bool kTopTieOverflows = true;  // 0x7F mantissa 111: odd, 248 overflows
};
struct E5M2FNUZ {
  static constexpr Format kFormat = Format::kE5M2FNUZ;
  static constexpr const char* kName = "e5m2fnuz";
  static constexpr uint32_t kSign = 0x80, kMaxCode = 0x7F, kInfCode = kNoInf;
  static constexpr uint32_t kNan = 0x80, kNegNan = 0x80;
  static constexpr float kMax = 57344.0f;
  static constexpr bool kFnuz = true;
  static constexpr bool kTopTieOverflows = true;  // mantissa 11: odd, 61440 overflows
};
struct BF16 {
  static constexpr Format kFormat = Format::kBF16;
  static constexpr const char* kName = "bf16";
  static constexpr uint32_t kSign = 0x8000, kMaxCode = 0x7F7F, kInfCode = 0x7F80;
  // IEEE quiet NaN: PyTorch c10 round_to_nearest_even returns 0x7FC0 for NaN.
  static constexpr uint32_t kNan = 0x7FC0, kNegNan = 0xFFC0;
  static constexpr float kMax = 0x1.fep127f;
  static constexpr bool kFnuz = false;
  static constexpr bool kTopTieOverflows = true;  // mantissa 1111111: odd
};
struct FP16 {
  static constexpr Format kFormat = Format::kFP16;
  static constexpr const char* kName = "fp16";
  static constexpr uint32_t kSign = 0x8000, kMaxCode = 0x7BFF, kInfCode = 0x7C00;
  // IEEE quiet NaN: PyTorch c10 fp16_ieee_from_fp32_value returns 0x7E00 for NaN.
  static constexpr uint32_t kNan = 0x7E00, kNegNan = 0xFE00;
  static constexpr float kMax = 65504.0f;
  static constexpr bool kFnuz = false;
  static constexpr bool kTopTieOverflows = true;  // 0x3FF: odd, 65520 overflows
};

constexpr Rounding kRoundings[] = {Rounding::kNearestEven, Rounding::kNearestAway,
                                   Rounding::kTowardZero};
constexpr Overflow kOverflows[] = {Overflow::kSaturate, Overflow::kToInf, Overflow::kToNaN,
                                   Overflow::kSaturateInfToNaN};
constexpr NanPolicy kNans[] = {NanPolicy::kKeepSign, NanPolicy::kCanonical, NanPolicy::kToNegMax};

std::vector<EncodePolicy> all_policies() {
  std::vector<EncodePolicy> out;
  for (Rounding r : kRoundings)
    for (Overflow o : kOverflows)
      for (NanPolicy n : kNans) out.push_back({r, o, n});
  return out;
}

std::string describe(const EncodePolicy& p) {
  return std::string(name(p.rounding)) + "/" + std::string(name(p.overflow)) + "/" +
         std::string(name(p.nan));
}

template <class T>
class FpEncode : public ::testing::Test {
 protected:
  static uint32_t nan(bool negative) { return negative ? T::kNegNan : T::kNan; }
  static uint32_t maxc(bool negative) { return T::kMaxCode | (negative ? T::kSign : 0u); }
  // What a finite overflow (or Inf, for kToInf) gives under `o`, per the fp_encode.h comments.
  static uint32_t inf_or_nan(bool negative) {
    return T::kInfCode == kNoInf ? nan(negative) : (T::kInfCode | (negative ? T::kSign : 0u));
  }
  static constexpr uint32_t kCodes = T::kSign << 1;
};
using AllFormats = ::testing::Types<E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ, BF16, FP16>;
TYPED_TEST_SUITE(FpEncode, AllFormats, test_support::TraitNames);

// Guards against any policy moving an exactly representable value: every finite code
// (including -0 in OCP formats) must come back as itself, under all 36 policies.
TYPED_TEST(FpEncode, RoundTripEveryFiniteCodeEveryPolicy) {
  using T = TypeParam;
  for (const EncodePolicy& p : all_policies()) {
    uint64_t bad = 0;
    for (uint32_t c = 0; c < TestFixture::kCodes; ++c) {
      const float v = decode(T::kFormat, c);
      if (!std::isfinite(v)) continue;
      const uint32_t got = encode(T::kFormat, v, p);
      if (got != c && bad++ < 5) {
        ADD_FAILURE() << T::kName << " " << describe(p) << ": code " << hex(c) << " ("
                      << hexfloat(v) << ") re-encodes to " << hex(got);
      }
    }
    EXPECT_EQ(bad, 0u) << describe(p);
  }
}

// Guards against ±Inf handled as an ordinary overflow (or not at all) under one of the four
// overflow policies; E4M3FN and FNUZ have no Inf, so kToInf must give their NaN (docs/formats.md
// §1.2.2: PyTorch inf -> 0x7F, -inf -> 0xFF; §1.2.5: FNUZ Inf -> 0x80). The NaN keeps the sign of
// the input, as the measured e4m3 -inf -> 0xff of PyTorch and CUDA NOSAT (docs/conventions.md §3.1,
// §3.2).
TYPED_TEST(FpEncode, InfUnderEachOverflowPolicy) {
  using T = TypeParam;
  for (bool neg : {false, true}) {
    const float x = neg ? -kInf : kInf;
    for (Rounding r : kRoundings) {
      for (NanPolicy n : kNans) {
        EXPECT_EQ(encode(T::kFormat, x, {r, Overflow::kSaturate, n}), TestFixture::maxc(neg))
            << neg;
        EXPECT_EQ(encode(T::kFormat, x, {r, Overflow::kToInf, n}), TestFixture::inf_or_nan(neg))
            << neg;
        EXPECT_EQ(encode(T::kFormat, x, {r, Overflow::kToNaN, n}), TestFixture::nan(neg)) << neg;
        EXPECT_EQ(encode(T::kFormat, x, {r, Overflow::kSaturateInfToNaN, n}), TestFixture::nan(neg))
            << neg;
      }
    }
  }
}

// Guards against a NaN policy applied to the wrong sign or a NaN payload leaking into the code
// (a signalling NaN 0x7F800001 truncated to bf16 would read as Inf 0x7F80). keep_sign: S|NaN;
// canonical: +NaN; to_neg_max: -max (vLLM fminf(fmaxf(NaN, -max), max), docs/formats.md §5.1).
TYPED_TEST(FpEncode, NanPolicies) {
  using T = TypeParam;
  const uint32_t nan_inputs[] = {0x7FC00000u, 0x7F800001u, 0x7FFFFFFFu, 0x7FA00000u,
                                 0xFFC00000u, 0xFF800001u, 0xFFFFFFFFu};
  for (uint32_t bits : nan_inputs) {
    const bool neg = (bits >> 31) != 0;
    const float x = float_of(bits);
    for (Rounding r : kRoundings) {
      for (Overflow o : kOverflows) {
        EXPECT_EQ(encode(T::kFormat, x, {r, o, NanPolicy::kKeepSign}), TestFixture::nan(neg))
            << hex(bits);
        EXPECT_EQ(encode(T::kFormat, x, {r, o, NanPolicy::kCanonical}), T::kNan) << hex(bits);
        EXPECT_EQ(encode(T::kFormat, x, {r, o, NanPolicy::kToNegMax}), TestFixture::maxc(true))
            << hex(bits);
      }
    }
  }
}

// Guards against -0 losing its sign in OCP formats (docs/conventions.md §3.1: -0 -> 80 for
// e4m3/e5m2, CUDA and PyTorch) or keeping it in FNUZ formats, where 0x80 is NaN (PyTorch: "fnuz
// types don't have negative zero", device: e4m3fnuz -0 -> 00).
TYPED_TEST(FpEncode, NegativeZero) {
  using T = TypeParam;
  for (const EncodePolicy& p : all_policies()) {
    EXPECT_EQ(encode(T::kFormat, -0.0f, p), T::kFnuz ? 0u : T::kSign) << describe(p);
    EXPECT_EQ(encode(T::kFormat, 0.0f, p), 0u) << describe(p);
  }
}

// Guards against an underflow to zero that drops the sign in OCP formats (CUDA ORs the sign in,
// docs/formats.md §1.2.1: "−tiny → 0x80") or that produces the NaN 0x80 in FNUZ formats.
TYPED_TEST(FpEncode, TinyNegativeUnderflowKeepsSignOcp) {
  using T = TypeParam;
  // 2^-149 (fp32 min subnormal) and 2^-140 are far below half of every target's min subnormal
  // (fp8 >= 2^-17, fp16 2^-24, bf16 2^-133): every rounding rule gives zero.
  for (float tiny : {0x1p-149f, 0x1p-140f}) {
    for (const EncodePolicy& p : all_policies()) {
      EXPECT_EQ(encode(T::kFormat, -tiny, p), T::kFnuz ? 0u : T::kSign) << describe(p);
      EXPECT_EQ(encode(T::kFormat, tiny, p), 0u) << describe(p);
    }
  }
}

// Guards against a tie rule applied at the wrong place: for every pair of neighbouring finite
// codes (c, c+1) of either sign, the exact midpoint goes to the code with the even mantissa
// LSB under nearest_even, to c+1 under nearest_away and to c under toward_zero; one fp32 ulp
// off the midpoint, the two nearest rules agree. Midpoints are exact in fp32 (at most 12
// significant bits here), computed from decode() in double.
TYPED_TEST(FpEncode, TiesEvenVsAwayVsTowardZero) {
  using T = TypeParam;
  uint64_t bad = 0;
  for (uint32_t c = 0; c < T::kMaxCode; ++c) {
    const double lo = decode(T::kFormat, c), hi = decode(T::kFormat, c + 1);
    const float mid = static_cast<float>((lo + hi) / 2);
    ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2) << "midpoint not exact at " << hex(c);
    const uint32_t even = (c & 1) ? c + 1 : c;
    for (bool neg : {false, true}) {
      const uint32_t s = neg ? T::kSign : 0u;
      // Zero of a negative midpoint: FNUZ has no -0.
      auto code = [&](uint32_t mag) { return (mag == 0 && T::kFnuz) ? 0u : (s | mag); };
      const float x = neg ? -mid : mid;
      const float below = std::nextafter(x, 0.0f);
      const float above = std::nextafter(x, neg ? -kInf : kInf);
      for (Overflow o : kOverflows) {
        const EncodePolicy rne{Rounding::kNearestEven, o, NanPolicy::kKeepSign};
        const EncodePolicy away{Rounding::kNearestAway, o, NanPolicy::kKeepSign};
        const EncodePolicy tz{Rounding::kTowardZero, o, NanPolicy::kKeepSign};
        const uint32_t got[] = {encode(T::kFormat, x, rne),      encode(T::kFormat, x, away),
                                encode(T::kFormat, x, tz),       encode(T::kFormat, below, rne),
                                encode(T::kFormat, below, away), encode(T::kFormat, above, rne),
                                encode(T::kFormat, above, away), encode(T::kFormat, above, tz)};
        const uint32_t want[] = {code(even), code(c + 1), code(c),     code(c),
                                 code(c),    code(c + 1), code(c + 1), code(c)};
        for (int i = 0; i < 8; ++i) {
          if (got[i] != want[i] && bad++ < 10) {
            ADD_FAILURE() << T::kName << " pair " << hex(c) << "/" << hex(c + 1) << " case " << i
                          << " input " << hexfloat(i < 3 ? x : (i < 5 ? below : above))
                          << " overflow " << name(o) << ": got " << hex(got[i]) << " want "
                          << hex(want[i]);
          }
        }
      }
    }
  }
  EXPECT_EQ(bad, 0u);
}

// Guards against the top tie (max + half a step) handled like an ordinary tie that rounds into
// a NaN/Inf pattern, or saturating when it should overflow: docs/formats.md §1.2.1 (464 -> 448 for
// e4m3fn; 61440 overflows for e5m2), §1.2.2 (fnuz [248, 256) overflows).
TYPED_TEST(FpEncode, TopTieAndOverflowPerPolicy) {
  using T = TypeParam;
  const double max = T::kMax;
  const double step = max - static_cast<double>(decode(T::kFormat, T::kMaxCode - 1));
  const float tie = static_cast<float>(max + step / 2);
  ASSERT_EQ(static_cast<double>(tie), max + step / 2);
  const float past = std::nextafter(tie, kInf);
  const float before = std::nextafter(tie, 0.0f);
  for (bool neg : {false, true}) {
    auto sgn = [&](float v) { return neg ? -v : v; };
    const uint32_t maxc = TestFixture::maxc(neg);
    for (NanPolicy n : kNans) {
      // Saturating policies: everything finite past max is max.
      for (Overflow o : {Overflow::kSaturate, Overflow::kSaturateInfToNaN}) {
        for (Rounding r : kRoundings) {
          for (float v : {before, tie, past, kFltMax}) {
            EXPECT_EQ(encode(T::kFormat, sgn(v), {r, o, n}), maxc) << hexfloat(sgn(v));
          }
        }
      }
      for (Overflow o : {Overflow::kToInf, Overflow::kToNaN}) {
        const uint32_t over =
            o == Overflow::kToInf ? TestFixture::inf_or_nan(neg) : TestFixture::nan(neg);
        const EncodePolicy rne{Rounding::kNearestEven, o, n};
        const EncodePolicy away{Rounding::kNearestAway, o, n};
        const EncodePolicy tz{Rounding::kTowardZero, o, n};
        EXPECT_EQ(encode(T::kFormat, sgn(before), rne), maxc);
        EXPECT_EQ(encode(T::kFormat, sgn(tie), rne), T::kTopTieOverflows ? over : maxc);
        EXPECT_EQ(encode(T::kFormat, sgn(past), rne), over);
        EXPECT_EQ(encode(T::kFormat, sgn(before), away), maxc);
        EXPECT_EQ(encode(T::kFormat, sgn(tie), away), over);  // a tie goes away: past max
        EXPECT_EQ(encode(T::kFormat, sgn(kFltMax), away), over);
        // Toward zero never rounds up, so finite inputs never overflow (IEEE-754 §7.4: RZ
        // carries overflow to the largest finite number).
        EXPECT_EQ(encode(T::kFormat, sgn(tie), tz), maxc);
        EXPECT_EQ(encode(T::kFormat, sgn(past), tz), maxc);
        EXPECT_EQ(encode(T::kFormat, sgn(kFltMax), tz), maxc);
      }
    }
  }
}

// Guards against toward_zero rounding up anywhere: over a stride of fp32 patterns the result's
// magnitude never exceeds |x|, and it is the nearest_even result or one code below it.
TYPED_TEST(FpEncode, TowardZeroNeverRoundsUp) {
  using T = TypeParam;
  uint64_t bad = 0;
  for (uint64_t b = 1; b < 0x7F800000u; b += 4099) {
    for (bool neg : {false, true}) {
      const float x = float_of(static_cast<uint32_t>(b) | (neg ? 0x80000000u : 0u));
      for (Overflow o : kOverflows) {
        const uint32_t tz = encode(T::kFormat, x, {Rounding::kTowardZero, o, NanPolicy::kKeepSign});
        const float v = decode(T::kFormat, tz);
        const bool ok_mag = std::isfinite(v) && std::fabs(v) <= std::fabs(x);
        const uint32_t rne = encode(
            T::kFormat, x, {Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kKeepSign});
        const uint32_t tm = tz & ~T::kSign, rm = rne & ~T::kSign;
        const bool ok_near = tm == rm || tm + 1 == rm;
        if ((!ok_mag || !ok_near) && bad++ < 10) {
          ADD_FAILURE() << T::kName << " " << hexfloat(x) << " overflow " << name(o)
                        << ": toward_zero gives " << hex(tz) << ", nearest_even " << hex(rne);
        }
      }
    }
  }
  EXPECT_EQ(bad, 0u);
}

// Guards against the code helpers drifting from the layout: nan_code / max_code / inf_code.
TYPED_TEST(FpEncode, CodeHelpers) {
  using T = TypeParam;
  EXPECT_EQ(nan_code(T::kFormat, false), T::kNan);
  EXPECT_EQ(nan_code(T::kFormat, true), T::kNegNan);
  EXPECT_EQ(max_code(T::kFormat, false), T::kMaxCode);
  EXPECT_EQ(max_code(T::kFormat, true), T::kMaxCode | T::kSign);
  EXPECT_EQ(decode(T::kFormat, T::kMaxCode), T::kMax);
  const std::optional<uint32_t> inf = inf_code(T::kFormat, false);
  if (T::kInfCode == kNoInf) {
    EXPECT_FALSE(inf.has_value());
  } else {
    ASSERT_TRUE(inf.has_value());
    EXPECT_EQ(*inf, T::kInfCode);
    EXPECT_EQ(*inf_code(T::kFormat, true), T::kInfCode | T::kSign);
  }
}

// ---- Pointed hazards, one format each. ----

// Guards against a saturation threshold at 448 + anything (or "> 448"): exactly 464 is the tie
// between 448 (S.1111.110, even) and the NaN pattern 480 and goes to 448 under RNE; one fp32
// ulp above (0x1.d00002p+8) overflows: CUDA threshold "absx > 464" (docs/formats.md §1.2.1),
// docs/conventions.md §3.1 probe.cu 0x1.d00002p+8 SAT 7e NOSAT 7f, 464 7e 7e.
TEST(E4m3fnHazard, TieAtSaturation464) {
  const Format f = Format::kE4M3FN;
  for (Overflow o : kOverflows) {
    EXPECT_EQ(encode(f, 464.0f, {Rounding::kNearestEven, o, NanPolicy::kKeepSign}), 0x7Eu);
    EXPECT_EQ(encode(f, -464.0f, {Rounding::kNearestEven, o, NanPolicy::kKeepSign}), 0xFEu);
  }
  const float above = 0x1.d00002p+8f;  // 464 + 2^-15
  EXPECT_EQ(encode(f, above, {Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kCanonical}),
            0x7Eu);
  EXPECT_EQ(encode(f, above, {Rounding::kNearestEven, Overflow::kToInf, NanPolicy::kCanonical}),
            0x7Fu);
  EXPECT_EQ(encode(f, -above, {Rounding::kNearestEven, Overflow::kToInf, NanPolicy::kCanonical}),
            0xFFu);
  EXPECT_EQ(encode(f, above, {Rounding::kNearestEven, Overflow::kToNaN, NanPolicy::kCanonical}),
            0x7Fu);
  EXPECT_EQ(encode(f, above,
                   {Rounding::kNearestEven, Overflow::kSaturateInfToNaN, NanPolicy::kCanonical}),
            0x7Eu);
  // Just below the tie: 0x1.cffffep+8 is nearer 448.
  EXPECT_EQ(
      encode(f, 0x1.cffffep+8f, {Rounding::kNearestEven, Overflow::kToInf, NanPolicy::kKeepSign}),
      0x7Eu);
  // 456 = 448 + 8 = 1.78125 * 2^8 lies between 448 and the tie: 448.
  EXPECT_EQ(encode(f, 456.0f, {Rounding::kNearestEven, Overflow::kToInf, NanPolicy::kKeepSign}),
            0x7Eu);
  // 440 = 1.71875 * 2^8 is the tie between 416 (0x7D, 101 odd) and 448 (0x7E, 110 even): 0x7E.
  EXPECT_EQ(encode(f, 440.0f, {Rounding::kNearestEven, Overflow::kToInf, NanPolicy::kKeepSign}),
            0x7Eu);
  // Half-away sends the 464 tie past max: the NaN pattern under to_inf.
  EXPECT_EQ(encode(f, 464.0f, {Rounding::kNearestAway, Overflow::kToInf, NanPolicy::kKeepSign}),
            0x7Fu);
}

// Guards against an E5M2 threshold at 57344 + ulp: 61440 = 1.875 * 2^15 is the tie between
// 57344 (S.11110.11, odd) and 65536 (exponent 31 = Inf), so it overflows; the largest fp32 below
// it, 0x1.dffffep+15 = 61439.996, is nearer 57344. docs/formats.md §1.2.1 "absx >= 61440"; device:
// 61440 -> 7b SAT / 7c NOSAT, 0x1.dffep+15 -> 7b 7b; torch 61439 -> 7b, 61440 -> 7c.
TEST(E5m2Hazard, Overflow61440) {
  const Format f = Format::kE5M2;
  const EncodePolicy to_inf{Rounding::kNearestEven, Overflow::kToInf, NanPolicy::kKeepSign};
  const EncodePolicy sat{Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kCanonical};
  EXPECT_EQ(encode(f, 61440.0f, to_inf), 0x7Cu);
  EXPECT_EQ(encode(f, -61440.0f, to_inf), 0xFCu);
  EXPECT_EQ(encode(f, 61440.0f, sat), 0x7Bu);
  for (float below : {0x1.dffffep+15f, 61439.0f, 0x1.dffep+15f}) {
    for (Overflow o : kOverflows) {
      EXPECT_EQ(encode(f, below, {Rounding::kNearestEven, o, NanPolicy::kKeepSign}), 0x7Bu)
          << hexfloat(below);
    }
  }
}

// Guards against an E4M3FNUZ threshold copied from E4M3FN: max 240 (0x7F), 248 = 240 + 8 is
// the tie with 256 (240's mantissa 111 is odd) and overflows; 247 -> 240. PyTorch
// fp8e4m3fnuz_from_fp32_value, device: 240 -> 7f, 247 -> 7f, 248 -> 80 (docs/formats.md §1.2.2).
TEST(E4m3fnuzHazard, Overflow248) {
  const Format f = Format::kE4M3FNUZ;
  const EncodePolicy to_inf{Rounding::kNearestEven, Overflow::kToInf, NanPolicy::kKeepSign};
  const EncodePolicy sat{Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kCanonical};
  EXPECT_EQ(encode(f, 248.0f, to_inf), 0x80u);
  EXPECT_EQ(encode(f, -248.0f, to_inf), 0x80u);  // the only NaN, whatever the sign
  EXPECT_EQ(encode(f, 248.0f, sat), 0x7Fu);
  EXPECT_EQ(encode(f, -248.0f, sat), 0xFFu);
  EXPECT_EQ(encode(f, 247.0f, to_inf), 0x7Fu);
  EXPECT_EQ(encode(f, 0x1.effffep+7f, to_inf), 0x7Fu);  // largest fp32 below 248
  EXPECT_EQ(encode(f, 240.0f, to_inf), 0x7Fu);
  EXPECT_EQ(encode(f, 448.0f, to_inf), 0x80u);  // device: 448 -> 80
}

// Guards against subnormal rounding done on a different grid than RNE on the value: E4M3FN's
// subnormal step is 2^-9, so 2^-10 is the tie 0 / 2^-9 (0 even -> 0x00; device probe.cu and
// torch: 2^-10 -> 00, 0x1.0001p-10 -> 01); 3 * 2^-10 = 1.5 steps, tie between 0x01 (odd) and
// 0x02 (even) -> 0x02 = 2^-8; 5 * 2^-10 = 2.5 steps -> 0x02 (even) under RNE, 0x03 away.
TEST(E4m3fnHazard, SubnormalTies) {
  const Format f = Format::kE4M3FN;
  const EncodePolicy rne{Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kCanonical};
  const EncodePolicy away{Rounding::kNearestAway, Overflow::kSaturate, NanPolicy::kCanonical};
  const EncodePolicy tz{Rounding::kTowardZero, Overflow::kSaturate, NanPolicy::kCanonical};
  EXPECT_EQ(encode(f, 0x1p-10f, rne), 0x00u);
  EXPECT_EQ(encode(f, -0x1p-10f, rne), 0x80u);
  EXPECT_EQ(encode(f, 0x1p-10f, away), 0x01u);
  EXPECT_EQ(encode(f, 0x1p-10f, tz), 0x00u);
  EXPECT_EQ(encode(f, 0x1.0001p-10f, rne), 0x01u);
  EXPECT_EQ(encode(f, 0x3p-10f, rne), 0x02u);
  EXPECT_EQ(encode(f, 0x3p-10f, away), 0x02u);
  EXPECT_EQ(encode(f, 0x3p-10f, tz), 0x01u);
  EXPECT_EQ(encode(f, 0x5p-10f, rne), 0x02u);
  EXPECT_EQ(encode(f, 0x5p-10f, away), 0x03u);
  // 15 * 2^-10 = 7.5 steps: tie between 0x07 (largest subnormal, odd) and 0x08 = 2^-6.
  EXPECT_EQ(encode(f, 0xfp-10f, rne), 0x08u);
  // fp32 subnormal input 2^-130: far below 2^-10, zero.
  EXPECT_EQ(encode(f, 0x1p-130f, away), 0x00u);
}

// Guards against a cast that is not one rounding of the fp32 value: going through bf16 first
// rounds twice and gives other bytes. docs/conventions.md §3.2: torch e4m3fn f32-> "... 00 01 01 7e
// 7e 7f" vs "e4m3fn cuda bf16-> ... 00 00 01 7e 7e 7e": 2^-10 * 1.0001 = 0x1.00068ep-10 is 01
// directly but its bf16 (7 fraction bits: 0x1.00p-10 = 2^-10, remainder 0x68e/2^24 < half)
// is the tie 2^-10 -> 00; 464.0001 = 0x1.d00006p+8 is 7f (past 464) directly but 464 in bf16
// -> 7e. Policy: PyTorch's (RNE, to_inf, NaN keeps sign), docs/formats.md §1.2.2.
TEST(DoubleRound, Bf16FirstDiffersFromDirect) {
  const EncodePolicy torch{Rounding::kNearestEven, Overflow::kToInf, NanPolicy::kKeepSign};
  struct Case {
    float x;
    uint32_t bf16, direct, via_bf16;
  };
  const Case cases[] = {{0x1.00068ep-10f, 0x3A80, 0x01, 0x00},
                        {0x1.d00006p+8f, 0x43E8, 0x7F, 0x7E}};
  for (const Case& c : cases) {
    EXPECT_EQ(encode(Format::kE4M3FN, c.x, torch), c.direct) << hexfloat(c.x);
    const uint32_t b = encode(Format::kBF16, c.x, kIeeeDefault);
    EXPECT_EQ(b, c.bf16) << hexfloat(c.x);
    EXPECT_EQ(encode(Format::kE4M3FN, float_of(b << 16), torch), c.via_bf16) << hexfloat(c.x);
  }
}

// Guards against bf16 conversion by truncation (drop the low 16 bits) instead of RNE.
// 0x3F808000 = 1 + 2^-8 is the tie between 0x3F80 (even) and 0x3F81: RNE 0x3F80, away 0x3F81;
// 0x3F818000 is the tie between 0x3F81 (odd) and 0x3F82: RNE 0x3F82 where truncation keeps
// 0x3F81; 0x3F808001 is past the tie: RNE 0x3F81, truncation 0x3F80.
TEST(Bf16Hazard, RneVsTruncation) {
  const Format f = Format::kBF16;
  auto enc = [&](uint32_t bits, Rounding r) {
    return encode(f, float_of(bits), {r, Overflow::kToInf, NanPolicy::kCanonical});
  };
  EXPECT_EQ(enc(0x3F808000, Rounding::kNearestEven), 0x3F80u);
  EXPECT_EQ(enc(0x3F808000, Rounding::kNearestAway), 0x3F81u);
  EXPECT_EQ(enc(0x3F808000, Rounding::kTowardZero), 0x3F80u);
  EXPECT_EQ(enc(0x3F818000, Rounding::kNearestEven), 0x3F82u);
  EXPECT_EQ(enc(0x3F818000, Rounding::kTowardZero), 0x3F81u);
  EXPECT_EQ(enc(0x3F808001, Rounding::kNearestEven), 0x3F81u);
  EXPECT_EQ(enc(0x3F808001, Rounding::kTowardZero), 0x3F80u);
  EXPECT_EQ(enc(0x3F80FFFF, Rounding::kNearestEven), 0x3F81u);
  EXPECT_EQ(enc(0xBF818000, Rounding::kNearestEven), 0xBF82u);
  // The kIeeeDefault policy is RNE / to_inf / canonical NaN (fp_encode.h).
  EXPECT_EQ(encode(f, float_of(0x3F818000), kIeeeDefault), 0x3F82u);
  // Carry out of the mantissa into the exponent: 0x3FFF8000 is the tie 0x3FFF (odd) / 0x4000.
  EXPECT_EQ(encode(f, float_of(0x3FFF8000), kIeeeDefault), 0x4000u);
  // Top tie 0x7F7F8000 (between max 0x7F7F, odd, and 2^128) overflows to Inf.
  EXPECT_EQ(encode(f, float_of(0x7F7F8000), kIeeeDefault), 0x7F80u);
  EXPECT_EQ(encode(f, float_of(0x7F7F7FFF), kIeeeDefault), 0x7F7Fu);
  // Subnormal bf16: step 2^-133; 2^-134 ties to 0, 3 * 2^-134 ties to 0x0002.
  EXPECT_EQ(encode(f, 0x1p-134f, kIeeeDefault), 0x0000u);
  EXPECT_EQ(encode(f, 0x3p-134f, kIeeeDefault), 0x0002u);
}

// Guards against a truncating bf16 NaN path: a signalling NaN with only low payload bits
// (0x7F800001) truncated would give 0x7F80 = +Inf. c10 round_to_nearest_even: NaN -> 0x7FC0.
TEST(Bf16Hazard, LowPayloadNanIsNotInf) {
  EXPECT_EQ(encode(Format::kBF16, float_of(0x7F800001), kIeeeDefault), 0x7FC0u);
  EXPECT_EQ(encode(Format::kBF16, float_of(0xFF800001), kIeeeDefault), 0x7FC0u);
  EXPECT_EQ(encode(Format::kFP16, float_of(0x7F800001), kIeeeDefault), 0x7E00u);
}

// Guards against FP16 edges: max 65504 = 0x7BFF; 65520 = 65504 + 16 is the tie with 65536
// (0x3FF odd) -> Inf 0x7C00; 0x1.ffdffep+15 below it -> 0x7BFF; subnormal step 2^-24: 2^-25
// ties to 0, 3 * 2^-25 ties to 0x0002.
TEST(Fp16Hazard, OverflowAndSubnormalTies) {
  const Format f = Format::kFP16;
  EXPECT_EQ(encode(f, 65504.0f, kIeeeDefault), 0x7BFFu);
  EXPECT_EQ(encode(f, 65520.0f, kIeeeDefault), 0x7C00u);
  EXPECT_EQ(encode(f, -65520.0f, kIeeeDefault), 0xFC00u);
  EXPECT_EQ(encode(f, 0x1.ffdffep+15f, kIeeeDefault), 0x7BFFu);
  EXPECT_EQ(encode(f, 0x1p-25f, kIeeeDefault), 0x0000u);
  EXPECT_EQ(encode(f, 0x3p-25f, kIeeeDefault), 0x0002u);
  EXPECT_EQ(encode(f, 0x1p-24f, kIeeeDefault), 0x0001u);
  EXPECT_EQ(encode(f, 1.0f, kIeeeDefault), 0x3C00u);
}

// Guards against FP32 "encoding" altering the bits (NaN payload, -0, subnormals).
TEST(Fp32Encode, IsIdentityOnBits) {
  for (uint32_t b :
       {0x00000000u, 0x80000000u, 0x00000001u, 0x7F800001u, 0xFFC00000u, 0x7F7FFFFFu}) {
    EXPECT_EQ(encode(Format::kFP32, float_of(b), {}), b);
  }
}

// Guards against ml_dtypes' NaN rule losing its quiet pattern or its sign: every fp32 NaN (all
// 2^23 - 1 payloads of each sign) becomes +-quiet_NaN(): E5M2 0x7E / 0xFE (exponent 11111,
// mantissa 10), E4M3FN 0x7F / 0xFF, FNUZ 0x80 for both signs (docs/conventions.md §2.8, §3.7).
TEST(NanQuietKeepSign, EveryNanPayload) {
  const EncodePolicy p{Rounding::kNearestEven, Overflow::kToInf, NanPolicy::kQuietKeepSign};
  struct Want {
    Format f;
    uint32_t pos, neg;
  };
  for (const Want w : {Want{Format::kE5M2, 0x7E, 0xFE}, Want{Format::kE4M3FN, 0x7F, 0xFF},
                       Want{Format::kE4M3FNUZ, 0x80, 0x80}, Want{Format::kE5M2FNUZ, 0x80, 0x80}}) {
    uint64_t wrong = 0;
    for (uint32_t payload = 1; payload < (1u << 23); ++payload) {
      wrong += encode(w.f, float_of(0x7F800000u | payload), p) != w.pos;
      wrong += encode(w.f, float_of(0xFF800000u | payload), p) != w.neg;
    }
    EXPECT_EQ(wrong, 0u) << info(w.f).name;
  }
}

// Guards against the CLI / report spellings of the policies changing silently.
TEST(PolicyNames, Spellings) {
  EXPECT_EQ(name(Rounding::kNearestEven), "nearest_even");
  EXPECT_EQ(name(Rounding::kNearestAway), "nearest_away");
  EXPECT_EQ(name(Rounding::kTowardZero), "toward_zero");
  EXPECT_EQ(name(Overflow::kSaturate), "saturate_finite");
  EXPECT_EQ(name(Overflow::kToInf), "to_inf");
  EXPECT_EQ(name(Overflow::kToNaN), "to_nan");
  EXPECT_EQ(name(Overflow::kSaturateInfToNaN), "saturate_finite_inf_to_nan");
  EXPECT_EQ(name(NanPolicy::kKeepSign), "nan_keep_sign");
  EXPECT_EQ(name(NanPolicy::kCanonical), "nan_canonical");
  EXPECT_EQ(name(NanPolicy::kToNegMax), "nan_to_neg_max");
  EXPECT_EQ(name(NanPolicy::kQuietKeepSign), "nan_quiet_keep_sign");
  EXPECT_EQ(kIeeeDefault.rounding, Rounding::kNearestEven);
  EXPECT_EQ(kIeeeDefault.overflow, Overflow::kToInf);
  EXPECT_EQ(kIeeeDefault.nan, NanPolicy::kCanonical);
}

}  // namespace
}  // namespace mxgate
