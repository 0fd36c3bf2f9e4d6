// Covers reference/exact_sum: exact accumulation of products of floats (cancellation, the whole
// exponent range of four-float products, lazy carries), ONE correct RNE rounding to fp32, bf16 and
// double (ties, double-rounding hazards, overflow, subnormal results), the NaN/Inf rules, the
// signed-zero rule, and round_to_bf16_bits.
// Does not cover: the GEMM built on it (test_gemm_oracle_*.cpp) or its speed.
// Every expected value is derived by hand in a comment; powers of two are written as hex floats.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "reference/exact_sum.h"

namespace mxgate {
namespace {

uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }
uint64_t bits(double x) { return std::bit_cast<uint64_t>(x); }

// Guards against a floating accumulator: big terms that cancel must not swallow a small one.
TEST(ExactSum, CatastrophicCancellationKeepsTheSmallTerm) {
  ExactSum s;
  s.add_product(1e30f, 1.0f);
  s.add_product(1.0f, 1.0f);
  s.add_product(-1e30f, 1.0f);
  // 1e30f + 1 - 1e30f = 1 exactly (in fp32 or fp64 arithmetic the 1 would be lost).
  EXPECT_EQ(s.round_to_float(), 1.0f);
  EXPECT_EQ(s.round_to_double(), 1.0);
  EXPECT_EQ(s.round_to_bf16(), 0x3F80);  // bf16 1.0
}

// Guards against an accumulator window narrower than the products of two floats.
TEST(ExactSum, TwoFloatProductsAtBothEndsOfTheRange) {
  ExactSum s;
  s.add_product(0x1p127f, 0x1p127f);    // 2^254
  s.add_product(0x1p-149f, 0x1p-149f);  // 2^-298 (smallest subnormal squared)
  s.add_product(-0x1p127f, 0x1p127f);   // -2^254
  // 2^254 + 2^-298 - 2^254 = 2^-298 exactly: a span of 552 bits.
  EXPECT_EQ(s.round_to_double(), 0x1p-298);
  // 2^-298 is far below fp32's smallest subnormal 2^-149 (and below half of it): +0.
  EXPECT_EQ(bits(s.round_to_float()), 0u);

  ExactSum big;
  big.add_product(0x1p127f, 0x1p127f);
  EXPECT_EQ(big.round_to_double(), 0x1p254);
  EXPECT_EQ(big.round_to_float(), std::numeric_limits<float>::infinity());  // 2^254 > fp32 max
}

// Guards against an accumulator window narrower than four-float products (a*b*sa*sb).
TEST(ExactSum, FourFloatProductsAtBothEndsOfTheRange) {
  ExactSum s;
  s.add_product(0x1p127f, 0x1p127f, 0x1p127f, 0x1p127f);      // 2^508
  s.add_product(0x1p-149f, 0x1p-149f, 0x1p-149f, 0x1p-149f);  // 2^-596
  s.add_product(-0x1p127f, 0x1p127f, 0x1p127f, 0x1p127f);     // -2^508
  EXPECT_EQ(s.round_to_double(), 0x1p-596);                   // the smallest term survives
}

// Guards against a product that is truncated to 64 bits before it is accumulated.
TEST(ExactSum, FourFactorProductIsExact) {
  const float x = 1.0f + 0x1p-23f;  // 24 significant bits
  ExactSum s;
  s.add_product(x, x, x, x);
  // (1 + 2^-23)^4 = 1 + 4*2^-23 + 6*2^-46 + 4*2^-69 + 2^-92
  //              = 1 + 2^-21 + 3*2^-45 + 2^-67 + 2^-92.
  // In double (ulp 2^-52 at 1) the tail 2^-67 + 2^-92 is below half an ulp: round down.
  EXPECT_EQ(s.round_to_double(), 1.0 + 0x1p-21 + 0x3p-45);
}

// Guards against add_scaled losing the low bits of a double times two floats (101 bits).
TEST(ExactSum, ScaledDoubleIsExact) {
  const float y = 1.0f + 0x1p-23f;
  ExactSum s;
  s.add_scaled(1.0 + 0x1p-52, y, y);
  s.add(-1.0);
  // (1 + 2^-52)(1 + 2^-22 + 2^-46) - 1 = 2^-22 + 2^-46 + 2^-52 + 2^-74 + 2^-98: exact in double?
  // It spans 2^-22 .. 2^-98 = 77 bits, so it rounds: ulp at 2^-22 is 2^-74, and the remainder
  // 2^-98 is below half of it: 2^-22 + 2^-46 + 2^-52 + 2^-74.
  EXPECT_EQ(s.round_to_double(), 0x1p-22 + 0x1p-46 + 0x1p-52 + 0x1p-74);
}

// Guards against round-half-up or round-half-away at exact fp32 ties.
TEST(ExactSum, Fp32TiesRoundToEven) {
  {
    ExactSum s;  // 1 + 2^-24: exactly half an ulp (ulp(1) = 2^-23) above 1.0
    s.add(1.0);
    s.add(0x1p-24);
    EXPECT_EQ(s.round_to_float(), 1.0f);  // 1.0's last mantissa bit is 0 (even)
  }
  {
    ExactSum s;  // 1 + 2^-23 + 2^-24: halfway between 1 + 2^-23 (odd) and 1 + 2^-22 (even)
    s.add(1.0 + 0x1p-23);
    s.add(0x1p-24);
    EXPECT_EQ(s.round_to_float(), 1.0f + 0x1p-22f);
  }
  {
    ExactSum s;  // a term 2^-200 far below the tie breaks it upward (sticky bit across limbs)
    s.add(1.0);
    s.add(0x1p-24);
    s.add_product(0x1p-100f, 0x1p-100f);
    EXPECT_EQ(s.round_to_float(), 1.0f + 0x1p-23f);
  }
  {
    ExactSum s;  // negative tie: -(1 + 2^-24) -> -1
    s.add(-1.0);
    s.add(-0x1p-24);
    EXPECT_EQ(s.round_to_float(), -1.0f);
  }
}

// Guards against round-half-up or round-half-away at exact bf16 ties.
TEST(ExactSum, Bf16TiesRoundToEven) {
  // bf16 has 8 significant bits: ulp(1) = 2^-7. 1.0 = 0x3F80, 1 + 2^-7 = 0x3F81, 1 + 2^-6 = 0x3F82.
  {
    ExactSum s;  // 1 + 2^-8: tie between 0x3F80 (even) and 0x3F81
    s.add(1.0);
    s.add(0x1p-8);
    EXPECT_EQ(s.round_to_bf16(), 0x3F80);
  }
  {
    ExactSum s;  // 1 + 2^-7 + 2^-8: tie between 0x3F81 (odd) and 0x3F82 (even)
    s.add(1.0);
    s.add(0x1p-7);
    s.add(0x1p-8);
    EXPECT_EQ(s.round_to_bf16(), 0x3F82);
  }
  {
    ExactSum s;  // -(1 + 2^-8): tie, to even: -1.0 = 0xBF80
    s.add(-1.0);
    s.add(-0x1p-8);
    EXPECT_EQ(s.round_to_bf16(), 0xBF80);
  }
}

// Guards against rounding to double (or fp32) first and then to the target: a second rounding
// can turn "just above a tie" into "exactly a tie" and round the wrong way.
TEST(ExactSum, NoDoubleRounding) {
  {
    // x = 1 + 2^-24 + 2^-60. Direct fp32: above the tie 1 + 2^-24, so 1 + 2^-23.
    // Via double: 2^-60 is below half of double's ulp 2^-52, so x -> 1 + 2^-24, then fp32 sees an
    // exact tie and picks the even 1.0.
    ExactSum s;
    s.add(1.0);
    s.add(0x1p-24);
    s.add(0x1p-60);
    EXPECT_EQ(s.round_to_float(), 1.0f + 0x1p-23f);
    EXPECT_EQ(static_cast<float>(s.round_to_double()), 1.0f);  // the hazard, for the record
  }
  {
    // x = 1 + 2^-8 + 2^-30. Direct bf16: above the tie, so 1 + 2^-7 = 0x3F81.
    // Via fp32 (ulp 2^-23 at 1): 2^-30 is lost, x -> 1 + 2^-8, an exact bf16 tie -> 0x3F80.
    ExactSum s;
    s.add(1.0);
    s.add(0x1p-8);
    s.add(0x1p-30);
    EXPECT_EQ(s.round_to_bf16(), 0x3F81);
    EXPECT_EQ(round_to_bf16_bits(1.0 + 0x1p-8 + 0x1p-30), 0x3F81);
    EXPECT_EQ(bits(s.round_to_float()), bits(1.0f + 0x1p-8f));  // fp32 alone would tie
  }
}

// Guards against overflow that saturates, or that triggers below max + half an ulp.
TEST(ExactSum, OverflowToInfinityFollowsRne) {
  const float inf = std::numeric_limits<float>::infinity();
  {
    // fp32 max = (2 - 2^-23) * 2^127 (odd significand). 2^128 - 2^103 = max + half an ulp: a tie,
    // and the even neighbour is 2^128, which overflows: +Inf.
    ExactSum s;
    s.add_product(0x1p127f, 2.0f);
    s.add_product(-0x1p103f, 1.0f);
    EXPECT_EQ(s.round_to_float(), inf);
    s.add_product(-0x1p50f, 1.0f);  // now just below the tie: max finite
    EXPECT_EQ(s.round_to_float(), 0x1.fffffep127f);
  }
  {
    ExactSum s;  // the negative side: -Inf
    s.add_product(-0x1p127f, 2.0f);
    s.add_product(0x1p103f, 1.0f);
    EXPECT_EQ(s.round_to_float(), -inf);
  }
  {
    // bf16 max = (2 - 2^-7) * 2^127 = 0x7F7F; max + half an ulp = 2^128 - 2^119 ties to 2^128:
    // Inf (0x7F80). 2^128 - 2^119 - 2^100 stays at max.
    ExactSum s;
    s.add_product(0x1p127f, 2.0f);
    s.add_product(-0x1p119f, 1.0f);
    EXPECT_EQ(s.round_to_bf16(), 0x7F80);
    s.add_product(-0x1p100f, 1.0f);
    EXPECT_EQ(s.round_to_bf16(), 0x7F7F);
  }
  {
    ExactSum s;  // double: 2^1023 + 2^1023 = 2^1024 overflows
    s.add(0x1p1023);
    s.add(0x1p1023);
    EXPECT_EQ(s.round_to_double(), std::numeric_limits<double>::infinity());
  }
}

// Guards against NaN/Inf handling that lets a finite part, or the order of terms, decide.
TEST(ExactSum, NanAndInfinityRules) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  {
    ExactSum s;  // a NaN factor
    s.add_product(1.0f, 2.0f);
    s.add_product(nan, 0.0f);
    EXPECT_TRUE(s.is_nan());
    EXPECT_TRUE(std::isnan(s.round_to_float()));
    EXPECT_EQ(s.round_to_bf16(), 0x7FC0);
    EXPECT_TRUE(std::isnan(s.round_to_double()));
  }
  {
    ExactSum s;  // 0 * Inf inside one term (also through a scale)
    s.add_product(0.0f, 1.0f, inf, 1.0f);
    EXPECT_TRUE(s.is_nan());
  }
  {
    ExactSum s;  // +Inf and -Inf
    s.add_product(inf, 1.0f);
    s.add_product(inf, -1.0f);
    EXPECT_TRUE(s.is_nan());
  }
  {
    ExactSum s;  // +Inf wins over any finite part, however large and negative
    s.add_product(-0x1p127f, 0x1p127f);
    s.add_product(inf, 2.0f);
    EXPECT_FALSE(s.is_nan());
    EXPECT_EQ(s.infinity_sign(), 1);
    EXPECT_EQ(s.round_to_float(), inf);
    EXPECT_EQ(s.round_to_bf16(), 0x7F80);
  }
  {
    ExactSum s;  // Inf * negative finite = -Inf
    s.add_product(inf, -3.0f, 1.0f, 0.5f);
    EXPECT_EQ(s.infinity_sign(), -1);
    EXPECT_EQ(s.round_to_float(), -inf);
    EXPECT_EQ(s.round_to_bf16(), 0xFF80);
  }
}

