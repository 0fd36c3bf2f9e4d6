// Covers the accumulator an op declares as the GEMM properties and the probe use it
// (impl/accumulator.h accum_model_for, properties/gemm_operands.h exact_operands,
// properties/crafted_gemm.h): a host op whose arithmetic is the reference's bit-faithful simulation
// of the Hopper FP8 accumulator (reference/accumulator_simulation.h, sm90_fp8_mma: 14 bits kept
// by truncation relative to a group's largest term, promotion to fp32 every 128 k) passes every
// GEMM property declared as sm90_fp8_mma, on E4M3FN and E5M2 operands; declared as fp32_rn it
// leaves the fp32 bound at a located element; exact-mode operands are exact in the declared
// model (a narrower one gets narrower operands); and the accumulator probe, run through the
// harness on that op and on the example plugin's GEMMs, recovers each one's parameters.
// Does not cover: the bound and simulation themselves (test_accumulator_bounds.cpp,
// test_accumulator_exact.cpp), the probe's experiments on simulations (test_accumulator_probe.cpp),
// the CLI verb (test_cli_impls.cpp), device ops (no device here).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/host/host_backend.h"
#include "impl/accumulator.h"
#include "impl/harness.h"
#include "impl/registry.h"
#include "probe/accumulator_probe.h"
#include "properties/crafted_gemm.h"
#include "properties/gemm_operands.h"
#include "properties/property.h"
#include "reference/accumulator.h"
#include "reference/accumulator_bounds.h"
#include "reference/accumulator_exact.h"
#include "reference/accumulator_simulation.h"
#include "reference/format.h"

