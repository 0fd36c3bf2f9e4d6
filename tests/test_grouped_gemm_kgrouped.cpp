// Covers the k-grouped built-in grouped GEMM grouped_gemm_blockscale_kgrouped (docs/grouped.md §6,
// §7: the MoE weight gradient, A M x K, B N x K, one M x N output per K group) by hand on the host
// model: its bytes on one- and two-group cases whose values are worked out beside the literals (an
// empty K group's slice written +0, each group's own scale grid), the grouped clause of the
// contract check (a K offset off 128, offsets that do not end at K, a stacked B: unsupported), and
// zoo fault Z59 (docs/bug_classes.md §2) launched by hand and found by grouped.empty_groups on
// its shrunk case. Does not cover: generated cases (tests/property_host.cpp runs the grouped
// properties, tests/property_zoo.cpp the zoo), device backends.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "dispatch/faults.h"
#include "properties/property.h"
#include "tests/grouped_launch.h"

namespace mxgate::test_support {
namespace {

// One k-grouped call: A m x K and B n x K codes, per group its fp32 scale grids concatenated in
// group order (A m x K_e/128, B ceil(n/128) x K_e/128), the cumulative K ends. The fp32 words of
// the (E * m) x n output; the poison 0xFFFFFFFF where nothing was written.
struct KCall {
  std::vector<uint8_t> a, b;
  std::vector<float> as, bs;
  std::vector<uint32_t> ends;
  uint64_t m = 1, n = 1, b_rows = 0, k = 0;  // b_rows: 0 = n; k: 0 = the last end
  uint64_t faults = 0;
};

std::vector<uint32_t> run_k(const KCall& g) {
  static gpu::HostBackend be;
  const impl::Op& op = *impl::builtin().find_op("grouped_gemm_blockscale_kgrouped");
  impl::Invocation inv(op, impl::RunContext{be, g.faults});
  using impl::Call;
  using impl::Dtype;
  using impl::Layout;
  const uint64_t e = g.ends.size(), k = g.k == 0 ? g.ends.back() : g.k, kb = (k + 127) / 128;
  const uint64_t b_rows = g.b_rows == 0 ? g.n : g.b_rows;
  std::vector<uint8_t> as(g.as.size() * 4), bs(g.bs.size() * 4), offs(e * 4);
  std::memcpy(as.data(), g.as.data(), as.size());
  std::memcpy(bs.data(), g.bs.data(), bs.size());
  std::memcpy(offs.data(), g.ends.data(), offs.size());  // little-endian int32
  inv.input(&Call::a, g.a, g.m, k, k, Dtype::kE4m3fn, Layout::kRowMajor);
  inv.input(&Call::b, g.b, b_rows, k, k, Dtype::kE4m3fn, Layout::kRowMajor);
  inv.input(&Call::a_scale, as, g.m, kb, kb, Dtype::kF32, Layout::kRowMajor);
  inv.input(&Call::b_scale, bs, (g.n + 127) / 128, kb, kb, Dtype::kF32, Layout::kRowMajor);
  inv.input(&Call::group_offsets, offs, 1, e, e, Dtype::kNone, Layout::kRowMajor);
  inv.output(&Call::out, e * g.m * g.n * 4, e * g.m, g.n, g.n, Dtype::kF32, Layout::kRowMajor);
  Call call;
  call.m = g.m;
  call.n = g.n;
  call.k = k;
  call.offsets = g.ends;
  const std::vector<uint8_t> raw = inv.run_and_read(call, &Call::out);
  std::vector<uint32_t> out(e * g.m * g.n);
  std::memcpy(out.data(), raw.data(), out.size() * 4);
  return out;
}

// M = N = 1: group 0 one K block of 128 (A codes 1, B codes 2, scales 2^0), group 1 empty.
KCall one_block_then_empty() {
  KCall g;
  g.a.assign(128, kOne);
  g.b.assign(128, kTwo);
  g.as = {1.0f};
  g.bs = {1.0f};
  g.ends = {128, 128};
  return g;
}

// Guards against a k-grouped GEMM that leaves an empty K group's slice unwritten (torch's and
// DeepGEMM's wgrad write it: its gradient is zero) or sums the wrong K range for a group.
TEST(KGroupedGemm, OneBlockThenEmptyGroupWritesPlusZero) {
  // slice 0: 128 products 1 x 2, scales 1 x 1: 256.0 = 0x43800000; slice 1: the sum of no
  // terms, +0 = 0x00000000 (written, not the poison).
  EXPECT_EQ(run_k(one_block_then_empty()), (std::vector<uint32_t>{0x43800000u, 0x00000000u}));
}

// Guards against a group that reads another group's K columns or scale grid.
TEST(KGroupedGemm, TwoGroupsEachItsKRangeAndScaleGrid) {
  KCall g;
  g.a.assign(256, kOne);
  g.b.assign(128, kOne);              // group 0's K columns: 1
  g.b.insert(g.b.end(), 128, kHalf);  // group 1's: 0.5
  g.as = {1.0f, 4.0f};                // group 0's A grid (1 x 1), then group 1's
  g.bs = {1.0f, 1.0f};
  g.ends = {128, 256};
  // slice 0: 128 x (1 x 1) x 1 x 1 = 128.0 = 0x43000000; slice 1: 128 x (1 x 0.5) = 64, x 4
  // x 1 = 256.0 = 0x43800000.
  EXPECT_EQ(run_k(g), (std::vector<uint32_t>{0x43000000u, 0x43800000u}));
}

// Guards against an empty first group read as the next group's first K block.
TEST(KGroupedGemm, EmptyFirstGroupWritesPlusZero) {
  KCall g = one_block_then_empty();
  g.ends = {0, 128};
  // slice 0: +0 = 0x00000000; slice 1: 256.0 = 0x43800000.
  EXPECT_EQ(run_k(g), (std::vector<uint32_t>{0x00000000u, 0x43800000u}));
}

// The message of the Unsupported a call outside the contract raises ("" when it ran).
std::string refusal(const KCall& g) {
  try {
    (void)run_k(g);
  } catch (const impl::Unsupported& e) {
    return e.what();
  }
  return "";
}

// Guards against K offsets off the declared 128 (DeepGEMM's k-grouped wgrad requires each group's
// K to be a multiple of 128), offsets short of K, or a stacked B reaching the kernel.
TEST(KGroupedGemm, OutsideTheContractIsUnsupported) {
  KCall off = one_block_then_empty();
  off.ends = {64, 128};
  EXPECT_NE(refusal(off).find("group offset 0 = 64 is not a multiple of the offset alignment 128"),
            std::string::npos)
      << refusal(off);
  KCall down = one_block_then_empty();
  down.ends = {128, 0};
  down.k = 128;
  EXPECT_NE(refusal(down).find("nondecreasing and at most K = 128 (offset 1 = 0)"),
            std::string::npos)
      << refusal(down);
  KCall short_of_k = one_block_then_empty();
  short_of_k.k = 256;  // K columns 128-255 in no group
  EXPECT_NE(refusal(short_of_k).find("k-grouped offsets must end at K = 256 (offset 1 = 128)"),
            std::string::npos)
      << refusal(short_of_k);
  KCall stacked = one_block_then_empty();
  stacked.b.insert(stacked.b.end(), 128, kTwo);  // E * N rows, as an m-grouped B
  stacked.b_rows = 2;
  EXPECT_NE(refusal(stacked).find("k-grouped b must be N x K: 1 rows, got 2"), std::string::npos)
      << refusal(stacked);
}

// Guards against Z59 going unplanted: the empty group after group 0 must store group 0's
// accumulator (NVIDIA/cutlass#2674), an empty first group still +0 (no accumulator before it).
TEST(KGroupedGemm, Z59EmptyGroupStoresPreviousAccumulator) {
  KCall g = one_block_then_empty();
  g.faults = dispatch::kernel_fault_bits({dispatch::Fault::kZ59KEmptyStaleAccumulator});
  // slice 1: group 0's 256.0 = 0x43800000 instead of +0.
  EXPECT_EQ(run_k(g), (std::vector<uint32_t>{0x43800000u, 0x43800000u}));
  g.ends = {0, 128};
  EXPECT_EQ(run_k(g), (std::vector<uint32_t>{0x00000000u, 0x43800000u}));
}

// Guards against grouped.empty_groups missing Z59 on its shrunk case (docs/bug_classes.md §8): the
// case passes clean and fails with the fault, located at the empty group's row.
TEST(KGroupedGemm, EmptyGroupsPropertyCatchesZ59) {
  gpu::HostBackend be;
  const properties::Property& p = *properties::find_property("grouped.empty_groups");
  const properties::Case c = properties::Case::parse(
      "grouped.empty_groups",
      "op=grouped_gemm_blockscale_kgrouped dist=zero_last sizes=128,0 m=1 n=1 out=fp32 seed=0");
  EXPECT_FALSE(properties::check_case(p, properties::Context{&be, {}, nullptr}, c).has_value());
  const auto f = properties::check_case(
      p, properties::Context{&be, {dispatch::Fault::kZ59KEmptyStaleAccumulator}, nullptr}, c);
  ASSERT_TRUE(f.has_value()) << "Z59 passed grouped.empty_groups";
  ASSERT_TRUE(f->where.has_value());
  EXPECT_EQ(f->where->row, 1u);  // group 1 row 0: the empty group's slice
  EXPECT_EQ(f->where->expected_bits, 0x00000000u);
  EXPECT_NE(f->what.find("first at group 1 row 0 (global row 1) col 0"), std::string::npos)
      << f->what;
  EXPECT_NE(f->what.find("(an empty K group: +0 due)"), std::string::npos) << f->what;
}

}  // namespace
}  // namespace mxgate::test_support
