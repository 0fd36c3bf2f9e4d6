// Covers the contract clause packed_scales (plugin.h MXGATE_CONTRACT_PACKED_SCALES): an op that
// reads its scale grids only at the ld their alignment gives (cuBLASLt takes no scale stride).
// The contract check puts a wider ld outside the contract, a vector's stride included; the
// scaled GEMM, dequantize and FP4 generators never draw a scale view (field scale_ld) for such an
// op and still draw them for the same op without the clause.
// Does not cover: unknown flag bits at load (test_plugins.cpp), the cuBLASLt plugin's own check
// of what it is handed (it needs the GPU), Python ops declaring the clause
// (python/tests/test_packed_scales.py).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <string>

#include "contract/contract.h"
#include "gpu/host/host_backend.h"
#include "impl/builtin.h"
#include "properties/property.h"

namespace mxgate {
namespace {

impl::Call gemm_call(uint64_t scale_ld) {
  impl::Call call;
  call.m = 4;
  call.n = 8;
  call.k = 256;
  call.a = {1, 4 * 256, 4, 256, 256, impl::Dtype::kE4m3fn, impl::Layout::kRowMajor};
  call.b = {2, 8 * 256, 8, 256, 256, impl::Dtype::kE4m3fn, impl::Layout::kRowMajor};
  // 4 rows x 8 scales, row-major, at `scale_ld`.
  call.a_scale = {3, 3 * scale_ld + 8, 4, 8, scale_ld, impl::Dtype::kE8m0, impl::Layout::kRowMajor};
  call.b_scale = {4, 7 * 8 + 8, 8, 8, 8, impl::Dtype::kE8m0, impl::Layout::kRowMajor};
  call.out = {5, 4 * 8 * 4, 4, 8, 8, impl::Dtype::kF32, impl::Layout::kRowMajor};
  return call;
}

impl::Contract mx_contract(bool packed) {
  impl::Contract c = impl::builtin().find_op("gemm_mx_dequant")->contract;
  c.packed_scales = packed;
  return c;
}

// A padded scale row handed to an op that cannot take a stride would be read as the next row:
// the call must be outside such a contract, and inside the same contract without the clause.
TEST(PackedScales, WiderLdIsOutsideThePackedContract) {
  const auto why = impl::check_call("op", mx_contract(true), gemm_call(9));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("a_scale leading dimension 9"), std::string::npos) << *why;
  EXPECT_NE(why->find("packed scale grids only (ld 8)"), std::string::npos) << *why;
  EXPECT_FALSE(impl::check_call("op", mx_contract(false), gemm_call(9)).has_value());
  EXPECT_FALSE(impl::check_call("op", mx_contract(true), gemm_call(8)).has_value());
  EXPECT_FALSE(impl::check_call("op", mx_contract(true), gemm_call(0)).has_value());
}

// A rows x 1 row-major vector with ld 2 puts poison between its scales (the cuBLASLt rowwise
// NaN of 2026-12-03): a vector's stride counts; a single line's ld does not.
TEST(PackedScales, AVectorsStrideCounts) {
  impl::Contract c = mx_contract(true);
  c.a_scale_layouts = impl::layout_bit(impl::Layout::kRowMajor);
  impl::Call call = gemm_call(8);
  call.a_scale = {3, 16, 4, 1, 2, impl::Dtype::kE8m0, impl::Layout::kRowMajor};
  ASSERT_TRUE(impl::check_call("op", c, call).has_value());
  call.a_scale.ld = 1;
  EXPECT_FALSE(impl::check_call("op", c, call).has_value());
  call.a_scale = {3, 16, 1, 8, 12, impl::Dtype::kE8m0, impl::Layout::kRowMajor};  // one line
  EXPECT_FALSE(impl::check_call("op", c, call).has_value());
}

// Whether `property`'s generator draws a scale view for `op` in 200 draws.
bool draws_views(const char* property, const impl::Op& op) {
  gpu::HostBackend be;
  const properties::Context ctx{&be, {}, nullptr};
  const properties::Property& p = *properties::find_property(property);
  const auto gen = p.gen(ctx, {&op});
  for (int i = 0; i < 200; ++i) {
    if (gen(rc::Random(static_cast<uint64_t>(i) + 1), 50).value().has("scale_ld")) return true;
  }
  return false;
}

// A generator that drew views for a packed-only op would report the op's refusal as a contract
// mismatch (what the first H200 run of the cuBLASLt tactics showed); the same op without the
// clause must still get views, or the clause would hide a generator that never draws them.
TEST(PackedScales, GeneratorsDrawNoViewsForAPackedOp) {
  for (const auto& [property, name] :
       {std::pair<const char*, const char*>{"gemm.exact", "gemm_mx_dequant"},
        {"dequantize.bit_exact", "dequant_mx_to_bf16"},
        {"dequantize_fp4.bit_exact", "dequant_mxfp4"}}) {
    const impl::Op* found = impl::builtin().find_op(name);
    ASSERT_NE(found, nullptr) << name;
    impl::Op op = *found;
    op.contract.packed_scales = false;
    EXPECT_TRUE(draws_views(property, op)) << property << " on " << name;
    op.contract.packed_scales = true;
    EXPECT_FALSE(draws_views(property, op)) << property << " on " << name;
  }
}

}  // namespace
}  // namespace mxgate
