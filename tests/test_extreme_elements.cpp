// Covers the element-extreme regimes (properties/extreme_scales.h): gemm.exact's and
// gemm_fp4.exact's `elements=extreme` (plant_extreme_elements, plant_extreme_fp4_elements) on the
// host models of the built-in GEMMs, and the dequantizers' `elements=every`: the planted operands
// hold every end-of-range code of the element format in each row and stay exact-mode, the
// built-in kernels pass them, the coverage tags that properties.coverage requires per family come
// from these regimes, and a decoder with one planted fault per code class (the test plugin
// tests/plugins/element_decode.c) fails the property that reaches that class.
// Does not cover: FP6 GEMMs (no property takes FP6 elements; the code lists of E2M3 / E3M2 only),
// the generators' rates (the coverage run of tests/property_host.cpp), device backends, the NaN and
// Inf codes' plants (zoo Z24, Z25, Z26: tests/property_zoo.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/host/host_backend.h"
#include "impl/accumulator.h"
#include "impl/builtin.h"
#include "impl/registry.h"
#include "properties/extreme_scales.h"
#include "properties/gemm_operands.h"
#include "properties/property.h"
#include "reference/accumulator_exact.h"
#include "reference/gemm_oracle.h"

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

// The FP4 GEMM families reach E2M1's ends (+-6, 1, 0.5, +0, -0) only through gemm_fp4.exact's
// regime, and the built-in FP4 GEMMs pass those cases: a regime that never planted them, or
// planted a non-exact problem, would leave the tags missing or fail a correct kernel.
TEST(ExtremeElements, Fp4GemmsReachE2m1ExtremesOnlyThroughTheRegime) {
  gpu::HostBackend be;
  const Property& p = *find_property("gemm_fp4.exact");
  for (const auto& [op, family, extra] :
       {std::tuple<std::string, std::string, std::string>{"gemm_mxfp4", "gemm_mx", ""},
        {"gemm_nvfp4", "gemm_nvfp4", " global=one gdtype=f32"}}) {
    for (bool extreme : {false, true}) {
      Coverage coverage;
      const Context ctx{&be, {}, &coverage};
      for (const char* shape : {"m=1 n=1 k=32", "m=3 n=2 k=64", "m=2 n=5 k=160", "m=1 n=1 k=3"}) {
        for (int seed : {0, 1, 2, 6, 9, 517}) {
          std::string text = "op=" + op + " " + shape +
                             " layout=row_major out=fp32 seed=" + std::to_string(seed) + " a=e2m1" +
                             extra;
          if (extreme) text += " elements=extreme";
          const Case c = Case::parse("gemm_fp4.exact", text);
          const auto f = check_case(p, ctx, c);
          EXPECT_FALSE(f.has_value()) << c.describe() << ": " << (f ? f->what : "");
        }
      }
      const std::vector<std::string> absent = missing(coverage);
      for (const std::string& cls : kClasses) {
        const std::string tag = family + ":e2m1:" + cls;
        ASSERT_NE(std::find(required_coverage().begin(), required_coverage().end(), tag),
                  required_coverage().end())
            << tag << " is not required";
        EXPECT_EQ(std::count(absent.begin(), absent.end(), tag), extreme ? 0 : 1)
            << op << (extreme ? " with" : " without") << " the regime: " << tag;
      }
    }
  }
}

