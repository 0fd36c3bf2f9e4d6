// Covers dispatch/ on the host backend: config names, the per-platform registry walk (disabled
// set, supported, can_implement), the plan (`mxgate plan`, run as a process), every linear kernel's
// load processing and apply path, the layer lifecycle with steps skipped and reordered, and the
// invariants I1 (dot_scaled never reached with K % 128 != 0: a spy on its launch count, on the
// production shapes of docs/architecture.md §1.1), I2 (a weight is preshuffled at most once, never
// when it is read directly), I3 (activation-scale order negotiation), I4 (apply equals the
// reference: exact_gemm on exact-mode integer data for MXFP8 / bf16, ordered_gemm of the kernel's
// declared order for block FP8) and I5 (no per-step re-materialization after load processing,
// counted). Does not cover: GPU backends (same code, label gpu elsewhere), the bug zoo
// (test_dispatch_faults.cpp, property_zoo.cpp), bound-mode data, fused producers other than the
// reference 1x128 quantizer.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dispatch/layer.h"
#include "dispatch/negotiation.h"
#include "dispatch/registry.h"
#include "gpu/host/host_backend.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/quant_conventions.h"
#include "tests/dispatch_test_support.h"
#include "tests/shell.h"

namespace mxgate::dispatch {
namespace {

using dispatch::ActScaleOrder;
using gpu::Kernel;

using test_support::config;
using test_support::problem;
using test_support::Problem;
using test_support::reference;
using test_support::same;

// ---- config names --------------------------------------------------------------------------

// A renamed or mis-parsed enum name would silently select another scheme or platform.
TEST(DispatchConfig, NamesRoundTrip) {
  for (Scheme s : {Scheme::kMxfp8, Scheme::kFp8Block, Scheme::kBf16}) {
    EXPECT_EQ(parse_scheme(to_string(s)), s);
  }
  for (Platform p : {Platform::kGfx950, Platform::kGfx942, Platform::kSm90, Platform::kHost}) {
    EXPECT_EQ(parse_platform(to_string(p)), p);
  }
  for (WeightScaleDtype d : {WeightScaleDtype::kE8m0, WeightScaleDtype::kFp32}) {
    EXPECT_EQ(parse_weight_scale_dtype(to_string(d)), d);
  }
  EXPECT_FALSE(parse_scheme("mxfp4"));
  EXPECT_FALSE(parse_platform("gfx90a"));
  EXPECT_FALSE(parse_weight_scale_dtype("bf16"));
  EXPECT_EQ(to_string(LoadAction::kUpcastWeightScaleE8m0ToFp32),
            "upcast_weight_scale_e8m0_to_fp32");
  EXPECT_EQ(to_string(ApplyPath::kMxfp8DequantPerStep), "mxfp8_dequant_per_step");
  LinearConfig c = config(Platform::kGfx942, Scheme::kFp8Block, 16, 64);
  c.is_bmm = c.skip_weight_relayout = true;
  EXPECT_EQ(describe(c),
            "gfx942 fp8_block N=16 K=64 weight_scale=e8m0 flags=is_bmm,skip_weight_relayout");
}

// ---- registry ------------------------------------------------------------------------------

// The priority order and the walk decide which contract a layer runs under (docs/architecture.md
// §1.1, item 3).
TEST(DispatchRegistry, PriorityListsAndWalk) {
  EXPECT_EQ(choose_linear_kernel(config(Platform::kGfx950, Scheme::kMxfp8, 16, 128))
                .linear_kernel->name(),
            "DotScaledMxfp8");
  const Selection on942 = choose_linear_kernel(config(Platform::kGfx942, Scheme::kMxfp8, 16, 128));
  EXPECT_EQ(on942.linear_kernel->name(), "EmulationMxfp8");
  ASSERT_EQ(on942.rejected.size(), 1u);
  EXPECT_EQ(on942.rejected[0], "DotScaledMxfp8: not supported on gfx942");
  EXPECT_EQ(choose_linear_kernel(config(Platform::kGfx950, Scheme::kFp8Block, 16, 128))
                .linear_kernel->name(),
            "PreshuffledBlockScaledFp8");
  EXPECT_EQ(choose_linear_kernel(config(Platform::kGfx942, Scheme::kFp8Block, 16, 128))
                .linear_kernel->name(),
            "PreshuffledBlockScaledFp8");
  EXPECT_EQ(choose_linear_kernel(config(Platform::kSm90, Scheme::kFp8Block, 16, 128))
                .linear_kernel->name(),
            "BlockScaledFp8");
  EXPECT_EQ(
      choose_linear_kernel(config(Platform::kSm90, Scheme::kBf16, 3, 5)).linear_kernel->name(),
      "Bf16");
  // Disabled by name, like VLLM_DISABLED_KERNELS.
  const Selection off = choose_linear_kernel(config(Platform::kGfx950, Scheme::kFp8Block, 16, 128),
                                             {"PreshuffledBlockScaledFp8"});
  EXPECT_EQ(off.linear_kernel->name(), "BlockScaledFp8");
  EXPECT_EQ(off.rejected[0], "PreshuffledBlockScaledFp8: disabled");
  // can_implement: shuffle_weight needs N % 16 == 0, unless the weight keeps its layout.
  LinearConfig odd = config(Platform::kGfx950, Scheme::kFp8Block, 2112 + 8, 128);
  EXPECT_EQ(choose_linear_kernel(odd).linear_kernel->name(), "BlockScaledFp8");
  odd.is_bmm = true;
  EXPECT_EQ(choose_linear_kernel(odd).linear_kernel->name(), "PreshuffledBlockScaledFp8");
  // Nothing fits: an error naming every rejection, never a silent default.
  try {
    plan(config(Platform::kGfx950, Scheme::kMxfp8, 16, 48));
    ADD_FAILURE() << "no throw";
  } catch (const DispatchError& e) {
    EXPECT_NE(std::string(e.what()).find("DotScaledMxfp8: MXFP8 needs K % 32 == 0 (K = 48)"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("EmulationMxfp8"), std::string::npos) << e.what();
  }
}

// The plan of the production shapes: unaligned K is dequantized once and runs bf16_gemm.
TEST(DispatchPlan, ProductionShapesAndFlags) {
  const auto p = [](LinearConfig c) { return plan_json(plan(c)); };
  EXPECT_EQ(
      p(config(Platform::kGfx950, Scheme::kMxfp8, 5120, 576)),
      R"({"linear_kernel": "DotScaledMxfp8", "load": ["dequantize_weight_to_bf16"], "apply": "bf16_gemm"})");
  EXPECT_EQ(
      p(config(Platform::kGfx950, Scheme::kMxfp8, 5120, 288)),
      R"({"linear_kernel": "DotScaledMxfp8", "load": ["dequantize_weight_to_bf16"], "apply": "bf16_gemm"})");
  for (std::size_t k : {2304, 1152, 2048}) {
    EXPECT_EQ(p(config(Platform::kGfx950, Scheme::kMxfp8, 5120, k)),
              R"({"linear_kernel": "DotScaledMxfp8", "load": [], "apply": "mxfp8_dot_scaled"})");
  }
  EXPECT_EQ(
      p(config(Platform::kGfx942, Scheme::kFp8Block, 7168, 512)),
      R"({"linear_kernel": "PreshuffledBlockScaledFp8", "load": ["upcast_weight_scale_e8m0_to_fp32", "preshuffle_weight"], "apply": "fp8_blockscale_bpreshuffle"})");
  LinearConfig bmm =
      config(Platform::kGfx942, Scheme::kFp8Block, 7168, 512, WeightScaleDtype::kFp32);
  bmm.is_bmm = true;
  EXPECT_EQ(
      p(bmm),
      R"({"linear_kernel": "PreshuffledBlockScaledFp8", "load": [], "apply": "fp8_blockscale"})");
  LinearConfig kvb = config(Platform::kGfx950, Scheme::kFp8Block, 4096, 512);
  kvb.skip_weight_relayout = true;
  EXPECT_EQ(
      p(kvb),
      R"({"linear_kernel": "PreshuffledBlockScaledFp8", "load": ["upcast_weight_scale_e8m0_to_fp32"], "apply": "fp8_blockscale"})");
  EXPECT_EQ(p(config(Platform::kSm90, Scheme::kFp8Block, 256, 512, WeightScaleDtype::kFp32)),
            R"({"linear_kernel": "BlockScaledFp8", "load": [], "apply": "fp8_blockscale"})");
}

// The plan must be what the layer actually does: a plan that lies hides the path that runs.
TEST(DispatchPlan, PlanMatchesWhatLoadAndApplyDo) {
  gpu::HostBackend be;
  std::vector<LinearConfig> configs;
  for (Platform pf : {Platform::kGfx950, Platform::kGfx942, Platform::kSm90}) {
    for (std::size_t k : {160, 256}) {
      configs.push_back(config(pf, Scheme::kMxfp8, 32, k));
      for (auto ws : {WeightScaleDtype::kE8m0, WeightScaleDtype::kFp32}) {
        LinearConfig c = config(pf, Scheme::kFp8Block, 32, k, ws);
        configs.push_back(c);
        c.is_bmm = true;
        configs.push_back(c);
      }
    }
    configs.push_back(config(pf, Scheme::kBf16, 8, 40));
  }
  for (const LinearConfig& c : configs) {
    SCOPED_TRACE(describe(c));
    const Plan want = plan(c);
    Problem p = problem(c, 2, 7);
    LinearLayer layer(be, c);
    EXPECT_EQ(layer.linear_kernel().name(), want.linear_kernel);
    layer.load_float_weights(p.weight);
    layer.process_weights_after_loading();
    EXPECT_EQ(layer.state().load_actions, want.load);
    layer.apply(p.x);
    EXPECT_EQ(layer.last_apply().path, want.apply);
  }
}

// ---- I1: the production shapes of docs/architecture.md §1.1 ------------------------------

// Z1: without the third branch, an unaligned fp8 weight reaches dot_scaled when load processing
// did not run; the spy on the dot_scaled launch count must stay 0 either way.
TEST(DispatchDotScaled, UnalignedFp8WeightNeverReachesDotScaled) {
  gpu::HostBackend be;
  const DotScaledMxfp8 kernel;
  for (auto [n, k] : test_support::dot_scaled_shapes()) {
    for (bool processed : {false, true}) {
      SCOPED_TRACE("N=" + std::to_string(n) + " K=" + std::to_string(k) +
                   (processed ? " processed" : " unprocessed"));
      const LinearConfig c = config(Platform::kGfx950, Scheme::kMxfp8, n, k);
      Problem p = problem(c, 1, n + k);
      LinearLayer layer(be, c, kernel);
      const QuantizedWeight w = layer.load_float_weights(p.weight);
      if (processed) layer.process_weights_after_loading();
      const uint64_t spy_before = be.counters().launches_of(gpu::kernel("gemm_mx_dot_scaled"));
      const ApplyResult r = layer.apply(p.x);
      const uint64_t spy =
          be.counters().launches_of(gpu::kernel("gemm_mx_dot_scaled")) - spy_before;
      const bool aligned = k % kDotScaledKAlign == 0;
      EXPECT_EQ(spy, aligned ? 1u : 0u);
      const ApplyPath want = aligned     ? ApplyPath::kMxfp8DotScaled
                             : processed ? ApplyPath::kBf16Gemm
                                         : ApplyPath::kMxfp8DequantPerStep;
      EXPECT_EQ(r.path, want);
      EXPECT_EQ(layer.state().weight_elem_size, !aligned && processed ? 2u : 1u);
      EXPECT_TRUE(same(reference(c, w, p.x), r.out));
    }
  }
}

// Apply dispatches on the weight's element size, whatever K the config claims: a bf16 weight
// given directly as 2-byte elements goes to bf16_gemm, an fp8 one of aligned K to dot_scaled.
TEST(DispatchDotScaled, AlignmentConstantIsSharedByLoadAndApply) {
  EXPECT_EQ(kDotScaledKAlign, 128u);
  const DotScaledMxfp8 k;
  for (std::size_t kk : {96, 128, 160, 256, 288}) {
    const LinearConfig c = config(Platform::kGfx950, Scheme::kMxfp8, 16, kk);
    const bool aligned = kk % kDotScaledKAlign == 0;
    EXPECT_EQ(k.planned_load(c).empty(), aligned);
    EXPECT_EQ(k.planned_apply(c), aligned ? ApplyPath::kMxfp8DotScaled : ApplyPath::kBf16Gemm);
  }
}

// ---- I4: every lifecycle ------------------------------------------------------------------

enum class Step { kModelPreshuffle, kProcess, kApply };

// A linear kernel whose apply is right only after load processing (or only before) is wrong for the
// other lifecycle; model-side and linear-kernel-side preparation may come in either order.
TEST(DispatchLifecycle, ApplyEqualsReferenceForEveryLifecycle) {
  gpu::HostBackend be;
  const DotScaledMxfp8 dot;
  const EmulationMxfp8 emu_load(true), emu_step(false);
  const BlockScaledFp8 block;
  const PreshuffledBlockScaledFp8 pre;
  const Bf16 bf16;
  const std::vector<std::vector<Step>> lifecycles = {
      {Step::kApply},
      {Step::kProcess, Step::kApply, Step::kApply},
      {Step::kModelPreshuffle, Step::kProcess, Step::kApply},
      {Step::kProcess, Step::kModelPreshuffle, Step::kApply},
      {Step::kApply, Step::kModelPreshuffle, Step::kApply, Step::kProcess, Step::kApply},
  };
  struct Case {
    const LinearKernel* kernel;
    LinearConfig c;
  };
  std::vector<Case> cases;
  for (std::size_t k : {160, 256}) {
    for (const LinearKernel* kr : std::vector<const LinearKernel*>{&dot, &emu_load, &emu_step}) {
      cases.push_back({kr, config(Platform::kHost, Scheme::kMxfp8, 16, k)});
    }
    for (const LinearKernel* kr : std::vector<const LinearKernel*>{&block, &pre}) {
      for (auto ws : {WeightScaleDtype::kE8m0, WeightScaleDtype::kFp32}) {
        LinearConfig c = config(Platform::kHost, Scheme::kFp8Block, 16, k, ws);
        cases.push_back({kr, c});
        c.skip_weight_relayout = true;
        cases.push_back({kr, c});
      }
    }
  }
  cases.push_back({&bf16, config(Platform::kHost, Scheme::kBf16, 5, 40)});
  for (const Case& cs : cases) {
    for (std::size_t li = 0; li < lifecycles.size(); ++li) {
      for (std::size_t m : {1, 3}) {
        SCOPED_TRACE(std::string(cs.kernel->name()) + " " + describe(cs.c) + " lifecycle " +
                     std::to_string(li) + " M=" + std::to_string(m));
        Problem p = problem(cs.c, m, 11 + li);
        LinearLayer layer(be, cs.c, *cs.kernel);
        const QuantizedWeight w = layer.load_float_weights(p.weight);
        const GemmOutput want = reference(cs.c, w, p.x);
        for (Step s : lifecycles[li]) {
          if (s == Step::kModelPreshuffle) layer.model_preshuffle();
          if (s == Step::kProcess) layer.process_weights_after_loading();
          if (s == Step::kApply) {
            EXPECT_TRUE(same(want, layer.apply(p.x).out));
          }
        }
        EXPECT_LE(layer.state().weight_relayouts, 1);
      }
    }
  }
}

// ---- I5: counted hot path -----------------------------------------------------------------

// Z6: a per-step dequantize or e8m0 upcast of a static weight costs launches and weight-sized
// allocations on every forward; after load processing there must be none.
TEST(DispatchHotPath, NoRematerializationAfterLoadProcessing) {
  gpu::HostBackend be;
  for (const LinearConfig& c : test_support::hot_path_configs()) {
    SCOPED_TRACE(describe(c));
    Problem p = problem(c, 1, 3);
    LinearLayer layer(be, c);
    layer.load_float_weights(p.weight);
    layer.process_weights_after_loading();
    for (int step = 0; step < 3; ++step) {
      layer.apply(p.x);
      test_support::expect_no_rematerialization(layer.last_apply().delta, c);
    }
  }
}

// The accounting must see a re-materialization when it happens (else the test above is blind):
// skipped load processing leaves a per-step upcast, or a per-step weight dequantize before the
// bf16 GEMM (docs/dispatch_model.md §5.1), on every apply.
TEST(DispatchHotPath, SkippedLoadProcessingIsCounted) {
  gpu::HostBackend be;
  // One apply on a gfx950 layer whose load processing never ran.
  const auto unprocessed_apply = [&be](Scheme s, std::size_t n, std::size_t k) {
    const LinearConfig c = config(Platform::kGfx950, s, n, k);
    Problem p = problem(c, 1, 5);
    LinearLayer layer(be, c);
    layer.load_float_weights(p.weight);
    layer.apply(p.x);
    return layer.last_apply();
  };
  const ApplyStats block = unprocessed_apply(Scheme::kFp8Block, 256, 256);
  EXPECT_EQ(block.delta.launches_of(gpu::kernel("upcast_e8m0")), 1u);
  EXPECT_EQ(block.path, ApplyPath::kFp8Blockscale);
  const ApplyStats mx = unprocessed_apply(Scheme::kMxfp8, 256, 288);
  EXPECT_EQ(mx.delta.launches_of(gpu::kernel("dequant_mx_to_bf16")), 1u);
  EXPECT_EQ(mx.delta.launches_of(gpu::kernel("gemm_bf16")), 1u);
  EXPECT_EQ(mx.path, ApplyPath::kMxfp8DequantPerStep);
}

// ---- I2: relayout at most once, never for directly-read weights --------------------------

// Z3: the linear kernel preshuffles at load and the model shuffles again; Z4: a BMM / kv_b_proj
// weight is relaid out though other code reads it directly.
TEST(DispatchPreshuffle, AtMostOnceAndNeverForDirectlyReadWeights) {
  gpu::HostBackend be;
  for (int flags = 0; flags < 3; ++flags) {
    for (int order = 0; order < 3; ++order) {
      LinearConfig c = config(Platform::kGfx942, Scheme::kFp8Block, 16, 64);
      c.is_bmm = flags == 1;
      c.skip_weight_relayout = flags == 2;
      SCOPED_TRACE(describe(c) + " order " + std::to_string(order));
      Problem p = problem(c, 2, 9);
      const uint64_t shuffles_before = be.counters().launches_of(gpu::kernel("preshuffle_weight"));
      LinearLayer layer(be, c);
      const QuantizedWeight w = layer.load_float_weights(p.weight);
      if (order == 0) {
        layer.model_preshuffle();
        layer.process_weights_after_loading();
      } else if (order == 1) {
        layer.process_weights_after_loading();
        EXPECT_FALSE(layer.model_preshuffle());  // the model-side guard
      } else {
        layer.process_weights_after_loading();
        layer.process_weights_after_loading();
        layer.model_preshuffle();
      }
      const uint64_t shuffles =
          be.counters().launches_of(gpu::kernel("preshuffle_weight")) - shuffles_before;
      EXPECT_EQ(shuffles, flags == 0 ? 1u : 0u);
      EXPECT_EQ(layer.state().weight_relayouts, flags == 0 ? 1 : 0);
      const ApplyResult r = layer.apply(p.x);
      EXPECT_EQ(r.path,
                flags == 0 ? ApplyPath::kFp8BlockscaleBpreshuffle : ApplyPath::kFp8Blockscale);
      EXPECT_TRUE(same(reference(c, w, p.x), r.out));
    }
  }
}

// Z7: a directly-read layer must still get its e8m0 weight scales upcast at load.
TEST(DispatchPreshuffle, DirectlyReadLayerStillUpcastsScales) {
  gpu::HostBackend be;
  LinearConfig c = config(Platform::kGfx950, Scheme::kFp8Block, 16, 64);
  c.is_bmm = true;
  Problem p = problem(c, 2, 4);
  LinearLayer layer(be, c);
  const QuantizedWeight w = layer.load_float_weights(p.weight);
  layer.process_weights_after_loading();
  EXPECT_EQ(layer.state().load_actions,
            std::vector<LoadAction>{LoadAction::kUpcastWeightScaleE8m0ToFp32});
  EXPECT_EQ(layer.state().weight_scale_dtype, contract::Dtype::kF32);
  EXPECT_TRUE(same(reference(c, w, p.x), layer.apply(p.x).out));
  EXPECT_EQ(layer.last_apply().delta.launches_of(gpu::kernel("upcast_e8m0")), 0u);
}

// ---- I3: activation-scale order negotiation ----------------------------------------------

// Consumers that disagree must abandon the fused path, never receive the other's order.
TEST(DispatchNegotiation, AgreeOrGiveUp) {
  using O = ActScaleOrder;
  const auto n = [](std::vector<O> v) { return negotiate_act_scale_order(v); };
  EXPECT_EQ(n({O::kRowMajor}), O::kRowMajor);
  EXPECT_EQ(n({O::kColMajor, O::kColMajor}), O::kColMajor);
  EXPECT_EQ(n({O::kRowMajor, O::kColMajor}), O::kNone);
  EXPECT_EQ(n({O::kColMajor, O::kColMajor, O::kRowMajor}), O::kNone);
  EXPECT_EQ(n({}), O::kNone);
  EXPECT_EQ(n({O::kColMajor, O::kNone}), O::kNone);
}

// Z2 end to end: one activation feeding a preshuffled (column-major) and a plain (row-major)
// consumer; the fused form in either order is wrong for one of them and must be refused, the
// unfused path is right for both; agreeing consumers get the fused form and are right.
TEST(DispatchNegotiation, ConsumersGetTheirOrderOrTheUnfusedPath) {
  gpu::HostBackend be;
  const LinearConfig c = config(Platform::kGfx950, Scheme::kFp8Block, 16, 256);  // Z2: M=2, K=256
  Problem p = problem(c, 2, 21);
  const PreshuffledBlockScaledFp8 preshuffled;
  const BlockScaledFp8 block;
  LinearLayer pre(be, c, preshuffled);
  LinearLayer plain(be, c, block);
  LinearLayer pre2(be, c, preshuffled);
  const QuantizedWeight w = pre.load_float_weights(p.weight);
  plain.load_weights(w);
  pre2.load_weights(w);
  for (LinearLayer* l : {&pre, &plain, &pre2}) l->process_weights_after_loading();
  const GemmOutput want = reference(c, w, p.x);
  EXPECT_EQ(pre.act_scale_order(), ActScaleOrder::kColMajor);
  EXPECT_EQ(plain.act_scale_order(), ActScaleOrder::kRowMajor);

  const std::vector<ActScaleOrder> mixed = {pre.act_scale_order(), plain.act_scale_order()};
  EXPECT_EQ(negotiate_act_scale_order(mixed), ActScaleOrder::kNone);
  EXPECT_TRUE(same(want, pre.apply(p.x).out));  // unfused: each quantizes in its own order
  EXPECT_TRUE(same(want, plain.apply(p.x).out));
  for (ActScaleOrder o : {ActScaleOrder::kRowMajor, ActScaleOrder::kColMajor}) {
    Activation fused = p.x;
    fused.pre_quantized = quantize_activation_1x128(p.x, o);
    LinearLayer& wrong = o == ActScaleOrder::kRowMajor ? pre : plain;
    EXPECT_THROW(wrong.apply(fused), DispatchError);
  }

  const std::vector<ActScaleOrder> agree = {pre.act_scale_order(), pre2.act_scale_order()};
  const ActScaleOrder o = negotiate_act_scale_order(agree);
  ASSERT_EQ(o, ActScaleOrder::kColMajor);
  Activation fused = p.x;
  fused.pre_quantized = quantize_activation_1x128(p.x, o);
  EXPECT_TRUE(same(want, pre.apply(fused).out));
  EXPECT_TRUE(same(want, pre2.apply(fused).out));
}

// ---- misuse is an error, never a wrong answer --------------------------------------------

// A layer used out of order or with mismatched shapes must raise, not compute garbage.
TEST(DispatchErrors, MisuseThrows) {
  gpu::HostBackend be;
  const LinearConfig c = config(Platform::kGfx950, Scheme::kMxfp8, 16, 128);
  Problem p = problem(c, 1, 1);
  LinearLayer layer(be, c);
  EXPECT_THROW(layer.apply(p.x), DispatchError);
  EXPECT_THROW(layer.process_weights_after_loading(), DispatchError);
  EXPECT_THROW(layer.load_weights(QuantizedWeight{{1, 2, 3}, {}}), DispatchError);
  layer.load_float_weights(p.weight);
  EXPECT_THROW(layer.load_float_weights(p.weight), DispatchError);
  Activation bad = p.x;
  bad.k = 96;
  EXPECT_THROW(layer.apply(bad), DispatchError);
  const BlockScaledFp8 block;
  EXPECT_THROW(LinearLayer(be, c, block), DispatchError);
  const DotScaledMxfp8 dot;
  EXPECT_THROW(LinearLayer(be, config(Platform::kSm90, Scheme::kMxfp8, 16, 128), dot),
               DispatchError);
  EXPECT_THROW(LinearLayer(be, config(Platform::kSm90, Scheme::kMxfp8, 16, 48)), DispatchError);
}

// ---- mxgate plan ---------------------------------------------------------------------------

// `mxgate plan ARGS`, stdout and stderr together.
mxgate::test_support::ShellResult run_plan(const std::string& args) {
  return mxgate::test_support::run_shell(std::string(MXGATE_CLI) + " plan " + args + " 2>&1");
}

// The CLI must print exactly the plan the library computes, and reject bad input with exit 2.
TEST(DispatchPlanCli, JsonAndErrors) {
  mxgate::test_support::ShellResult r =
      run_plan("--platform gfx950 --scheme mxfp8 --n 5120 --k 576 --json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out,
            "{\"linear_kernel\": \"DotScaledMxfp8\", \"load\": [\"dequantize_weight_to_bf16\"], "
            "\"apply\": \"bf16_gemm\"}\n");
  r = run_plan("--platform gfx950 --scheme mxfp8 --n 5120 --k 2304 --json");
  EXPECT_NE(r.out.find("\"apply\": \"mxfp8_dot_scaled\""), std::string::npos) << r.out;
  r = run_plan("--platform gfx942 --scheme fp8_block --n 7168 --k 512 --flags is_bmm --json");
  EXPECT_EQ(r.out,
            "{\"linear_kernel\": \"PreshuffledBlockScaledFp8\", \"load\": [], \"apply\": "
            "\"fp8_blockscale\"}\n");
  r = run_plan("--platform gfx950 --scheme fp8_block --n 16 --k 64 --weight-scale e8m0");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("upcast_weight_scale_e8m0_to_fp32 preshuffle_weight"), std::string::npos);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--platform gfx90a --scheme mxfp8 --n 1 --k 32", "--platform 'gfx90a'"},
      {"--platform gfx950 --scheme mxfp4 --n 1 --k 32", "--scheme 'mxfp4'"},
      {"--platform gfx950 --scheme mxfp8 --k 32", "--n"},
      {"--platform gfx950 --scheme mxfp8 --n 0 --k 32", "--n"},
      {"--platform gfx950 --scheme mxfp8 --n 16 --k 48", "K % 32 == 0"},
      {"--platform gfx950 --scheme mxfp8 --n 16 --k 64 --flags is_bmx", "is_bmx"},
      {"--platform gfx950 --scheme fp8_block --n 16 --k 64 --weight-scale fp16", "fp16"},
      {"--platform gfx950 --scheme mxfp8 --n 16 --k 64 --disable NoSuch",
       "unknown linear kernel 'NoSuch'"},
  };
  for (const auto& [args, needle] : bad) {
    r = run_plan(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << " -> " << r.out;
  }
}

}  // namespace
}  // namespace mxgate::dispatch

