// Covers the failure helpers of the property checkers (properties/property.h): compare_codes
// locates the first differing stored code (row, column, expected and actual bits) and measures
// its distance in the codes of the named format, not as a byte difference; compare_outputs
// forwards the located element of the GEMM verdict.
// Does not cover: the properties that use them (property_host.cpp), the verdicts themselves
// (test_verdict.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "properties/property.h"

namespace mxgate::properties {
namespace {

// Guards against a located code mismatch whose ULP distance is the byte difference: E4M3FN
// 0x01 (2^-9) against 0x81 (-2^-9) is 2 codes apart, not 128, at (1, 0) of a 2 x 2 block.
TEST(CompareCodes, LocatesAndMeasuresInTheFormat) {
  const std::vector<uint8_t> want = {0x38, 0x38, 0x01, 0x38};
  std::vector<uint8_t> got = want;
  got[2] = 0x81;
  const auto f = compare_codes("codes", Format::kE4M3FN, 2, 2, want, got);
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(f->where.has_value());
  EXPECT_EQ(f->where->row, 1u);
  EXPECT_EQ(f->where->col, 0u);
  EXPECT_EQ(f->where->expected_bits, 0x01u);
  EXPECT_EQ(f->where->actual_bits, 0x81u);
  EXPECT_EQ(f->where->ulp_distance, 2u);
  EXPECT_NE(f->what.find("first (1,0) expected 0x01 actual 0x81"), std::string::npos) << f->what;
  EXPECT_FALSE(compare_codes("codes", Format::kE4M3FN, 2, 2, want, want).has_value());
}

// Guards against E8M0 scale bytes measured as signed codes: 0x81 vs 0x7F is two powers of two.
TEST(CompareCodes, E8m0IsUnsigned) {
  const std::vector<uint8_t> want = {0x7F}, got = {0x81};
  const auto f = compare_codes("scales", Format::kE8M0, 1, 1, want, got);
  ASSERT_TRUE(f.has_value() && f->where.has_value());
  EXPECT_EQ(f->where->ulp_distance, 2u);
}

// Guards against a size mismatch reported as equality or as a located element.
TEST(CompareCodes, SizeMismatchIsAFailureWithoutLocation) {
  const std::vector<uint8_t> want = {1, 2}, got = {1};
  const auto f = compare_codes("codes", Format::kE4M3FN, 1, 2, want, got);
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->where.has_value());
}

}  // namespace
}  // namespace mxgate::properties
