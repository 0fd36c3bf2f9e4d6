// Covers gemm.exact's "one K tile, an all-zero row" regime (properties/zero_row_regime.h, field
// edge=zero_row_one_k_tile) and zoo class Z44 (docs/bug_classes.md §2), the model of
// deepseek-ai/DeepGEMM #365 planted in the block GEMMs (gpu/kernels/gemm.h): the generator draws
// the regime for the block GEMMs with per-row A scales and for no other op or contract, the
// planting zeroes one row under a tiny scale and stays exact-mode, the built-in kernels pass its
// cases and reach the required coverage tag, and the planted fault fails at the located element
// under both of the report's conditions (K one 128 tile, a row scale below 2^-64) and under
// neither alone.
// Does not cover: the regime's rate in a default run (tests/property_host.cpp's coverage check),
// cases to detection and shrinking (tests/property_zoo.cpp, `mxgate zoo`), device backends.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "dispatch/faults.h"
#include "gpu/host/host_backend.h"
#include "impl/accumulator.h"
#include "impl/builtin.h"
#include "properties/gemm_operands.h"
#include "properties/property.h"
#include "properties/zero_row_regime.h"
#include "reference/verdict.h"

namespace mxgate::properties {
namespace {

using dispatch::Fault;

const char* const kBlockOps[] = {"gemm_blockscale", "gemm_blockscale_bpreshuffle",
                                 "gemm_blockscale_ue8m0", "gemm_blockscale_fnuz",
                                 "gemm_blockscale_fnuz_bpreshuffle"};

const impl::Op& op_named(const char* name) {
  const impl::Op* op = impl::builtin().find_op(name);
  if (op == nullptr) throw std::logic_error(std::string("no built-in op ") + name);
  return *op;
}

// gemm.exact's cases for `op` from 200 fixed random streams.
std::vector<Case> drawn_cases(const impl::Op& op) {
  gpu::HostBackend be;
  const Context ctx{&be, {}, nullptr};
  const auto gen = find_property("gemm.exact")->gen(ctx, {&op});
  std::vector<Case> out;
  for (int i = 0; i < 200; ++i)
    out.push_back(gen(rc::Random(static_cast<uint64_t>(i) + 1), 50).value());
  return out;
}

// A generator that never drew the regime would leave the one-tile zero-row case untested; one
// that drew it with another K, one row, or beside the extreme regimes would test something else.
TEST(ZeroRowRegime, DrawnForEveryBlockGemmWithOneKTile) {
  for (const char* name : kBlockOps) {
    int drawn = 0;
    for (const Case& c : drawn_cases(op_named(name))) {
      // The NaN-scale regime (nan_scale_regime.h) shares the field; its tests are its own.
      if (!c.has("edge") || c.text("edge") != kZeroRowEdge) continue;
      ++drawn;
      EXPECT_EQ(c.num("k"), 128u) << c.describe();
      EXPECT_GE(c.num("m"), 2u) << c.describe();
      EXPECT_FALSE(c.has("scales") || c.has("elements")) << c.describe();
    }
    // One case in eight: 25 expected of 200; at least 10 or the rate has broken.
    EXPECT_GE(drawn, 10) << name;
  }
}

// Generators never draw what an op does not declare: no regime for an MX or bf16 GEMM, a block
// GEMM with one per-tensor A scale, or one whose K alignment excludes 128.
TEST(ZeroRowRegime, NeverDrawnOutsideTheContract) {
  impl::Op tensor = op_named("gemm_blockscale");
  tensor.contract.a_block_rows = 0;
  tensor.contract.a_block_cols = 0;
  impl::Op k256 = op_named("gemm_blockscale");
  k256.contract.k.align = 256;
  for (const impl::Op* op :
       {&op_named("gemm_mx_dequant"), &op_named("gemm_bf16"), static_cast<const impl::Op*>(&tensor),
        static_cast<const impl::Op*>(&k256)}) {
    EXPECT_TRUE(zero_row_ks(*op).empty()) << op->name;
    for (const Case& c : drawn_cases(*op)) {
      EXPECT_FALSE(c.has("edge") && c.text("edge") == kZeroRowEdge) << c.describe();
    }
  }
  EXPECT_EQ(zero_row_ks(op_named("gemm_blockscale")), (std::vector<std::size_t>{128}));
}

// A planting that left a nonzero code in the row, an ordinary scale, or a problem the reference
// sees differently from the kernel would not be the report's situation.
TEST(ZeroRowRegime, PlantsOneZeroRowUnderEachTinyScale) {
  const impl::Op& op = op_named("gemm_blockscale");
  const AccumulatorModel model = impl::accum_model_for(op);
  std::set<float> scales;
  for (uint64_t seed = 0; seed < 256; seed += 7) {
    Operands o = exact_operands(op, 3, 2, 128, seed, true, {}, false);
    const std::vector<std::string> tags = plant_zero_row(op, o, seed, model);
    EXPECT_EQ(tags.front(), "edge:zero_row_one_k_tile");
    const std::size_t row = (seed >> 3) % 3;
    for (std::size_t r = 0; r < 3; ++r) {
      const bool zero = std::all_of(o.a.begin() + static_cast<std::ptrdiff_t>(r * 128),
                                    o.a.begin() + static_cast<std::ptrdiff_t>((r + 1) * 128),
                                    [](uint8_t c) { return c == 0; });
      EXPECT_EQ(zero, r == row) << "seed " << seed << " row " << r;
    }
    EXPECT_LT(o.a_f32[row], 0x1p-64f);
    EXPECT_EQ(o.a_f32[row], o.problem.a_scale[row]);
    scales.insert(o.a_f32[row]);
  }
  EXPECT_EQ(scales, (std::set<float>{1e-30f, 0x1p-126f, 0x1p-127f}));
  // A UE8M0-scale op reads 1e-30's exponent byte: the reference sees 2^-100.
  const impl::Op& ue8m0 = op_named("gemm_blockscale_ue8m0");
  Operands o = exact_operands(ue8m0, 2, 1, 128, 0, true, {}, false);
  plant_zero_row(ue8m0, o, 0, impl::accum_model_for(ue8m0));
  EXPECT_EQ(o.a_f32[0], 1e-30f);
  EXPECT_EQ(o.problem.a_scale[0], 0x1p-100f);
}

// A gemm.exact case of the regime (the FNUZ ops name their element types, as generated).
std::string edge_case(const std::string& op, const std::string& shape, uint64_t seed) {
  return "op=" + op + " " + shape +
         " layout=" + (op.find("bpreshuffle") != std::string::npos ? "col_major" : "row_major") +
         " out=fp32 seed=" + std::to_string(seed) + " edge=zero_row_one_k_tile" +
         (op.find("fnuz") != std::string::npos ? " a_dtype=e4m3fnuz b_dtype=e5m2fnuz" : "");
}

// A correct kernel must pass the regime's cases (exact zeros in the zero row, every other row
// exact), and they must reach the tag properties.coverage requires of the block GEMMs.
TEST(ZeroRowRegime, CorrectKernelsPassAndReachTheRequiredTag) {
  gpu::HostBackend be;
  const Property& p = *find_property("gemm.exact");
  const std::string tag = "gemm_block:edge:zero_row_one_k_tile";
  ASSERT_EQ(std::count(required_coverage().begin(), required_coverage().end(), tag), 1);
  Coverage coverage;
  const Context ctx{&be, {}, &coverage};
  for (const char* name : kBlockOps) {
    const bool shuffled = std::string(name).find("bpreshuffle") != std::string::npos;
    for (uint64_t seed : {0u, 8u, 32u, 64u, 200u, 0x3A0u, 12345u}) {
      const Case c = Case::parse(
          "gemm.exact", edge_case(name, shuffled ? "m=3 n=32 k=128" : "m=3 n=2 k=128", seed));
      const auto f = check_case(p, ctx, c);
      EXPECT_FALSE(f.has_value()) << c.describe() << ": " << (f ? f->what : "");
    }
  }
  EXPECT_EQ(coverage.count(tag), 35u);
  for (const char* s : {"1e-30", "min_normal", "subnormal"}) {
    EXPECT_GT(coverage.count(std::string("gemm_block:edge:zero_row_scale:") + s), 0u) << s;
  }
}

// Z44 planted: the shrunk case of docs/bug_classes.md §5 must fail, at the row that is not zero
// (row 1; seed 0 zeroes row 0 under 1e-30), by the ~1e-30 factor the model applies.
TEST(ZeroRowRegime, Z44FailsAtTheRowThatIsNotZero) {
  gpu::HostBackend be;
  const Property& p = *find_property("gemm.exact");
  for (const char* name : {"gemm_blockscale", "gemm_blockscale_ue8m0", "gemm_blockscale_fnuz"}) {
    const Case c = Case::parse("gemm.exact", edge_case(name, "m=2 n=1 k=128", 0));
    EXPECT_FALSE(check_case(p, Context{&be, {}, nullptr}, c).has_value()) << name;
    const auto f = check_case(p, Context{&be, {Fault::kZ44ZeroRowOneKTile}, nullptr}, c);
    ASSERT_TRUE(f.has_value()) << name;
    ASSERT_TRUE(f->where.has_value()) << f->what;
    EXPECT_EQ(f->where->row, 1u) << f->what;
    EXPECT_EQ(f->where->col, 0u) << f->what;
    ASSERT_TRUE(f->actual.has_value() && f->expected.has_value());
    EXPECT_EQ(f->actual->fp32[0], 0.0f);  // the zero row stays zero
    EXPECT_LT(std::abs(f->actual->fp32[1]), 1e-20f * std::abs(f->expected->fp32[1]));
  }
}

// A hand-built gemm_blockscale: M = 2, N = 1, K, A row 0 all zero codes under scale `s0`, row 1
// all E4M3FN 1.0 (0x38) under 2, B all 1.0 under 1 (one 128 x 128 block per K block).
std::vector<float> zero_row_gemm(std::size_t k, float s0, bool faulty) {
  gpu::HostBackend be;
  std::vector<uint8_t> a(2 * k, 0x38);
  std::fill(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(k), 0);
  const std::size_t kb = (k + 127) / 128;
  std::vector<float> as(2 * kb, 2.0f);
  std::fill(as.begin(), as.begin() + static_cast<std::ptrdiff_t>(kb), s0);
  gpu::GemmArgs g;
  g.a = be.make_buffer(std::span<const uint8_t>(a), "A");
  const std::vector<uint8_t> b(k, 0x38);
  g.b = be.make_buffer(std::span<const uint8_t>(b), "B");
  g.a_scale = be.make_buffer(std::span<const float>(as), "As");
  const std::vector<float> bs(kb, 1.0f);
  g.b_scale = be.make_buffer(std::span<const float>(bs), "Bs");
  g.p = {2, 1, k, gpu::OutDtype::kFp32};
  g.p.faults = faulty ? dispatch::kernel_fault_bits({Fault::kZ44ZeroRowOneKTile}) : 0;
  g.out = be.allocate(2 * sizeof(float), "C");
  be.run({gpu::kernel("gemm_blockscale"), g});
  return be.download_as<float>(g.out);
}

// The plant models the report's two conditions together: it must fire with K = 128 and a tiny
// scale (row 1: 128 x 2 = 256 becomes 128 x 1e-30), and not with K = 256 (two tiles) or with the
// zero row under an ordinary scale, where a plant that fired would model another bug.
TEST(ZeroRowRegime, Z44FiresOnlyUnderBothConditions) {
  const std::vector<float> want128 = {0.0f, 256.0f}, want256 = {0.0f, 512.0f};
  for (float tiny : {1e-30f, 0x1p-126f, 0x1p-127f}) {
    const auto got = zero_row_gemm(128, tiny, true);
    const BitExactVerdict v = compare_fp32(2, 1, want128, got);
    ASSERT_FALSE(v.ok()) << tiny;
    EXPECT_EQ(v.mismatches, 1u);
    EXPECT_EQ(v.first->row, 1u);
    EXPECT_EQ(zero_row_gemm(128, tiny, false), want128) << tiny;  // clean: correct
    EXPECT_EQ(zero_row_gemm(256, tiny, true), want256) << tiny;   // two K tiles: silent
  }
  for (float ordinary : {1.0f, 0x1p-60f, 3.0f}) {
    EXPECT_EQ(zero_row_gemm(128, ordinary, true), want128) << ordinary;
  }
}

}  // namespace
}  // namespace mxgate::properties