namespace mxgate::dispatch {
namespace {

// `plan --model` must walk the catalogued layers: DeepSeek-V4.1-Flash's shared-expert down_proj
// at TP8 has K = 288 (K % 128 = 32, docs/architecture.md §1.1) and must be dequantized once at
// load, never sent to dot_scaled; at TP2 (K = 1152) it takes dot_scaled.
TEST(DispatchPlanCli, ModelFormWalksTheCatalog) {
  mxgate::test_support::ShellResult r =
      run_plan("--platform gfx950 --model DeepSeek-V4.1-Flash --tp 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(
                "\"layer\": \"shared_expert_down_proj\", \"n\": 5120, \"k\": 288, "
                "\"linear_kernel\": \"DotScaledMxfp8\", \"load\": [\"dequantize_weight_to_bf16\"], "
                "\"apply\": \"bf16_gemm\""),
            std::string::npos)
      << r.out;
  r = run_plan("--platform gfx950 --model DeepSeek-V4.1-Flash --tp 2 --json");
  EXPECT_NE(r.out.find("\"layer\": \"shared_expert_down_proj\", \"n\": 5120, \"k\": 1152, "
                       "\"linear_kernel\": \"DotScaledMxfp8\", \"load\": [], \"apply\": "
                       "\"mxfp8_dot_scaled\""),
            std::string::npos)
      << r.out;
}

// MLA reads kv_b_proj directly (docs/architecture.md §1.1, item 3 (d)): the model form must never
// plan a preshuffle for it, while the other block-FP8 layers of the same model are preshuffled.
TEST(DispatchPlanCli, ModelFormNeverRelaysOutKvBProj) {
  const mxgate::test_support::ShellResult r =
      run_plan("--platform gfx942 --model DeepSeek-V3/R1 --tp 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(
      r.out.find("\"layer\": \"kv_b_proj\", \"n\": 4096, \"k\": 512, \"linear_kernel\": "
                 "\"PreshuffledBlockScaledFp8\", \"load\": [], \"apply\": \"fp8_blockscale\""),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"load\": [\"preshuffle_weight\"]"), std::string::npos) << r.out;
}

