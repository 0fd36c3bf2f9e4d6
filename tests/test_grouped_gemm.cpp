// Covers the built-in grouped GEMMs (docs/grouped.md §6, §7) by hand on the host models: the
// grouped clause of the contract check (offsets off the declared alignment, masked counts past
// max_m, a B that does not stack E experts are outside the contract: unsupported), and each
// kernel's bytes on a two-expert case whose values are worked out beside the literals, rows no
// group owns left as the output poison. Does not cover: the grouped properties (tests/
// property_host.cpp runs them), the zoo faults (test_grouped_kernel_faults.cpp), device backends.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/grouped_launch.h"

namespace mxgate::test_support {
namespace {

// Two experts of one row each and a tail row: offsets (ends) {1, 2}, M = 3, N = 1, K = 1.
GroupedCall two_rows_and_tail() {
  GroupedCall g;
  g.m = 3;
  g.n = 1;
  g.k = 1;
  g.a = {kTwo, kThree, kNan};  // row 2 belongs to no group: a NaN nobody may read
  g.as = {1.0f, 1.0f, -1.0f};
  g.b = {kOne, kMinusOne};  // expert 0: 1, expert 1: -1
  g.bs = {1.0f, 1.0f};      // one 128x128 block per expert
  g.offsets = {1, 2};
  return g;
}

// Guards against a contiguous grouped GEMM that multiplies a row by another expert, or writes the
// rows past the last end offset (torch._grouped_mm leaves them untouched).
TEST(GroupedGemm, ContiguousEndsEachRowItsExpertTailUnwritten) {
  const std::vector<uint32_t> out =
      run_grouped("grouped_gemm_blockscale_contiguous", two_rows_and_tail());
  // row 0: 2 x 1 = 2.0 = 0x40000000; row 1: 3 x -1 = -3.0 = 0xC0400000; row 2: the poison.
  EXPECT_EQ(out, (std::vector<uint32_t>{0x40000000u, 0xC0400000u, kPoison}));
}

// Guards against a masked grouped GEMM that writes (or reads) rows past an expert's count.
TEST(GroupedGemm, MaskedCountsRowsPastCountUnwritten) {
  GroupedCall g;
  g.m = 4;  // E = 2 slots of max_m = 2
  g.n = 1;
  g.k = 1;
  g.a = {kTwo, kNan, kNan, kNan};
  g.as = {1.0f, 1.0f, 1.0f, 1.0f};
  g.b = {kOne, kMinusOne};
  g.bs = {1.0f, 1.0f};
  g.offsets = {1, 0};  // expert 0: one valid row, expert 1: none
  const std::vector<uint32_t> out = run_grouped("grouped_gemm_blockscale_masked", g);
  // row 0: 2 x 1 = 2.0; rows 1 (past count 1), 2, 3 (expert 1, count 0): the poison.
  EXPECT_EQ(out, (std::vector<uint32_t>{0x40000000u, kPoison, kPoison, kPoison}));
}

// Two experts of 32 rows (the MX kernel's alignment), K = 32, every A code 1 and scale 2^0.
GroupedCall mx_two_groups(uint64_t k = 32) {
  GroupedCall g;
  g.m = 64;
  g.n = 1;
  g.k = k;
  const uint64_t kb = k / 32;
  g.a.assign(64 * k, kOne);
  g.sa.assign(64 * kb, 127);        // E8M0 127 = 2^0
  g.b.assign(k, kOne);              // expert 0: every code 1
  g.b.insert(g.b.end(), k, kHalf);  // expert 1: every code 0.5
  g.sb.assign(2 * kb, 127);
  g.offsets = {0, 32};  // starts
  return g;
}

// Guards against an MX grouped GEMM that takes the wrong expert's weights for a group.
TEST(GroupedGemm, MxContiguousStartsEachGroupItsExpert) {
  const std::vector<uint32_t> out = run_grouped("grouped_gemm_mx_contiguous", mx_two_groups());
  // rows 0-31: sum of 32 products 1 x 1 = 32.0 = 0x42000000; rows 32-63: 32 x 0.5 = 16.0 =
  // 0x41800000.
  for (uint64_t r = 0; r < 64; ++r) {
    EXPECT_EQ(out[r], r < 32 ? 0x42000000u : 0x41800000u) << "row " << r;
  }
}

// Guards against offsets off the declared alignment reaching the kernel (a wrong result blamed
// on it) instead of being refused as outside the contract.
TEST(GroupedGemm, OffsetsOffTheAlignmentAreOutsideTheContract) {
  GroupedCall g = mx_two_groups();
  g.offsets = {0, 31};  // 31 % 32 != 0
  try {
    (void)run_grouped("grouped_gemm_mx_contiguous", g);
    FAIL() << "an offset of 31 passed an alignment of 32";
  } catch (const impl::Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("group offset 1 = 31 is not a multiple of the offset "
                                         "alignment 32"),
              std::string::npos)
        << e.what();
  }
}

// Guards against a masked count larger than its slot being launched (rows of the next expert).
TEST(GroupedGemm, MaskedCountPastMaxMIsOutsideTheContract) {
  GroupedCall g = two_rows_and_tail();
  g.m = 2;  // E = 2, max_m = 1
  g.a.resize(2);
  g.as.resize(2);
  g.offsets = {2, 0};
  try {
    (void)run_grouped("grouped_gemm_blockscale_masked", g);
    FAIL() << "a count of 2 passed max_m = 1";
  } catch (const impl::Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("masked count 0 = 2 exceeds max_m = 1"), std::string::npos)
        << e.what();
  }
}

// Guards against offsets that run backwards or past M being launched.
TEST(GroupedGemm, DecreasingEndOffsetsAreOutsideTheContract) {
  GroupedCall g = two_rows_and_tail();
  g.offsets = {2, 1};
  try {
    (void)run_grouped("grouped_gemm_blockscale_contiguous", g);
    FAIL() << "end offsets {2, 1} passed";
  } catch (const impl::Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("nondecreasing"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mxgate::test_support
