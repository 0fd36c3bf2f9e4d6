// Covers reference/format: the layout table (FormatInfo), parse_format, and decode() of every
// code of every 8-bit format (E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ, ml_dtypes' E3M4, E4M3 and
// E4M3B11FNUZ, E8M0) and of all 65536 BF16 and
// FP16 codes, against values derived here by hand from the bit layouts of docs/formats.md
// §1.1 (fp8) and §2 (e8m0) and IEEE-754 (bf16, fp16); spot values (max finite, min subnormal,
// NaN and Inf codes); max_finite, is_nan_code, bits_of / float_of.
// Does NOT cover: encoding (test_fp_encode.cpp, test_e8m0.cpp), the non-OCP e8m0 decode rules
// (test_e8m0.cpp), conventions (test_conventions.cpp,
// test_convention_edges.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "reference/format.h"
#include "tests/typed_test_names.h"

namespace mxgate {
namespace {

// ---- Per-format traits, from the table of docs/formats.md §1.1 (not from format.cpp) ----
enum class Nan { kIeee, kFn, kFnuz };

struct E4M3FN {
  static constexpr Format kFormat = Format::kE4M3FN;
  static constexpr const char* kName = "e4m3fn";
  static constexpr int kExp = 4, kMan = 3, kBias = 7;
  static constexpr Nan kNan = Nan::kFn;
  static constexpr float kMax = 448.0f;  // S.1111.110 = 1.75 * 2^8
  static constexpr uint32_t kMaxCode = 0x7E;
  static constexpr float kMinSub = 0x1p-9f;     // 0x01 = 2^-6 * 1/8
  static constexpr float kMinNormal = 0x1p-6f;  // 0x08
};
struct E5M2 {
  static constexpr Format kFormat = Format::kE5M2;
  static constexpr const char* kName = "e5m2";
  static constexpr int kExp = 5, kMan = 2, kBias = 15;
  static constexpr Nan kNan = Nan::kIeee;
  static constexpr float kMax = 57344.0f;  // S.11110.11 = 1.75 * 2^15
  static constexpr uint32_t kMaxCode = 0x7B;
  static constexpr float kMinSub = 0x1p-16f;  // 2^-14 * 1/4
  static constexpr float kMinNormal = 0x1p-14f;
};
struct E4M3FNUZ {
  static constexpr Format kFormat = Format::kE4M3FNUZ;
  static constexpr const char* kName = "e4m3fnuz";
  static constexpr int kExp = 4, kMan = 3, kBias = 8;
  static constexpr Nan kNan = Nan::kFnuz;
  static constexpr float kMax = 240.0f;  // 0x7F = 1.875 * 2^(15-8)
  static constexpr uint32_t kMaxCode = 0x7F;
  static constexpr float kMinSub = 0x1p-10f;  // 2^-7 * 1/8
  static constexpr float kMinNormal = 0x1p-7f;
};
struct E5M2FNUZ {
  static constexpr Format kFormat = Format::kE5M2FNUZ;
  static constexpr const char* kName = "e5m2fnuz";
  static constexpr int kExp = 5, kMan = 2, kBias = 16;
  static constexpr Nan kNan = Nan::kFnuz;
  static constexpr float kMax = 57344.0f;  // 0x7F = 1.75 * 2^(31-16)
  static constexpr uint32_t kMaxCode = 0x7F;
  static constexpr float kMinSub = 0x1p-17f;  // 2^-15 * 1/4
  static constexpr float kMinNormal = 0x1p-15f;
};

// ml_dtypes 0.6's other 8-bit formats (docs/formats.md §1.4; limits as ml_dtypes' float8.h
// numeric_limits state them).
struct E3M4 {
  static constexpr Format kFormat = Format::kE3M4;
  static constexpr const char* kName = "e3m4";
  static constexpr int kExp = 3, kMan = 4, kBias = 3;
  static constexpr Nan kNan = Nan::kIeee;
  static constexpr float kMax = 15.5f;  // 0x6F = S.110.1111 = (1 + 15/16) * 2^(6-3)
  static constexpr uint32_t kMaxCode = 0x6F;
  static constexpr float kMinSub = 0x1p-6f;     // 2^(1-3) * 1/16
  static constexpr float kMinNormal = 0x1p-2f;  // 0x10
};
struct E4M3IEEE {
  static constexpr Format kFormat = Format::kE4M3IEEE;
  static constexpr const char* kName = "e4m3ieee";
  static constexpr int kExp = 4, kMan = 3, kBias = 7;
  static constexpr Nan kNan = Nan::kIeee;
  static constexpr float kMax = 240.0f;  // 0x77 = S.1110.111 = 1.875 * 2^(14-7)
  static constexpr uint32_t kMaxCode = 0x77;
  static constexpr float kMinSub = 0x1p-9f;  // 2^(1-7) * 1/8
  static constexpr float kMinNormal = 0x1p-6f;
};
struct E4M3B11FNUZ {
  static constexpr Format kFormat = Format::kE4M3B11FNUZ;
  static constexpr const char* kName = "e4m3b11fnuz";
  static constexpr int kExp = 4, kMan = 3, kBias = 11;
  static constexpr Nan kNan = Nan::kFnuz;
  static constexpr float kMax = 30.0f;  // 0x7F = 1.875 * 2^(15-11)
  static constexpr uint32_t kMaxCode = 0x7F;
  static constexpr float kMinSub = 0x1p-13f;  // 2^(1-11) * 1/8
  static constexpr float kMinNormal = 0x1p-10f;
};

// Independent decoder: sign / exponent / mantissa fields -> (1 + m / 2^man) * 2^(e - bias) for
// normals, (m / 2^man) * 2^(1 - bias) for subnormals, computed in double with std::ldexp.
template <class T>
double hand_decode(uint32_t code) {
  const uint32_t sign = code >> 7;
  const uint32_t e = (code >> T::kMan) & ((1u << T::kExp) - 1);
  const uint32_t m = code & ((1u << T::kMan) - 1);
  const bool all_ones_e = e == (1u << T::kExp) - 1;
  const bool all_ones_m = m == (1u << T::kMan) - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (T::kNan == Nan::kFnuz && code == 0x80) return nan;  // the only NaN; no -0
  if (T::kNan == Nan::kFn && all_ones_e && all_ones_m) return nan;
  if (T::kNan == Nan::kIeee && all_ones_e) {
    return m ? nan : (sign ? -HUGE_VAL : HUGE_VAL);
  }
  const double frac = static_cast<double>(m) / static_cast<double>(1u << T::kMan);
  const double mag = e == 0 ? std::ldexp(frac, 1 - T::kBias)
                            : std::ldexp(1.0 + frac, static_cast<int>(e) - T::kBias);
  return sign ? -mag : mag;
}

template <class T>
class Fp8Format : public ::testing::Test {};
using Fp8Formats = ::testing::Types<E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ, E3M4, E4M3IEEE, E4M3B11FNUZ>;
TYPED_TEST_SUITE(Fp8Format, Fp8Formats, test_support::TraitNames);

// Guards against a wrong bias, a wrong subnormal exponent or a mis-sized field in decode().
TYPED_TEST(Fp8Format, EveryCodeMatchesHandDecoder) {
  using T = TypeParam;
  for (uint32_t code = 0; code < 256; ++code) {
    const double want = hand_decode<T>(code);
    const float got = decode(T::kFormat, code);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << T::kName << " code 0x" << std::hex << code;
    } else {
      EXPECT_EQ(static_cast<double>(got), want) << T::kName << " code 0x" << std::hex << code;
      EXPECT_EQ(std::signbit(got), std::signbit(want))
          << T::kName << " code 0x" << std::hex << code << " (sign of zero)";
    }
  }
}

// Guards against a layout-table typo (a wrong bias or field width in FormatInfo).
TYPED_TEST(Fp8Format, LayoutTable) {
  using T = TypeParam;
  const FormatInfo& fi = info(T::kFormat);
  EXPECT_EQ(fi.format, T::kFormat);
  EXPECT_EQ(fi.name, T::kName);
  EXPECT_EQ(fi.bits, 8);
  EXPECT_EQ(fi.exp_bits, T::kExp);
  EXPECT_EQ(fi.man_bits, T::kMan);
  EXPECT_EQ(fi.bias, T::kBias);
}

// Guards against a max_finite that returns a NaN/Inf pattern's value (480 for e4m3fn, 61440 or
// Inf for e5m2) instead of the largest finite code (docs/formats.md §1.1 "max finite" column).
TYPED_TEST(Fp8Format, MaxFiniteAndMinSubnormal) {
  using T = TypeParam;
  EXPECT_EQ(max_finite(T::kFormat), T::kMax);
  EXPECT_EQ(decode(T::kFormat, T::kMaxCode), T::kMax);
  EXPECT_EQ(decode(T::kFormat, T::kMaxCode | 0x80), -T::kMax);
  EXPECT_EQ(decode(T::kFormat, 0x01), T::kMinSub);
  EXPECT_EQ(decode(T::kFormat, 0x81), -T::kMinSub);
  // The first normal: exponent field 1, mantissa 0.
  EXPECT_EQ(decode(T::kFormat, 1u << T::kMan), T::kMinNormal);
}

// Guards against NaN detection that treats too many (or too few) codes as NaN: exactly the
// codes of the docs/formats.md §1.1 "NaN" column.
TYPED_TEST(Fp8Format, NanCodesAreExactlyTheSpecSet) {
  using T = TypeParam;
  for (uint32_t code = 0; code < 256; ++code) {
    bool want = false;
    switch (T::kNan) {
      case Nan::kFn:  // S.1111.111
        want = (code & 0x7F) == 0x7F;
        break;
      case Nan::kFnuz:  // 0x80 only
        want = code == 0x80;
        break;
      case Nan::kIeee: {  // the all-ones exponent with a nonzero fraction (e5m2:
                          // S.11111.{01,10,11})
        const uint32_t e_all = (1u << T::kExp) - 1;
        want = ((code >> T::kMan) & e_all) == e_all && (code & ((1u << T::kMan) - 1)) != 0;
        break;
      }
    }
    EXPECT_EQ(is_nan_code(T::kFormat, code), want) << T::kName << " 0x" << std::hex << code;
    EXPECT_EQ(std::isnan(decode(T::kFormat, code)), want) << T::kName << " 0x" << std::hex << code;
  }
}

// Guards against an E4M3FN decoder that gives 0x7F the IEEE meaning (Inf) or the value 480:
// docs/formats.md §1.1, ml_dtypes "NaN represented by 0bS111'1111"; E4M3FN has no Inf.
TEST(Fp8Spot, E4m3fnNanAndNoInf) {
  EXPECT_TRUE(std::isnan(decode(Format::kE4M3FN, 0x7F)));
  EXPECT_TRUE(std::isnan(decode(Format::kE4M3FN, 0xFF)));
  // 0x78 = S.1111.000 is an ordinary number: 2^(15-7) = 256, not Inf.
  EXPECT_EQ(decode(Format::kE4M3FN, 0x78), 256.0f);
  EXPECT_EQ(decode(Format::kE4M3FN, 0x80), 0.0f);
  EXPECT_TRUE(std::signbit(decode(Format::kE4M3FN, 0x80)));  // -0 exists in OCP E4M3
}

// Guards against E5M2 losing its IEEE specials: 0x7C/0xFC are ±Inf, 0x7D..0x7F NaN (§1.1).
TEST(Fp8Spot, E5m2InfAndNan) {
  EXPECT_EQ(decode(Format::kE5M2, 0x7C), std::numeric_limits<float>::infinity());
  EXPECT_EQ(decode(Format::kE5M2, 0xFC), -std::numeric_limits<float>::infinity());
  for (uint32_t c : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu, 0xFEu, 0xFFu}) {
    EXPECT_TRUE(std::isnan(decode(Format::kE5M2, c))) << std::hex << c;
  }
}

