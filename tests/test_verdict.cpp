// Covers reference/verdict: bit-exact verdicts for fp32 and bf16 (located first and worst
// mismatch, bits, ULP distance and its policies across zero, for NaN and at Inf; the same distance
// for stored FP8 and E8M0 codes), the bound
// verdict (inside/outside rules for finite, NaN, Inf and unbounded elements) and mismatch maps.
// Does not cover: how bounds are computed (test_gemm_oracle_modes.cpp) or report formatting beyond
// the one-line summaries.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "reference/verdict.h"

namespace mxgate {
namespace {

float from_bits(uint32_t u) { return std::bit_cast<float>(u); }

// A located mismatch: present, at (row, col), with these bits and this ULP distance.
void expect_mismatch(const std::optional<BitMismatch>& got, const BitMismatch& want) {
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->row, want.row);
  EXPECT_EQ(got->col, want.col);
  EXPECT_EQ(got->expected_bits, want.expected_bits);
  EXPECT_EQ(got->actual_bits, want.actual_bits);
  EXPECT_EQ(got->ulp_distance, want.ulp_distance);
}

// Guards against a verdict that finds a mismatch but misplaces it or misreports its bits.
TEST(BitExactVerdict, LocatesAPlantedSingleMismatch) {
  std::vector<float> expected(12, 1.0f), actual(12, 1.0f);  // 3 x 4
  actual[2 * 4 + 1] = from_bits(0x3F800001);                // (2,1): the next float above 1.0
  const BitExactVerdict v = compare_fp32(3, 4, expected, actual);
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.mismatches, 1u);
  expect_mismatch(v.first, {2, 1, 0x3F800000u, 0x3F800001u, 1});
  expect_mismatch(v.worst, {2, 1, 0x3F800000u, 0x3F800001u, 1});
  const std::string line = v.summary();
  EXPECT_NE(line.find("1 of 12"), std::string::npos) << line;
  EXPECT_NE(line.find("(2,1)"), std::string::npos) << line;
  EXPECT_NE(line.find("0x3f800001"), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << "summary must be one line";
}

// Guards against a verdict that reports the first mismatch as the worst one.
TEST(BitExactVerdict, WorstIsTheLargestUlpDistance) {
  std::vector<float> expected{1.0f, 2.0f, 3.0f, 4.0f}, actual = expected;
  actual[1] = from_bits(0x40000001);  // 2.0 + 1 ulp
  actual[3] = from_bits(0x40800005);  // 4.0 + 5 ulp
  BitExactVerdict v = compare_fp32(2, 2, expected, actual);
  EXPECT_EQ(v.mismatches, 2u);
  expect_mismatch(v.first, {0, 1, 0x40000000u, 0x40000001u, 1});
  expect_mismatch(v.worst, {1, 1, 0x40800000u, 0x40800005u, 5});
  // A NaN where a number is expected is the worst mismatch of all.
  actual[0] = std::numeric_limits<float>::quiet_NaN();
  v = compare_fp32(2, 2, expected, actual);
  expect_mismatch(v.worst, {0, 0, 0x3F800000u, 0x7FC00000u, kNanUlpDistance});
}

// Guards against a verdict that says only "NaN-vs-number" where a NaN is expected: an E8M0 0xFF
// scale decoded as +Inf (llvm/llvm-project#214919) or as 2^127 must read as what it is, at the
// located element. Expected NaN (0x7FC00000) at (1,0) against +Inf (0x7F800000), at (1,1)
// against 2^127 (0x7F000000); (0,0) expects 1 and gets NaN.
TEST(BitExactVerdict, NanAgainstANumberNamesBothSides) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> expected{1.0f, 2.0f, nan, nan};
  std::vector<float> actual{1.0f, 2.0f, from_bits(0x7F800000), nan};
  BitExactVerdict v = compare_fp32(2, 2, expected, actual);
  ASSERT_EQ(v.mismatches, 1u);
  expect_mismatch(v.first, {1, 0, 0x7FC00000u, 0x7F800000u, kNanUlpDistance});
  std::string line = v.summary();
  EXPECT_NE(line.find("(1,0) expected 0x7fc00000 (nan) actual 0x7f800000 (inf) "
                      "NaN-vs-number (expected NaN, got +Inf)"),
            std::string::npos)
      << line;
  actual = {1.0f, 2.0f, nan, 0x1p127f};
  v = compare_fp32(2, 2, expected, actual);
  ASSERT_EQ(v.mismatches, 1u);
  expect_mismatch(v.first, {1, 1, 0x7FC00000u, 0x7F000000u, kNanUlpDistance});
  // 2^127 = 1.70141183e+38 (9 significant digits).
  line = v.summary();
  EXPECT_NE(line.find("(1,1) expected 0x7fc00000 (nan) actual 0x7f000000 (1.70141183e+38) "
                      "NaN-vs-number (expected NaN, got finite 1.70141183e+38)"),
            std::string::npos)
      << line;
  actual = {nan, 2.0f, nan, nan};
  v = compare_fp32(2, 2, expected, actual);
  ASSERT_EQ(v.mismatches, 1u);
  expect_mismatch(v.first, {0, 0, 0x3F800000u, 0x7FC00000u, kNanUlpDistance});
  line = v.summary();
  EXPECT_NE(line.find("(0,0) expected 0x3f800000 (1) actual 0x7fc00000 (nan) NaN-vs-number "
                      "(expected finite 1, got NaN)"),
            std::string::npos)
      << line;
  // -Inf is named with its sign.
  actual = {1.0f, 2.0f, -std::numeric_limits<float>::infinity(), nan};
  line = compare_fp32(2, 2, expected, actual).summary();
  EXPECT_NE(line.find("(expected NaN, got -Inf)"), std::string::npos) << line;
}

