// The property suites on the host backend (the contract-faithful CPU models of every kernel):
// ctest label `property`, one ctest entry per property (tests/property_suite.h), plus the
// coverage of the input space: one run of every property must exercise every required class.
// Does not cover: device backends (test_gpu_device), the zoo (property_zoo.cpp).
#include <memory>
#include <string>

#include "gpu/host/host_backend.h"
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