// Guards against decoding FNUZ 0x80 as -0 (it is the single NaN; "no negative zero", PyTorch
// c10/util/Float8_e4m3fnuz.h) and against treating 0x7F/0xFF as NaN in FNUZ formats.
TEST(Fp8Spot, NegativeZeroFnuzIsNan) {
  for (Format f : {Format::kE4M3FNUZ, Format::kE5M2FNUZ}) {
    EXPECT_TRUE(std::isnan(decode(f, 0x80)));
    EXPECT_FALSE(std::isnan(decode(f, 0x7F)));
    EXPECT_FALSE(std::isnan(decode(f, 0xFF)));
    EXPECT_FALSE(std::signbit(decode(f, 0x00)));
  }
  EXPECT_EQ(decode(Format::kE4M3FNUZ, 0xFF), -240.0f);
  EXPECT_EQ(decode(Format::kE5M2FNUZ, 0xFF), -57344.0f);
}

// Guards against an E8M0 decoder that maps 0x00 to +0 (the shift rule) instead of the OCP
// value 2^-127, which is the fp32 subnormal 0x00400000 (docs/formats.md §2, PyTorch
// fp32_from_bits(0x00400000)); and against 0xFF decoding to Inf.
TEST(E8m0Decode, OcpEdgeBytes) {
  EXPECT_EQ(bits_of(decode(Format::kE8M0, 0x00)), 0x00400000u);
  EXPECT_EQ(decode(Format::kE8M0, 0x00), std::ldexp(1.0f, -127));
  EXPECT_EQ(decode(Format::kE8M0, 0xFE), std::ldexp(1.0f, 127));
  EXPECT_EQ(bits_of(decode(Format::kE8M0, 0xFE)), 0x7F000000u);
  EXPECT_TRUE(std::isnan(decode(Format::kE8M0, 0xFF)));
  EXPECT_TRUE(is_nan_code(Format::kE8M0, 0xFF));
  EXPECT_EQ(max_finite(Format::kE8M0), std::ldexp(1.0f, 127));
}