// Guards against wrong rounding in the subnormal range (gradual underflow, not flush-to-zero).
TEST(ExactSum, SubnormalResults) {
  {
    // 3 * 2^-150 = 1.5 units of 2^-149: a tie between 1 unit (odd) and 2 units (even): 2^-148.
    ExactSum s;
    s.add_product(0x1p-149f, 1.5f);
    EXPECT_EQ(s.round_to_float(), 0x1p-148f);
  }
  {
    // 2^-150 = half of the smallest subnormal: a tie between 0 (even) and 2^-149: +0.
    ExactSum s;
    s.add_product(0x1p-149f, 0.5f);
    EXPECT_EQ(bits(s.round_to_float()), 0u);
    s.add_product(0x1p-149f, 0x1p-60f);  // just above the tie: the smallest subnormal
    EXPECT_EQ(bits(s.round_to_float()), 1u);
  }
  {
    // -2^-150 underflows to -0 (IEEE keeps the sign of a value rounded to zero).
    ExactSum s;
    s.add_product(-0x1p-149f, 0.5f);
    EXPECT_EQ(bits(s.round_to_float()), 0x80000000u);
  }
  {
    // 2^-126 - 2^-150: halfway between the largest subnormal 2^-126 - 2^-149 (odd significand
    // 0x7FFFFF) and the smallest normal 2^-126 (even): 2^-126.
    ExactSum s;
    s.add_product(0x1p-126f, 1.0f);
    s.add_product(-0x1p-149f, 0.5f);
    EXPECT_EQ(s.round_to_float(), 0x1p-126f);
  }
  {
    // bf16 subnormals have unit 2^-133: 3 * 2^-134 ties between 1 unit and 2 units: 2^-132,
    // bf16 bits 0x0002.
    ExactSum s;
    s.add_product(0x1p-134f, 3.0f);
    EXPECT_EQ(s.round_to_bf16(), 0x0002);
  }
  {
    // A subnormal double result: 2^-1074 + 2^-1074 = 2^-1073 exactly.
    ExactSum s;
    s.add(0x1p-1074);
    s.add(0x1p-1074);
    EXPECT_EQ(s.round_to_double(), 0x1p-1073);
  }
}

