// Covers gemm.exact's extreme-element regime (properties/extreme_scales.h plant_extreme_elements,
// case field elements=extreme) on the host models of the built-in GEMMs: the planted operands
// hold every end-of-range code of the element format in each row and stay exact-mode, the
// built-in kernels pass them, and the coverage tags that properties.coverage requires per family
// come from this regime alone: the same cases without it leave them missing.
// Does not cover: FP4 / FP6 elements (no built-in GEMM takes them), the generator's rate (the
// coverage run of tests/property_host.cpp), device backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gpu/host/host_backend.h"
#include "impl/accumulator.h"
#include "impl/builtin.h"
#include "properties/extreme_scales.h"
#include "properties/gemm_operands.h"
#include "properties/property.h"
#include "reference/accumulator_exact.h"

namespace mxgate::properties {
namespace {

const std::vector<std::string> kClasses = {"max", "min_normal", "subnormal", "zero", "neg_zero"};

// Cases of one built-in op over a few shapes and seeds, with or without the regime.
std::vector<Case> cases(const std::string& op, bool extreme) {
  std::vector<Case> out;
  for (const char* shape : {"m=1 n=128 k=128", "m=3 n=256 k=256", "m=2 n=128 k=384"}) {
    for (int seed : {0, 1, 2, 3, 9, 517}) {
      std::string text =
          "op=" + op + " " + shape + " layout=row_major out=fp32 seed=" + std::to_string(seed);
      if (extreme) text += " elements=extreme";
      out.push_back(Case::parse("gemm.exact", text));
    }
  }
  return out;
}

// The required element tags of a family reached by the regime, and missing without it: a
// generator that never plants them leaves properties.coverage unmet (the check can fail).
TEST(ExtremeElements, RequiredTagsComeOnlyFromTheRegime) {
  gpu::HostBackend be;
  const Property& p = *find_property("gemm.exact");
  for (const auto& [op, family] :
       {std::pair<std::string, std::string>{"gemm_mx_dequant", "gemm_mx"},
        {"gemm_blockscale", "gemm_block"}}) {
    for (bool extreme : {false, true}) {
      Coverage coverage;
      const Context ctx{&be, {}, &coverage};
      for (const Case& c : cases(op, extreme)) {
        const auto f = check_case(p, ctx, c);
        EXPECT_FALSE(f.has_value()) << c.describe() << ": " << (f ? f->what : "");
      }
      const std::vector<std::string> absent = missing(coverage);
      for (const std::string& cls : kClasses) {
        const std::string tag = family + ":e4m3fn:" + cls;
        ASSERT_NE(std::find(required_coverage().begin(), required_coverage().end(), tag),
                  required_coverage().end())
            << tag << " is not required";
        EXPECT_EQ(std::count(absent.begin(), absent.end(), tag), extreme ? 0 : 1)
            << op << (extreme ? " with" : " without") << " the regime: " << tag;
      }
    }
  }
}

// A planting that left out a code, or let a sum round, would test less than it claims: every
// holder row of a whole planting holds each end-of-range code, for every pair of formats, and
// the operands are exact-mode in fp32_rn.
TEST(ExtremeElements, EveryRowHoldsEveryCodeAndStaysExact) {
  const impl::Op& op = *impl::builtin().find_op("gemm_mx_dequant");
  const AccumulatorModel model = *find_accumulator("fp32_rn");
  for (impl::Dtype ta : {impl::Dtype::kE4m3fn, impl::Dtype::kE5m2}) {
    for (impl::Dtype tb : {impl::Dtype::kE4m3fn, impl::Dtype::kE5m2}) {
      for (uint64_t seed : {0u, 2u, 5u, 6u, 1000u}) {
        Operands o = exact_operands(GemmKind::kMx, kMxfp8Blocks, 3, 5, 96, seed, true, {ta, tb},
                                    model, false);
        const std::vector<std::string> tags = plant_extreme_elements(op, o, seed, model);
        const bool a_holds = seed % 4 != 2;
        const Format f = gemm_element_format(a_holds ? ta : tb);
        const std::string name(info(f).name);
        std::set<std::string> got(tags.begin(), tags.end());
        for (const std::string& cls : kClasses) EXPECT_EQ(got.count(name + ":" + cls), 1u) << cls;
        std::string why;
        EXPECT_TRUE(is_exact_mode(o.problem, model, &why)) << why;
        const Bytes& codes = a_holds ? o.a : o.b;
        const std::size_t rows = a_holds ? o.m : o.n;
        const uint32_t sign = 0x80, mant = f == Format::kE4M3FN ? 7u : 3u;
        for (std::size_t r = 0; r < rows; ++r) {
          std::set<uint8_t> row(codes.begin() + static_cast<std::ptrdiff_t>(r * o.k),
                                codes.begin() + static_cast<std::ptrdiff_t>((r + 1) * o.k));
          for (uint32_t m = 1; m <= mant; ++m) EXPECT_EQ(row.count(static_cast<uint8_t>(m)), 1u);
          EXPECT_EQ(row.count(0x00), 1u);
          EXPECT_EQ(row.count(static_cast<uint8_t>(sign)), 1u);
          EXPECT_EQ(row.count(static_cast<uint8_t>(mant + 1)), 1u);  // smallest normal
        }
      }
    }
  }
}

}  // namespace
}  // namespace mxgate::properties