// Guards against an off-by-one bias or a signed reading of the byte: byte e in [0, 254] is
// 2^(e - 127) (docs/formats.md §2), no code is negative or zero.
TEST(E8m0Decode, EveryByteIsAPowerOfTwo) {
  for (uint32_t e = 0; e < 255; ++e) {
    const float got = decode(Format::kE8M0, e);
    EXPECT_EQ(static_cast<double>(got), std::ldexp(1.0, static_cast<int>(e) - 127)) << e;
    EXPECT_FALSE(is_nan_code(Format::kE8M0, e)) << e;
  }
  const FormatInfo& fi = info(Format::kE8M0);
  EXPECT_EQ(fi.bits, 8);
  EXPECT_EQ(fi.exp_bits, 8);
  EXPECT_EQ(fi.man_bits, 0);
  EXPECT_EQ(fi.bias, 127);
}

// Guards against a bf16 decode that is anything but the top half of an fp32 (IEEE-754 binary32
// truncated to 16 bits): every non-NaN code decodes to exactly float_of(code << 16).
TEST(SixteenBitDecode, Bf16AllCodesAreFp32TopHalf) {
  for (uint32_t c = 0; c < 65536; ++c) {
    const float got = decode(Format::kBF16, c);
    const bool nan = (c & 0x7F80) == 0x7F80 && (c & 0x7F) != 0;
    EXPECT_EQ(is_nan_code(Format::kBF16, c), nan) << std::hex << c;
    if (nan) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << c;
      EXPECT_EQ(std::signbit(got), (c >> 15) != 0) << std::hex << c;
    } else {
      EXPECT_EQ(bits_of(got), c << 16) << std::hex << c;
    }
  }
}

