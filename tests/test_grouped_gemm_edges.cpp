// Covers reference/grouped_gemm at the edges the public MoE bug record names (docs/grouped.md
// §2): zero-token groups first / last / middle / all but one, groups of 1, 128 and 129 rows
// with per-row scales, starts vs ends offsets, masked poison that must survive, rows past the last
// offset, offsets validation (each error naming its entry), located (group, row, col) verdicts in
// bit-exact and bound modes. Does not cover: the split identity and hand-computed schemes
// (test_grouped_gemm_reference.cpp), scale layouts (test_grouped_scale_layout.cpp), kernels.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/grouped_gemm.h"

namespace mxgate {
namespace {

using std::size_t;
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// A problem whose expert e multiplies every K = 4 ones-row by (e + 1): each valid output element
// of expert e's rows is 4 * (e + 1), so a row computed with another expert's weights shows.
GroupedGemmProblem expert_tagged(GroupLayout layout, size_t n) {
  GroupedGemmProblem p = make_grouped_problem(std::move(layout), 0, n, 4, {}, false);
  std::fill(p.a.begin(), p.a.end(), 1.0f);
  for (size_t e = 0; e < p.layout.groups(); ++e) {
    for (size_t j = 0; j < n * 4; ++j) p.b[e * n * 4 + j] = static_cast<float>(e + 1);
  }
  return p;
}

// Guards against an empty group shifting later groups onto the wrong expert, or writing rows
// (meta-pytorch/MSLK#158): zero-token experts first, last, in the middle, and all but one.
TEST(GroupedEmpty, ZeroTokenGroupsKeepExpertsInPlace) {
  struct Case {
    const char* name;
    std::vector<std::int64_t> counts;
  };
  const Case cases[] = {{"first", {0, 3, 2}},
                        {"last", {3, 2, 0}},
                        {"middle", {2, 0, 0, 3}},
                        {"all_but_one", {0, 0, 5, 0, 0}},
                        {"all_but_first", {5, 0, 0, 0}},
                        {"all_but_last", {0, 0, 0, 5}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const GroupedGemmProblem p = expert_tagged(m_contiguous_layout_from_counts(c.counts, 5), 2);
    const GemmOutput out = exact_grouped_gemm(p, OutputFormat::kFp32);
    size_t row = 0;
    for (size_t e = 0; e < c.counts.size(); ++e) {
      for (std::int64_t i = 0; i < c.counts[e]; ++i, ++row) {
        EXPECT_EQ(out.fp32[row * 2], 4.0f * static_cast<float>(e + 1)) << "row " << row;
      }
    }
    EXPECT_EQ(row, 5u);
    EXPECT_TRUE(unwritten_rows(p).empty());
  }
}

// Guards against a per-row activation scale applied to the wrong row at a group of 1, exactly
// one 128-row tile, and 129 rows (a tile plus one): row i has scale 2^(i % 5), expert e 2^e.
TEST(GroupedSizes, OneRow128And129Rows) {
  const std::vector<std::int64_t> counts = {1, 128, 129};
  GroupedGemmProblem p = make_grouped_problem(m_contiguous_layout_from_counts(counts, 258), 0, 1,
                                              128, kDeepSeekBlocks, true);
  std::fill(p.a.begin(), p.a.end(), 1.0f);
  std::fill(p.b.begin(), p.b.end(), 1.0f);
  for (size_t i = 0; i < 258; ++i) p.a_scale[i] = std::ldexp(1.0f, static_cast<int>(i % 5));
  p.b_scale = {1.0f, 2.0f, 4.0f};
  const GemmOutput c = exact_grouped_gemm(p, OutputFormat::kFp32);
  for (size_t i = 0; i < 258; ++i) {
    const int e = i < 1 ? 0 : i < 129 ? 1 : 2;
    // 128 ones * 2^(i%5) * 2^e.
    EXPECT_EQ(c.fp32[i], std::ldexp(128.0f, static_cast<int>(i % 5) + e)) << "row " << i;
  }
  EXPECT_EQ(group_output_rows(p, 2), (GroupRange{129, 258}));
}

// Guards against the starts policy read as ends (or the reverse): both describe the same groups,
// and starts leave the rows before starts[0] in no group.
TEST(GroupedOffsets, StartsAndEndsDescribeTheSameGroups) {
  const std::vector<std::int64_t> ends = {16, 16, 48};
  const std::vector<std::int64_t> starts = {0, 16, 16};
  const std::vector<GroupRange> want = {{0, 16}, {16, 16}, {16, 48}};
  EXPECT_EQ(group_ranges_from_offsets(ends, OffsetsPolicy::kEnds, 64, 16), want);
  // starts: the last group runs to the total, 48 here.
  EXPECT_EQ(group_ranges_from_offsets(starts, OffsetsPolicy::kStarts, 48, 16), want);
  const std::vector<std::int64_t> late = {32, 40};  // rows [0, 32) in no group
  const GroupedGemmProblem p =
      expert_tagged(m_contiguous_layout(late, OffsetsPolicy::kStarts, 48), 1);
  const std::vector<size_t> head = unwritten_rows(p);
  ASSERT_EQ(head.size(), 32u);
  EXPECT_EQ(head.front(), 0u);
  EXPECT_EQ(head.back(), 31u);
}

// Guards against offsets accepted when they are not monotone, past the total, off the declared
// alignment (DeepGEMM#450's boundary off 128) or negative; each error names the entry.
TEST(GroupedOffsets, ValidationNamesTheBadEntry) {
  using V = std::vector<std::int64_t>;
  const auto ends = [](V v, size_t total, size_t align) {
    return error_of([&] { group_ranges_from_offsets(v, OffsetsPolicy::kEnds, total, align); });
  };
  EXPECT_EQ(ends({128, 64}, 256, 1),
            "offsets[1] = 64 is below offsets[0] = 128 (offsets must be non-decreasing)");
  EXPECT_EQ(ends({128, 384}, 256, 1), "offsets[1] = 384 exceeds the total 256");
  EXPECT_EQ(ends({128, 130}, 256, 128),
            "offsets[1] = 130 is not a multiple of the declared alignment 128");
  EXPECT_EQ(ends({32, 48}, 64, 32),
            "offsets[1] = 48 is not a multiple of the declared alignment 32");
  EXPECT_EQ(ends({-1}, 8, 1), "offsets[0] = -1 is negative");
  EXPECT_EQ(ends({}, 8, 1), "group offsets: no groups (the offsets array is empty)");
  EXPECT_EQ(ends({8}, 8, 0), "group offsets: the declared alignment is 0 (must be >= 1)");
  EXPECT_EQ(ends({16, 32}, 32, 16), "");  // aligned, monotone, at the total: accepted
  EXPECT_EQ(error_of([] {
              group_ranges_from_counts(V{4, 5}, 8, 1);
            }),
            "counts[1] = 5 brings the sum past the total 8");
  EXPECT_EQ(error_of([] {
              group_ranges_from_counts(V{16, 8}, 64, 16);
            }),
            "counts[1] = 8 is not a multiple of the declared alignment 16");
  EXPECT_EQ(error_of([] { masked_layout(V{2, 5}, 4); }), "masked_counts[1] = 5 exceeds max_m 4");
  EXPECT_EQ(error_of([] { masked_layout(V{2}, 0); }), "masked layout: max_m is 0");
}

// Guards against a problem whose buffers do not fit its layout being evaluated anyway.
TEST(GroupedOffsets, ProblemSizesAreChecked) {
  const std::vector<std::int64_t> ends = {2, 3};
  GroupedGemmProblem p =
      make_grouped_problem(m_contiguous_layout(ends, OffsetsPolicy::kEnds, 3), 0, 2, 4, {}, false);
  p.b.pop_back();
  EXPECT_EQ(error_of([&] { validate_grouped_problem(p); }),
            "grouped GEMM problem: B has 15 entries, expected E*N*K = 16");
  p.b.push_back(0);
  p.alpha = {1.0f};
  EXPECT_EQ(error_of([&] { validate_grouped_problem(p); }),
            "grouped GEMM problem: alpha has 1 entries, expected one per group (2) or none");
}

// Guards against a masked kernel writing rows at or past an expert's count (DeepGEMM#268): the
// oracle never reads them (NaN A stays out of valid rows), and a write into one is located.
TEST(GroupedMasked, PoisonSurvivesAndAWriteIsLocated) {
  const std::vector<std::int64_t> counts = {2, 0, 4};
  GroupedGemmProblem p = expert_tagged(masked_layout(counts, 4), 3);
  for (size_t i = 2 * 4; i < 4 * 4; ++i) p.a[i] = kNan;  // expert 0 rows 2, 3: masked
  const GemmOutput c = exact_grouped_gemm(p, OutputFormat::kFp32);
  EXPECT_EQ(c.fp32[0], 4.0f);       // expert 0 row 0: 4 * 1
  EXPECT_EQ(c.fp32[8 * 3], 12.0f);  // expert 2 row 0 (global row 8): 4 * 3
  // A kernel's buffer: poison everywhere, valid rows written with the oracle's values.
  const float poison = std::bit_cast<float>(0x7fc0dead);
  GemmOutput before = c;
  std::fill(before.fp32.begin(), before.fp32.end(), poison);
  GemmOutput after = before;
  for (size_t g = 0; g < 3; ++g) {
    const GroupRange r = group_output_rows(p, g);
    for (size_t i = r.begin * 3; i < r.end * 3; ++i) after.fp32[i] = c.fp32[i];
  }
  EXPECT_TRUE(compare_grouped(p, c, after).ok());
  const UnwrittenVerdict ok = check_unwritten_rows(p, before, after);
  EXPECT_TRUE(ok.ok()) << ok.summary();
  EXPECT_EQ(ok.rows_checked, 6u);  // expert 0 rows 2-3, expert 1 rows 0-3
  // Writing zero into expert 0's masked row 3 (global row 3), col 1.
  after.fp32[3 * 3 + 1] = 0.0f;
  const UnwrittenVerdict bad = check_unwritten_rows(p, before, after);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.changed, 1u);
  EXPECT_EQ(bad.first->group, 0u);
  EXPECT_EQ(bad.first->row, 3u);
  EXPECT_EQ(bad.first->global_row, 3u);
  EXPECT_EQ(bad.first->col, 1u);
  EXPECT_EQ(bad.first->before_bits, 0x7fc0deadu);
  EXPECT_NE(bad.summary().find("masked row 3 of group 0 (global row 3) col 1"), std::string::npos)
      << bad.summary();
  // A rewritten NaN of another payload is a write too (strict bits).
  after.fp32[3 * 3 + 1] = poison;
  after.fp32[4 * 3] = kNan;
  EXPECT_EQ(check_unwritten_rows(p, before, after).first->group, 1u);
}

// Guards against rows past the last offset being written (pytorch#154557: left uninitialised and
// read downstream must at least not be written by a kernel that claims not to).
TEST(GroupedContiguous, RowsPastTheLastOffsetAreUnwritten) {
  const std::vector<std::int64_t> ends = {3, 5};
  const GroupedGemmProblem p = expert_tagged(m_contiguous_layout(ends, OffsetsPolicy::kEnds, 8), 2);
  EXPECT_EQ(unwritten_rows(p), (std::vector<size_t>{5, 6, 7}));
  GemmOutput before = exact_grouped_gemm(p, OutputFormat::kBf16);
  for (size_t i = 5 * 2; i < 8 * 2; ++i) before.bf16[i] = 0x7fc1;
  GemmOutput after = before;
  after.bf16[7 * 2 + 1] = 0;
  const UnwrittenVerdict v = check_unwritten_rows(p, before, after);
  ASSERT_FALSE(v.ok());
  EXPECT_FALSE(v.first->group.has_value());
  EXPECT_EQ(v.first->global_row, 7u);
  EXPECT_EQ(v.first->col, 1u);
}

// Guards against a mismatch reported at a global row alone (or at the wrong group): the verdict
// locates it as (group, row within the group, col) and the message gives the global row too.
TEST(GroupedVerdict, WrongElementIsLocated) {
  const std::vector<std::int64_t> ends = {4, 4, 10, 12};
  const GroupedGemmProblem p = make_grouped_exact_operands(
      m_contiguous_layout(ends, OffsetsPolicy::kEnds, 12), 0, 3, 64, kMxfp8Blocks, true, 7);
  const GemmOutput c = exact_grouped_gemm(p, OutputFormat::kFp32);
  EXPECT_TRUE(compare_grouped(p, c, c).ok());
  GemmOutput wrong = c;
  // Group 2 is rows [4, 10): its row 5 is global row 9; col 1. One ulp up.
  wrong.fp32[9 * 3 + 1] = std::nextafter(c.fp32[9 * 3 + 1], HUGE_VALF);
  const GroupedBitExactVerdict v = compare_grouped(p, c, wrong);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.dense.mismatches, 1u);
  EXPECT_EQ(v.first->group, 2u);
  EXPECT_EQ(v.first->row, 5u);
  EXPECT_EQ(v.first->global_row, 9u);
  EXPECT_EQ(v.first->col, 1u);
  EXPECT_EQ(v.dense.first->row, 9u);
  EXPECT_EQ(v.dense.worst->ulp_distance, 1u);
  EXPECT_NE(v.summary().find("first at group 2 row 5 (global row 9) col 1"), std::string::npos)
      << v.summary();
}

// Guards against the grouped bound being wider or narrower than the dense one: the ordered
// emulation lies inside it, a value moved by far more than the bound is outside and located.
TEST(GroupedVerdict, BoundModeLocatesAViolation) {
  const std::vector<std::int64_t> counts = {3, 0, 5};
  GroupedGemmProblem p =
      make_grouped_problem(masked_layout(counts, 6), 0, 4, 256, kDeepSeekBlocks, true);
  for (size_t i = 0; i < p.a.size(); ++i) p.a[i] = static_cast<float>(i % 7) * 0.1f - 0.3f;
  for (size_t i = 0; i < p.b.size(); ++i) p.b[i] = static_cast<float>(i % 5) * 0.37f - 0.7f;
  for (size_t i = 0; i < p.a_scale.size(); ++i)
    p.a_scale[i] = 0.01f * static_cast<float>(1 + i % 3);
  const AccumModel model;  // fp32 RN, 128-blocks, vLLM's partial scaling
  const GroupedBounds b = compute_grouped_bounds(p, model);
  const GemmOutput ordered = ordered_grouped_gemm(p, OrderModel{});
  const GroupedBoundVerdict in = check_grouped_bound(b, ordered);
  EXPECT_TRUE(in.ok()) << in.summary();
  EXPECT_EQ(in.dense.rows, 8u);  // 3 + 0 + 5 valid rows
  GemmOutput moved = ordered;
  // Expert 2's row 4 is global row 2*6 + 4 = 16; col 3.
  const size_t at = 16 * 4 + 3;
  moved.fp32[at] += 1000.0f * static_cast<float>(b.dense.bound[at]) + 1.0f;
  const GroupedBoundVerdict out = check_grouped_bound(b, moved);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.dense.outside, 1u);
  EXPECT_EQ(out.worst->group, 2u);
  EXPECT_EQ(out.worst->row, 4u);
  EXPECT_EQ(out.worst->global_row, 16u);
  EXPECT_EQ(out.worst->col, 3u);
}

// Guards against exact-mode operands that are not exact mode per group (a kernel's correct order
// would then differ from the oracle) and rows in no group that are not poisoned.
TEST(GroupedOperands, ExactModePerGroupAndPoisonedGaps) {
  const std::vector<std::int64_t> ends = {0, 129, 130};
  const GroupedGemmProblem p = make_grouped_exact_operands(
      m_contiguous_layout(ends, OffsetsPolicy::kEnds, 131), 0, 5, 256, kDeepSeekBlocks, true, 3);
  for (size_t g = 0; g < 3; ++g) {
    const auto d = group_problem(p, g);
    if (!d) continue;
    std::string why;
    EXPECT_TRUE(is_exact_mode(*d, &why)) << "group " << g << ": " << why;
  }
  EXPECT_TRUE(std::isnan(p.a[130 * 256]));  // row 130, past the last offset
  // The ordered emulation equals the exact result bit for bit on exact-mode operands.
  const GemmOutput e = exact_grouped_gemm(p, OutputFormat::kFp32);
  EXPECT_TRUE(compare_grouped(p, e, ordered_grouped_gemm(p, OrderModel{})).ok());
}

}  // namespace
}  // namespace mxgate