namespace mxgate {
namespace {

using impl::Call;
using impl::Dtype;
using impl::Family;
using impl::Op;
using impl::Status;
using impl::Tensor;

Format format_of(Dtype d) { return d == Dtype::kE5m2 ? Format::kE5M2 : Format::kE4M3FN; }

uint64_t whole(uint32_t block, uint64_t extent) { return block == 0 ? extent : block; }

// A gemm_block op (host memory, row-major operands and scales) computing C with
// simulate_gemm(`simulated`): the arithmetic of that accumulator, whatever the op declares.
Op simulated_op(const std::string& name, const std::string& declared, const std::string& simulated,
                uint32_t abr, uint32_t abc, uint32_t bbr, uint32_t bbc) {
  Op op;
  op.name = name;
  op.impl = "sim";
  op.family = Family::kGemmBlock;
  op.memory = impl::Memory::kHost;
  impl::Contract& c = op.contract;
  c.a_dtypes = c.b_dtypes = impl::dtype_bit(Dtype::kE4m3fn) | impl::dtype_bit(Dtype::kE5m2);
  c.out_dtypes = impl::dtype_bit(Dtype::kF32) | impl::dtype_bit(Dtype::kBf16);
  c.a_scale_layouts = c.b_scale_layouts = c.b_layouts = impl::layout_bit(impl::Layout::kRowMajor);
  c.scale_dtype = Dtype::kF32;
  c.a_block_rows = abr;
  c.a_block_cols = abc;
  c.b_block_rows = bbr;
  c.b_block_cols = bbc;
  c.accumulator = declared;
  const AccumulatorModel model = parse_accumulator_spec(simulated);
  op.run = [model, abr, abc, bbr, bbc](gpu::Backend& be, const Call& call, std::string& message) {
    const uint64_t m = call.m, n = call.n, k = call.k;
    const BlockSizes blocks{whole(abr, m), whole(abc, k), whole(bbr, n), whole(bbc, k)};
    GemmProblem p = make_gemm_problem(m, n, k, blocks, true);
    const auto codes = [&be](const Tensor& t, std::vector<float>& out) {
      const auto* data = static_cast<const uint8_t*>(be.address(t.buffer));
      const uint64_t ld = t.ld == 0 ? t.cols : t.ld;
      for (uint64_t r = 0; r < t.rows; ++r) {
        for (uint64_t c = 0; c < t.cols; ++c) {
          out[r * t.cols + c] = decode(format_of(t.dtype), data[r * ld + c]);
        }
      }
    };
    const auto scales = [&be](const Tensor& t, std::vector<float>& out) {
      const auto* data = static_cast<const float*>(be.address(t.buffer));
      const uint64_t ld = t.ld == 0 ? t.cols : t.ld;
      for (uint64_t r = 0; r < t.rows; ++r) {
        for (uint64_t c = 0; c < t.cols; ++c) out[r * t.cols + c] = data[r * ld + c];
      }
    };
    if (call.a_scale.rows * call.a_scale.cols != p.a_scale.size() ||
        call.b_scale.rows * call.b_scale.cols != p.b_scale.size()) {
      message = "scale grids of another shape than the contract's blocks";
      return Status::kError;
    }
    codes(call.a, p.a);
    codes(call.b, p.b);
    scales(call.a_scale, p.a_scale);
    scales(call.b_scale, p.b_scale);
    const bool bf16 = call.out.dtype == Dtype::kBf16;
    const GemmOutput c = simulate_gemm(p, model, bf16 ? OutputFormat::kBf16 : OutputFormat::kFp32);
    void* out = be.address(call.out.buffer);
    if (bf16) {
      std::memcpy(out, c.bf16.data(), c.bf16.size() * 2);
    } else {
      std::memcpy(out, c.fp32.data(), c.fp32.size() * 4);
    }
    return Status::kDone;
  };
  return op;
}

// Per-tensor scales and the DeepSeek 1x128 / 128x128 blocks, both simulating `simulated`.
impl::Implementation simulated_impl(const std::string& declared,
                                    const std::string& simulated = "sm90_fp8_mma") {
  impl::Implementation im;
  im.name = im.spec = "sim";
  im.description = "the reference's simulation of " + simulated + ", declared " + declared;
  im.ops = {simulated_op("sim_tensor", declared, simulated, 0, 0, 0, 0),
            simulated_op("sim_deepseek", declared, simulated, 1, 128, 128, 128)};
  return im;
}

properties::RunResult run(const char* property, const impl::Implementation& im,
                          properties::Coverage* coverage = nullptr, int cases = 100) {
  static gpu::HostBackend be;
  properties::RunOptions opts;
  opts.seed = 1;
  opts.cases = cases;
  return properties::run_property(*properties::find_property(property),
                                  properties::Context{&be, {}, coverage, &im}, opts);
}

std::string why(const properties::RunResult& r) {
  return (r.failure ? r.failure->what : r.message) +
         (r.counterexample ? "\n" + r.counterexample->describe() : "");
}

// Guards against a correct Hopper-like kernel failing its gate: with the model it declares, its
// exact-mode cases are bit-equal to the correctly rounded GEMM and its general cases inside the
// model's bound; its E5M2 operands (the contract takes both FP8 types) are generated too.
TEST(DeclaredAccumulator, SimulatedSm90PassesEveryGemmPropertyAsSm90FpMma) {
  const impl::Implementation im = simulated_impl("sm90_fp8_mma");
  properties::Coverage cov;
  std::vector<std::string> ran;
  gpu::HostBackend be;
  for (const properties::Property& p : properties::all_properties()) {
    if (!properties::applies(p, im) ||
        properties::candidate_ops(p, properties::Context{&be, {}, nullptr, &im}).empty()) {
      continue;
    }
    ran.emplace_back(p.name);
    const properties::RunResult r = run(std::string(p.name).c_str(), im, &cov);
    EXPECT_TRUE(r.passed) << p.name << ": " << why(r);
    EXPECT_EQ(r.cases, 100) << p.name;
    EXPECT_EQ(r.unsupported, 0) << p.name;
    for (const std::string& u : r.unsupported_reasons) ADD_FAILURE() << p.name << ": " << u;
  }
  // The GEMM properties, the TP column and row splits, the poison of the allocator's slack past
  // the buffers (no padded layout) and the run-twice check.
  EXPECT_EQ(ran,
            (std::vector<std::string>{"gemm.exact", "gemm.ordered_bound",
                                      "metamorphic.tp_column_split", "metamorphic.tp_row_split",
                                      "metamorphic.padding_poison", "determinism.run_twice"}));
  for (const char* tag : {"dtype:e4m3fnxe4m3fn", "dtype:e4m3fnxe5m2", "dtype:e5m2xe4m3fn",
                          "dtype:e5m2xe5m2", "op:sim_tensor", "op:sim_deepseek"}) {
    EXPECT_GT(cov.count(tag), 0u) << tag;
  }
}

// Guards against a bound that passes whatever the op declares: the same Hopper arithmetic
// declared as fp32_rn (one rounding of 2^-24 per addition) drops bits fp32 keeps, and general
// data shows it as an element outside the fp32 bound, shrunk to one element; the failure names
// the declared model. Declared as sm90_fp8_mma, the same cases pass.
TEST(DeclaredAccumulator, SimulatedSm90DeclaredFp32RnLeavesTheBound) {
  const properties::RunResult r = run("gemm.ordered_bound", simulated_impl("fp32_rn"));
  ASSERT_FALSE(r.passed);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->kind, properties::Failure::Kind::kWrong);
  EXPECT_NE(r.failure->what.find("outside the error bound of accumulator fp32_rn"),
            std::string::npos)
      << r.failure->what;
  // Shrunk to one element of one 32-product group (measured: the first case fails; M = N = 1,
  // K = 32, the element (0,0)).
  ASSERT_TRUE(r.counterexample.has_value());
  EXPECT_EQ(r.counterexample->num("m"), 1u);
  EXPECT_EQ(r.counterexample->num("n"), 1u);
  EXPECT_LE(r.counterexample->num("k"), 32u);
  EXPECT_NE(r.failure->what.find("worst (0,0)"), std::string::npos) << r.failure->what;
  EXPECT_TRUE(run("gemm.ordered_bound", simulated_impl("sm90_fp8_mma")).passed);
}

// Guards against the same verdict on crafted data, element by element. Row 0 of A and B:
// a_0 b_0 = 256 * 256 = 2^16 and 31 products 7 = 7 * 1 at k = 1..31, all in the first group of
// 32 (per-tensor scales 1). sm90_fp8_mma aligns the group to 2^16 keeping 14 bits: the unit is
// 2^(16 - 13) = 8, and each 7 < 8 is truncated to 0, so C(0,0) = 65536 where the exact sum is
// 65536 + 31 * 7 = 65753. The fp32_rn bound for K = 32 (any order, three roundings per product and
// two per partial) is gamma_36 * 65753 = 36 * 2^-24 / (1 - 36 * 2^-24) * 65753 ~ 0.141: the error
// of 217 is outside it at (0, 0); the sm90_fp8_mma bound holds it. Every other element is 0.
TEST(DeclaredAccumulator, CraftedGroupLosesWhatTheFp32BoundForbids) {
  const std::size_t m = 2, n = 2, k = 32;
  properties::CraftedGemm g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a.assign(m * k, 0);
  g.b.assign(n * k, 0);
  g.a[0] = properties::fp8_code(Format::kE4M3FN, 256.0f);
  g.b[0] = properties::fp8_code(Format::kE4M3FN, 256.0f);
  for (std::size_t kk = 1; kk < k; ++kk) {
    g.a[kk] = properties::fp8_code(Format::kE4M3FN, 7.0f);
    g.b[kk] = properties::fp8_code(Format::kE4M3FN, 1.0f);
  }
  g.a_scale = g.b_scale = [](std::size_t, std::size_t) { return 1.0f; };
  GemmProblem p = make_gemm_problem(m, n, k, BlockSizes{m, k, n, k}, true);
  for (std::size_t i = 0; i < m * k; ++i) p.a[i] = decode(Format::kE4M3FN, g.a[i]);
  for (std::size_t i = 0; i < n * k; ++i) p.b[i] = decode(Format::kE4M3FN, g.b[i]);
  gpu::HostBackend be;
  for (const char* declared : {"fp32_rn", "sm90_fp8_mma"}) {
    SCOPED_TRACE(declared);
    const impl::Implementation im = simulated_impl(declared);
    const Op& op = im.ops.front();
    const std::vector<float> c = properties::run_crafted_gemm(be, op, g);
    ASSERT_EQ(c.size(), m * n);
    EXPECT_EQ(c[0], 65536.0f);
    const GemmOutput out{m, n, OutputFormat::kFp32, c, {}};
    const BoundVerdict v =
        check_bound(compute_bounds(p, impl::accum_model_for(op), OutputFormat::kFp32), out);
    if (std::string(declared) == "fp32_rn") {
      ASSERT_EQ(v.outside, 1u) << v.summary();
      ASSERT_TRUE(v.worst.has_value());
      EXPECT_EQ(v.worst->row, 0u);
      EXPECT_EQ(v.worst->col, 0u);
      EXPECT_EQ(v.worst->exact, 65753.0);
      EXPECT_LT(v.worst->bound, 0.15);
    } else {
      EXPECT_TRUE(v.ok()) << v.summary();
    }
  }
}

// Guards against exact-mode operands that are exact in fp32 but not in the op's accumulator. A
// model keeping 8 bits: exact_operands for an op declaring it hold sum |a b| below 2^8 units per
// chunk (reference/accumulator_exact.h) and the simulation equals exact_gemm bit for bit; the
// fp32 operands of the same shape are not exact in it, and on some seed the simulation differs
// from exact_gemm -- what a gemm.exact verdict would wrongly call a bug. gemm.exact then passes
// the narrow simulation declared as itself.
TEST(DeclaredAccumulator, ExactModeOperandsAreExactInTheDeclaredModel) {
  const std::string narrow = "sm90_fp8_mma:precision_bits=8";
  const AccumulatorModel model = parse_accumulator_spec(narrow);
  const impl::Implementation declared = simulated_impl(narrow, narrow);
  const impl::Implementation as_fp32 = simulated_impl("fp32_rn", narrow);
  const Op& op = declared.ops.back();  // 1x128 / 128x128
  const Op& fp32_op = as_fp32.ops.back();
  int fp32_differs = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    for (bool fingerprint : {false, true}) {
      const properties::Operands o = properties::exact_operands(op, 3, 5, 384, seed, fingerprint);
      std::string why_not;
      ASSERT_TRUE(is_exact_mode(o.problem, model, &why_not)) << why_not;
      const BitExactVerdict v =
          properties::compare(exact_gemm(o.problem, OutputFormat::kFp32),
                              simulate_gemm(o.problem, model, OutputFormat::kFp32));
      EXPECT_TRUE(v.ok()) << v.summary();
    }
    const properties::Operands f = properties::exact_operands(fp32_op, 3, 5, 384, seed, false);
    EXPECT_FALSE(is_exact_mode(f.problem, model));
    if (!properties::compare(exact_gemm(f.problem, OutputFormat::kFp32),
                             simulate_gemm(f.problem, model, OutputFormat::kFp32))
             .ok()) {
      ++fp32_differs;
    }
  }
  EXPECT_GT(fp32_differs, 0);
  const properties::RunResult r = run("gemm.exact", declared);
  EXPECT_TRUE(r.passed) << why(r);
  EXPECT_EQ(r.unsupported, 0);
}