// Guards against the reference's one bf16 conversion (bf16_of / float_of_bf16) disagreeing with
// the format: every bf16 code round-trips through fp32 (NaN codes to the canonical 0x7FC0), and
// rounding is RNE on the fp32 bits: 1 + 2^-8 is a tie (to the even 0x3F80), 1 + 3 * 2^-8 a tie
// next to an odd code (up to 0x3F82), 0x7F7FFFFF (beyond bf16's max plus half an ulp) is Inf.
TEST(SixteenBitDecode, Bf16ConversionRoundTripsAndRoundsToNearestEven) {
  for (uint32_t c = 0; c < 65536; ++c) {
    const float f = float_of_bf16(static_cast<uint16_t>(c));
    EXPECT_EQ(bits_of(f), c << 16) << std::hex << c;
    const bool nan = (c & 0x7F80) == 0x7F80 && (c & 0x7F) != 0;
    EXPECT_EQ(bf16_of(f), nan ? 0x7FC0u : c) << std::hex << c;
  }
  EXPECT_EQ(bf16_of(float_of(0x3F808000u)), 0x3F80u);  // 1 + 2^-8: tie, even mantissa
  EXPECT_EQ(bf16_of(float_of(0x3F818000u)), 0x3F82u);  // 1 + 3 * 2^-8: tie, odd -> up
  EXPECT_EQ(bf16_of(float_of(0x3F808001u)), 0x3F81u);  // just above the tie -> up
  EXPECT_EQ(bf16_of(float_of(0x7F7FFFFFu)), 0x7F80u);  // fp32 max -> Inf
  EXPECT_EQ(bf16_of(-0.0f), 0x8000u);
}