// Guards against float comparison semantics (-0 == +0, NaN != NaN) leaking into bit verdicts.
TEST(BitExactVerdict, NanAndSignedZeroPolicies) {
  // Any NaN equals any NaN, whatever the payload and sign.
  std::vector<float> e{from_bits(0x7FC00000)}, a{from_bits(0xFFC00123)};
  EXPECT_TRUE(compare_fp32(1, 1, e, a).ok());
  // +0 vs -0 IS a bit mismatch, reported at distance 0 (both zeros map to ordered integer 0).
  e = {0.0f};
  a = {-0.0f};
  const BitExactVerdict v = compare_fp32(1, 1, e, a);
  EXPECT_EQ(v.mismatches, 1u);
  EXPECT_EQ(v.first->ulp_distance, 0u);
}

// Guards against ULP distances computed on raw bits (wrong across zero) or as float differences.
TEST(UlpDistance, Fp32OrderedIntegerDistance) {
  EXPECT_EQ(ulp_distance_fp32(0x00000000, 0x80000000), 0u);  // +0 vs -0
  EXPECT_EQ(ulp_distance_fp32(0x00000001, 0x80000001), 2u);  // +-smallest subnormal: 1 - (-1)
  EXPECT_EQ(ulp_distance_fp32(0x00000001, 0x00000000), 1u);
  // 1.0 vs -1.0: images 0x3F800000 and -0x3F800000.
  EXPECT_EQ(ulp_distance(1.0f, -1.0f), 2u * 0x3F800000u);
  // Max finite 0x7F7FFFFF vs +Inf 0x7F800000: adjacent.
  EXPECT_EQ(ulp_distance_fp32(0x7F7FFFFF, 0x7F800000), 1u);
  EXPECT_EQ(ulp_distance_fp32(0x7FC00000, 0xFF800001), 0u);  // NaN vs NaN
  EXPECT_EQ(ulp_distance_fp32(0x7FC00000, 0x3F800000), kNanUlpDistance);
  EXPECT_EQ(ulp_distance_fp32(0x3F800000, 0x3F800000), 0u);
}

// Guards against a code distance taken as the byte difference (wrong across the sign bit, for
// NaN codes and for FNUZ's missing -0) or an E8M0 distance taken as sign-magnitude.
TEST(UlpDistance, CodesInTheirFormat) {
  // E4M3FN: 0x01 (2^-9) and 0x81 (-2^-9) are images 1 and -1: two codes apart, not 128.
  EXPECT_EQ(ulp_distance_code(Format::kE4M3FN, 0x01, 0x81), 2u);
  EXPECT_EQ(ulp_distance_code(Format::kE4M3FN, 0x00, 0x80), 0u);               // +0 vs -0
  EXPECT_EQ(ulp_distance_code(Format::kE4M3FN, 0x38, 0x3A), 2u);               // 1.0 vs 1.25
  EXPECT_EQ(ulp_distance_code(Format::kE4M3FN, 0x7E, 0x7F), kNanUlpDistance);  // 448 vs NaN
  EXPECT_EQ(ulp_distance_code(Format::kE4M3FN, 0x7F, 0xFF), 0u);               // NaN vs NaN
  // E5M2: max finite 0x7B vs +Inf 0x7C are adjacent, as in fp32.
  EXPECT_EQ(ulp_distance_code(Format::kE5M2, 0x7B, 0x7C), 1u);
  // E4M3FNUZ: 0x80 is NaN, 0x81 is -2^-10: one code below +0.
  EXPECT_EQ(ulp_distance_code(Format::kE4M3FNUZ, 0x00, 0x81), 1u);
  EXPECT_EQ(ulp_distance_code(Format::kE4M3FNUZ, 0x00, 0x80), kNanUlpDistance);
  // E8M0 is unsigned: 0xB2 vs 0xB1 is one power of two; 0x00 vs 0xFE is 254; 0xFF is NaN.
  EXPECT_EQ(ulp_distance_code(Format::kE8M0, 0xB2, 0xB1), 1u);
  EXPECT_EQ(ulp_distance_code(Format::kE8M0, 0x00, 0xFE), 254u);
  EXPECT_EQ(ulp_distance_code(Format::kE8M0, 0x7F, 0xFF), kNanUlpDistance);
  // Wider formats agree with the fp32 / bf16 rule.
  EXPECT_EQ(ulp_distance_code(Format::kBF16, 0x3F80, 0xBF80), ulp_distance_bf16(0x3F80, 0xBF80));
}

