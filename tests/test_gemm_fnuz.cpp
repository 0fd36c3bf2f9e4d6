// Covers the built-in FNUZ block GEMMs gemm_blockscale_fnuz and gemm_blockscale_fnuz_bpreshuffle
// (gpu/kernel_table.cpp, kernels/gemm.h, kernels/mfma_cdna3.h) on the host backend: each host
// model equals, bit for bit, the reference's simulation of the accumulator it declares
// (reference/accumulator_simulation.h, cdna3_fp8_mfma:chunk_k=128) on general E4M3FNUZ /
// E5M2FNUZ operands of every mix, K tails included; a NaN code poisons its row; the results differ
// from the fp32 order of gemm_blockscale (so the MFMA steps are in effect); hand-derived MFMA
// steps (truncated halves, round-down halves, the dropped C); every GEMM property passes on the
// two alone, 40 cases each, reaching the four operand mixes; fp32 sums declared as the MFMA fail
// the declared simulation's bit-for-bit check though inside its bound; the planted Z38 is caught by
// gemm.exact on generated cases and shrunk to one element. Does not cover: Z38's hand-built case
// (tests/test_zoo_faults_detect.cpp), device runs (the hip preset compiles the kernels;
// docs/amd_ci.md), the simulation itself (tests/test_accumulator_bounds.cpp and the other
// accumulator tests).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "dispatch/faults.h"
#include "gpu/host/host_backend.h"
#include "gpu/kernels/mfma_cdna3.h"
#include "impl/accumulator.h"
#include "impl/builtin.h"
#include "properties/gemm_operands.h"
#include "properties/property.h"
#include "reference/accumulator_simulation.h"
#include "reference/gemm_oracle.h"
#include "reference/verdict.h"