// Guards against a wrong FP16 bias (15) or subnormal scale (2^-24): IEEE binary16 by formula,
// value = (-1)^s * (e ? 1024 + m : m) * 2^((e ? e : 1) - 25).
TEST(SixteenBitDecode, Fp16AllCodesMatchIeeeFormula) {
  for (uint32_t c = 0; c < 65536; ++c) {
    const uint32_t s = c >> 15, e = (c >> 10) & 0x1F, m = c & 0x3FF;
    const float got = decode(Format::kFP16, c);
    if (e == 31) {
      EXPECT_EQ(is_nan_code(Format::kFP16, c), m != 0) << std::hex << c;
      if (m) {
        EXPECT_TRUE(std::isnan(got)) << std::hex << c;
      } else {
        EXPECT_EQ(got, s ? -INFINITY : INFINITY) << std::hex << c;
      }
      continue;
    }
    const double mag = std::ldexp(static_cast<double>(e ? 1024 + m : m), (e ? int(e) : 1) - 25);
    EXPECT_EQ(static_cast<double>(got), s ? -mag : mag) << std::hex << c;
    EXPECT_EQ(std::signbit(got), s != 0) << std::hex << c;
  }
}

// Guards against the 16-bit spot values drifting: fp16 max 65504 (0x7BFF), min subnormal 2^-24;
// bf16 max 0x1.fep127 (0x7F7F), min subnormal 2^-133 (0x0001).
TEST(SixteenBitDecode, SpotValues) {
  EXPECT_EQ(max_finite(Format::kFP16), 65504.0f);
  EXPECT_EQ(decode(Format::kFP16, 0x0001), 0x1p-24f);
  EXPECT_EQ(decode(Format::kFP16, 0x3C00), 1.0f);
  EXPECT_EQ(max_finite(Format::kBF16), 0x1.fep127f);
  EXPECT_EQ(decode(Format::kBF16, 0x0001), 0x1p-133f);
  EXPECT_EQ(decode(Format::kBF16, 0x3F80), 1.0f);
  EXPECT_EQ(bits_of(max_finite(Format::kFP32)), 0x7F7FFFFFu);
}

// Guards against bits_of / float_of changing the pattern (e.g. a NaN payload quieted, a -0 or
// subnormal flushed) — every encoder starts from these.
TEST(Fp32Bits, RoundTripKeepsEveryPattern) {
  for (uint32_t b : {0x00000000u, 0x80000000u, 0x00000001u, 0x00400000u, 0x7F800000u, 0x7F800001u,
                     0xFFBFFFFFu, 0x3F800000u, 0x7F7FFFFFu}) {
    EXPECT_EQ(bits_of(float_of(b)), b) << std::hex << b;
    EXPECT_EQ(bits_of(decode(Format::kFP32, b)), b) << std::hex << b;
  }
  EXPECT_EQ(bits_of(1.0f), 0x3F800000u);
  EXPECT_EQ(float_of(0x40490FDBu), 0x1.921fb6p+1f);
}

// Guards against parse_format accepting a near-miss or losing a format: the CLI spellings of
// README.md map to their formats, anything else is rejected ("e4m3" above all: it would be
// ml_dtypes' IEEE float8_e4m3 to some users and the OCP e4m3fn to others, so neither is it).
TEST(ParseFormat, Names) {
  const std::pair<const char*, Format> known[] = {{"e4m3fn", Format::kE4M3FN},
                                                  {"e5m2", Format::kE5M2},
                                                  {"e4m3fnuz", Format::kE4M3FNUZ},
                                                  {"e5m2fnuz", Format::kE5M2FNUZ},
                                                  {"e8m0", Format::kE8M0},
                                                  {"bf16", Format::kBF16},
                                                  {"fp16", Format::kFP16},
                                                  {"fp32", Format::kFP32},
                                                  {"e3m4", Format::kE3M4},
                                                  {"e4m3ieee", Format::kE4M3IEEE},
                                                  {"e4m3b11fnuz", Format::kE4M3B11FNUZ},
                                                  {"mxint8", Format::kMXINT8}};
  for (const auto& [text, f] : known) {
    ASSERT_TRUE(parse_format(text).has_value()) << text;
    EXPECT_EQ(*parse_format(text), f) << text;
    EXPECT_EQ(info(f).name, text);
  }
  for (const char* bad :
       {"", "e4m3", "fp8", "e4m3fn ", "e5m2fn", "float8_e4m3fn", "bfloat16", "int8", "mxint"}) {
    EXPECT_FALSE(parse_format(bad).has_value()) << "'" << bad << "'";
  }
  EXPECT_EQ(all_formats().size(), 15u);
  for (const FormatInfo& fi : all_formats()) EXPECT_EQ(&info(fi.format), &fi);
}

}  // namespace
}  // namespace mxgate
