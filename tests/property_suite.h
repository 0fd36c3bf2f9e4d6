// The property suites (properties/property.h) as GoogleTest tests, one per property, on the
// backend of the including program: property_host.cpp (host models, ctest label `property`)
// and test_gpu_device.cpp (HIP / CUDA, label `gpu`). Each program defines
// mxgate::gpu::make_backend_under_test(); the suite skips when the backend has no device.
//
// Seed: MXGATE_SEED or RC_PARAMS="seed=S" (default 1, printed); case count:
// RC_PARAMS="max_success=N" (default 100). RapidCheck's engine runs each property
// (rc::detail::checkProperty, what RC_GTEST_PROP calls) through properties::run_property, which
// also hands back the shrunk case for the report.
// A failure prints RapidCheck's report, the shrunk case, the located element and the command
// that replays it. Does not cover: the zoo (property_zoo.cpp), regression replay (label
// `regression`).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gpu/backend.h"
#include "impl/builtin.h"
#include "properties/property.h"

namespace mxgate::gpu {
std::unique_ptr<Backend> make_backend_under_test();
}  // namespace mxgate::gpu

namespace mxgate::properties::suite {

// MXGATE_SEED, else RC_PARAMS="seed=S", else 1.
inline uint64_t suite_seed() {
  const char* s = std::getenv("MXGATE_SEED");
  return s != nullptr && *s != '\0' ? std::strtoull(s, nullptr, 10) : seed_from_rc_params(1);
}

// The properties of the built-in implementation (cast.bit_exact has no built-in op to check:
// the plugin suites run it, tests/property_plugins.cpp).
inline std::vector<std::string> property_names() {
  std::vector<std::string> out;
  for (const Property& p : all_properties()) {
    if (applies(p, impl::builtin())) out.emplace_back(p.name);
  }
  return out;
}

class PropertyHolds : public testing::TestWithParam<std::string> {};

// Each property guards against the failure its `guards` text names (printed on failure).
TEST_P(PropertyHolds, OnBackendUnderTest) {
  std::unique_ptr<gpu::Backend> be = gpu::make_backend_under_test();
  if (be == nullptr || !be->available()) GTEST_SKIP() << "no device for this backend";
  const Property* p = find_property(GetParam());
  ASSERT_NE(p, nullptr);
  Coverage coverage;
  const Context ctx{be.get(), {}, &coverage};
  RunOptions opts;
  opts.seed = suite_seed();
  opts.cases = cases_from_rc_params(100);
  std::printf("property %s on %s: seed %llu, %d cases\n", std::string(p->name).c_str(),
              std::string(be->name()).c_str(), static_cast<unsigned long long>(opts.seed),
              opts.cases);
  const RunResult r = run_property(*p, ctx, opts);
  std::string report;
  if (!r.passed) {
    report = "guards against: " + std::string(p->guards) + "\n" + r.message;
    if (r.counterexample) report += "\nshrunk case: " + r.counterexample->describe();
    if (r.failure) report += "\nfailure: " + r.failure->what;
    report += "\nreproduce: mxgate property " + std::string(p->name) + " --backend " +
              std::string(be->name()) + " --seed " + std::to_string(opts.seed) + " --cases " +
              std::to_string(opts.cases);
  }
  std::printf("  %d cases;", r.cases);
  for (const auto& [tag, n] : coverage.counts()) {
    std::printf(" %s:%llu", tag.c_str(), static_cast<unsigned long long>(n));
  }
  std::printf("\n");
  EXPECT_TRUE(r.passed) << report;
  EXPECT_GT(r.cases, 0);
}

INSTANTIATE_TEST_SUITE_P(All, PropertyHolds, testing::ValuesIn(property_names()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (c == '.') c = '_';
                           }
                           return n;
                         });

}  // namespace mxgate::properties::suite