// Guards against the bf16 variant using fp32 widths (sign bit 15, NaN above 0x7F80).
TEST(UlpDistance, Bf16OrderedIntegerDistance) {
  EXPECT_EQ(ulp_distance_bf16(0x0000, 0x8000), 0u);
  EXPECT_EQ(ulp_distance_bf16(0x0001, 0x8001), 2u);
  EXPECT_EQ(ulp_distance_bf16(0x3F80, 0x3F81), 1u);
  EXPECT_EQ(ulp_distance_bf16(0x3F80, 0xBF80), 2u * 0x3F80u);
  EXPECT_EQ(ulp_distance_bf16(0x7F7F, 0x7F80), 1u);  // max finite vs Inf
  EXPECT_EQ(ulp_distance_bf16(0x7FC0, 0xFFC1), 0u);  // NaN vs NaN
  EXPECT_EQ(ulp_distance_bf16(0x7F81, 0x3F80), kNanUlpDistance);
  EXPECT_TRUE(same_bf16(0x7FC0, 0xFF81));
  EXPECT_FALSE(same_bf16(0x0000, 0x8000));
}

// Guards against a bf16 verdict that compares 16-bit patterns with fp32 rules or prints 8 digits.
TEST(BitExactVerdict, Bf16PlantedMismatch) {
  std::vector<uint16_t> expected(6, 0x3F80), actual = expected;  // 2 x 3
  actual[1 * 3 + 2] = 0x3F83;                                    // (1,2): 1.0 + 3 bf16 ulps
  const BitExactVerdict v = compare_bf16(2, 3, expected, actual);
  EXPECT_EQ(v.format, OutputFormat::kBf16);
  EXPECT_EQ(v.mismatches, 1u);
  expect_mismatch(v.first, {1, 2, 0x3F80u, 0x3F83u, 3});
  const std::string line = v.summary();
  EXPECT_NE(line.find("bf16"), std::string::npos) << line;
  EXPECT_NE(line.find("0x3f83 "), std::string::npos) << line;
  EXPECT_TRUE(compare_bf16(2, 3, expected, expected).ok());
}

// Guards against silently comparing buffers of the wrong size.
TEST(BitExactVerdict, RejectsWrongSizes) {
  std::vector<float> four(4), three(3);
  EXPECT_THROW(compare_fp32(2, 2, four, three), std::invalid_argument);
  EXPECT_THROW(compare_fp32(1, 3, four, three), std::invalid_argument);
}

// Guards against bound verdicts that accept NaN for a number, the wrong infinity, or an excess.
TEST(BoundVerdict, InsideAndOutsideRules) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  //                          (0,0) (0,1) (0,2) (0,3) (1,0) (1,1) (1,2) (1,3)
  const std::vector<double> exact{1.0, 2.0, nan, inf, nan, -inf, 5.0, 7.0};
  const std::vector<double> bound{0.5, 0.5, 0.0, 0.0, 0.0, 0.0, inf, 1.0};
  const std::vector<double> actual{1.5, 2.75, nan, inf, 1.0, inf, -1e30, inf};
  // (0,0): |1.5 - 1| = 0.5 <= 0.5 inside (the edge counts).  (0,1): 0.75 > 0.5, excess 0.25.
  // (0,2): NaN for NaN inside.  (0,3): +Inf for +Inf inside.  (1,0): number for NaN outside.
  // (1,1): +Inf for -Inf outside.  (1,2): unbounded, anything goes.  (1,3): Inf for 7 outside.
  const BoundVerdict v = check_within_bound(2, 4, exact, bound, actual);
  EXPECT_EQ(v.outside, 4u);
  ASSERT_EQ(v.violations.size(), 4u);
  EXPECT_EQ(v.violations[0].row, 0u);
  EXPECT_EQ(v.violations[0].col, 1u);
  EXPECT_DOUBLE_EQ(v.violations[0].excess, 0.25);
  EXPECT_EQ(v.violations[1].col, 0u);
  EXPECT_EQ(v.violations[1].row, 1u);
  EXPECT_EQ(v.violations[2].col, 1u);
  EXPECT_EQ(v.violations[3].col, 3u);
  ASSERT_TRUE(v.worst.has_value());
  EXPECT_EQ(v.worst->excess, inf);
  EXPECT_NE(v.summary().find("4 of 8"), std::string::npos) << v.summary();
}

