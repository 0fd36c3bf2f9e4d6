// The independent decision model of the linear-layer dispatch framework
// (docs/dispatch_model.md): written from the public rules (vLLM's linear kernel selection, the
// RocmDotScaledMxfp8LinearKernel change and its review, vLLM #47773 and #56433, AITER's
// kernels), never from dispatch/. For a layer and a platform it says which linear kernel the
// registry must pick, what load processing must do, which path apply must take, which
// activation-scale order each consumer declares, and whether consumers of one activation keep the
// fused path. Every function records the branches it took in `trace` (may be null).
#pragma once

#include <optional>
#include <span>

#include "model/branches.h"
#include "model/decision_types.h"

namespace mxgate::model {

// §3.2: candidates in priority order for a platform and scheme.
std::span<const LinearKernel> priority(Platform p, Scheme s);
// §3.3.
bool supported(LinearKernel k, Platform p, Trace* trace = nullptr);
// §3.4: kNone when `k` can run `layer`; sees N, K, scheme and scale dtype only, never the
// layer flags.
Reject can_implement(LinearKernel k, const LayerSpec& layer, Trace* trace = nullptr);

struct Selection {
  std::optional<LinearKernel> linear_kernel;  // nullopt: no linear kernel can run it (a refusal)
  Reject passed_over[kLinearKernelCount];     // why each earlier candidate was passed over
  std::size_t passed_over_count = 0;          // candidates before the pick (or all of them)
};
// §3.1: the first candidate not disabled, supported and able to implement the layer.
Selection select(const LayerSpec& layer, Platform p, const Environment& env,
                 Trace* trace = nullptr);

// §4: the weight as loaded from its checkpoint.
WeightState loaded(const LayerSpec& layer);
// §4.1-§4.5: process_weights_after_loading of linear kernel `k` on a weight in state `w`: the
// actions it takes, in order; `w` becomes the state after them.
Actions process(LinearKernel k, const LayerSpec& layer, const Environment& env, WeightState& w,
                Trace* trace = nullptr);
// §4.6: the model's own preshuffle of the layer's weight (DS-V4 prepare_*_preshuffle); true when
// it shuffles (then `w` is preshuffled).
bool model_preshuffle(LinearKernel k, const LayerSpec& layer, WeightState& w,
                      Trace* trace = nullptr);

// §5.4: the order linear kernel `k` reads 1x128 activation scales in for a weight in state `w`.
ScaleOrder declared_order(LinearKernel k, const WeightState& w, Trace* trace = nullptr);

struct ApplyOutcome {
  bool refused = false;  // the input must be refused loudly (I3), nothing computed
  ApplyPath path = ApplyPath::kBf16Gemm;
  bool per_step_upcast = false;  // this apply upcasts e8m0 weight scales for itself (§5.2)
  bool uses_fused = false;       // it consumes the pre-quantized activation it was handed
};
// §5: one apply of linear kernel `k` on a weight in state `w`. `fused` is the order of a
// pre-quantized (fused producer's) activation handed to it, kNone for the plain activation.
ApplyOutcome apply(LinearKernel k, const LayerSpec& layer, const WeightState& w, ScaleOrder fused,
                   Trace* trace = nullptr);

struct Plan {
  LinearKernel linear_kernel;
  Actions load;
  ApplyPath apply;
};
// What `mxgate plan` must print: the selection, the actions of load processing on a freshly
// loaded weight and the path of an apply after it; nullopt when no linear kernel can run the
// layer.
std::optional<Plan> plan(const LayerSpec& layer, Platform p, const Environment& env,
                         Trace* trace = nullptr);

// §6: the consumers of one activation each declare an order; the fused producer may emit one
// order only if every consumer declared it. nullopt: the fused path is given up, and every
// consumer receives the plain activation and quantizes it itself.
std::optional<ScaleOrder> negotiate(std::span<const ScaleOrder> consumers, Trace* trace = nullptr);

}  // namespace mxgate::model