// Bad model-form input exits 2 with the problem named.
TEST(DispatchPlanCli, ModelFormErrors) {
  mxgate::test_support::ShellResult r = run_plan("--platform gfx950 --model NoSuchModel --tp 8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("matches no catalogued model"), std::string::npos) << r.out;
  r = run_plan("--platform gfx950 --model DeepSeek-V4.1-Flash");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--model needs --tp"), std::string::npos) << r.out;
  r = run_plan("--platform gfx950 --model DeepSeek-V4.1-Flash --tp 8 --n 16");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--n does not go with --model"), std::string::npos) << r.out;
  r = run_plan("--platform gfx950 --model DeepSeek-V4.1-Flash --tp 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("at TP 3"), std::string::npos) << r.out;
}

// `plan --impl` input that cannot be compared exits 2 naming it, before any Python runs (the
// comparison itself is tested from Python: python/tests/test_layers_cli.py).
TEST(DispatchPlanCli, ImplErrors) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--platform gfx950 --scheme bf16 --n 16 --k 64 --impl py:m:O",
       "--impl compares mxfp8 and fp8_block layers"},
      {"--platform gfx950 --scheme mxfp8 --n 16 --k 64 --disable EmulationMxfp8 --impl py:m:O",
       "--disable does not go with --impl"},
      {"--platform gfx950 --scheme mxfp8 --n 16 --k 64 --impl example",
       "--impl 'example': plan compares a py:MODULE:OBJECT layer adapter"},
  };
  for (const auto& [args, needle] : bad) {
    const mxgate::test_support::ShellResult r = run_plan(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << " -> " << r.out;
  }
}

}  // namespace
}  // namespace mxgate::dispatch
