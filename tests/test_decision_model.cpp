// The decision model (model/) against hand-written tables: each row's expected outcome comes from
// a rule of docs/dispatch_model.md (cited beside it), never from dispatch/ or from the model.
// Covers: selection on every platform, load actions and apply paths of every linear kernel,
// lifecycles out of order (apply before processing, model-side shuffle before and after
// processing, second processing), declared activation-scale orders, negotiation, branch names.
// Does not cover: dispatch itself (test_decision_dispatch.cpp compares dispatch with the model).
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/decision_model.h"

namespace mxgate::model {
namespace {

using K = LinearKernel;
using A = LoadAction;
using P = ApplyPath;
using O = ScaleOrder;

constexpr Platform kGfx950 = Platform::kGfx950, kGfx942 = Platform::kGfx942,
                   kSm90 = Platform::kSm90, kHost = Platform::kHost;

LayerSpec layer(Scheme s, uint64_t n, uint64_t k, ScaleDtype ws = ScaleDtype::kE8m0,
                bool is_bmm = false, bool skip = false) {
  LayerSpec l;
  l.scheme = s;
  l.n = n;
  l.k = k;
  l.weight_scale = ws;
  l.is_bmm = is_bmm;
  l.skip_weight_relayout = skip;
  return l;
}
LayerSpec mx(uint64_t n, uint64_t k, ScaleDtype ws = ScaleDtype::kE8m0) {
  return layer(Scheme::kMxfp8, n, k, ws);
}
LayerSpec block(uint64_t n, uint64_t k, ScaleDtype ws = ScaleDtype::kFp32, bool is_bmm = false,
                bool skip = false) {
  return layer(Scheme::kFp8Block, n, k, ws, is_bmm, skip);
}
constexpr ScaleDtype kE8m0 = ScaleDtype::kE8m0, kFp32 = ScaleDtype::kFp32;

Environment disabled(std::initializer_list<LinearKernel> ks) {
  Environment e;
  for (LinearKernel k : ks) e.disable(k);
  return e;
}

struct SelectRow {
  const char* what;  // the rule and the production layer, if any
  Platform platform;
  LayerSpec layer;
  Environment env;
  std::optional<LinearKernel> want;
  Branch branch;  // a branch the selection must take
};

// A registry that picks a linear kernel the platform lacks, skips the one a rule puts first, or
// accepts a layer no linear kernel can run, sends the layer to the wrong code (or none) silently.
TEST(DecisionModelSelect, TableOfRules) {
  const std::vector<SelectRow> rows = {
      // §3.2 + §3.3: gfx950 has native MX; DS-V4.1-Flash shared_expert_down_proj TP4.
      {"§3.3 gfx950 native MX",
       kGfx950,
       mx(5120, 576),
       {},
       K::kDotScaledMxfp8,
       Branch::kSelectDotScaled},
      // §3.3: CDNA3 has no native MX: the selector falls through to emulation.
      {"§3.3 gfx942 falls through",
       kGfx942,
       mx(5120, 576),
       {},
       K::kEmulationMxfp8,
       Branch::kSelectSkipUnsupported},
      // §3.2: the CUDA MXFP8 list's only modelled linear kernel.
      {"§3.2 sm90 emulation",
       kSm90,
       mx(5120, 2304),
       {},
       K::kEmulationMxfp8,
       Branch::kSelectEmulation},
      // §2.1: the host has every linear kernel and the ROCm lists.
      {"§2.1 host", kHost, mx(256, 2048), {}, K::kDotScaledMxfp8, Branch::kSelectDotScaled},
      // §3.4: K = 144 (DS-V4.1 down_proj at TP16) is off the MX block: no MXFP8 linear kernel.
      {"§3.4 K%32", kGfx950, mx(5120, 144), {}, std::nullopt, Branch::kRejectMxKAlign},
      // §3.4: MXFP8 scales are e8m0.
      {"§3.4 fp32 MX scales",
       kGfx950,
       mx(5120, 576, kFp32),
       {},
       std::nullopt,
       Branch::kRejectMxScaleDtype},
      // §3.1: a disabled linear kernel is skipped by name (VLLM_DISABLED_KERNELS).
      {"§3.1 disabled", kGfx950, mx(5120, 576), disabled({K::kDotScaledMxfp8}), K::kEmulationMxfp8,
       Branch::kSelectSkipDisabled},
      {"§3.1 all disabled", kGfx950, mx(5120, 576),
       disabled({K::kDotScaledMxfp8, K::kEmulationMxfp8}), std::nullopt, Branch::kSelectNone},
      // §3.2: the preshuffled linear kernel first on ROCm (#51692); DS-V3 q_b_proj TP1.
      {"§3.2 preshuffled first",
       kGfx950,
       block(24576, 1536),
       {},
       K::kPreshuffledBlockScaledFp8,
       Branch::kSelectPreshuffled},
      {"§3.2 gfx942 preshuffled",
       kGfx942,
       block(3072, 1536, kE8m0),
       {},
       K::kPreshuffledBlockScaledFp8,
       Branch::kSelectPreshuffled},
      // §3.4: the N gate of #51692 excluded fused_qkv_a_proj, N = 2112.
      {"§3.4 N%128 (2112)",
       kGfx950,
       block(2112, 7168),
       {},
       K::kBlockScaledFp8,
       Branch::kRejectPreshuffleN128},
      {"§3.4 N%128 (576)",
       kGfx942,
       block(576, 7168),
       {},
       K::kBlockScaledFp8,
       Branch::kRejectPreshuffleN128},
      // §3.4: shuffle_weight's K % 32; GLM-4.5-Air moe_w2 at TP16 has K = 88.
      {"§3.4 shuffle tile K=88",
       kGfx950,
       block(4096, 88),
       {},
       K::kBlockScaledFp8,
       Branch::kRejectPreshuffleShuffle},
      // §3.4: K % 128 != 0 but K % 32 == 0 is shuffled fine (Qwen3-235B moe_w2 TP16, K = 96).
      {"§3.4 K=96 shuffles",
       kGfx950,
       block(4096, 96),
       {},
       K::kPreshuffledBlockScaledFp8,
       Branch::kSelectPreshuffled},
      // §3.4: selection sees (N, K) only: the flags of DS-V4 wo_a change nothing here...
      {"§3.4 flags unseen (wo_a)",
       kGfx950,
       block(1024, 4096, kE8m0, true, false),
       {},
       K::kPreshuffledBlockScaledFp8,
       Branch::kSelectPreshuffled},
      // ... nor do they waive the shuffle tile.
      {"§3.4 flags do not waive the tile",
       kGfx950,
       block(4096, 88, kFp32, true, false),
       {},
       K::kBlockScaledFp8,
       Branch::kRejectPreshuffleShuffle},
      {"§3.2 sm90 block",
       kSm90,
       block(24576, 1536),
       {},
       K::kBlockScaledFp8,
       Branch::kSelectBlockScaled},
      {"§3.1 preshuffled disabled", kGfx950, block(24576, 1536),
       disabled({K::kPreshuffledBlockScaledFp8}), K::kBlockScaledFp8, Branch::kSelectSkipDisabled},
      {"§3.2 bf16", kSm90, layer(Scheme::kBf16, 64, 4096), {}, K::kBf16, Branch::kSelectBf16},
      {"§3.1 bf16 disabled", kHost, layer(Scheme::kBf16, 64, 4096), disabled({K::kBf16}),
       std::nullopt, Branch::kSelectNone},
  };
  for (const SelectRow& r : rows) {
    Trace t;
    const Selection s = select(r.layer, r.platform, r.env, &t);
    EXPECT_EQ(s.linear_kernel, r.want) << r.what;
    EXPECT_TRUE(t.has(r.branch)) << r.what << ": branch " << name(r.branch) << " not taken";
  }
}

struct PlanRow {
  const char* what;
  Platform platform;
  LayerSpec layer;
  Environment env;
  LinearKernel linear_kernel;
  std::vector<LoadAction> load;
  ApplyPath apply;
};

// A plan whose load actions or apply path depart from the rules re-materializes a constant per
// step, relays a weight out that other code reads, or runs a GEMM outside its contract.
TEST(DecisionModelPlan, TableOfRules) {
  Environment per_step;
  per_step.emulation_dequantizes_at_load = false;
  const std::vector<PlanRow> rows = {
      // §4.1, §5.1 (#56560): K = 576, K % 128 = 64: dequantize once, then a plain linear.
      {"§4.1 K%128!=0",
       kGfx950,
       mx(5120, 576),
       {},
       K::kDotScaledMxfp8,
       {A::kDequantizeWeightToBf16},
       P::kBf16Gemm},
      {"§4.1 K=288",
       kGfx950,
       mx(5120, 288),
       {},
       K::kDotScaledMxfp8,
       {A::kDequantizeWeightToBf16},
       P::kBf16Gemm},
      // The aligned control of the review's regression test.
      {"§4.1 aligned", kGfx950, mx(256, 2048), {}, K::kDotScaledMxfp8, {}, P::kMxfp8DotScaled},
      // §4.2: emulation dequantizes at load by default.
      {"§4.2 emulation at load",
       kGfx942,
       mx(5120, 2304),
       {},
       K::kEmulationMxfp8,
       {A::kDequantizeWeightToBf16},
       P::kBf16Gemm},
      {"§4.2 emulation per step",
       kGfx942,
       mx(5120, 2304),
       per_step,
       K::kEmulationMxfp8,
       {},
       P::kMxfp8DequantPerStep},
      // §4.4: upcast first, then preshuffle once.
      {"§4.4 e8m0",
       kGfx950,
       block(3072, 1536, kE8m0),
       {},
       K::kPreshuffledBlockScaledFp8,
       {A::kUpcastWeightScaleToFp32, A::kPreshuffleWeight},
       P::kFp8BlockscaleBpreshuffle},
      {"§4.4 fp32",
       kGfx950,
       block(3072, 1536),
       {},
       K::kPreshuffledBlockScaledFp8,
       {A::kPreshuffleWeight},
       P::kFp8BlockscaleBpreshuffle},
      // §4.4: DS-V4 wo_a (is_bmm) keeps its layout but still gets the upcast (Z7's risk).
      {"§4.4 wo_a",
       kGfx950,
       block(1024, 4096, kE8m0, true, false),
       {},
       K::kPreshuffledBlockScaledFp8,
       {A::kUpcastWeightScaleToFp32},
       P::kFp8Blockscale},
      // §4.4: MLA kv_b_proj (skip_weight_relayout) keeps its layout.
      {"§4.4 kv_b_proj",
       kGfx950,
       block(4096, 512, kFp32, false, true),
       {},
       K::kPreshuffledBlockScaledFp8,
       {},
       P::kFp8Blockscale},
      // §4.3 (#47773): the plain block linear kernel upcasts e8m0 once.
      {"§4.3 e8m0",
       kSm90,
       block(2112, 7168, kE8m0),
       {},
       K::kBlockScaledFp8,
       {A::kUpcastWeightScaleToFp32},
       P::kFp8Blockscale},
      {"§4.3 fp32", kGfx950, block(2112, 7168), {}, K::kBlockScaledFp8, {}, P::kFp8Blockscale},
      {"§4.5 bf16", kGfx950, layer(Scheme::kBf16, 32, 5120), {}, K::kBf16, {}, P::kBf16Gemm},
  };
  for (const PlanRow& r : rows) {
    const std::optional<Plan> p = plan(r.layer, r.platform, r.env);
    ASSERT_TRUE(p.has_value()) << r.what;
    EXPECT_EQ(p->linear_kernel, r.linear_kernel) << r.what;
    EXPECT_EQ(std::vector<LoadAction>(p->load.begin(), p->load.end()), r.load) << r.what;
    EXPECT_EQ(p->apply, r.apply) << r.what;
  }
  EXPECT_FALSE(plan(mx(5120, 144), kGfx950, {}).has_value()) << "§3.4 no linear kernel, no plan";
}

// One step of a lifecycle and what it must do.
struct Step {
  enum Kind { kProcess, kModelShuffle, kApply } kind;
  ScaleOrder fused = O::kNone;           // kApply: the pre-quantized input (kNone: plain)
  std::vector<LoadAction> actions = {};  // kProcess: the actions
  bool shuffles = false;                 // kModelShuffle
  bool refused = false;                  // kApply
  ApplyPath path = P::kBf16Gemm;         // kApply
  bool per_step_upcast = false;          // kApply
  ScaleOrder declared = O::kNone;        // the order declared after the step
};

struct LifecycleRow {
  const char* what;
  LinearKernel linear_kernel;
  LayerSpec layer;
  std::vector<Step> steps;
};

Step process_step(std::vector<LoadAction> a, ScaleOrder declared = O::kNone) {
  Step s{Step::kProcess};
  s.actions = std::move(a);
  s.declared = declared;
  return s;
}
Step shuffle_step(bool shuffles, ScaleOrder declared) {
  Step s{Step::kModelShuffle};
  s.shuffles = shuffles;
  s.declared = declared;
  return s;
}
Step apply_step(ApplyPath p, ScaleOrder declared = O::kNone, bool upcast = false,
                ScaleOrder fused = O::kNone) {
  Step s{Step::kApply};
  s.path = p;
  s.per_step_upcast = upcast;
  s.fused = fused;
  s.declared = declared;
  return s;
}
Step refused_step(ScaleOrder fused, ScaleOrder declared) {
  Step s{Step::kApply};
  s.fused = fused;
  s.refused = true;
  s.declared = declared;
  return s;
}

// Lifecycles tests may reorder (I4): apply before processing, the model's shuffle before and
// after the linear kernel's, a second processing. A rule broken here is a double shuffle, a
// skipped upcast, an illegal dot_scaled or a fused activation read in the wrong order.
TEST(DecisionModelLifecycle, TableOfRules) {
  const std::vector<LifecycleRow> rows = {
      // §5.1: processing skipped, an fp8 weight of K = 160 takes the restored third branch;
      // then processing dequantizes (§4.1) and a second one finds bf16 (§4.5).
      {"§5.1 review's third branch",
       K::kDotScaledMxfp8,
       mx(1, 160),
       {apply_step(P::kMxfp8DequantPerStep), process_step({A::kDequantizeWeightToBf16}),
        apply_step(P::kBf16Gemm), process_step({}), apply_step(P::kBf16Gemm)}},
      // §4.6 then §4.4: the model shuffles first; the linear kernel's processing only upcasts (I2).
      {"§4.6 model first",
       K::kPreshuffledBlockScaledFp8,
       block(128, 256, kE8m0),
       {shuffle_step(true, O::kColMajor), process_step({A::kUpcastWeightScaleToFp32}, O::kColMajor),
        apply_step(P::kFp8BlockscaleBpreshuffle, O::kColMajor)}},
      // vLLM test_rocm_gateup_shuffles_once_...: processing first, the model's guard after.
      {"§4.6 linear kernel first",
       K::kPreshuffledBlockScaledFp8,
       block(256, 128, kE8m0),
       {process_step({A::kUpcastWeightScaleToFp32, A::kPreshuffleWeight}, O::kColMajor),
        shuffle_step(false, O::kColMajor), process_step({}, O::kColMajor),
        apply_step(P::kFp8BlockscaleBpreshuffle, O::kColMajor)}},
      // vLLM test_rocm_wo_a_keeps_row_major_weights: is_bmm keeps the layout everywhere.
      {"§4.4 wo_a",
       K::kPreshuffledBlockScaledFp8,
       block(256, 128, kE8m0, true, false),
       {shuffle_step(false, O::kRowMajor),
        process_step({A::kUpcastWeightScaleToFp32}, O::kRowMajor),
        apply_step(P::kFp8Blockscale, O::kRowMajor)}},
      // §5.2: unprocessed e8m0 scales are upcast for the step, processed ones not.
      {"§5.2 per-step upcast",
       K::kBlockScaledFp8,
       block(1, 32, kE8m0),
       {shuffle_step(false, O::kRowMajor), apply_step(P::kFp8Blockscale, O::kRowMajor, true),
        process_step({A::kUpcastWeightScaleToFp32}, O::kRowMajor),
        apply_step(P::kFp8Blockscale, O::kRowMajor, false)}},
      // §5.3: the preshuffled linear kernel on a plain weight reads row-major As; a column-major
      // activation is refused until the weight is preshuffled, then the row-major one is.
      {"§5.3 order follows the weight",
       K::kPreshuffledBlockScaledFp8,
       block(128, 256),
       {refused_step(O::kColMajor, O::kRowMajor),
        apply_step(P::kFp8Blockscale, O::kRowMajor, false, O::kRowMajor),
        process_step({A::kPreshuffleWeight}, O::kColMajor),
        refused_step(O::kRowMajor, O::kColMajor),
        apply_step(P::kFp8BlockscaleBpreshuffle, O::kColMajor, false, O::kColMajor)}},
      // §5.3: an MXFP8 linear kernel reads no 1x128 scales: a fused form is not its to read.
      {"§5.3 ignored",
       K::kDotScaledMxfp8,
       mx(4, 256),
       {apply_step(P::kMxfp8DotScaled, O::kNone, false, O::kRowMajor), process_step({}),
        apply_step(P::kMxfp8DotScaled, O::kNone, false, O::kColMajor)}},
      {"§4.2 emulation",
       K::kEmulationMxfp8,
       mx(4, 96),
       {apply_step(P::kMxfp8DequantPerStep), process_step({A::kDequantizeWeightToBf16}),
        apply_step(P::kBf16Gemm)}},
  };
  for (const LifecycleRow& r : rows) {
    WeightState w = loaded(r.layer);
    const Environment env;
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
      const Step& s = r.steps[i];
      const std::string at = std::string(r.what) + ", step " + std::to_string(i);
      if (s.kind == Step::kProcess) {
        const Actions a = process(r.linear_kernel, r.layer, env, w);
        EXPECT_EQ(std::vector<LoadAction>(a.begin(), a.end()), s.actions) << at;
      } else if (s.kind == Step::kModelShuffle) {
        EXPECT_EQ(model_preshuffle(r.linear_kernel, r.layer, w), s.shuffles) << at;
      } else {
        const ApplyOutcome o = apply(r.linear_kernel, r.layer, w, s.fused);
        EXPECT_EQ(o.refused, s.refused) << at;
        if (!s.refused) {
          EXPECT_EQ(o.path, s.path) << at;
          EXPECT_EQ(o.per_step_upcast, s.per_step_upcast) << at;
          EXPECT_EQ(o.uses_fused, s.fused != O::kNone && s.declared != O::kNone) << at;
        }
      }
      EXPECT_EQ(declared_order(r.linear_kernel, w), s.declared) << at;
      EXPECT_LE(w.relayouts, 1) << at << ": I2";
    }
  }
}

struct NegotiationRow {
  const char* what;
  std::vector<ScaleOrder> consumers;
  std::optional<ScaleOrder> want;
  Branch branch;
};

// A negotiation that keeps the fused path when consumers disagree hands one of them scales in
// the wrong order: same shape, wrong numbers (vLLM #56433 defect 1).
TEST(DecisionModelNegotiation, TableOfRules) {
  const std::vector<NegotiationRow> rows = {
      {"§6 agree col (fused_wqa_wkv into two preshuffled GEMMs)",
       {O::kColMajor, O::kColMajor},
       O::kColMajor,
       Branch::kNegotiateAgreeColMajor},
      {"§6 one consumer", {O::kRowMajor}, O::kRowMajor, Branch::kNegotiateAgreeRowMajor},
      {"§6 three agree",
       {O::kRowMajor, O::kRowMajor, O::kRowMajor},
       O::kRowMajor,
       Branch::kNegotiateAgreeRowMajor},
      {"§6 disagree", {O::kColMajor, O::kRowMajor}, std::nullopt, Branch::kNegotiateDisagree},
      {"§6 undeclared", {O::kColMajor, O::kNone}, std::nullopt, Branch::kNegotiateUndeclared},
      {"§6 undeclared wins over disagreement",
       {O::kRowMajor, O::kColMajor, O::kNone},
       std::nullopt,
       Branch::kNegotiateUndeclared},
      {"§6 no consumer", {}, std::nullopt, Branch::kNegotiateUndeclared},
  };
  for (const NegotiationRow& r : rows) {
    Trace t;
    EXPECT_EQ(negotiate(r.consumers, &t), r.want) << r.what;
    EXPECT_TRUE(t.has(r.branch)) << r.what;
  }
}

// Coverage tags come from branch names: two branches sharing a name would hide one of them.
TEST(DecisionModelBranches, NamesAreDistinctAndGrouped) {
  std::set<std::string> names;
  for (Branch b : all_branches()) {
    const std::string n(name(b));
    EXPECT_TRUE(names.insert(n).second) << n;
    const std::string group = n.substr(0, n.find('.'));
    EXPECT_TRUE(group == "select" || group == "load" || group == "model_shuffle" ||
                group == "apply" || group == "order" || group == "negotiate")
        << n;
  }
  EXPECT_EQ(names.size(), kBranchCount);
}

// §3.4: selection reads (N, K), the scheme and the scale dtype, never the layer flags.
TEST(DecisionModelSelect, FlagsNeverChangeTheSelection) {
  for (Platform p : {kGfx950, kGfx942, kSm90, kHost}) {
    for (uint64_t n : {16u, 128u, 2112u, 4096u}) {
      for (uint64_t k : {88u, 96u, 128u, 576u}) {
        for (Scheme s : {Scheme::kMxfp8, Scheme::kFp8Block, Scheme::kBf16}) {
          const std::optional<LinearKernel> plain = select(layer(s, n, k), p, {}).linear_kernel;
          for (auto [bmm, skip] : {std::pair{true, false}, {false, true}, {true, true}}) {
            EXPECT_EQ(select(layer(s, n, k, kE8m0, bmm, skip), p, {}).linear_kernel, plain)
                << n << "x" << k;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace mxgate::model