namespace mxgate {
namespace {

using impl::Dtype;
using properties::ElementTypes;
using properties::Operands;

const impl::Op& fnuz_op(const char* name = "gemm_blockscale_fnuz") {
  const impl::Op* op = impl::builtin().find_op(name);
  if (op == nullptr) throw std::logic_error(std::string(name) + " is not a built-in op");
  return *op;
}

const impl::Op& preshuffled_op() { return fnuz_op("gemm_blockscale_fnuz_bpreshuffle"); }

// One call of `op` in its first A-scale layout (row-major; column-major for bpreshuffle).
GemmOutput run(const Operands& o, OutputFormat fmt, const impl::Op& op = fnuz_op()) {
  static gpu::HostBackend be;
  properties::OpLayout layout;
  layout.scales = impl::layouts_in(op.contract.a_scale_layouts).front();
  return properties::run_gemm_op(impl::RunContext{be}, op, o, fmt, layout);
}

// Guards against a host model that accumulates otherwise than the model it declares: on general
// data (random finite codes, fp32 scales with mantissas) of every FNUZ mix, K with a partial
// 16-step and a partial 128-block (the preshuffled kernel: K % 32 == 0), fp32 and bf16 out,
// each kernel is the simulation bit for bit.
TEST(GemmFnuz, HostModelIsTheDeclaredModelsSimulationBitForBit) {
  const Dtype e4 = Dtype::kE4m3fnuz, e5 = Dtype::kE5m2fnuz;
  uint64_t seed = 11;
  for (const impl::Op* op : {&fnuz_op(), &preshuffled_op()}) {
    const AccumulatorModel model = impl::accum_model_for(*op);
    EXPECT_EQ(model.name, "cdna3_fp8_mfma:chunk_k=128");
    EXPECT_EQ(model.chunks.chunk_k, 128u);
    EXPECT_EQ(model.chunks.group_size, 16u);
    EXPECT_TRUE(model.chunks.halves);
    const bool shuffled = op == &preshuffled_op();
    const std::vector<std::size_t> ks = shuffled ? std::vector<std::size_t>{32, 96, 160, 288}
                                                 : std::vector<std::size_t>{1, 16, 37, 128, 300};
    for (const ElementTypes types :
         {ElementTypes{e4, e4}, ElementTypes{e4, e5}, ElementTypes{e5, e4}, ElementTypes{e5, e5}}) {
      for (const std::size_t k : ks) {
        for (const OutputFormat fmt : {OutputFormat::kFp32, OutputFormat::kBf16}) {
          const Operands o =
              properties::general_operands(*op, 5, shuffled ? 16 : 7, k, ++seed, types);
          const GemmOutput want = simulate_gemm(o.problem, model, fmt);
          const BitExactVerdict v = properties::compare(want, run(o, fmt, *op));
          EXPECT_TRUE(v.ok()) << op->name << " " << impl::to_string(types.a) << " x "
                              << impl::to_string(types.b) << " K=" << k << ": " << v.summary();
        }
      }
    }
  }
}

// Guards against a NaN code (0x80, the FNUZ formats' only NaN) that the MFMA steps turn into a
// number: the row of A holding it is NaN in every column, as in the simulation; the others not.
TEST(GemmFnuz, NanCodePoisonsItsRowOnly) {
  const impl::Op& op = fnuz_op();
  Operands o = properties::general_operands(op, 3, 4, 40, 5, {Dtype::kE4m3fnuz, Dtype::kE4m3fnuz});
  o.a[1 * 40 + 17] = 0x80;
  o.problem.a[1 * 40 + 17] = std::numeric_limits<float>::quiet_NaN();
  const GemmOutput got = run(o, OutputFormat::kFp32);
  const GemmOutput want = simulate_gemm(o.problem, impl::accum_model_for(op), OutputFormat::kFp32);
  EXPECT_TRUE(properties::compare(want, got).ok());
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(std::isnan(got.fp32[i * 4 + j]), i == 1);
  }
}

// Guards against MFMA steps that are fp32 additions after all (a kernel declaring the model but
// summing in fp32 would pass the bound): on general data some elements differ from the fp32
// order of gemm_blockscale (partials of 128, scales per partial). Measured: 186 of 256 at this
// seed.
TEST(GemmFnuz, DiffersFromTheFp32OrderOnGeneralData) {
  const Operands o =
      properties::general_operands(fnuz_op(), 16, 16, 256, 3, {Dtype::kE4m3fnuz, Dtype::kE4m3fnuz});
  const GemmOutput fp32 =
      ordered_gemm(o.problem, {128, ScaleApplication::kPerPartial, OutputFormat::kFp32});
  const BitExactVerdict v = properties::compare(fp32, run(o, OutputFormat::kFp32));
  EXPECT_GT(v.mismatches, 0u);
}

// Guards against each rule of a step (kernels/mfma_cdna3.h), on products written by hand:
//   {2^10, 0, 2^-20}: the even half is put on 2^(10 - 24) = 2^-14 by truncation, so 2^-20 is lost:
//   1024, where fp32 (24 bits at 2^10: unit 2^-13) loses it too, but 2^-13 is kept:
//   {2^10, 0, 2^-13} gives 1024 + 2^-13 (1024.0001220703125).
//   {2^10, -2^-20}: halves apart; the odd half -2^-20 is rounded down onto 2^-14: -2^-14, and
//   the sum 2^10 - 2^-14 is rounded to fp32 (unit 2^-14 below 2^10): 1023.99993896484375; fp32
//   gives 1024.
//   Late C: C = 2^-20 and products {2^10}: C is 30 bits below the top (more than 25): dropped,
//   1024.
TEST(GemmFnuz, HandDerivedSteps) {
  const float p1[] = {0x1p10f, 0.0f, 0x1p-20f};
  EXPECT_EQ(gpu::cdna3::mfma_step(0.0f, p1, 3), 0x1p10f);
  const float p2[] = {0x1p10f, 0.0f, 0x1p-13f};
  EXPECT_EQ(gpu::cdna3::mfma_step(0.0f, p2, 3), 0x1p10f + 0x1p-13f);
  const float p3[] = {0x1p10f, -0x1p-20f};
  EXPECT_EQ(gpu::cdna3::mfma_step(0.0f, p3, 2), 0x1p10f - 0x1p-14f);
  const float p4[] = {0x1p10f};
  EXPECT_EQ(gpu::cdna3::mfma_step(0x1p-20f, p4, 1), 0x1p10f);
  // The same steps through the reference's group step (cdna3_fp8_mfma's parameters).
  const AlignedChunkParams params = impl::accum_model_for(fnuz_op()).chunks;
  const double d3[] = {0x1p10, -0x1p-20};
  EXPECT_EQ(aligned_group_sum(0.0f, d3, 2, params), 0x1p10f - 0x1p-14f);
  const double d4[] = {0x1p10};
  EXPECT_EQ(aligned_group_sum(0x1p-20f, d4, 1, params), 0x1p10f);
}

// The FNUZ kernels alone, as the built-in implementation.
impl::Implementation fnuz_impl() {
  impl::Implementation im;
  im.name = im.spec = "builtin";
  im.builtin = true;
  im.ops = {fnuz_op(), preshuffled_op()};
  return im;
}

// Guards against an FNUZ kernel the gate cannot check or that fails its own gate: every GEMM
// property runs on the two alone, 40 cases, none unsupported, and passes; the cases reach both
// ops, the four operand mixes and the preshuffled layout.
TEST(GemmFnuz, EveryGemmPropertyPasses) {
  const impl::Implementation im = fnuz_impl();
  gpu::HostBackend be;
  properties::Coverage cov;
  std::vector<std::string> ran;
  for (const properties::Property& p : properties::all_properties()) {
    const properties::Context ctx{&be, {}, &cov, &im};
    if (!properties::applies(p, im) || properties::candidate_ops(p, ctx).empty()) continue;
    ran.emplace_back(p.name);
    properties::RunOptions opts;
    opts.seed = 1;
    opts.cases = 40;
    const properties::RunResult r = properties::run_property(p, ctx, opts);
    EXPECT_TRUE(r.passed) << p.name << ": " << (r.failure ? r.failure->what : r.message);
    EXPECT_EQ(r.cases, 40) << p.name;
    EXPECT_EQ(r.unsupported, 0) << p.name;
  }
  EXPECT_EQ(ran,
            (std::vector<std::string>{"gemm.exact", "gemm.ordered_bound",
                                      "metamorphic.tp_column_split", "metamorphic.tp_row_split",
                                      "metamorphic.padding_poison", "determinism.run_twice"}));
  for (const char* tag :
       {"dtype:e4m3fnuzxe4m3fnuz", "dtype:e4m3fnuzxe5m2fnuz", "dtype:e5m2fnuzxe4m3fnuz",
        "dtype:e5m2fnuzxe5m2fnuz", "op:gemm_blockscale_fnuz", "op:gemm_blockscale_fnuz_bpreshuffle",
        "layout:aiter_preshuffle", "layout:col_major", "tp:shard"}) {
    EXPECT_GT(cov.count(tag), 0u) << tag;
  }
}

// Guards against a kernel that declares the MFMA accumulation but sums in fp32 passing the gate:
// fp32 sums are inside cdna3_fp8_mfma's bound (it keeps fewer bits), so only the bit-for-bit
// check of the declared simulation (Contract::simulated_order) sees it. gemm_blockscale (E4M3FN,
// fp32 partials of 128) declared as the FNUZ kernels declare fails gemm.ordered_bound there;
// without simulated_order the same cases pass on the bound alone.
TEST(GemmFnuz, Fp32SumsDeclaredAsTheMfmaFailTheSimulationCheck) {
  impl::Op op = *impl::builtin().find_op("gemm_blockscale");
  op.contract.accumulator = "cdna3_fp8_mfma:chunk_k=128";
  op.contract.order.reset();
  op.contract.simulated_order = true;
  impl::Implementation im;
  im.name = im.spec = "builtin";
  im.builtin = true;
  im.ops = {op};
  gpu::HostBackend be;
  const properties::Property& p = *properties::find_property("gemm.ordered_bound");
  properties::RunOptions opts;
  opts.seed = 1;
  opts.cases = 40;
  const properties::RunResult r =
      properties::run_property(p, properties::Context{&be, {}, nullptr, &im}, opts);
  ASSERT_FALSE(r.passed);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_NE(r.failure->what.find("gemm_blockscale vs simulate_gemm (cdna3_fp8_mfma:chunk_k=128"),
            std::string::npos)
      << r.failure->what;
  im.ops[0].contract.simulated_order = false;
  EXPECT_TRUE(properties::run_property(p, properties::Context{&be, {}, nullptr, &im}, opts).passed);
}

// Guards against Z38 (FNUZ codes decoded as E4M3FN / E5M2, docs/bug_classes.md §2) passing the
// gate: gemm.exact on generated cases fails (seed 1, measured: the first case), shrunk to one
// element of one MFMA step, M = N = 1, K <= 16, located at (0,0); with no fault the same run
// passes.
TEST(GemmFnuz, Z38CaughtByGemmExact) {
  const impl::Implementation im = fnuz_impl();
  gpu::HostBackend be;
  const properties::Property& p = *properties::find_property("gemm.exact");
  properties::RunOptions opts;
  opts.seed = 1;
  opts.cases = 20;
  const properties::Context faulty{&be, {dispatch::Fault::kZ38FnuzDecodedAsOcp}, nullptr, &im};
  const properties::RunResult r = properties::run_property(p, faulty, opts);
  ASSERT_FALSE(r.passed);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->kind, properties::Failure::Kind::kWrong);
  ASSERT_TRUE(r.counterexample.has_value());
  EXPECT_EQ(r.counterexample->num("m"), 1u);
  EXPECT_EQ(r.counterexample->num("n"), 1u);
  EXPECT_LE(r.counterexample->num("k"), 32u);
  ASSERT_TRUE(r.failure->where.has_value());
  EXPECT_EQ(r.failure->where->row, 0u);
  EXPECT_EQ(r.failure->where->col, 0u);
  EXPECT_TRUE(properties::run_property(p, properties::Context{&be, {}, nullptr, &im}, opts).passed);
}

}  // namespace
}  // namespace mxgate
