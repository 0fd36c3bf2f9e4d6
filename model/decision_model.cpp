// The rules, each with its origin (docs/dispatch_model.md carries the facts and their public
// sources; the section cited above each rule is where).
#include "model/decision_model.h"

#include <array>

#include "common/blocks.h"

namespace mxgate::model {
namespace {

void take(Trace* t, Branch b) {
  if (t != nullptr) t->add(b);
}

// tl.dot_scaled tiles K by 128 with an unmasked K loop (vLLM
// vllm/model_executor/kernels/linear/mxfp8/rocm_native.py, _DOT_SCALED_K_ALIGN; §4.1): the
// block-FP8 K block of common/blocks.h. The OCP MX block (one e8m0 scale per 32 elements along
// K, §3.4) is its kMxBlock.
constexpr uint64_t kDotScaledKAlign = kBlockK;
// The N gate of the preshuffled block linear kernel as vLLM #51692 shipped it (it excluded
// DeepSeek's fused_qkv_a_proj, N = 2112; §3.4).
constexpr uint64_t kPreshuffleNAlign = 128;
// AITER shuffle_weight(w, (16, 16)) asserts N % 16 == 0 and K % 32 == 0 (aiter/ops/shuffle.py;
// §3.4).
constexpr uint64_t kShuffleN = 16, kShuffleK = 32;

constexpr std::array<std::string_view, kLinearKernelCount> kLinearKernelNames = {
    "DotScaledMxfp8", "EmulationMxfp8", "PreshuffledBlockScaledFp8", "BlockScaledFp8", "Bf16"};

Scheme scheme_of(LinearKernel k) {
  switch (k) {
    case LinearKernel::kDotScaledMxfp8:
    case LinearKernel::kEmulationMxfp8:
      return Scheme::kMxfp8;
    case LinearKernel::kPreshuffledBlockScaledFp8:
    case LinearKernel::kBlockScaledFp8:
      return Scheme::kFp8Block;
    case LinearKernel::kBf16:
      return Scheme::kBf16;
  }
  return Scheme::kBf16;
}

Branch pick_branch(LinearKernel k) {
  switch (k) {
    case LinearKernel::kDotScaledMxfp8:
      return Branch::kSelectDotScaled;
    case LinearKernel::kEmulationMxfp8:
      return Branch::kSelectEmulation;
    case LinearKernel::kPreshuffledBlockScaledFp8:
      return Branch::kSelectPreshuffled;
    case LinearKernel::kBlockScaledFp8:
      return Branch::kSelectBlockScaled;
    case LinearKernel::kBf16:
      return Branch::kSelectBf16;
  }
  return Branch::kSelectNone;
}

bool is_rocm(Platform p) { return p == Platform::kGfx950 || p == Platform::kGfx942; }

// §4.3: the one upcast of static e8m0 weight scales (vLLM #47773), shared by both block
// linear kernels.
void upcast_once(const WeightState& before, WeightState& w, Actions& out, Trace* trace) {
  if (before.scale == WeightScale::kE8m0) {
    w.scale = WeightScale::kFp32;
    out.push(LoadAction::kUpcastWeightScaleToFp32);
    take(trace, Branch::kLoadUpcastScale);
  } else {
    take(trace, Branch::kLoadScaleAlreadyFp32);
  }
}

void dequantize(WeightState& w, Actions& out, Trace* trace) {
  // §4.1: the bf16 copy replaces the fp8 weight; no scale is read after it.
  w.element = Element::kBf16;
  w.scale = WeightScale::kNone;
  out.push(LoadAction::kDequantizeWeightToBf16);
  take(trace, Branch::kLoadDequantize);
}

// §5.3: a consumer of 1x128 scales takes a pre-quantized activation only in the order it reads;
// anything else is refused loudly (vLLM #56433 defect 1: the wrong order has the same shape and
// gives wrong numbers silently).
bool refuse_fused(ScaleOrder declared, ScaleOrder fused, ApplyOutcome& out, Trace* trace) {
  if (fused == ScaleOrder::kNone) return false;
  if (fused != declared) {
    out.refused = true;
    take(trace, Branch::kApplyFusedRefused);
    return true;
  }
  out.uses_fused = true;
  take(trace, Branch::kApplyFusedAccepted);
  return false;
}

// §5.3: linear kernels that read no 1x128 fp32 scales quantize (or not) the plain activation
// themselves; a pre-quantized form handed to them is not theirs to read.
void ignore_fused(ScaleOrder fused, Trace* trace) {
  if (fused != ScaleOrder::kNone) take(trace, Branch::kApplyFusedIgnored);
}

}  // namespace

std::string_view name(LinearKernel k) { return kLinearKernelNames[static_cast<std::size_t>(k)]; }

std::string_view name(Reject r) {
  static constexpr std::array<std::string_view, 8> kNames = {
      "can implement",
      "disabled",
      "not supported on the platform",
      "implements another scheme",
      "MXFP8 needs K % 32 == 0",
      "MXFP8 weight scales are e8m0",
      "the preshuffled linear kernel needs N % 128 == 0",
      "shuffle_weight needs N % 16 == 0 and K % 32 == 0"};
  return kNames[static_cast<std::size_t>(r)];
}

std::string_view name(LoadAction a) {
  static constexpr std::array<std::string_view, 3> kNames = {
      "dequantize_weight_to_bf16", "upcast_weight_scale_e8m0_to_fp32", "preshuffle_weight"};
  return kNames[static_cast<std::size_t>(a)];
}

std::string_view name(ApplyPath p) {
  static constexpr std::array<std::string_view, 5> kNames = {
      "bf16_gemm", "mxfp8_dot_scaled", "mxfp8_dequant_per_step", "fp8_blockscale",
      "fp8_blockscale_bpreshuffle"};
  return kNames[static_cast<std::size_t>(p)];
}

std::string_view name(ScaleOrder o) {
  static constexpr std::array<std::string_view, 3> kNames = {"none", "row_major", "col_major"};
  return kNames[static_cast<std::size_t>(o)];
}

// ---- selection (§3) -------------------------------------------------------------------------

std::span<const LinearKernel> priority(Platform p, Scheme s) {
  // §3.2. ROCm MXFP8: vLLM _POSSIBLE_MXFP8_KERNELS[ROCM] = [RocmDotScaledMxfp8LinearKernel,
  // EmulationMxfp8LinearKernel]. ROCm block FP8: AiterPreshuffledFp8BlockScaledMMKernel first
  // (vLLM #51692, as #56433 describes), then the plain AITER / Triton block-scaled linear
  // kernels. CUDA: of the MXFP8 list only the emulation linear kernel is modelled; of the block
  // list the plain block-scaled GEMM (DeepGEMM / CUTLASS / Triton). The host platform has every
  // linear kernel (§2.1) and takes the ROCm lists, the ones that name every one.
  static constexpr LinearKernel kRocmMx[] = {LinearKernel::kDotScaledMxfp8,
                                             LinearKernel::kEmulationMxfp8};
  static constexpr LinearKernel kRocmBlock[] = {LinearKernel::kPreshuffledBlockScaledFp8,
                                                LinearKernel::kBlockScaledFp8};
  static constexpr LinearKernel kCudaMx[] = {LinearKernel::kEmulationMxfp8};
  static constexpr LinearKernel kCudaBlock[] = {LinearKernel::kBlockScaledFp8};
  static constexpr LinearKernel kBf16List[] = {LinearKernel::kBf16};
  const bool cuda = p == Platform::kSm90;
  switch (s) {
    case Scheme::kMxfp8:
      return cuda ? std::span<const LinearKernel>(kCudaMx) : std::span<const LinearKernel>(kRocmMx);
    case Scheme::kFp8Block:
      return cuda ? std::span<const LinearKernel>(kCudaBlock)
                  : std::span<const LinearKernel>(kRocmBlock);
    case Scheme::kBf16:
      return kBf16List;
  }
  return {};
}

bool supported(LinearKernel k, Platform p, Trace* trace) {
  bool ok = true;
  switch (k) {
    case LinearKernel::kDotScaledMxfp8:
      // §3.3: native MX needs CDNA4 (current_platform.supports_mx(): gfx95x); elsewhere the
      // selector falls through to emulation (rocm_native.py is_supported).
      ok = p == Platform::kGfx950 || p == Platform::kHost;
      break;
    case LinearKernel::kPreshuffledBlockScaledFp8:
      // §3.3: AITER's CK block-scale GEMMs run on CDNA3/4 (gfx940/941/942/950).
      ok = is_rocm(p) || p == Platform::kHost;
      break;
    case LinearKernel::kEmulationMxfp8:
    case LinearKernel::kBlockScaledFp8:
    case LinearKernel::kBf16:
      ok = true;  // §3.3: software emulation, Triton / CUTLASS block GEMMs, plain linear
      break;
  }
  if (!ok) take(trace, Branch::kSelectSkipUnsupported);
  return ok;
}

Reject can_implement(LinearKernel k, const LayerSpec& layer, Trace* trace) {
  if (scheme_of(k) != layer.scheme) {
    take(trace, Branch::kRejectScheme);
    return Reject::kScheme;
  }
  switch (k) {
    case LinearKernel::kDotScaledMxfp8:
    case LinearKernel::kEmulationMxfp8:
      // §3.4: neither MXFP8 linear kernel filters on K (rocm_native.py: "can_implement does not
      // filter on K"); what they refuse is not an MXFP8 layer at all: scales other than e8m0
      // (apply raises "Expected e8m0 weight_scale") or K off the 32-element MX block (the scale
      // crop K // 32 would drop the tail block).
      if (layer.weight_scale != ScaleDtype::kE8m0) {
        take(trace, Branch::kRejectMxScaleDtype);
        return Reject::kMxScaleDtype;
      }
      if (layer.k % kMxBlock != 0) {
        take(trace, Branch::kRejectMxKAlign);
        return Reject::kMxKAlign;
      }
      return Reject::kNone;
    case LinearKernel::kPreshuffledBlockScaledFp8:
      // §3.4: selection sees (N, K) only (FP8ScaledMMLinearLayerConfig.weight_shape), never the
      // layer flags: the linear kernel must be able to shuffle every layer it accepts.
      if (layer.n % kPreshuffleNAlign != 0) {
        take(trace, Branch::kRejectPreshuffleN128);
        return Reject::kPreshuffleN128;
      }
      if (layer.n % kShuffleN != 0 || layer.k % kShuffleK != 0) {
        take(trace, Branch::kRejectPreshuffleShuffle);
        return Reject::kPreshuffleShuffle;
      }
      return Reject::kNone;
    case LinearKernel::kBlockScaledFp8:
      // §3.4: any N and K (partial 128-blocks are ceil-divided); e8m0 and fp32 scales both reach
      // it (vLLM #47773).
    case LinearKernel::kBf16:
      return Reject::kNone;
  }
  return Reject::kNone;
}

Selection select(const LayerSpec& layer, Platform p, const Environment& env, Trace* trace) {
  // §3.1: vLLM choose_scaled_mm_linear_kernel / init_mxfp8_linear_kernel: walk the platform's
  // list; skip a linear kernel named in VLLM_DISABLED_KERNELS, then one not supported, then one
  // that cannot implement the layer; the first left wins; none left is an error (ValueError).
  Selection s;
  for (LinearKernel k : priority(p, layer.scheme)) {
    Reject why = Reject::kNone;
    if (env.is_disabled(k)) {
      take(trace, Branch::kSelectSkipDisabled);
      why = Reject::kDisabled;
    } else if (!supported(k, p, trace)) {
      why = Reject::kUnsupported;
    } else {
      why = can_implement(k, layer, trace);
    }
    if (why == Reject::kNone) {
      s.linear_kernel = k;
      take(trace, pick_branch(k));
      return s;
    }
    s.passed_over[s.passed_over_count++] = why;
  }
  take(trace, Branch::kSelectNone);
  return s;
}

// ---- load processing (§4) -------------------------------------------------------------------

WeightState loaded(const LayerSpec& layer) {
  WeightState w;
  switch (layer.scheme) {
    case Scheme::kMxfp8:
      w.element = Element::kFp8;
      w.scale = WeightScale::kE8m0;
      break;
    case Scheme::kFp8Block:
      w.element = Element::kFp8;
      w.scale = layer.weight_scale == ScaleDtype::kE8m0 ? WeightScale::kE8m0 : WeightScale::kFp32;
      break;
    case Scheme::kBf16:
      w.element = Element::kBf16;
      w.scale = WeightScale::kNone;
      break;
  }
  return w;
}

Actions process(LinearKernel k, const LayerSpec& layer, const Environment& env, WeightState& w,
                Trace* trace) {
  Actions out;
  const WeightState before = w;
  switch (k) {
    case LinearKernel::kDotScaledMxfp8:
      // §4.1 (the RocmDotScaledMxfp8LinearKernel change, vLLM #56560): dequantize once when
      // dot_scaled cannot run the weight, K % 128 != 0; an aligned weight stays fp8. Keyed on
      // what the weight is, so a second processing finds bf16 and does nothing (§4.5).
      if (before.element == Element::kBf16) {
        take(trace, Branch::kLoadAlreadyBf16);
      } else if (layer.k % kDotScaledKAlign != 0) {
        dequantize(w, out, trace);
      } else {
        take(trace, Branch::kLoadKeepFp8Aligned);
      }
      break;
    case LinearKernel::kEmulationMxfp8:
      // §4.2: EmulationMxfp8LinearKernel dequantizes at load unless
      // VLLM_MXFP8_EMULATION_DEQUANT_AT_LOAD=0, which keeps fp8 and dequantizes per step.
      if (before.element == Element::kBf16) {
        take(trace, Branch::kLoadAlreadyBf16);
      } else if (env.emulation_dequantizes_at_load) {
        dequantize(w, out, trace);
      } else {
        take(trace, Branch::kLoadKeepFp8PerStep);
      }
      break;
    case LinearKernel::kBlockScaledFp8:
      upcast_once(before, w, out, trace);  // §4.3 (vLLM #47773)
      break;
    case LinearKernel::kPreshuffledBlockScaledFp8:
      // §4.4 (vLLM #56433): the upcast first, for every layer: a directly-read layer that
      // returned before it would hand e8m0 bytes to a GEMM reading fp32 (the review's open
      // risk). Then the B-preshuffle, once: not for a weight other code reads in its checkpoint
      // layout (is_bmm: DS-V4 wo_a; skip_weight_relayout: MLA kv_b_proj), not for a weight
      // already preshuffled (by the model, §4.6, or an earlier processing: I2).
      upcast_once(before, w, out, trace);
      if (layer.reads_weight_directly()) {
        take(trace, Branch::kLoadKeepLayoutReadsDirectly);
      } else if (before.layout == Layout::kPreshuffled) {
        take(trace, Branch::kLoadKeepLayoutAlreadyPreshuffled);
      } else {
        w.layout = Layout::kPreshuffled;
        ++w.relayouts;
        out.push(LoadAction::kPreshuffleWeight);
        take(trace, Branch::kLoadPreshuffle);
      }
      break;
    case LinearKernel::kBf16:
      take(trace, Branch::kLoadBf16Nothing);  // §4.5: nothing to prepare
      break;
  }
  return out;
}

bool model_preshuffle(LinearKernel k, const LayerSpec& layer, WeightState& w, Trace* trace) {
  // §4.6: DS-V4's prepare_*_preshuffle (vLLM #46720) shuffles a projection so a preshuffled
  // GEMM can read it; after #56433 only where the layer's linear kernel reads a preshuffled weight
  // (capability flag preshuffles_weight), never a weight read directly, and never twice (the
  // model-side weight_already_preshuffled guard).
  if (k != LinearKernel::kPreshuffledBlockScaledFp8) {
    take(trace, Branch::kModelShuffleSkipPlainKernel);
    return false;
  }
  if (layer.reads_weight_directly()) {
    take(trace, Branch::kModelShuffleSkipReadsDirectly);
    return false;
  }
  if (w.layout == Layout::kPreshuffled) {
    take(trace, Branch::kModelShuffleSkipAlreadyPreshuffled);
    return false;
  }
  w.layout = Layout::kPreshuffled;
  ++w.relayouts;
  take(trace, Branch::kModelShuffle);
  return true;
}

// ---- apply (§5) -----------------------------------------------------------------------------

ScaleOrder declared_order(LinearKernel k, const WeightState& w, Trace* trace) {
  // §5.4: the block linear kernels read 1x128 fp32 activation scales: the plain GEMM row-major
  // (gemm_a8w8_blockscale), the bpreshuffle GEMM column-major (gemm_a8w8_blockscale_bpreshuffle,
  // AITER; vLLM #56433 wants_transposed_act_scale). The preshuffled linear kernel declares the
  // order of the GEMM its apply will pick, i.e. of the weight as it is now. MXFP8 and bf16 linear
  // kernels read none.
  ScaleOrder o = ScaleOrder::kNone;
  if (k == LinearKernel::kBlockScaledFp8) o = ScaleOrder::kRowMajor;
  if (k == LinearKernel::kPreshuffledBlockScaledFp8) {
    o = w.layout == Layout::kPreshuffled ? ScaleOrder::kColMajor : ScaleOrder::kRowMajor;
  }
  take(trace, o == ScaleOrder::kRowMajor   ? Branch::kOrderRowMajor
              : o == ScaleOrder::kColMajor ? Branch::kOrderColMajor
                                           : Branch::kOrderNone);
  return o;
}

ApplyOutcome apply(LinearKernel k, const LayerSpec& layer, const WeightState& w, ScaleOrder fused,
                   Trace* trace) {
  ApplyOutcome out;
  switch (k) {
    case LinearKernel::kDotScaledMxfp8:
      // §5.1 (vLLM #56560 apply_weights): dispatch on the weight's element size, never on
      // whether load processing ran: a bf16 weight runs a plain linear; an fp8 weight runs
      // dot_scaled when K % 128 == 0 and otherwise the per-step dequantize fallback (the third
      // branch the review restored: dot_scaled is illegal there).
      ignore_fused(fused, trace);
      if (w.element == Element::kBf16) {
        out.path = ApplyPath::kBf16Gemm;
        take(trace, Branch::kApplyBf16Weight);
      } else if (layer.k % kDotScaledKAlign == 0) {
        out.path = ApplyPath::kMxfp8DotScaled;
        take(trace, Branch::kApplyDotScaled);
      } else {
        out.path = ApplyPath::kMxfp8DequantPerStep;
        take(trace, Branch::kApplyPerStepFallback);
      }
      return out;
    case LinearKernel::kEmulationMxfp8:
      // §5.1 (EmulationMxfp8LinearKernel.apply_weights): bf16 weight -> plain linear; fp8 ->
      // dequantize for this step.
      ignore_fused(fused, trace);
      if (w.element == Element::kBf16) {
        out.path = ApplyPath::kBf16Gemm;
        take(trace, Branch::kApplyBf16Weight);
      } else {
        out.path = ApplyPath::kMxfp8DequantPerStep;
        take(trace, Branch::kApplyEmulationPerStep);
      }
      return out;
    case LinearKernel::kBf16:
      ignore_fused(fused, trace);
      out.path = ApplyPath::kBf16Gemm;
      take(trace, Branch::kApplyBf16Weight);
      return out;
    case LinearKernel::kBlockScaledFp8:
    case LinearKernel::kPreshuffledBlockScaledFp8: {
      // §5.2 (vLLM #56433): the GEMM follows the weight: preshuffled -> bpreshuffle reading
      // column-major As; plain -> the plain block-scale GEMM reading row-major As. The plain
      // linear kernel never holds a preshuffled weight (§4.6): refusing one is not a decision
      // branch.
      const bool shuffled = w.layout == Layout::kPreshuffled;
      if (k == LinearKernel::kBlockScaledFp8 && shuffled) {
        out.refused = true;
        return out;
      }
      if (refuse_fused(declared_order(k, w, nullptr), fused, out, trace)) return out;
      out.path = shuffled ? ApplyPath::kFp8BlockscaleBpreshuffle : ApplyPath::kFp8Blockscale;
      take(trace, shuffled ? Branch::kApplyBpreshuffle : Branch::kApplyBlockscale);
      // §5.2: scales still e8m0 (processing did not run) are upcast for this step: correct, and
      // what #47773 moved to load time.
      if (w.scale == WeightScale::kE8m0) {
        out.per_step_upcast = true;
        take(trace, Branch::kApplyPerStepUpcast);
      }
      return out;
    }
  }
  return out;
}

std::optional<Plan> plan(const LayerSpec& layer, Platform p, const Environment& env, Trace* trace) {
  const Selection s = select(layer, p, env, trace);
  if (!s.linear_kernel) return std::nullopt;
  WeightState w = loaded(layer);
  const Actions load = process(*s.linear_kernel, layer, env, w, trace);
  const ApplyOutcome a = apply(*s.linear_kernel, layer, w, ScaleOrder::kNone, trace);
  return Plan{*s.linear_kernel, load, a.path};
}

// ---- negotiation (§6) -----------------------------------------------------------------------

std::optional<ScaleOrder> negotiate(std::span<const ScaleOrder> consumers, Trace* trace) {
  // §6 (vLLM #56433): the fused norm + quant producer asks every consumer of its output; the
  // answer is one order (true / false) or None, and None abandons the fused path. A consumer
  // that reads no 1x128 scales cannot take a fused activation at all, and with no consumer
  // there is no order to emit.
  if (consumers.empty()) {
    take(trace, Branch::kNegotiateUndeclared);
    return std::nullopt;
  }
  for (ScaleOrder o : consumers) {
    if (o == ScaleOrder::kNone) {
      take(trace, Branch::kNegotiateUndeclared);
      return std::nullopt;
    }
  }
  for (ScaleOrder o : consumers) {
    if (o != consumers.front()) {
      take(trace, Branch::kNegotiateDisagree);
      return std::nullopt;
    }
  }
  take(trace, consumers.front() == ScaleOrder::kRowMajor ? Branch::kNegotiateAgreeRowMajor
                                                         : Branch::kNegotiateAgreeColMajor);
  return consumers.front();
}

}  // namespace mxgate::model
