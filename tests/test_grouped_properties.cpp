// Covers the grouped-GEMM properties that hold a call to the reference's grouped oracle and the
// sharded calls (docs/grouped.md §8): grouped.ordered_bound, grouped.tp_split (split=n and
// split=k), grouped.ep_split, and grouped.exact through exact_grouped_gemm / compare_grouped and
// check_unwritten_rows. Each passes with the faithful host kernels over 100 generated cases, and
// fails on a hand-made case with a planted zoo fault (Z54: a 128-row tile takes the expert of its
// first row; Z56: masked rows past the count written; Z58: the last K tile reads the next
// expert's B scales) with the element located as (group, row, col). Does not cover: the other
// grouped properties (test_plant_audit.cpp, property_zoo.cpp), the coverage of the generators
// (property_host.cpp), device backends.
#include <gtest/gtest.h>

#include <string>

#include "dispatch/faults.h"
#include "gpu/host/host_backend.h"
#include "properties/case.h"
#include "properties/property.h"

namespace mxgate::properties {
namespace {

gpu::HostBackend& backend() {
  static gpu::HostBackend be;
  return be;
}

Context context(const char* faults = "") {
  Context ctx{&backend(), {}, nullptr, nullptr};
  if (*faults != '\0') ctx.faults = dispatch::parse_faults(faults);
  return ctx;
}

std::optional<Failure> check(const char* property, const std::string& text,
                             const char* faults = "") {
  const Property* p = find_property(property);
  EXPECT_NE(p, nullptr) << property;
  return check_case(*p, context(faults), Case::parse(property, text));
}

// Holds `property` to case `c`: clean it passes; with `fault` planted it fails at (row, col) with
// `text` in its message. Returns the failure for further assertions (nullopt after a miss).
std::optional<Failure> caught_at(const char* property, const std::string& c, const char* fault,
                                 uint64_t row, uint64_t col, const std::string& text) {
  EXPECT_FALSE(check(property, c).has_value()) << property << " fails the clean case " << c;
  std::optional<Failure> f = check(property, c, fault);
  EXPECT_TRUE(f.has_value() && f->where.has_value()) << property << " missed " << fault;
  if (!f.has_value() || !f->where.has_value()) return std::nullopt;
  EXPECT_EQ(f->where->row, row);
  EXPECT_EQ(f->where->col, col);
  EXPECT_NE(f->what.find(text), std::string::npos) << f->what;
  return f;
}

// Two experts of one row each, ends {1, 2}: the boundary at row 1 lies inside the first 128-row
// tile, so under Z54 row 1 (group 1 row 0) is multiplied by expert 0's weights.
constexpr const char* kTwoRows =
    "op=grouped_gemm_blockscale_contiguous dist=random sizes=1,1 tail=0 out=fp32 "
    "layout=row_major seed=0";

// Guards against a new property that fails a faithful kernel (a property that cannot pass): each
// passes 100 generated cases of seed 1 on the built-in grouped kernels, every case supported.
TEST(GroupedProperties, FaithfulKernelsPassTheNewProperties) {
  for (const char* name : {"grouped.ordered_bound", "grouped.tp_split", "grouped.ep_split"}) {
    RunOptions opts;
    opts.cases = 100;
    const RunResult r = run_property(*find_property(name), context(), opts);
    EXPECT_TRUE(r.passed) << name << ": " << r.message;
    EXPECT_EQ(r.cases, 100) << name;
    EXPECT_EQ(r.unsupported, 0) << name;
  }
}

// Guards against grouped.exact losing the (group, row, col) location when it moved to
// exact_grouped_gemm / compare_grouped: Z54's wrong row is group 1 row 0, global row 1, col 0.
TEST(GroupedProperties, ExactLocatesTheWrongExpertsRow) {
  const std::string c = std::string(kTwoRows) + " n=1 k=32";
  caught_at("grouped.exact", c, "z54_tile_expert_from_first_row", 1, 0,
            "first at group 1 row 0 (global row 1) col 0");
}

// Guards against a written row no group owns passing grouped.exact now that check_unwritten_rows
// judges it: under Z56 the masked row 3 of expert 0 (count 3, max_m 4) is written.
TEST(GroupedProperties, ExactLocatesAMaskedRowPastTheCount) {
  const std::string c =
      "op=grouped_gemm_blockscale_masked dist=random sizes=3 max_m=4 n=1 k=32 out=fp32 "
      "layout=row_major seed=0";
  const std::optional<Failure> f = caught_at("grouped.exact", c, "z56_masked_rows_past_count", 3, 0,
                                             "masked row 3 of group 0 (global row 3) col 0");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->where->expected_bits, 0xFFFFFFFFu);  // the poison, every byte 0xFF
}

// Guards against grouped.ordered_bound missing a row computed with another expert's weights on
// general data: Z54's row is outside the fp32_rn bound at group 1 row 0 (global row 1) col 0.
TEST(GroupedProperties, OrderedBoundLocatesTheRowOutsideTheBound) {
  const std::string c = std::string(kTwoRows) + " n=1 k=32";
  const std::optional<Failure> f =
      caught_at("grouped.ordered_bound", c, "z54_tile_expert_from_first_row", 1, 0,
                "worst at group 1 row 0 (global row 1) col 0");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->what.find("outside the error bound of accumulator fp32_rn"), std::string::npos);
}

