// Covers the descriptors of both shipped NVIDIA plugins (plugins/cuda_fp8, plugins/cublaslt; in
// test_gpu_plugins, cuda preset), loaded through dlopen and read through the plugin C ABI only
// (include/mxgate/plugin.h): ABI version, op names, families, memory, contracts, claims. Runs
// without a GPU. Not covered: the mxgate loader and property runner over these ops.
#include <cstdio>
#include <regex>
#include <set>
#include <string>

#include "tests/gpu_plugins_support.h"

namespace mxgate {
namespace {

using namespace plugin_test;

// ---- Descriptors (no GPU needed) ---------------------------------------------------------------

// Both libraries load through dlopen and describe themselves validly: ABI version, unique op
// names, the family and memory of each op, contract struct sizes, an accumulator model on every
// GEMM and a resolvable claim on every cast (a typo in a claim would silently test nothing).
TEST(PluginDescriptors, LoadAndValidate) {
  const std::regex op_name("[a-z0-9_.]+");
  for (const char* name : {"cuda_fp8", "cublaslt"}) {
    Loaded& l = load(name);
    ASSERT_EQ(l.error, "") << l.path;
    const mxgate_plugin& p = *l.plugin;
    EXPECT_EQ(p.abi_version, MXGATE_PLUGIN_ABI_VERSION) << name;
    EXPECT_EQ(p.struct_size, sizeof(mxgate_plugin)) << name;
    EXPECT_STREQ(p.name, name);
    ASSERT_EQ(p.impl_count, 1u) << name;
    EXPECT_STREQ(p.impls[0].name, name);
    std::set<std::string> seen;
    for (const mxgate_op* op : ops_of(&p)) {
      EXPECT_TRUE(std::regex_match(op->name, op_name)) << op->name;
      EXPECT_TRUE(seen.insert(op->name).second) << "duplicate op " << op->name;
      EXPECT_EQ(op->memory, MXGATE_MEMORY_CUDA) << op->name;
      EXPECT_EQ(op->contract.struct_size, sizeof(mxgate_contract)) << op->name;
      EXPECT_NE(op->run, nullptr) << op->name;
      if (std::string(name) == "cuda_fp8") {
        EXPECT_EQ(op->family, MXGATE_OP_CAST) << op->name;
        ASSERT_NE(op->contract.convention, nullptr) << op->name;
        std::string why;
        EXPECT_TRUE(sweep::expected_runs(op->contract.convention, cast_target(*op), &why))
            << op->name << ": " << why;
      } else {
        EXPECT_EQ(op->family, MXGATE_OP_GEMM_BLOCK) << op->name;
        ASSERT_NE(op->contract.accumulator, nullptr) << op->name;
        EXPECT_STREQ(op->contract.accumulator, "sm90_fp8_mma") << op->name;
        EXPECT_EQ(op->contract.scale_dtype, MXGATE_DTYPE_F32) << op->name;
        EXPECT_EQ(op->contract.k_align % 16, 0u) << op->name;
      }
      std::printf(
          "OP %-9s %-24s align m%llu n%llu k%llu  blocks A %ux%u B %ux%u  scale "
          "layouts A 0x%x B 0x%x ld %u/%u  claim %s  acc %s\n",
          name, op->name, static_cast<unsigned long long>(op->contract.m_align),
          static_cast<unsigned long long>(op->contract.n_align),
          static_cast<unsigned long long>(op->contract.k_align), op->contract.a_block_rows,
          op->contract.a_block_cols, op->contract.b_block_rows, op->contract.b_block_cols,
          op->contract.a_scale_layouts, op->contract.b_scale_layouts, op->contract.a_scale_ld_align,
          op->contract.b_scale_ld_align, op->contract.convention ? op->contract.convention : "-",
          op->contract.accumulator ? op->contract.accumulator : "-");
    }
    EXPECT_EQ(seen.size(), std::string(name) == "cuda_fp8" ? 8u : 24u) << name;
  }
}

}  // namespace
}  // namespace mxgate