// Guards against a zero result with the wrong sign (the rule stated in exact_sum.h).
TEST(ExactSum, SignOfZero) {
  ExactSum empty;
  EXPECT_EQ(bits(empty.round_to_float()), 0u);  // empty sum: +0
  ExactSum negzeros;                            // only -0 terms (0 * -3): -0
  negzeros.add_product(0.0f, -3.0f);
  negzeros.add_product(-0.0f, 2.0f);
  EXPECT_EQ(bits(negzeros.round_to_float()), 0x80000000u);
  EXPECT_EQ(negzeros.round_to_bf16(), 0x8000);
  EXPECT_EQ(bits(negzeros.round_to_double()), 0x8000000000000000u);
  negzeros.add_product(0.0f, 1.0f);  // one +0 term: +0
  EXPECT_EQ(bits(negzeros.round_to_float()), 0u);
  ExactSum cancel;  // x + (-x): +0
  cancel.add(-5.0);
  cancel.add(5.0);
  EXPECT_TRUE(cancel.finite_part_is_zero());
  EXPECT_EQ(bits(cancel.round_to_float()), 0u);
}

// Guards against carry bugs: many terms whose digits overflow 32 bits, both signs, and an
// explicit normalization in the middle.
TEST(ExactSum, LazyCarriesAcrossManyTerms) {
  ExactSum s;
  // 10^6 * (2^32 - 1) * 2^k for k = 0 and k = 20 land on different digit offsets. The exact sum
  // is X + Y with X = 10^6 * (2^32 - 1) = 4294967295000000 (< 2^53) and
  // Y = 10^6 * (2^52 - 2^20) = 4503599626321920000000 = 67108863984375 * 2^26: both exact doubles.
  // X + Y has 66 significant bits, so it rounds; the double addition X + Y rounds it once (RNE).
  for (int i = 0; i < 1000000; ++i) {
    s.add(4294967295.0);
    s.add(4294967295.0 * 0x1p20);
    if (i == 500000) {
      s.normalize();
    }
  }
  EXPECT_EQ(s.round_to_double(), 4294967295000000.0 + 4503599626321920000000.0);
  // Subtract it all again, in the other order: exactly zero.
  for (int i = 0; i < 1000000; ++i) {
    s.add(-4294967295.0 * 0x1p20);
    s.add(-4294967295.0);
  }
  EXPECT_TRUE(s.finite_part_is_zero());
  // Negative results: -1 - 2^-30 is exact in double.
  s.add(-1.0);
  s.add(-0x1p-30);
  EXPECT_EQ(s.round_to_double(), -1.0 - 0x1p-30);
}