// Each holder row of an FP4 planting holds E2M1's six end codes, B's too where the block holds
// both lists, and the problem stays exact: a planting that dropped a code would test less.
TEST(ExtremeElements, Fp4PlantingHoldsEveryE2m1EndCode) {
  for (const char* name : {"gemm_mxfp4", "gemm_nvfp4"}) {
    const impl::Op& op = *impl::builtin().find_op(name);
    for (uint64_t seed : {0u, 2u, 5u, 1000u}) {
      Fp4Operands o =
          fp4_exact_operands(op, impl::Dtype::kE2m1, 3, 2, 64, seed, "one", impl::Dtype::kF32);
      const std::vector<std::string> tags = plant_extreme_fp4_elements(o, seed);
      EXPECT_EQ(tags.size(), kClasses.size()) << name;
      std::string why;
      EXPECT_TRUE(is_exact_mode(o.problem, &why)) << why;
      for (const auto& [codes, rows] : {std::pair{&o.a, o.m}, std::pair{&o.b, o.n}}) {
        for (std::size_t r = 0; r < rows; ++r) {
          const std::set<uint8_t> row(codes->begin() + static_cast<std::ptrdiff_t>(r * o.k),
                                      codes->begin() + static_cast<std::ptrdiff_t>((r + 1) * o.k));
          for (uint8_t c : {0x7, 0xF, 0x2, 0x1, 0x0, 0x8}) {
            EXPECT_EQ(row.count(c), 1u) << name << " seed " << seed << " code " << int(c);
          }
        }
      }
    }
  }
}

// An FNUZ block GEMM case with two element formats reaches the ends of both in one case (the
// second holder): without it one of them would need cases of its own to reach coverage.
TEST(ExtremeElements, OneFnuzCaseReachesBothFormats) {
  gpu::HostBackend be;
  const Property& p = *find_property("gemm.exact");
  Coverage coverage;
  const Context ctx{&be, {}, &coverage};
  const Case c = Case::parse("gemm.exact",
                             "op=gemm_blockscale_fnuz m=2 n=3 k=128 layout=row_major out=fp32 "
                             "seed=5 a_dtype=e4m3fnuz b_dtype=e5m2fnuz elements=extreme");
  const auto f = check_case(p, ctx, c);
  EXPECT_FALSE(f.has_value()) << (f ? f->what : "");
  for (const char* fmt : {"e4m3fnuz", "e5m2fnuz"}) {
    for (const char* cls : {"max", "min_normal", "subnormal", "zero"}) {
      EXPECT_GT(coverage.count(std::string("gemm_block:") + fmt + ":" + cls), 0u) << fmt << cls;
    }
    EXPECT_EQ(coverage.count(std::string("gemm_block:") + fmt + ":neg_zero"), 0u);  // 0x80: NaN
  }
}

// The code lists are the formats' ends, from their bit fields: a wrong list would plant (and
// require) the wrong codes. FP6 is listed although no GEMM property takes it yet.
TEST(ExtremeElements, CodeListsAreTheEndsOfEachFormat) {
  const auto codes = [](Format f, bool specials) {
    std::vector<std::pair<int, std::string>> out;
    for (const ElementCode& e : extreme_element_codes(f, specials))
      out.emplace_back(e.code, e.name);
    return out;
  };
  using V = std::vector<std::pair<int, std::string>>;
  EXPECT_EQ(codes(Format::kE2M1, true), (V{{0x7, "max"},
                                           {0xF, "max"},
                                           {0x2, "min_normal"},
                                           {0x1, "subnormal"},
                                           {0x0, "zero"},
                                           {0x8, "neg_zero"}}));
  EXPECT_EQ(extreme_element_codes(Format::kE2M3, false).front().value, 7.5f);
  EXPECT_EQ(extreme_element_codes(Format::kE3M2, false).front().value, 28.0f);
  EXPECT_EQ(codes(Format::kE3M2, false).size(), 2u + 1u + 3u + 2u);  // +-28, 0.25, 3 subnormals
  EXPECT_EQ(codes(Format::kE2M3, false).size(), 2u + 1u + 7u + 2u);
  const V fnuz = codes(Format::kE4M3FNUZ, true);
  EXPECT_EQ(fnuz.front(), (std::pair<int, std::string>{0x7F, "max"}));
  EXPECT_EQ(fnuz.back(), (std::pair<int, std::string>{0x80, "nan"}));
  EXPECT_EQ(extreme_element_codes(Format::kE4M3FNUZ, false).front().value, 240.0f);
  EXPECT_EQ(extreme_element_codes(Format::kE5M2FNUZ, false).front().value, 57344.0f);
  EXPECT_EQ(extreme_element_codes(Format::kE5M2, false).front().value, 57344.0f);
  const V e5m2 = codes(Format::kE5M2, true);
  EXPECT_NE(std::find(e5m2.begin(), e5m2.end(), std::pair<int, std::string>{0x7C, "inf"}),
            e5m2.end());
  EXPECT_NE(std::find(e5m2.begin(), e5m2.end(), std::pair<int, std::string>{0xFC, "inf"}),
            e5m2.end());
  EXPECT_NE(std::find(e5m2.begin(), e5m2.end(), std::pair<int, std::string>{0x7D, "nan"}),
            e5m2.end());
}