// The probe's calls as crafted GEMMs on `op` (what `mxgate probe-accumulator --impl` does).
Fp8Gemm on_op(gpu::Backend& be, const Op& op) {
  return [&be, &op](const Fp8GemmCall& call) {
    properties::CraftedGemm g;
    g.m = call.m;
    g.n = call.n;
    g.k = call.k;
    g.a = call.a;
    g.b = call.b;
    const std::size_t kb = (call.k + 127) / 128;
    const bool tensor = call.scaling == ProbeScaling::kPerTensor;
    g.a_scale = [s = call.a_scale, kb, tensor](std::size_t r, std::size_t kk) {
      return tensor ? s.at(0) : s.at(r * kb + kk / 128);
    };
    g.b_scale = [s = call.b_scale, kb, tensor](std::size_t j, std::size_t kk) {
      return tensor ? s.at(0) : s.at((j / 128) * kb + kk / 128);
    };
    return properties::run_crafted_gemm(be, op, g);
  };
}

// Guards against a probe that reports the model it is told rather than the one an op computes:
// through the harness, the simulated Hopper op (per-tensor and 1x128 / 128x128 scales) shows
// 14 bits kept by truncation, promotion every 128 k, 32 products at a time: sm90_fp8_mma; the
// example plugin's gemm_block ops (fp32 products added in increasing k) and gemm_mx show fp32
// precision and round-to-nearest-even: fp32_rn.
TEST(DeclaredAccumulator, ProbeThroughTheHarnessRecoversEachOpsAccumulator) {
  gpu::HostBackend be;
  // The probe on op `name` of `impl`, its operands scaled as `scaling` says.
  const auto probe = [&be](const impl::Implementation& impl, const char* name,
                           ProbeScaling scaling) {
    ProbeOptions o;
    o.scaling = scaling;
    return probe_accumulator(on_op(be, *impl.find_op(name)), o);
  };
  const impl::Implementation sim = simulated_impl("sm90_fp8_mma");
  const impl::Implementation& ex = *impl::resolve("example").front();
  struct Case {
    const impl::Implementation* impl;
    const char* op;
    ProbeScaling scaling;
    int precision_bits;
    bool at_output_limit;
    const char* rounding;
    std::size_t chunk_k;  // 0: no promotion seen
    const char* model;
  };
  const Case cases[] = {
      {&sim, "sim_tensor", ProbeScaling::kPerTensor, 14, false, "truncate", 128, "sm90_fp8_mma"},
      {&sim, "sim_deepseek", ProbeScaling::kBlock, 14, false, "truncate", 128, "sm90_fp8_mma"},
      {&ex, "gemm_block_tensor", ProbeScaling::kPerTensor, 24, true, "nearest_even", 0, "fp32_rn"},
      {&ex, "gemm_block_deepseek", ProbeScaling::kBlock, 24, true, "nearest_even", 0, "fp32_rn"},
      {&ex, "gemm_mx", ProbeScaling::kPerTensor, 24, true, "nearest_even", 0, "fp32_rn"},
  };
  std::vector<ProbeResult> simulated;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    const ProbeResult r = probe(*c.impl, c.op, c.scaling);
    EXPECT_EQ(r.precision_bits, c.precision_bits);
    EXPECT_EQ(r.precision_at_output_limit, c.at_output_limit);
    EXPECT_EQ(r.rounding, c.rounding);
    EXPECT_EQ(r.chunk_k, c.chunk_k);
    EXPECT_EQ(r.model, c.model);
    if (c.impl == &sim) simulated.push_back(r);
  }
  // The simulated ops' promotion is verified, 32 products a group, and the model the probe names
  // is the registry's, with the registry's parameters.
  ASSERT_EQ(simulated.size(), 2u);
  const AlignedChunkParams& want = find_accumulator("sm90_fp8_mma")->chunks;
  for (const ProbeResult& r : simulated) {
    EXPECT_TRUE(r.chunk_verified);
    EXPECT_EQ(r.group_size, 32u);
    EXPECT_FALSE(r.new_model);
    const AlignedChunkParams got = parse_accumulator_spec(r.model).chunks;
    EXPECT_EQ(got.chunk_k, want.chunk_k);
    EXPECT_EQ(got.group_size, want.group_size);
    EXPECT_EQ(got.precision_bits, want.precision_bits);
    EXPECT_EQ(got.rounding, want.rounding);
    EXPECT_EQ(got.normalize_group_sum, want.normalize_group_sum);
  }
}