// Guards against normalize() changing the value: repeated carry propagation near the top of the
// range, with a positive and then a negative total (a signed top limb).
TEST(ExactSum, RepeatedNormalizationKeepsTheValueForBothSigns) {
  const double big = 0x1.fffffffffffffp+1000;  // (2^53 - 1) * 2^948
  ExactSum s;
  for (int i = 0; i < 4096; ++i) {
    s.add(big);
    if (i % 64 == 63) {
      s.normalize();
    }
  }
  // 4096 * (2^53 - 1) * 2^948 = (2^53 - 1) * 2^960: exact in double.
  EXPECT_EQ(s.round_to_double(), 0x1.fffffffffffffp+1012);
  for (int i = 0; i < 8192; ++i) {
    s.add(-big);
    if (i % 64 == 63) {
      s.normalize();
    }
  }
  EXPECT_EQ(s.round_to_double(), -0x1.fffffffffffffp+1012);
}

// Guards against clear() leaving digits behind (the engine reuses accumulators per tile).
TEST(ExactSum, ClearForgetsEverything) {
  ExactSum s;
  s.add_product(3.0f, 0x1p-140f);
  s.add_product(std::numeric_limits<float>::infinity(), 1.0f);
  s.clear();
  s.add(2.0);
  EXPECT_EQ(s.round_to_float(), 2.0f);
  EXPECT_EQ(s.infinity_sign(), 0);
}