// A dequantize case with elements=every holds every code of its format once it has 2^bits
// elements, the ends first; the built-in dequantizer passes it and every class is tagged.
TEST(ExtremeElements, DequantizeEveryCodeCase) {
  for (Format f : {Format::kE4M3FN, Format::kE5M2, Format::kE4M3FNUZ, Format::kE2M1}) {
    const std::size_t n = std::size_t{1} << info(f).bits;
    const std::vector<uint8_t> codes = every_element_code(f, n, 77);
    EXPECT_EQ(std::set<uint8_t>(codes.begin(), codes.end()).size(), n) << info(f).name;
    const std::vector<uint8_t> few =
        every_element_code(f, extreme_element_codes(f, true).size(), 77);
    EXPECT_EQ(element_classes_present(f, few), element_classes_present(f, codes)) << info(f).name;
  }
  gpu::HostBackend be;
  Coverage coverage;
  const Context ctx{&be, {}, &coverage};
  for (const char* fmt : {"e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz"}) {
    const Case c = Case::parse("dequantize.bit_exact",
                               std::string("op=dequant_mx_to_bf16 format=") + fmt +
                                   " rows=2 cols=160 scales=normal seed=4 elements=every");
    const auto fail = check_case(*find_property("dequantize.bit_exact"), ctx, c);
    EXPECT_FALSE(fail.has_value()) << (fail ? fail->what : "");
  }
  for (const char* tag : {"dequantize:e4m3fn:nan", "dequantize:e5m2:inf", "dequantize:e5m2:max",
                          "dequantize:e4m3fnuz:nan", "dequantize:e5m2fnuz:subnormal"}) {
    EXPECT_GT(coverage.count(tag), 0u) << tag;
  }
}

// One planted decode fault per element code class, each caught by the property whose regime
// reaches that class (run on the host, seed 1, 100 cases, no shrink); the correct decoder of the
// same plugin passes them (25 cases each). -0 is invisible in a GEMM's sums (+0 + -0 = +0), so its
// plant is caught by the dequantizers alone.
TEST(ExtremeElements, EachElementClassHasACaughtDecodeFault) {
  gpu::HostBackend be;
  const std::string lib = std::string(MXGATE_TEST_PLUGIN_DIR) + "/libelement_decode.so:";
  const std::vector<std::string> props = {"dequantize.bit_exact", "dequantize_fp4.bit_exact",
                                          "gemm_fp4.exact"};
  RunOptions opts;
  opts.cases = 100;
  opts.shrink = false;
  const impl::Implementation& clean = *impl::resolve(lib + "element_decode").front();
  RunOptions clean_opts = opts;
  clean_opts.cases = 25;
  for (const std::string& name : props) {
    const Context ctx{&be, {}, nullptr, &clean};
    EXPECT_TRUE(run_property(*find_property(name), ctx, clean_opts).passed) << name;
  }
  for (const std::string& cls : kClasses) {
    const impl::Implementation& im = *impl::resolve(lib + "element_decode_faulty_" + cls).front();
    ASSERT_TRUE(im.planted_fault) << cls;
    for (const std::string& name : props) {
      if (cls == "neg_zero" && name == "gemm_fp4.exact") continue;
      const Context ctx{&be, {}, nullptr, &im};
      EXPECT_FALSE(run_property(*find_property(name), ctx, opts).passed)
          << im.name << " passes " << name;
    }
  }
}

}  // namespace
}  // namespace mxgate::properties
