// Proof on the bug zoo (docs/bug_classes.md §2 Z1-Z59, dispatch/faults.h), on the host backend:
// with each fault planted, the property docs/bug_classes.md names must fail on its own (no
// hand-built input), within a median of 20 cases over 20 seeds, and shrink to the minimal
// counterexample of docs/bug_classes.md or a smaller one. Also: the same property passes with no
// fault (the fault, not the property, makes the difference), and the zoo table matches
// docs/bug_classes.md §2; a device-only class (Z29) is reported not applicable on the host, never
// detected or passed. Does not cover: detection by properties other than the named one (`mxgate
// zoo` reports them), GPU backends (label gpu runs the suites, not the zoo).
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <set>
#include <string>

#include "gpu/host/host_backend.h"
#include "properties/zoo.h"

namespace mxgate::dispatch {
// Test names and failure messages print the fault's name, not its byte.
inline void PrintTo(Fault f, std::ostream* os) { *os << to_string(f); }
}  // namespace mxgate::dispatch

namespace mxgate::properties {
namespace {

using dispatch::Fault;

// A zoo without a row per fault, or naming a property that does not exist, proves nothing.
TEST(ZooTable, OneRowPerFaultNamingARealProperty) {
  std::set<Fault> seen;
  for (const ZooClass& z : zoo_classes()) {
    EXPECT_TRUE(seen.insert(z.fault).second) << dispatch::to_string(z.fault);
    EXPECT_NE(find_property(z.property), nullptr) << z.property;
    EXPECT_FALSE(z.minimal.empty());
  }
  for (Fault f : dispatch::all_faults()) {
    EXPECT_EQ(seen.count(f), 1u) << dispatch::to_string(f) << " has no zoo row";
  }
}

// The medians treat a missed seed as infinite: a fault caught on fewer than half the seeds must
// not look caught.
TEST(ZooTable, MedianCountsMissesAsInfinite) {
  EXPECT_EQ(median_cases({3, 5, 7}), 5.0);
  EXPECT_EQ(median_cases({3, 5, 7, 9}), 6.0);
  EXPECT_TRUE(std::isinf(median_cases({3, 0, 0})));
  EXPECT_EQ(median_cases({3, 4, 0}), 4.0);
}

class ZooFault : public testing::TestWithParam<Fault> {};

// Guards against a property suite blind to a bug class, or one that reports it only at a size a
// person cannot read (shrinking must reach the minimal case of docs/bug_classes.md).
TEST_P(ZooFault, DetectedFastWithMinimalCounterexample) {
  const ZooClass& z = zoo_class(GetParam());
  gpu::HostBackend be;
  ZooOptions opts;
  opts.seeds = 20;
  opts.cases = 100;
  opts.all_properties = false;  // the property docs/bug_classes.md names
  const ZooResult r = run_zoo(z.fault, be, opts);
  if (z.device_only) {
    // docs/bug_classes.md §4: named not applicable on the host, with the reason; not a pass.
    EXPECT_TRUE(r.not_applicable);
    EXPECT_FALSE(r.detected);
    EXPECT_NE(r.not_applicable_reason.find("device only"), std::string::npos)
        << r.not_applicable_reason;
    return;
  }
  ASSERT_FALSE(r.not_applicable);
  ASSERT_TRUE(r.detected) << z.property << " missed " << dispatch::to_string(z.fault);
  ASSERT_TRUE(r.counterexample.has_value());
  EXPECT_TRUE(r.minimal) << "shrunk to " << r.counterexample->describe() << "; minimal is "
                         << z.minimal;
  EXPECT_LE(r.median, 20.0) << "median cases to detection over 20 seeds";
  ASSERT_TRUE(r.failure.has_value());
  std::printf("%s: median %g cases; counterexample %s\n  %s\n",
              std::string(dispatch::to_string(z.fault)).c_str(), r.median,
              r.counterexample->describe().c_str(), r.failure->what.c_str());
  // The same case with no fault planted passes: the property is not simply failing.
  EXPECT_FALSE(check_case(*find_property(r.shrunk_by), Context{&be, {}, nullptr}, *r.counterexample)
                   .has_value());
}

INSTANTIATE_TEST_SUITE_P(All, ZooFault, testing::ValuesIn(dispatch::all_faults()),
                         [](const testing::TestParamInfo<Fault>& info) {
                           const std::string n(dispatch::to_string(info.param));
                           return n.substr(0, n.find('_'));
                         });

// The device-only class is exactly Z29 (docs/bug_classes.md §4): a class marked device only by
// mistake would be excused on the host.
TEST(ZooTable, OnlyZ29IsDeviceOnly) {
  for (const ZooClass& z : zoo_classes()) {
    EXPECT_EQ(z.device_only, z.fault == Fault::kZ29Offset32Bit) << dispatch::to_string(z.fault);
  }
}

}  // namespace
}  // namespace mxgate::properties
