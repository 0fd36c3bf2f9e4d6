// The bridge across the model/dispatch line: between dispatch/ (the C++ port) and the independent
// decision model (model/, docs/dispatch_model.md). It converts dispatch's types into the model's,
// and checks that what dispatch planned, what it reports and what it actually did (backend launch
// counters, the layer's state) equal what the model says, up to the findings of
// docs/dispatch_model.md §9, which are data here and checked to be exact (a finding that no longer
// holds is a violation too). Used by the dispatch property, the decision tests and fuzz_dispatch;
// free of RapidCheck and GoogleTest so the fuzzer links it. Sources: dispatch_model_convert.cpp
// (conversions), dispatch_model_findings.cpp (the findings and the selection they expect),
// dispatch_model_bridge.cpp (the checks).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "dispatch/linear_config.h"
#include "dispatch/linear_kernels.h"
#include "dispatch/operand_layouts.h"
#include "gpu/backend.h"
#include "model/decision_model.h"

namespace mxgate::properties::decision {

// ---- conversions (dispatch -> model) ---------------------------------------------------------
// model/ keeps its own small types (model::ScaleDtype, WeightScale, Element, ...) on purpose and
// never reads the element-type table of common/dtypes.h: its independence from what it checks is
// the point (docs/dispatch_model.md §1). These conversions are the one place the two meet.

model::Platform to_model(dispatch::Platform p);
model::Scheme to_model(dispatch::Scheme s);
model::LayerSpec to_model(const dispatch::LinearConfig& c);
model::ScaleOrder to_model(dispatch::ActScaleOrder o);
dispatch::ActScaleOrder to_dispatch(model::ScaleOrder o);
// The model's linear kernel of a dispatch linear kernel name; nullopt for a name the model does
// not know.
std::optional<model::LinearKernel> linear_kernel_named(std::string_view dispatch_name);
// The model's environment of a registry selection: linear kernels disabled by name, the emulation
// linear kernel's load-time choice.
model::Environment environment(const std::set<std::string>& disabled,
                               bool emulation_dequantizes_at_load = true);

// ---- findings (docs/dispatch_model.md §9) ----------------------------------------------------

// F3 (the per-step MXFP8 fallback quantized the activation) was fixed in dispatch/: §9.3.
enum class Finding : uint8_t {
  kF1PreshuffleNoN128Gate,      // dispatch accepts N % 128 != 0 for the preshuffled one
  kF2PreshuffleSelectionFlags,  // dispatch waives the shuffle tile for directly-read layers
};
inline constexpr std::size_t kFindingCount = 2;
std::string_view name(Finding f);  // "F1", ...
std::string_view summary(Finding f);

// Whether dispatch is known (a finding) to accept linear kernel `k` for `layer`, which the rules
// reject for `why`.
std::optional<Finding> dispatch_accepts_anyway(model::LinearKernel k, const model::LayerSpec& layer,
                                               model::Reject why);

// ---- tags ------------------------------------------------------------------------------------

// Where coverage tags go ("model:<branch>", "finding:<id>"); a default Tagger drops them.
struct Tagger {
  void (*fn)(void* ctx, std::string_view tag) = nullptr;
  void* ctx = nullptr;
  bool on() const { return fn != nullptr; }
  void operator()(std::string_view tag) const {
    if (fn != nullptr) fn(ctx, tag);
  }
  void branches(const model::Trace& t) const;  // "model:<name>" for each branch of `t`
};

// ---- static decisions ------------------------------------------------------------------------

// The linear kernel dispatch's registry must pick: the model's selection, except where a finding
// makes dispatch accept a candidate the rules pass over (then `via` names it).
struct ExpectedSelection {
  std::optional<model::LinearKernel> linear_kernel;
  std::optional<Finding> via;
};
ExpectedSelection expected_selection(const model::LayerSpec& layer, model::Platform p,
                                     const model::Environment& env, model::Trace* trace);

// For the layer `c`: every dispatch linear kernel's support on every platform, its can_implement
// and its planned load / apply; the registry's plan on every platform (`all_platforms`; otherwise
// on c's only) with no linear kernel disabled and with `disabled`. nullopt when dispatch agrees
// with the model everywhere.
std::optional<std::string> check_static(const dispatch::LinearConfig& c,
                                        const std::set<std::string>& disabled, const Tagger& tag,
                                        bool all_platforms = true);

// A layer dispatch refused to create (DispatchError): right only when the model refuses too.
// `linear_kernel` names the linear kernel asked for, "registry" for a registry pick under
// `disabled`.
std::optional<std::string> check_refusal(const dispatch::LinearConfig& c,
                                         std::string_view linear_kernel,
                                         const std::set<std::string>& disabled, const Tagger& tag);

// ---- one layer's lifecycle -------------------------------------------------------------------

// Follows one layer through its lifecycle in the model and compares every step with dispatch.
// Each check returns nullopt or the violation, naming the step and what differs.
class LayerCheck {
 public:
  // `linear_kernel`: the dispatch linear kernel the layer runs; `registry`: dispatch's registry
  // picked it (the pick is checked against the model's selection under `disabled`);
  // `emulation_at_load`: the emulation linear kernel's load-time choice.
  LayerCheck(const dispatch::LinearConfig& c, const dispatch::LinearKernel& linear_kernel,
             bool registry, const std::set<std::string>& disabled, bool emulation_at_load,
             const Tagger& tag);

  // The violation found at construction (a wrong pick, an unknown linear kernel), if any.
  const std::optional<std::string>& construction() const { return construction_; }
  model::LinearKernel linear_kernel() const { return linear_kernel_; }
  const model::WeightState& weight() const { return w_; }

  // After the weights were loaded.
  std::optional<std::string> loaded(const dispatch::LayerState& st);
  // After process_weights_after_loading; `before` / `after`: the backend's counters.
  std::optional<std::string> processed(const gpu::Counters& before, const gpu::Counters& after,
                                       const dispatch::LayerState& st);
  // After model_preshuffle returned `shuffled`.
  std::optional<std::string> model_preshuffled(bool shuffled, const gpu::Counters& before,
                                               const gpu::Counters& after,
                                               const dispatch::LayerState& st);
  // The order the layer declares now: the model's, checked against dispatch's answer.
  std::optional<std::string> declared(dispatch::ActScaleOrder dispatch_declared,
                                      model::ScaleOrder* model_declared);
  // After an apply handed a pre-quantized activation in `fused` (kNone: plain). `threw`: apply
  // threw DispatchError; otherwise `reported` is the path dispatch returned and `delta` what the
  // apply launched.
  std::optional<std::string> applied(model::ScaleOrder fused, bool threw,
                                     dispatch::ApplyPath reported, const gpu::Counters& delta,
                                     const dispatch::LayerState& st);

 private:
  std::optional<std::string> state_matches(const dispatch::LayerState& st,
                                           std::string_view step) const;

  model::LayerSpec spec_;
  model::LinearKernel linear_kernel_ = model::LinearKernel::kBf16;
  model::Environment env_;
  model::WeightState w_;
  std::size_t actions_seen_ = 0;  // entries of dispatch's load_actions already compared
  Tagger tag_;
  std::optional<std::string> construction_;
};

// The negotiation of one activation among its consumers: the orders they declared (the model's)
// and dispatch's answer. `agreed` receives the model's outcome (nullopt: the fused path is given
// up).
std::optional<std::string> check_negotiation(std::span<const model::ScaleOrder> declared,
                                             dispatch::ActScaleOrder dispatch_result,
                                             std::optional<model::ScaleOrder>* agreed,
                                             const Tagger& tag);

}  // namespace mxgate::properties::decision