// Guards against bf16 conversion of doubles that rounds through fp32 or mishandles specials.
TEST(RoundToBf16Bits, EdgeCases) {
  EXPECT_EQ(round_to_bf16_bits(1.0), 0x3F80);
  EXPECT_EQ(round_to_bf16_bits(1.0 + 0x1p-8), 0x3F80);           // tie to even
  EXPECT_EQ(round_to_bf16_bits(1.0 + 0x1p-7 + 0x1p-8), 0x3F82);  // tie to even (up)
  EXPECT_EQ(round_to_bf16_bits(-0.0), 0x8000);
  EXPECT_EQ(round_to_bf16_bits(0x1p-134), 0x0000);  // tie between 0 and 2^-133
  EXPECT_EQ(round_to_bf16_bits(0x1p-133), 0x0001);  // smallest bf16 subnormal
  EXPECT_EQ(round_to_bf16_bits(0x1p200), 0x7F80);   // overflow
  EXPECT_EQ(round_to_bf16_bits(-std::numeric_limits<double>::infinity()), 0xFF80);
  EXPECT_EQ(round_to_bf16_bits(std::numeric_limits<double>::quiet_NaN()), 0x7FC0);
  EXPECT_EQ(bf16_bits_to_double(0x3F81), 1.0 + 0x1p-7);
  EXPECT_EQ(bits(bf16_bits_to_double(0x0001)), bits(0x1p-133));
}

}  // namespace
}  // namespace mxgate
