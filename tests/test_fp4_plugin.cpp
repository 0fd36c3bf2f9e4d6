// Covers the FP4 additions of the C ABI (include/mxgate/plugin.h, docs/fp4.md §12.1) end to end
// on test plugins: tests/plugins/fp4_ops.c (packed E2M1 dequantizers, MXFP4 through the
// dequantize family, NVFP4 through dequantize_nvfp4 with an F32 / BF16 global scale) loads with
// its contracts as written, passes dequantize_fp4.bit_exact, and its planted nibble swap is
// found with a located element; tests/plugins/bad_nvfp4.c (an NVFP4 op with e8m0 scales) is
// refused naming the field. Does not cover: FP4 quantizer and GEMM plugins (the built-in ops run
// those properties: property_host.cpp), device plugins.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu/host/host_backend.h"
#include "impl/plugin.h"
#include "impl/registry.h"
#include "properties/property.h"

namespace mxgate::impl {
namespace {

std::string test_plugin(const std::string& name) {
  return std::string(MXGATE_TEST_PLUGIN_DIR) + "/lib" + name + ".so";
}

// Guards against misreading the appended contract field (global_dtypes) or the new dtype and
// family values: every property would then test the wrong thing or nothing.
TEST(Fp4Plugin, LoadsWithTheFp4Contracts) {
  const std::vector<const Implementation*> impls = resolve(test_plugin("fp4_ops") + ":fp4_ops");
  ASSERT_EQ(impls.size(), 1u);
  const Op* nv = impls.front()->find_op("dequantize_nvfp4");
  ASSERT_NE(nv, nullptr);
  EXPECT_EQ(nv->family, Family::kDequantizeNvfp4);
  EXPECT_EQ(nv->contract.a_dtypes, dtype_bit(Dtype::kE2m1));
  EXPECT_EQ(nv->contract.scale_dtype, Dtype::kE4m3fn);
  EXPECT_EQ(nv->contract.a_block_cols, 16u);
  EXPECT_EQ(nv->contract.global_dtypes, dtype_bit(Dtype::kF32) | dtype_bit(Dtype::kBf16));
  const Op* mx = impls.front()->find_op("dequantize_mxfp4");
  ASSERT_NE(mx, nullptr);
  EXPECT_EQ(mx->family, Family::kDequantize);
  EXPECT_EQ(mx->contract.global_dtypes, 0u);
}

// Guards against an NVFP4 contract with the wrong block-scale dtype being accepted (the
// properties would build e8m0 scales for an op that reads E4M3).
TEST(Fp4Plugin, NvFp4OpWithE8m0ScalesIsRefused) {
  try {
    (void)resolve(test_plugin("bad_nvfp4"));
    ADD_FAILURE() << "bad_nvfp4 loaded";
  } catch (const PluginError& e) {
    EXPECT_EQ(e.kind(), PluginError::Kind::kInput);
    const std::string what = e.what();
    EXPECT_NE(what.find("bad_nvfp4/gemm_nvfp4_e8m0"), std::string::npos) << what;
    EXPECT_NE(what.find("scale_dtype must be E4M3FN"), std::string::npos) << what;
  }
}

// Guards against the FP4 property not reaching plugin ops (the globals, the packed input, both
// families): the correct plugin passes every case with no unsupported one, on both ops.
TEST(Fp4Plugin, CorrectDequantizersPass) {
  gpu::HostBackend be;
  const Implementation& im = *resolve(test_plugin("fp4_ops") + ":fp4_ops").front();
  properties::Coverage cov;
  properties::RunOptions opts;
  opts.cases = 100;
  const properties::RunResult r =
      properties::run_property(*properties::find_property("dequantize_fp4.bit_exact"),
                               properties::Context{&be, {}, &cov, &im}, opts);
  EXPECT_TRUE(r.passed) << (r.failure ? r.failure->what : r.message);
  EXPECT_EQ(r.cases, 100);
  EXPECT_EQ(r.unsupported, 0);
  EXPECT_GT(cov.count("op:dequantize_mxfp4"), 0u);
  EXPECT_GT(cov.count("op:dequantize_nvfp4"), 0u);
  EXPECT_GT(cov.count("e4m3_scale:subnormal"), 0u);
}

// Guards against the property missing a swapped nibble order in someone else's kernel: it fails,
// shrinks, and locates the first wrong element.
TEST(Fp4Plugin, SwappedNibblesAreFoundAndLocated) {
  gpu::HostBackend be;
  const Implementation& im = *resolve(test_plugin("fp4_ops") + ":fp4_ops_faulty_nibble").front();
  properties::RunOptions opts;
  opts.cases = 100;
  const properties::RunResult r =
      properties::run_property(*properties::find_property("dequantize_fp4.bit_exact"),
                               properties::Context{&be, {}, nullptr, &im}, opts);
  ASSERT_FALSE(r.passed);
  ASSERT_TRUE(r.counterexample.has_value());
  ASSERT_TRUE(r.failure.has_value() && r.failure->where.has_value()) << r.failure->what;
  EXPECT_LE(r.counterexample->num("rows"), 2u) << r.counterexample->describe();
  EXPECT_LE(r.counterexample->num("cols"), 33u) << r.counterexample->describe();
}

}  // namespace
}  // namespace mxgate::impl
