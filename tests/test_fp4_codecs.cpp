// Covers the FP4 / FP6 element formats: exact decoding of every code (typed over E2M1, E2M3,
// E3M2 against the closed form of docs/fp4.md §1), the encoders on named edge inputs per convention
// with the arithmetic of each expected byte beside it (docs/fp4.md §3), the policies that do not
// apply to a format without Inf / NaN (they throw, naming it), Triton's truncation below 1, and
// E2M1 packing in both nibble orders. Does NOT cover: the 2^32 sweeps (exhaustive_fp4_encoders),
// quantization (test_fp4_quant.cpp), measured bytes (test_fp4_vectors.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reference/convention.h"
#include "reference/format.h"
#include "reference/fp4_pack.h"
#include "reference/fp_encode.h"

namespace mxgate {
namespace {

template <Format F>
struct Fmt {
  static constexpr Format kFormat = F;
};

template <class T>
class SubByteDecode : public ::testing::Test {};
using SubByteFormats = ::testing::Types<Fmt<Format::kE2M1>, Fmt<Format::kE2M3>, Fmt<Format::kE3M2>>;
TYPED_TEST_SUITE(SubByteDecode, SubByteFormats);

// Guards against a wrong bias, a subnormal decoded with the normal formula, or a code read as
// Inf / NaN in a format that has neither: every code against (-1)^s 2^(e-bias) (1 + m/2^M), with
// e = 0 meaning 2^(1-bias) m/2^M.
TYPED_TEST(SubByteDecode, EveryCodeMatchesTheClosedForm) {
  const FormatInfo& fi = info(TypeParam::kFormat);
  for (uint32_t code = 0; code < (1u << fi.bits); ++code) {
    const uint32_t s = code >> (fi.bits - 1);
    const uint32_t e = (code >> fi.man_bits) & ((1u << fi.exp_bits) - 1);
    const uint32_t m = code & ((1u << fi.man_bits) - 1);
    const double frac = static_cast<double>(m) / (1 << fi.man_bits);
    const double mag = e == 0 ? std::ldexp(frac, 1 - fi.bias)
                              : std::ldexp(1.0 + frac, static_cast<int>(e) - fi.bias);
    const float got = decode(TypeParam::kFormat, code);
    EXPECT_EQ(static_cast<double>(got), s ? -mag : mag) << fi.name << " code " << code;
    EXPECT_EQ(std::signbit(got), s != 0) << fi.name << " code " << code;
    EXPECT_FALSE(is_nan_code(TypeParam::kFormat, code)) << fi.name << " code " << code;
  }
}

// Guards against a format table entry with the wrong width, max or smallest subnormal.
TEST(SubByteFormats, MaxAndSmallestSubnormal) {
  // E2M1: 1.1b * 2^(3-1) = 6; 0.1b * 2^0 = 0.5. E2M3: 1.111b * 2^2 = 7.5; 2^-3 = 0.125.
  // E3M2: 1.11b * 2^(7-3) = 28; 0.01b * 2^-2 = 0.0625.
  EXPECT_EQ(max_finite(Format::kE2M1), 6.0f);
  EXPECT_EQ(max_finite(Format::kE2M3), 7.5f);
  EXPECT_EQ(max_finite(Format::kE3M2), 28.0f);
  EXPECT_EQ(decode(Format::kE2M1, 0x1), 0.5f);
  EXPECT_EQ(decode(Format::kE2M3, 0x01), 0.125f);
  EXPECT_EQ(decode(Format::kE3M2, 0x01), 0.0625f);
  EXPECT_EQ(info(Format::kE2M1).bits, 4);
  EXPECT_EQ(info(Format::kE2M3).bits, 6);
  EXPECT_TRUE(has_no_specials(Format::kE3M2));
  EXPECT_FALSE(has_no_specials(Format::kE4M3FN));
  EXPECT_EQ(parse_format("e2m1"), Format::kE2M1);
}

struct EdgeCase {
  const char* convention;
  Format format;
  uint32_t input;     // fp32 bits
  uint32_t expected;  // code
  const char* why;    // the arithmetic of the expected code
};

// E2M1 magnitudes: 0 .5 1 1.5 2 3 4 6 (codes 0..7); midpoints .25 .75 1.25 1.75 2.5 3.5 5.
const EdgeCase kEdges[] = {
    {"ml_dtypes", Format::kE2M1, 0x3E800000, 0x0, "0.25: tie 0 | 0.5, even is 0 (code 0)"},
    {"ml_dtypes", Format::kE2M1, 0x3F400000, 0x2, "0.75: tie 0.5 | 1, even is 1.0 (code 2)"},
    {"ml_dtypes", Format::kE2M1, 0x3FA00000, 0x2, "1.25: tie 1 | 1.5, even is 1.0 (0b010)"},
    {"ml_dtypes", Format::kE2M1, 0x3FE00000, 0x4, "1.75: tie 1.5 | 2, even is 2.0 (0b100)"},
    {"ml_dtypes", Format::kE2M1, 0x40200000, 0x4, "2.5: tie 2 | 3, even is 2.0"},
    {"ml_dtypes", Format::kE2M1, 0x40600000, 0x6, "3.5: tie 3 | 4, even is 4.0 (0b110)"},
    {"ml_dtypes", Format::kE2M1, 0x40A00000, 0x6, "5: tie 4 | 6, even is 4.0 (0b110)"},
    {"ml_dtypes", Format::kE2M1, 0x40E00000, 0x7, "7: tie 6 | 8, 8 is past max: saturate 6"},
    {"ml_dtypes", Format::kE2M1, 0x7F800000, 0x7, "+Inf: infinity() is the max code 0b0111"},
    {"ml_dtypes", Format::kE2M1, 0xFF800000, 0xF, "-Inf: -infinity() = 0b1111"},
    {"ml_dtypes", Format::kE2M1, 0x7FC00000, 0x8, "+NaN: quiet_NaN() = 0b1000 (-0)"},
    {"ml_dtypes", Format::kE2M1, 0xFFC00000, 0x0, "-NaN: -quiet_NaN() = 0b1000 ^ 0b1000 = +0"},
    {"ml_dtypes", Format::kE2M1, 0x80000000, 0x8, "-0.0 keeps its sign"},
    {"ml_dtypes", Format::kE2M1, 0x3E800001, 0x1, "0.25 + 2^-25: above the tie, 0.5"},
    {"torchao_floor", Format::kE2M1, 0x7FC00000, 0x3,
     "NaN: (0x7FC00000 - 0x3F000000 + 0x1FFFFF + 1) >> 22 = 0x103, low byte 3"},
    {"torchao_floor", Format::kE2M1, 0xFFC00000, 0xB, "-NaN: 3 | sign 0x8"},
    {"torchao_floor", Format::kE2M1, 0x7FFFFFFF, 0x4,
     "NaN 0x7FFFFFFF (CUDA's): (0x40FFFFFF + 0x200000) >> 22 = 0x104, low byte 4"},
    {"torchao_floor", Format::kE2M1, 0x7F800000, 0x7, "+Inf: x >= max_normal, saturate"},
    {"triton_mxfp4_half_up", Format::kE2M1, 0x3E800000, 0x1, "0.25: half up to 0.5"},
    {"triton_mxfp4_half_up", Format::kE2M1, 0x40A00000, 0x7, "5: half up to 6"},
    {"triton_mxfp4_half_up", Format::kE2M1, 0x7FC00000, 0x7, "NaN: exponent 0xFF, min(.., 7)"},
    {"triton_mxfp4_half_up", Format::kE2M1, 0xFFC00000, 0xF, "-NaN: sign kept, 7"},
    {"triton_mxfp4", Format::kE2M1, 0x3E800000, 0x0, "0.25: RTNE tie to 0"},
    {"triton_mxfp4", Format::kE2M1, 0x3E800001, 0x0,
     "0.25 + 2^-25: truncated to 0.25 before rounding (sticky lost), tie to 0"},
    {"triton_mxfp4", Format::kE2M1, 0x3E800003, 0x0, "0.25 + 3*2^-25: still truncated to 0.25"},
    {"triton_mxfp4", Format::kE2M1, 0x3E800004, 0x1, "0.25 + 2^-23: survives truncation, 0.5"},
    {"triton_mxfp4", Format::kE2M1, 0x40A00000, 0x6, "5: RTNE to 4"},
    {"aiter_fp4_fallback", Format::kE2M1, 0x3FA00000, 0x2, "1.25: '> 1.25' is false, 1.0"},
    {"aiter_fp4_fallback", Format::kE2M1, 0x7FC00000, 0x0, "NaN: every comparison false, +0"},
    {"aiter_fp4_fallback", Format::kE2M1, 0xFFC00000, 0x0, "-NaN: val < 0 is false, +0"},
    {"aiter_fp4_fallback", Format::kE2M1, 0xFF800000, 0xF, "-Inf: |x| > 5, sign 8"},
    {"aiter_fp4_fallback_pre3992", Format::kE2M1, 0x3FA00000, 0x3,
     "1.25: '>= 1.25' rounds the tie away, 1.5 (AITER #3992)"},
    {"aiter_fp4_fallback_pre3992", Format::kE2M1, 0x40200000, 0x5, "2.5: away, 3"},
    {"te_nvfp4_ref", Format::kE2M1, 0x80000000, 0x0, "-0.0: x >= 0.0 is true first, code 0"},
    {"te_nvfp4_ref", Format::kE2M1, 0xBDCCCCCD, 0x8, "-0.1: in [-0.25, -0.0), code 8"},
    {"te_nvfp4_ref", Format::kE2M1, 0x7FC00000, 0x0, "NaN: no mask matches, zeros_like"},
    {"te_nvfp4_ref", Format::kE2M1, 0x3E800000, 0x0, "0.25: (x >= 0) & (x <= 0.25), code 0"},
    // E2M3: step 0.125 below 2, max 7.5 = 0b011111.
    {"ml_dtypes", Format::kE2M3, 0x3D800000, 0x00, "0.0625: tie 0 | 0.125, even 0"},
    {"ml_dtypes", Format::kE2M3, 0x3F880000, 0x08, "1.0625: tie 1 | 1.125, even 1.0"},
    {"ml_dtypes", Format::kE2M3, 0x40F80000, 0x1F, "7.75: tie 7.5 | 8, 8 past max: saturate"},
    {"ml_dtypes", Format::kE2M3, 0x7FC00000, 0x20, "+NaN: quiet_NaN() = 0b100000"},
    {"ml_dtypes", Format::kE2M3, 0xFF800000, 0x3F, "-Inf: -max"},
    {"torchao_floor", Format::kE2M3, 0x7FC00000, 0x0C,
     "NaN: (0x7FC00000 - 0x3F000000 + 0x7FFFF) >> 20 = 0x40C, low byte 0x0C"},
    // E3M2: max 28 = 0b011111, smallest subnormal 0.0625.
    {"ml_dtypes", Format::kE3M2, 0x41F00000, 0x1F, "30: tie 28 | 32, saturate 28"},
    {"ml_dtypes", Format::kE3M2, 0x3D000000, 0x00, "0.03125: tie 0 | 0.0625, even 0"},
    {"ml_dtypes", Format::kE3M2, 0xFFC00000, 0x00, "-NaN: +0"},
    {"torchao_floor", Format::kE3M2, 0x7FC00000, 0x0E,
     "NaN: (0x7FC00000 - 0x3E000000 + 0xFFFFF) >> 21 = 0x20E, low byte 0x0E"},
};

class SubByteEdges : public ::testing::TestWithParam<EdgeCase> {};

// Guards against a convention's FP4 / FP6 cast rounding a tie, an overflow, Inf, NaN or -0
// differently from the implementation it names.
TEST_P(SubByteEdges, ExpectedCode) {
  const EdgeCase& e = GetParam();
  const Convention* c = find_convention(e.convention);
  ASSERT_NE(c, nullptr) << e.convention;
  EXPECT_EQ(encode_with(*c, e.format, float_of(e.input)), e.expected)
      << e.convention << " " << info(e.format).name << " input 0x" << std::hex << e.input << ": "
      << e.why;
}

INSTANTIATE_TEST_SUITE_P(Table, SubByteEdges, ::testing::ValuesIn(kEdges));

// Guards against a policy that needs an Inf or NaN code silently producing some code on a format
// that has none: it must throw, naming the format.
TEST(SubBytePolicies, InapplicablePoliciesThrow) {
  const float nan = float_of(0x7FC00000);
  const float inf = float_of(0x7F800000);
  try {
    encode(Format::kE2M1, nan, {Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kKeepSign});
    ADD_FAILURE() << "nan_keep_sign on e2m1 did not throw";
  } catch (const UndefinedEncoding& e) {
    EXPECT_NE(std::string(e.what()).find("e2m1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(encode(Format::kE2M3, inf, {Rounding::kNearestEven, Overflow::kToInf}),
               UndefinedEncoding);
  EXPECT_THROW(encode(Format::kE3M2, 1e6f, {Rounding::kNearestEven, Overflow::kToNaN}),
               UndefinedEncoding);
  EXPECT_THROW(encode_with(*find_convention("ocp_mx"), Format::kE2M1, nan), UndefinedEncoding);
  EXPECT_THROW(encode(Format::kE4M3FN, nan,
                      {Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kTorchaoNormalPath}),
               UndefinedEncoding);
  EXPECT_THROW(nan_code(Format::kE2M1, false), std::invalid_argument);
  // A saturating policy with a NaN rule that needs no code is defined: 1e6 -> max.
  EXPECT_EQ(encode_with(*find_convention("ocp_mx"), Format::kE2M1, 1e6f), 0x7u);
}

// Guards against the Triton pre-rounding step changing values it must keep (|x| >= 1, Inf, NaN)
// or keeping bits it must drop.
TEST(TritonTruncation, BelowOneOnly) {
  // 0.25 + 2^-25 (0x3E800001): e = -2, the two lowest bits go: 0x3E800000.
  EXPECT_EQ(bits_of(truncate_below_one_to_2m23(float_of(0x3E800001))), 0x3E800000u);
  EXPECT_EQ(bits_of(truncate_below_one_to_2m23(float_of(0xBE800003))), 0xBE800000u);
  EXPECT_EQ(bits_of(truncate_below_one_to_2m23(float_of(0x3E800004))), 0x3E800004u);
  EXPECT_EQ(bits_of(truncate_below_one_to_2m23(float_of(0x3F800001))), 0x3F800001u);  // >= 1
  EXPECT_EQ(bits_of(truncate_below_one_to_2m23(float_of(0x34000000))), 0x34000000u);  // 2^-23
  EXPECT_EQ(bits_of(truncate_below_one_to_2m23(float_of(0x33FFFFFF))), 0x00000000u);  // < 2^-23
  EXPECT_EQ(bits_of(truncate_below_one_to_2m23(float_of(0x7FC00001))), 0x7FC00001u);
}

// Guards against the nibble order being swapped or the odd-K padding nibble landing in the wrong
// half: [1, 2, 3] packs to 0x21 0x03 low-first and 0x12 0x30 high-first.
TEST(Fp4Pack, NibbleOrdersAndOddLength) {
  const std::vector<uint8_t> codes = {0x1, 0x2, 0x3};
  EXPECT_EQ(pack_fp4(codes, 1, 3, NibbleOrder::kLowFirst), (std::vector<uint8_t>{0x21, 0x03}));
  EXPECT_EQ(pack_fp4(codes, 1, 3, NibbleOrder::kHighFirst), (std::vector<uint8_t>{0x12, 0x30}));
  EXPECT_EQ(pack_fp4(codes, 1, 3, NibbleOrder::kLowFirst, 0xF), (std::vector<uint8_t>{0x21, 0xF3}));
  for (NibbleOrder o : {NibbleOrder::kLowFirst, NibbleOrder::kHighFirst}) {
    std::vector<uint8_t> all(2 * 17);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint8_t>((i * 7) & 0xF);
    EXPECT_EQ(unpack_fp4(pack_fp4(all, 2, 17, o), 2, 17, o), all) << name(o);
  }
  EXPECT_THROW(pack_fp4(std::vector<uint8_t>{0x10}, 1, 1, NibbleOrder::kLowFirst),
               std::invalid_argument);
  EXPECT_THROW(unpack_fp4(std::vector<uint8_t>{0x00}, 1, 3, NibbleOrder::kLowFirst),
               std::invalid_argument);
  EXPECT_EQ(parse_nibble_order("high_first"), NibbleOrder::kHighFirst);
  EXPECT_FALSE(parse_nibble_order("middle").has_value());
}

}  // namespace
}  // namespace mxgate