// Guards against a column-sharded (w13) grouped call judged without its unsharded call being
// right: N = 2 in two shards of one column; under Z54 the unsharded call's group 1 row 0 is wrong.
TEST(GroupedProperties, TpColumnSplitLocatesTheWrongRow) {
  const std::string c = std::string(kTwoRows) + " n=2 k=32 split=n tp=2";
  const std::optional<Failure> f =
      caught_at("grouped.tp_split", c, "z54_tile_expert_from_first_row", 1, 0,
                "first at group 1 row 0 (global row 1) col 0");
  ASSERT_TRUE(f.has_value());
  // General data (the op declares its order): the unsharded call is held to its declared order.
  EXPECT_NE(f->what.find("the unsharded call vs ordered_grouped_gemm (declared order)"),
            std::string::npos);
}

// Guards against the row-parallel (w2) shards: K = 160 cut at 128 (the FP8 block's scale block),
// the two fp32 partials summed; clean they equal exact_grouped_gemm, under Z54 group 1 row 0 not.
TEST(GroupedProperties, TpKSplitLocatesTheWrongRow) {
  const std::string c = std::string(kTwoRows) + " n=1 k=160 split=k tp=2 shard_k=128";
  caught_at("grouped.tp_split", c, "z54_tile_expert_from_first_row", 1, 0,
            "group 1 row 0 (global row 1) col 0");
}

// Guards against column shards and EP ranks blind to a fault exact-mode data hides: Z58 (the last
// K tile reads the next expert's B scales) on the MX kernel, two groups of 32 rows, K = 160. On
// general data the unsharded call's first wrong element is group 0 row 0 col 0 in both.
TEST(GroupedProperties, ColumnAndEpSplitsCatchTheNextExpertsTailScales) {
  const std::string c =
      "op=grouped_gemm_mx_contiguous dist=random sizes=32,32 n=2 k=160 out=fp32 layout=row_major "
      "seed=0";
  for (const std::string& split : {c + " split=n tp=2", c + " ranks=2"}) {
    const char* property =
        split.find("ranks") != std::string::npos ? "grouped.ep_split" : "grouped.tp_split";
    SCOPED_TRACE(property);
    caught_at(property, split, "z58_next_expert_tail_scales", 0, 0,
              "first at group 0 row 0 (global row 0) col 0");
  }
}

// Guards against a K shard off the scheme's scale blocks being taken for a case: shard_k = 96
// cuts a 128 block of the FP8 block scheme, a malformed case (CaseError), never a verdict.
TEST(GroupedProperties, TpKSplitOffTheScaleBlockIsAMalformedCase) {
  const std::string c = std::string(kTwoRows) + " n=1 k=160 split=k tp=2 shard_k=96";
  EXPECT_THROW(check("grouped.tp_split", c), CaseError);
}

// Guards against expert-parallel ranks judged without the unsharded call: two ranks of one expert
// each; clean the rows recombine to the unsharded call, under Z54 group 1 row 0 is wrong.
TEST(GroupedProperties, EpSplitLocatesTheWrongRow) {
  const std::string c = std::string(kTwoRows) + " n=1 k=32 ranks=2";
  caught_at("grouped.ep_split", c, "z54_tile_expert_from_first_row", 1, 0,
            "first at group 1 row 0 (global row 1) col 0");
}

}  // namespace
}  // namespace mxgate::properties
