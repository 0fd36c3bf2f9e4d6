// Covers reference/grouped_scale_layout: per-group bases derived from group offsets, the per-group
// 128x4 blocked swizzle against the formula of docs/layouts.md section 4 written out here (every
// coordinate of every group: a bijection onto the non-padding slots, padding where the formula
// says), contiguous per-group storage, k-grouped scale shapes, pack / unpack with padding, and
// the difference from the unpadded swizzle of TransformerEngine PR #2924. Does not cover: the
// dense layouts (test_scale_layout.cpp) or the grouped oracle (test_grouped_gemm_*.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "reference/grouped_scale_layout.h"
#include "reference/scale_layout.h"

namespace mxgate {
namespace {

using std::size_t;

size_t align(size_t x, size_t a) { return (x + a - 1) / a * a; }

// docs/layouts.md section 4, written out: ((r/128)*(Cp/4) + c/4)*512 + (r%32)*16 +
// ((r%128)/32)*4 + c%4, Cp = align4(C).
size_t swizzle(size_t cols, size_t r, size_t c) {
  const size_t cp = align(cols, 4);
  return ((r / 128) * (cp / 4) + c / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4;
}

// Guards against per-group scale offsets that ignore a group's padding to 128 rows (or give an
// empty group storage): groups of 0, 1, 128, 129 and 300 rows.
TEST(GroupedScaleLayout, BlockedRowStartsFromGroupOffsets) {
  const std::vector<std::int64_t> ends = {0, 1, 129, 258, 558};
  const std::vector<GroupRange> ranges = group_ranges_from_offsets(ends, OffsetsPolicy::kEnds, 558);
  // align128 of 0, 1, 128, 129, 300 = 0, 128, 128, 256, 384; cumulative from 0.
  EXPECT_EQ(blocked_group_row_starts(ranges), (std::vector<size_t>{0, 0, 128, 256, 512, 896}));
  const auto shapes = m_group_scale_shapes(ranges, 5);  // K = 160 -> 5 MX scales per row
  // Storage per group: align128(rows) * align4(5) = rows_padded * 8.
  EXPECT_EQ(group_scale_bases(GroupedScaleLayout::kBlocked128x4PerGroup, shapes),
            (std::vector<size_t>{0, 0, 1024, 2048, 4096, 7168}));
  // Contiguous: rows * 5, cumulative.
  EXPECT_EQ(group_scale_bases(GroupedScaleLayout::kContiguousPerGroup, shapes),
            (std::vector<size_t>{0, 0, 5, 645, 1290, 2790}));
}

// Guards against any coordinate of any group mapped off the formula, two scales sharing a slot,
// or a padding slot read as a scale: every (g, r, c) is checked, and every other slot is padding.
TEST(GroupedScaleLayout, BlockedSwizzleIdentityOverEveryCoordinate) {
  const std::vector<GroupScaleShape> shapes = {{0, 5},   {1, 5},  {128, 5}, {129, 5},
                                               {300, 5}, {33, 4}, {2, 9}};
  const auto layout = GroupedScaleLayout::kBlocked128x4PerGroup;
  size_t base = 0, scales = 0;
  std::set<size_t> used;
  for (size_t g = 0; g < shapes.size(); ++g) {
    const GroupScaleShape s = shapes[g];
    for (size_t r = 0; r < s.rows; ++r) {
      for (size_t c = 0; c < s.cols; ++c) {
        const size_t want = base + swizzle(s.cols, r, c);
        ASSERT_EQ(grouped_scale_offset(layout, shapes, {g, r, c}), want)
            << "group " << g << " (" << r << ", " << c << ")";
        ASSERT_TRUE(used.insert(want).second) << "slot " << want << " used twice";
        ASSERT_EQ(grouped_scale_inverse(layout, shapes, want), (GroupScaleIndex{g, r, c}));
        ++scales;
      }
    }
    base += s.rows == 0 ? 0 : align(s.rows, 128) * align(s.cols, 4);
  }
  const size_t total = group_scale_bases(layout, shapes).back();
  ASSERT_EQ(total, base);
  size_t padding = 0;
  for (size_t o = 0; o < total; ++o) {
    if (used.count(o) == 0) {
      ASSERT_FALSE(grouped_scale_inverse(layout, shapes, o).has_value()) << "slot " << o;
      ++padding;
    }
  }
  EXPECT_EQ(padding + scales, total);
  // Group 1 (one row, 5 cols -> 128 x 8 storage at base 0): its row 1 slot (offset 16) is padding.
  EXPECT_FALSE(grouped_scale_inverse(layout, shapes, 16).has_value());
}

// Guards against contiguous per-group storage placing a group at the wrong base or transposed:
// offset = base_g + r * cols + c with base_g the sum of the earlier groups' rows * cols.
TEST(GroupedScaleLayout, ContiguousPerGroupIdentity) {
  const std::vector<GroupScaleShape> shapes = {{3, 2}, {0, 2}, {1, 2}, {2, 3}};
  const auto layout = GroupedScaleLayout::kContiguousPerGroup;
  // bases 0, 6, 6, 8; total 14.
  EXPECT_EQ(grouped_scale_offset(layout, shapes, {0, 2, 1}), 5u);   // 0 + 2*2 + 1
  EXPECT_EQ(grouped_scale_offset(layout, shapes, {2, 0, 1}), 7u);   // 6 + 0 + 1
  EXPECT_EQ(grouped_scale_offset(layout, shapes, {3, 1, 2}), 13u);  // 8 + 1*3 + 2
  for (size_t o = 0; o < 14; ++o) {
    EXPECT_TRUE(grouped_scale_inverse(layout, shapes, o).has_value()) << "slot " << o;
  }
  EXPECT_EQ(grouped_scale_inverse(layout, shapes, 6), (GroupScaleIndex{2, 0, 0}));
}

// Guards against k-grouped scale grids that do not restart per group (MXFP8 wgrad, torchtitan
// #1503): K groups of 64, 0 and 96 tokens with 32-blocks have 2, 0 and 3 scale columns.
TEST(GroupedScaleLayout, KGroupShapesRestartPerGroup) {
  const std::vector<std::int64_t> ends = {64, 64, 160};
  const auto ranges = group_ranges_from_offsets(ends, OffsetsPolicy::kEnds, 160, 32);
  EXPECT_EQ(k_group_scale_shapes(ranges, 7, 32),
            (std::vector<GroupScaleShape>{{7, 2}, {7, 0}, {7, 3}}));
  // Blocked along K groups: align128(7) * align4(2) = 512 and 128 * 4 = 512.
  EXPECT_EQ(group_scale_bases(GroupedScaleLayout::kBlocked128x4PerGroup,
                              k_group_scale_shapes(ranges, 7, 32)),
            (std::vector<size_t>{0, 512, 512, 1024}));
}

// Guards against pack / unpack losing a scale or leaving padding with something other than the
// caller's pad byte (padding is observable by kernels: vllm#47303's 0xFF read as NaN).
TEST(GroupedScaleLayout, PackUnpackRoundTripWithPad) {
  const std::vector<GroupScaleShape> shapes = {{1, 3}, {0, 3}, {130, 3}};
  std::vector<uint8_t> logical(131 * 3);
  for (size_t i = 0; i < logical.size(); ++i) logical[i] = static_cast<uint8_t>(i % 200);
  const auto layout = GroupedScaleLayout::kBlocked128x4PerGroup;
  const std::vector<uint8_t> stored =
      pack_grouped_scales<uint8_t>(layout, shapes, logical, uint8_t{0xFF});
  // 128*4 + 0 + 256*4 = 1536 slots, 393 scales, the rest 0xFF.
  ASSERT_EQ(stored.size(), 1536u);
  size_t pads = 0;
  for (size_t o = 0; o < stored.size(); ++o) {
    if (!grouped_scale_inverse(layout, shapes, o)) {
      EXPECT_EQ(stored[o], 0xFF);
      ++pads;
    }
  }
  EXPECT_EQ(pads, 1536u - 393u);
  EXPECT_EQ(unpack_grouped_scales<uint8_t>(layout, shapes, stored), logical);
}

// Guards against the unpadded grouped swizzle (TransformerEngine PR #2924) passing for the
// padded one: with a first group of 1 row, group 1's row 0 (global row 1) is at 16 unpadded
// ((1 % 32) * 16) but at 512 per-group padded (group 0 takes one 128x4 tile).
TEST(GroupedScaleLayout, DiffersFromTheUnpaddedSwizzle) {
  const std::vector<GroupScaleShape> shapes = {{1, 4}, {127, 4}};
  EXPECT_EQ(scale_offset(ScaleLayout::kNvSwizzle128x4, 128, 4, 1, 0), 16u);
  EXPECT_EQ(grouped_scale_offset(GroupedScaleLayout::kBlocked128x4PerGroup, shapes, {1, 0, 0}),
            512u);
  EXPECT_EQ(parse_grouped_scale_layout("blocked_128x4_per_group"),
            GroupedScaleLayout::kBlocked128x4PerGroup);
  EXPECT_EQ(parse_grouped_scale_layout("contiguous_per_group"),
            GroupedScaleLayout::kContiguousPerGroup);
  EXPECT_FALSE(parse_grouped_scale_layout("nv_swizzle_128x4").has_value());
}

}  // namespace
}  // namespace mxgate