// Guards against the float and bf16 overloads converting the kernel's values inexactly.
TEST(BoundVerdict, FloatAndBf16Overloads) {
  const std::vector<double> exact{1.0, 1.0}, bound{0x1p-8, 0x1p-8};
  const std::vector<float> f{1.0f + 0x1p-8f, 1.0f + 0x1p-7f};  // inside (edge), outside
  BoundVerdict v = check_within_bound(1, 2, exact, bound, std::span<const float>(f));
  EXPECT_EQ(v.outside, 1u);
  EXPECT_EQ(v.violations[0].col, 1u);
  const std::vector<uint16_t> h{0x3F80, 0x3F81};  // 1.0 inside, 1 + 2^-7 outside
  v = check_within_bound_bf16(1, 2, exact, bound, h);
  EXPECT_EQ(v.outside, 1u);
  EXPECT_EQ(v.violations[0].actual, 1.0 + 0x1p-7);
}

// Guards against heatmap counts that misattribute a stripe to the wrong rows/columns/tiles.
TEST(MismatchMap, PlantedColumnStripe) {
  // 8x8, every element of column 5 wrong; tiles 4x4 -> a 2x2 tile grid; column 5 is in tile
  // column 1, so tiles (0,1) and (1,1) hold 4 each.
  std::vector<float> expected(64, 2.0f), actual = expected;
  for (int r = 0; r < 8; ++r) {
    actual[r * 8 + 5] = 3.0f;
  }
  const MismatchMap m = mismatch_map_fp32(8, 8, expected, actual, 4, 4);
  EXPECT_EQ(m.total, 8u);
  EXPECT_EQ(m.tile_rows, 2u);
  EXPECT_EQ(m.tile_cols, 2u);
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(m.per_row[r], 1u);
  }
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(m.per_col[c], c == 5 ? 8u : 0u);
  }
  EXPECT_EQ(m.tile_count(0, 0), 0u);
  EXPECT_EQ(m.tile_count(0, 1), 4u);
  EXPECT_EQ(m.tile_count(1, 0), 0u);
  EXPECT_EQ(m.tile_count(1, 1), 4u);
}

// Guards against edge tiles being dropped or merged when the tile does not divide the matrix.
TEST(MismatchMap, RowStripeWithPartialEdgeTiles) {
  // 6x5 bf16, row 5 entirely wrong; tiles 4x2 -> tile grid ceil(6/4) x ceil(5/2) = 2x3. Row 5
  // is in tile row 1; its columns 0-1, 2-3, 4 fall in tile columns 0, 1, 2: counts 2, 2, 1.
  std::vector<uint16_t> expected(30, 0x4000), actual = expected;
  for (int c = 0; c < 5; ++c) {
    actual[5 * 5 + c] = 0x4001;
  }
  const MismatchMap m = mismatch_map_bf16(6, 5, expected, actual, 4, 2);
  EXPECT_EQ(m.total, 5u);
  EXPECT_EQ(m.tile_rows, 2u);
  EXPECT_EQ(m.tile_cols, 3u);
  EXPECT_EQ(m.per_row[5], 5u);
  EXPECT_EQ(m.tile_count(1, 0), 2u);
  EXPECT_EQ(m.tile_count(1, 1), 2u);
  EXPECT_EQ(m.tile_count(1, 2), 1u);
  EXPECT_EQ(m.tile_count(0, 0) + m.tile_count(0, 1) + m.tile_count(0, 2), 0u);
  EXPECT_THROW(mismatch_map_bf16(6, 5, expected, actual, 0, 2), std::invalid_argument);
}

// Guards against the bound-verdict map disagreeing with the verdict's violation list.
TEST(MismatchMap, FromBoundVerdict) {
  const std::vector<double> exact(6, 1.0), bound(6, 0.0);
  std::vector<double> actual(6, 1.0);
  actual[1 * 3 + 0] = 2.0;  // (1,0)
  actual[1 * 3 + 2] = 0.0;  // (1,2)
  const BoundVerdict v = check_within_bound(2, 3, exact, bound, actual);
  const MismatchMap m = mismatch_map(v, 1, 2);
  EXPECT_EQ(m.total, 2u);
  EXPECT_EQ(m.per_row[1], 2u);
  EXPECT_EQ(m.per_col[0], 1u);
  EXPECT_EQ(m.per_col[2], 1u);
  EXPECT_EQ(m.tile_count(1, 0), 1u);  // columns 0-1
  EXPECT_EQ(m.tile_count(1, 1), 1u);  // column 2
}

}  // namespace
}  // namespace mxgate