// Guards against the probe's calls reaching an op that cannot hold them: each mismatch is named
// before any call (the wrong element type, scales not constant over the op's blocks, a non-GEMM
// op), not turned into a wrong measurement.
TEST(DeclaredAccumulator, CraftedGemmRefusesWhatAnOpCannotHold) {
  const impl::Implementation& ex = *impl::resolve("example").front();
  properties::CraftedGemm g;
  g.m = g.n = 2;
  g.k = 256;
  g.a.assign(g.m * g.k, 0);
  g.b.assign(g.n * g.k, 0);
  g.a_scale = g.b_scale = [](std::size_t, std::size_t kk) { return kk < 128 ? 1.0f : 2.0f; };
  EXPECT_FALSE(properties::crafted_gemm_problem(*ex.find_op("gemm_block_deepseek"), g));
  const auto tensor = properties::crafted_gemm_problem(*ex.find_op("gemm_block_tensor"), g);
  ASSERT_TRUE(tensor.has_value());
  EXPECT_NE(tensor->find("A's scales are not constant over its 2x256 scale blocks (row 0, k 128)"),
            std::string::npos)
      << *tensor;
  g.a_scale = g.b_scale = [](std::size_t, std::size_t) { return 0.75f; };
  const auto mx = properties::crafted_gemm_problem(*ex.find_op("gemm_mx"), g);
  ASSERT_TRUE(mx.has_value());
  EXPECT_NE(mx->find("is not a positive normal power of two"), std::string::npos) << *mx;
  g.types.a = Dtype::kE5m2;
  const auto e5m2 = properties::crafted_gemm_problem(*ex.find_op("gemm_block_deepseek"), g);
  ASSERT_TRUE(e5m2.has_value());
  EXPECT_NE(e5m2->find("A element type e5m2 not in {e4m3fn}"), std::string::npos) << *e5m2;
  const auto cast = properties::crafted_gemm_problem(*ex.find_op("cast_satfinite"), g);
  ASSERT_TRUE(cast.has_value());
  EXPECT_NE(cast->find("is a cast op, not an FP8 GEMM"), std::string::npos) << *cast;
}

}  // namespace
}  // namespace mxgate
