// Covers the grouped GEMM zoo faults Z52-Z58 (docs/bug_classes.md §2; Z59's case is in
// test_grouped_gemm_kgrouped.cpp, its own bit here) by hand, on the host models
// of the built-in grouped kernels: each fault's minimal case launched clean and with its
// kernel_fault bit, the clean bytes the values worked out beside each literal, the faulty bytes
// the ones the class describes (a row written that no group owns, a row left as the poison, the
// wrong expert's weights or scales). Also that every grouped fault maps to its own bit. Does not
// cover: detection by the properties (tests/property_zoo.cpp), device backends.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "dispatch/faults.h"
#include "tests/grouped_launch.h"

namespace mxgate::test_support {
namespace {

using dispatch::Fault;

uint64_t bit(Fault f) { return dispatch::kernel_fault_bits({f}); }

constexpr Fault kGroupedFaults[] = {
    Fault::kZ52EmptyGroupStaleAccumulator, Fault::kZ53WalkStopsAtEmptyExpert,
    Fault::kZ54TileExpertFromFirstRow,     Fault::kZ55StraddlingTileFirstGroup,
    Fault::kZ56MaskedRowsPastCount,        Fault::kZ57GroupSwizzleUnpadded,
    Fault::kZ58NextExpertTailScales,       Fault::kZ59KEmptyStaleAccumulator};

// Two faults on one bit would make one indistinguishable from the other in every kernel.
TEST(GroupedKernelFaults, EachFaultItsOwnKernelBit) {
  std::set<uint64_t> bits;
  for (Fault f : kGroupedFaults) {
    EXPECT_NE(bit(f), 0u) << dispatch::to_string(f);
    EXPECT_EQ(bit(f) & (bit(f) - 1), 0u) << dispatch::to_string(f) << ": one bit";
    EXPECT_TRUE(bits.insert(bit(f)).second) << dispatch::to_string(f) << " shares a bit";
  }
  for (Fault f : dispatch::all_faults()) {
    bool grouped = false;
    for (Fault g : kGroupedFaults) grouped = grouped || g == f;
    if (!grouped) {
      EXPECT_EQ(bits.count(bit(f)), 0u) << dispatch::to_string(f) << " reuses a bit";
    }
  }
}

// Masked, two slots of max_m = 1: expert 0 one valid row (2 x 1), expert 1 none.
GroupedCall masked_one_then_empty() {
  GroupedCall g;
  g.m = 2;
  g.n = 1;
  g.k = 1;
  g.a = {kTwo, kNan};
  g.as = {1.0f, 1.0f};
  g.b = {kOne, kMinusOne};
  g.bs = {1.0f, 1.0f};
  g.offsets = {1, 0};
  return g;
}

// Guards against Z52 going unplanted: the empty expert's slot must receive the stale tile.
TEST(GroupedKernelFaults, Z52EmptyExpertStoresPreviousAccumulator) {
  GroupedCall g = masked_one_then_empty();
  // Clean: row 0 = 2 x 1 = 2.0 = 0x40000000, row 1 (count 0) the poison.
  EXPECT_EQ(run_grouped("grouped_gemm_blockscale_masked", g),
            (std::vector<uint32_t>{0x40000000u, kPoison}));
  g.faults = bit(Fault::kZ52EmptyGroupStaleAccumulator);
  // Faulty: row 1 gets expert 0's accumulator for its row 0, 2.0.
  EXPECT_EQ(run_grouped("grouped_gemm_blockscale_masked", g),
            (std::vector<uint32_t>{0x40000000u, 0x40000000u}));
}

// Guards against Z53 going unplanted: ends {0, 1}, expert 0 without tokens, expert 1 one row.
TEST(GroupedKernelFaults, Z53RowsAfterAnEmptyExpertNeverWritten) {
  GroupedCall g;
  g.m = 1;
  g.n = 1;
  g.k = 1;
  g.a = {kThree};
  g.as = {1.0f};
  g.b = {kOne, kMinusOne};
  g.bs = {1.0f, 1.0f};
  g.offsets = {0, 1};
  // Clean: row 0 is expert 1's: 3 x -1 = -3.0 = 0xC0400000.
  EXPECT_EQ(run_grouped("grouped_gemm_blockscale_contiguous", g),
            (std::vector<uint32_t>{0xC0400000u}));
  g.faults = bit(Fault::kZ53WalkStopsAtEmptyExpert);
  EXPECT_EQ(run_grouped("grouped_gemm_blockscale_contiguous", g), (std::vector<uint32_t>{kPoison}));
}

// Guards against Z54 going unplanted: ends {1, 2}, a boundary at row 1, inside tile 0.
TEST(GroupedKernelFaults, Z54RowAfterBoundaryUsesFirstRowsExpert) {
  GroupedCall g;
  g.m = 2;
  g.n = 1;
  g.k = 1;
  g.a = {kTwo, kThree};
  g.as = {1.0f, 1.0f};
  g.b = {kOne, kMinusOne};
  g.bs = {1.0f, 1.0f};
  g.offsets = {1, 2};
  // Clean: 2 x 1 = 2.0, 3 x -1 = -3.0 (0xC0400000).
  EXPECT_EQ(run_grouped("grouped_gemm_blockscale_contiguous", g),
            (std::vector<uint32_t>{0x40000000u, 0xC0400000u}));
  g.faults = bit(Fault::kZ54TileExpertFromFirstRow);
  // Faulty: row 1 takes tile 0's expert 0: 3 x 1 = 3.0 = 0x40400000.
  EXPECT_EQ(run_grouped("grouped_gemm_blockscale_contiguous", g),
            (std::vector<uint32_t>{0x40000000u, 0x40400000u}));
}

// Two MX groups of 32 rows in tile 0 (starts {0, 32}), K = k: A codes 1, expert 0's B 1, expert
// 1's B 0.5, every scale 2^0 unless the test sets them.
GroupedCall mx_pair(uint64_t k) {
  GroupedCall g;
  g.m = 64;
  g.n = 1;
  g.k = k;
  const uint64_t kb = k / 32;
  g.a.assign(64 * k, kOne);
  g.sa.assign(64 * kb, 127);
  g.b.assign(k, kOne);
  g.b.insert(g.b.end(), k, kHalf);
  g.sb.assign(2 * kb, 127);
  g.offsets = {0, 32};
  return g;
}

// Guards against Z55 going unplanted: group 1's rows share tile 0 with group 0.
TEST(GroupedKernelFaults, Z55SecondGroupInTileNeverWritten) {
  GroupedCall g = mx_pair(32);
  std::vector<uint32_t> out = run_grouped("grouped_gemm_mx_contiguous", g);
  EXPECT_EQ(out[32], 0x41800000u);  // 32 products of 1 x 0.5 = 16.0
  g.faults = bit(Fault::kZ55StraddlingTileFirstGroup);
  out = run_grouped("grouped_gemm_mx_contiguous", g);
  EXPECT_EQ(out[31], 0x42000000u);  // group 0 untouched: 32.0
  EXPECT_EQ(out[32], kPoison);
  EXPECT_EQ(out[63], kPoison);
}

// Guards against Z56 going unplanted: one expert, count 1 of max_m 2; its row 1 holds 1 (a row
// the kernel must not read, finite here so the written value is plain).
TEST(GroupedKernelFaults, Z56RowPastCountWritten) {
  GroupedCall g;
  g.m = 2;
  g.n = 1;
  g.k = 1;
  g.a = {kTwo, kOne};
  g.as = {1.0f, 1.0f};
  g.b = {kOne};
  g.bs = {1.0f};
  g.offsets = {1};
  EXPECT_EQ(run_grouped("grouped_gemm_blockscale_masked", g),
            (std::vector<uint32_t>{0x40000000u, kPoison}));
  g.faults = bit(Fault::kZ56MaskedRowsPastCount);
  // Faulty: row 1 (past the count, inside the 64-row store) = 1 x 1 = 1.0 = 0x3F800000.
  EXPECT_EQ(run_grouped("grouped_gemm_blockscale_masked", g),
            (std::vector<uint32_t>{0x40000000u, 0x3F800000u}));
}

// Guards against Z57 going unplanted: per-group swizzled scales, group 0 of 32 rows padded to
// 128. Each group's grid is 128 rows x 4 columns = 512 bytes; K = 32 is one scale column, so row
// r's byte is at (r % 32) * 16 + (r % 128) / 32 * 4 (docs/layouts.md §4); the padding bytes 0xFF
// are NaN.
TEST(GroupedKernelFaults, Z57SecondGroupReadsFirstGroupsPadding) {
  GroupedCall g = mx_pair(32);
  g.swizzled = true;
  g.sa.assign(2 * 512, 0xFF);
  for (uint64_t grp = 0; grp < 2; ++grp) {
    for (uint64_t r = 0; r < 32; ++r) g.sa[grp * 512 + r * 16] = 127;
  }
  g.sb.assign(2 * 512, 0xFF);
  for (uint64_t e = 0; e < 2; ++e) g.sb[e * 512] = 127;  // N = 1: row 0 of each expert's grid
  std::vector<uint32_t> out = run_grouped("grouped_gemm_mx_contiguous", g);
  EXPECT_EQ(out[0], 0x42000000u);   // 32.0
  EXPECT_EQ(out[32], 0x41800000u);  // 16.0
  g.faults = bit(Fault::kZ57GroupSwizzleUnpadded);
  out = run_grouped("grouped_gemm_mx_contiguous", g);
  EXPECT_EQ(out[0], 0x42000000u);  // group 0 unchanged (its rows start the one swizzle)
  // Row 32 read as global row 32: byte 0 * 16 + 1 * 4 = 4 of group 0's grid, padding 0xFF (NaN).
  EXPECT_EQ(out[32] & 0x7F800000u, 0x7F800000u);
  EXPECT_NE(out[32] & 0x007FFFFFu, 0u) << "a NaN";
}

// Guards against Z58 going unplanted: K = 160 is two K tiles; expert 0's B scales 2^0, expert 1's
// 2^1 (E8M0 128).
TEST(GroupedKernelFaults, Z58TailTileUsesNextExpertsScales) {
  GroupedCall g = mx_pair(160);
  g.sb = {127, 127, 127, 127, 127, 128, 128, 128, 128, 128};  // 2 experts x 5 scale columns
  std::vector<uint32_t> out = run_grouped("grouped_gemm_mx_contiguous", g);
  EXPECT_EQ(out[0], 0x43200000u);   // 160 products 1 x 1 = 160.0
  EXPECT_EQ(out[32], 0x43200000u);  // 160 products 1 x 0.5 x 2^1 = 160.0
  g.faults = bit(Fault::kZ58NextExpertTailScales);
  out = run_grouped("grouped_gemm_mx_contiguous", g);
  // Expert 0: blocks 0-3 (K 0-127) at 2^0 = 128, block 4 (K 128-159) at expert 1's 2^1 = 64:
  // 192.0 = 0x43400000. Expert 1 is the last and keeps its own.
  EXPECT_EQ(out[0], 0x43400000u);
  EXPECT_EQ(out[32], 0x43200000u);
}

}  // namespace
}  // namespace mxgate::test_support
