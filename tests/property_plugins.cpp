// The plugin path's proof, on the shipped example plugin (plugins/example, CPU ops): the correct
// implementation `example` passes every property that applies to its ops, and each planted
// fault (one `example_faulty_*` implementation per family the example implements) is detected
// by the property named below within a median of 20 cases over 20 seeds, shrunk to a small
// counterexample whose failure locates an element, and that counterexample passes on `example`
// (the fault, not the property, makes the difference). Label `property`.
// Does not cover: device plugins (no device here), the built-in zoo (property_zoo.cpp).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "gpu/host/host_backend.h"
#include "impl/registry.h"
#include "properties/property.h"
#include "properties/zoo.h"

namespace mxgate::properties {
namespace {

const impl::Implementation& example(const std::string& name = "example") {
  return *impl::resolve(name == "example" ? "example" : "example:" + name).front();
}

// Guards against the example (the template plugin authors copy) failing its own gate, which would
// make every planted-fault detection below meaningless.
TEST(ExamplePlugin, PassesEveryPropertyThatApplies) {
  gpu::HostBackend be;
  const impl::Implementation& ex = example();
  int ran = 0, no_op = 0, device_only = 0;
  for (const Property& p : all_properties()) {
    if (!applies(p, ex)) continue;
    RunOptions opts;
    opts.seed = 1;
    opts.cases = 100;
    const Context ctx{&be, {}, nullptr, &ex};
    const RunResult r = run_property(p, ctx, opts);
    EXPECT_TRUE(r.passed) << p.name << ": " << (r.failure ? r.failure->what : r.message)
                          << (r.counterexample ? "\n" + r.counterexample->describe() : "");
    if (p.name == "dequantize.large_offsets") {
      // 2^31 elements: device only (docs/bug_classes.md §4); on the host its one case is
      // unsupported with the reason, never a pass.
      ++device_only;
      EXPECT_EQ(r.cases, 0);
      EXPECT_EQ(r.unsupported, 1);
      ASSERT_FALSE(r.unsupported_reasons.empty());
      EXPECT_NE(r.unsupported_reasons.front().find("device"), std::string::npos)
          << r.unsupported_reasons.front();
      continue;
    }
    if (candidate_ops(p, ctx).empty()) {
      // A property of the example's families whose inputs none of its ops takes (the FP4
      // properties: the example has no E2M1 op): reported unsupported with its reason, no case.
      ++no_op;
      EXPECT_EQ(r.cases, 0) << p.name;
      EXPECT_EQ(r.unsupported, 1) << p.name;
      EXPECT_FALSE(r.unsupported_reasons.empty()) << p.name;
      continue;
    }
    ++ran;
    EXPECT_EQ(r.cases, 100) << p.name;
    EXPECT_EQ(r.unsupported, 0) << p.name;
  }
  // cast, quantize (2), quantize_block, dequantize, upcast, GEMMs (exact, bound, column / row
  // split, poison), determinism.run_twice; quantize_fp4, dequantize_fp4, gemm_fp4 (exact, bound),
  // gemm.default_scale (no op takes an absent B scale) and the two 2D quantize properties (no
  // 32 x 32 quantizer) have no op of the example to check.
  EXPECT_EQ(ran, 12);
  EXPECT_EQ(no_op, 7);
  EXPECT_EQ(device_only, 1);
}

// A planted fault, the property expected to catch it first, and the bound its shrunk case must
// meet, with the reason for the bound.
struct Planted {
  std::string impl;
  std::string property;
  std::string bound;  // in words, printed on failure
  std::function<bool(const Case&)> small;
};

// The bounds are the smallest shapes on which each fault can show at all, plus the slack of the
// greedy shrinker (it stops in a local minimum):
//   elementwise faults need one element (cast: count <= 2) or one 32-block (rows = 1, cols <= 32);
//   a zero group's missing amax floor needs one 1x128 group (rows = 1, cols <= 128);
//   B's scales read transposed needs two B rows and two K blocks: M = 1, N <= 2, K <= 64 (K = 32
//   has one block, where the transpose is the identity);
//   a dropped partial K block needs one element and K below one block: M = N = 1, K < 128;
//   a partial last M tile never written needs M % 4 != 0: M < 4, N = 1, one K block.
const Planted kPlanted[] = {
    {"example_faulty_cast_ties_away", "cast.bit_exact", "count <= 2",
     [](const Case& c) { return c.num("count") <= 2; }},
    {"example_faulty_quantize_nosat", "quantize.bit_exact", "rows = 1, cols <= 32",
     [](const Case& c) { return c.num("rows") == 1 && c.num("cols") <= 32; }},
    {"example_faulty_quantize_block_no_eps", "quantize_block.bit_exact", "rows = 1, cols <= 128",
     [](const Case& c) { return c.num("rows") == 1 && c.num("cols") <= 128; }},
    {"example_faulty_dequantize_shift", "dequantize.bit_exact", "rows = 1, cols <= 32",
     [](const Case& c) { return c.num("rows") == 1 && c.num("cols") <= 32; }},
    {"example_faulty_upcast_shift", "upcast_e8m0.bit_exact", "count <= 2",
     [](const Case& c) { return c.num("count") <= 2; }},
    {"example_faulty_gemm_mx_b_scales_transposed", "gemm.exact", "M = 1, N <= 2, K <= 64",
     [](const Case& c) { return c.num("m") == 1 && c.num("n") <= 2 && c.num("k") <= 64; }},
    {"example_faulty_gemm_block_drop_tail", "gemm.exact", "M = N = 1, K < 128",
     [](const Case& c) { return c.num("m") == 1 && c.num("n") == 1 && c.num("k") < 128; }},
    // One tactic of three wrong (docs/plugins.md §3.6): caught on that tactic, named.
    {"example_faulty_tactic", "gemm.exact tactic 2 (tile4x4)", "M < 4, N = 1, K <= 32",
     [](const Case& c) { return c.num("m") < 4 && c.num("n") == 1 && c.num("k") <= 32; }},
};

class PlantedFault : public testing::TestWithParam<Planted> {};

// Guards against a property suite blind to a bug in a plugin's op, or one that reports it only
// at a size a person cannot read.
TEST_P(PlantedFault, DetectedFastWithASmallLocatedCounterexample) {
  const Planted& pf = GetParam();
  gpu::HostBackend be;
  const impl::Implementation& faulty = example(pf.impl);
  ZooOptions opts;
  opts.seeds = 20;
  opts.cases = 100;
  const ImplZooResult r = run_impl_zoo(faulty, be, opts);
  ASSERT_TRUE(r.planted);
  ASSERT_TRUE(r.detected) << pf.impl << " passed every property";
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.caught_by, pf.property);
  EXPECT_LE(r.median, 20.0) << "median cases to detection over 20 seeds";
  ASSERT_TRUE(r.counterexample.has_value());
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_TRUE(pf.small(*r.counterexample))
      << "shrunk to " << r.counterexample->describe() << "; bound " << pf.bound;
  ASSERT_TRUE(r.failure->where.has_value()) << r.failure->what;
  EXPECT_EQ(r.failure->kind, Failure::Kind::kWrong) << r.failure->what;
  std::printf("%s: caught by %s, median %g; %s\n  %s\n", pf.impl.c_str(), r.caught_by.c_str(),
              r.median, r.counterexample->describe().c_str(), r.failure->what.c_str());
  // The same case passes on the correct implementation (caught_by: "PROPERTY[ tactic N (NAME)]").
  const impl::Implementation& ex = example();
  const Property* p = find_property(r.caught_by.substr(0, r.caught_by.find(' ')));
  ASSERT_NE(p, nullptr) << r.caught_by;
  EXPECT_FALSE(check_case(*p, Context{&be, {}, nullptr, &ex}, *r.counterexample).has_value());
}

INSTANTIATE_TEST_SUITE_P(Example, PlantedFault, testing::ValuesIn(kPlanted),
                         [](const testing::TestParamInfo<Planted>& info) {
                           return info.param.impl.substr(std::string("example_faulty_").size());
                         });

}  // namespace
}  // namespace mxgate::properties
