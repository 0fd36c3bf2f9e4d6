// The property suites on the host backend (the contract-faithful CPU models of every kernel):
// ctest label `property`, one ctest entry per property (tests/property_suite.h), plus the
// coverage of the input space: one run of every property must exercise every required class,
// every branch of the decision model included.
// Does not cover: device backends (test_gpu_device), the zoo (property_zoo.cpp).
#include <algorithm>
#include <memory>
#include <string>

#include "dispatch/operand_layouts.h"
#include "gpu/host/host_backend.h"
#include "model/branches.h"
#include "properties/props.h"
#include "tests/property_suite.h"

namespace mxgate::gpu {
std::unique_ptr<Backend> make_backend_under_test() { return std::make_unique<HostBackend>(); }
}  // namespace mxgate::gpu

namespace mxgate::properties {
namespace {

// A class no generated case reaches (a residue, an e8m0 end code, a layout, a kernel) is a hole
// the suite cannot see bugs through: the default run must reach every required class.
TEST(PropertyCoverage, EveryRequiredClassIsExercised) {
  gpu::HostBackend be;
  Coverage coverage;
  const Context ctx{&be, {}, &coverage};
  RunOptions opts;
  opts.seed = suite::suite_seed();
  opts.cases = cases_from_rc_params(100);
  for (const Property& p : all_properties()) {
    EXPECT_TRUE(run_property(p, ctx, opts).passed) << p.name;
  }
  std::string distribution;
  for (const auto& [tag, n] : coverage.counts())
    distribution += tag + ":" + std::to_string(n) + " ";
  std::printf("coverage: %s\n", distribution.c_str());
  std::string holes;
  for (const std::string& t : missing(coverage)) holes += t + " ";
  EXPECT_TRUE(holes.empty()) << "never exercised: " << holes;
}

// A decision-model branch missing from the required classes could go unreached without the
// coverage check noticing (docs/dispatch_model.md §8).
TEST(PropertyCoverage, EveryDecisionModelBranchIsRequired) {
  const auto required = required_coverage();
  for (model::Branch b : model::all_branches()) {
    const std::string tag = "model:" + std::string(model::name(b));
    EXPECT_EQ(std::count(required.begin(), required.end(), tag), 1) << tag;
  }
}

// K residues come from the contracts: a residue a kernel's alignment forbids would make every
// such case a contract error; a missing one leaves a boundary (K % 128 == 32, K % 32 != 0)
// untested.
TEST(PropertyGenerators, KResiduesFollowTheContracts) {
  EXPECT_EQ(k_residues(32), (std::vector<std::size_t>{32, 64, 96, 0}));
  EXPECT_EQ(k_residues(128), (std::vector<std::size_t>{0}));
  const std::vector<std::size_t> any = k_residues(1);
  for (std::size_t r : {32, 64, 96, 0, 31, 33, 127, 1}) {
    EXPECT_EQ(std::count(any.begin(), any.end(), r), 1) << r;
  }
  for (gpu::Kernel k : gpu::all_kernels()) {
    const std::size_t align = k->contract.k.align;
    for (std::size_t r : k_residues(align)) {
      EXPECT_EQ(r % align, 0u) << gpu::kernel_name(k) << " residue " << r;
    }
  }
}

// The check above must be able to fail: a run that saw one class reports all the others.
TEST(PropertyCoverage, MissingListsUnexercisedClasses) {
  Coverage c;
  c.add("e8m0:0x00");
  const std::vector<std::string> m = missing(c);
  EXPECT_EQ(m.size(), required_coverage().size() - 1);
  EXPECT_EQ(std::count(m.begin(), m.end(), "e8m0:0x00"), 0);
  EXPECT_EQ(std::count(m.begin(), m.end(), "e8m0:0xFF"), 1);
}

}  // namespace
}  // namespace mxgate::properties
