#include "model/decision_tables.h"

#include <string>

namespace mxgate::model::tables {
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

}  // namespace

std::span<const SelectRow> select_rows() {
  // Per-platform rules: §2.1 platforms, §3.1 the walk, §3.2 priority lists, §3.3 support, §3.4
  // can_implement; DS-V3, DS-V4.1, GLM and Qwen3 layers from the production catalog.
  static const std::vector<SelectRow> rows = {
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
  return rows;
}

std::span<const PlanRow> plan_rows() {
  Environment per_step;
  per_step.emulation_dequantizes_at_load = false;
  static const std::vector<PlanRow> rows = {
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
  return rows;
}

std::span<const LifecycleRow> lifecycle_rows() {
  static const std::vector<LifecycleRow> rows = {
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
  return rows;
}

std::span<const NegotiationRow> negotiation_rows() {
  static const std::vector<NegotiationRow> rows = {
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
  return rows;
}

namespace {

std::string str(std::string_view s) { return std::string(s); }

std::string kernel_text(const std::optional<LinearKernel>& k) {
  return k ? str(name(*k)) : std::string("none (a refusal)");
}

std::string actions_text(const std::vector<LoadAction>& a) {
  std::string out = "[";
  for (LoadAction x : a) out += (out.size() > 1 ? ", " : "") + str(name(x));
  return out + "]";
}

}  // namespace

std::optional<std::string> check(const SelectRow& r) {
  Trace t;
  const Selection s = select(r.layer, r.platform, r.env, &t);
  if (s.linear_kernel != r.want) {
    return std::string(r.what) + ": picked " + kernel_text(s.linear_kernel) + ", the rule gives " +
           kernel_text(r.want);
  }
  if (!t.has(r.branch))
    return std::string(r.what) + ": branch " + str(name(r.branch)) + " not taken";
  return std::nullopt;
}

std::optional<std::string> check(const PlanRow& r) {
  const std::optional<Plan> p = plan(r.layer, r.platform, r.env);
  if (!p) return std::string(r.what) + ": no plan";
  const std::vector<LoadAction> load(p->load.begin(), p->load.end());
  if (p->linear_kernel != r.linear_kernel || load != r.load || p->apply != r.apply) {
    return std::string(r.what) + ": plan " + str(name(p->linear_kernel)) + " " +
           actions_text(load) + " " + str(name(p->apply)) + ", the rule gives " +
           str(name(r.linear_kernel)) + " " + actions_text(r.load) + " " + str(name(r.apply));
  }
  return std::nullopt;
}

std::optional<std::string> check(const LifecycleRow& r) {
  WeightState w = loaded(r.layer);
  const Environment env;
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const Step& s = r.steps[i];
    const std::string at = std::string(r.what) + ", step " + std::to_string(i) + ": ";
    if (s.kind == Step::kProcess) {
      const Actions a = process(r.linear_kernel, r.layer, env, w);
      const std::vector<LoadAction> got(a.begin(), a.end());
      if (got != s.actions) {
        return at + "processing did " + actions_text(got) + ", the rule " + actions_text(s.actions);
      }
    } else if (s.kind == Step::kModelShuffle) {
      if (model_preshuffle(r.linear_kernel, r.layer, w) != s.shuffles) {
        return at + "the model-side shuffle " + (s.shuffles ? "did not shuffle" : "shuffled");
      }
    } else {
      const ApplyOutcome o = apply(r.linear_kernel, r.layer, w, s.fused);
      if (o.refused != s.refused) return at + (o.refused ? "refused" : "accepted") + " the input";
      if (!s.refused) {
        if (o.path != s.path) {
          return at + "apply took " + str(name(o.path)) + ", the rule " + str(name(s.path));
        }
        if (o.per_step_upcast != s.per_step_upcast) return at + "per-step upcast differs";
        if (o.uses_fused != (s.fused != ScaleOrder::kNone && s.declared != ScaleOrder::kNone)) {
          return at + "use of the fused activation differs";
        }
      }
    }
    if (declared_order(r.linear_kernel, w) != s.declared) {
      return at + "declares " + str(name(declared_order(r.linear_kernel, w))) + ", the rule " +
             str(name(s.declared));
    }
    if (w.relayouts > 1) return at + "I2: the weight was relaid out twice";
  }
  return std::nullopt;
}

std::optional<std::string> check(const NegotiationRow& r) {
  Trace t;
  const std::optional<ScaleOrder> got = negotiate(r.consumers, &t);
  if (got != r.want) {
    return std::string(r.what) + ": negotiated " + (got ? str(name(*got)) : "no order") +
           ", the rule gives " + (r.want ? str(name(*r.want)) : "no order");
  }
  if (!t.has(r.branch))
    return std::string(r.what) + ": branch " + str(name(r.branch)) + " not taken";
  return std::nullopt;
}

std::vector<std::string> replay_model(std::size_t* rows) {
  std::vector<std::string> out;
  std::size_t n = 0;
  const auto note = [&](const std::optional<std::string>& v) {
    ++n;
    if (v) out.push_back(*v);
  };
  for (const SelectRow& r : select_rows()) note(check(r));
  for (const PlanRow& r : plan_rows()) note(check(r));
  for (const LifecycleRow& r : lifecycle_rows()) note(check(r));
  for (const NegotiationRow& r : negotiation_rows()) note(check(r));
  // §3.4: a layer no linear kernel can run has no plan (DS-V4.1 down_proj at TP16, K = 144).
  LayerSpec k144;
  k144.n = 5120;
  k144.k = 144;
  note(plan(k144, Platform::kGfx950, {})
           ? std::optional<std::string>("§3.4 K%32: a plan for a layer no linear "
                                        "kernel can run")
           : std::nullopt);
  if (rows != nullptr) *rows = n;
  return out;
}

}  // namespace mxgate::model::tables
