// The findings of docs/dispatch_model.md §9 (dispatch_model_bridge.h): where dispatch departs
// from the model's rules on purpose, as data, and the selection they make dispatch take.
#include <array>

#include "properties/dispatch_model_bridge.h"

namespace mxgate::properties::decision {

std::string_view name(Finding f) {
  static constexpr std::array<std::string_view, kFindingCount> kNames = {"F1", "F2"};
  return kNames[static_cast<std::size_t>(f)];
}

std::string_view summary(Finding f) {
  static constexpr std::array<std::string_view, kFindingCount> kSummaries = {
      "PreshuffledBlockScaledFp8::can_implement has no N % 128 == 0 gate (vLLM #51692)",
      "PreshuffledBlockScaledFp8::can_implement reads the layer flags: it waives the shuffle "
      "tile (K % 32) for a directly-read layer; selection sees (N, K) only"};
  return kSummaries[static_cast<std::size_t>(f)];
}

std::optional<Finding> dispatch_accepts_anyway(model::LinearKernel k, const model::LayerSpec& layer,
                                               model::Reject why) {
  // docs/dispatch_model.md §9: dispatch's own condition for the preshuffled linear kernel is
  // reads_weight_directly() || (N % 16 == 0 && K % 32 == 0).
  if (k != model::LinearKernel::kPreshuffledBlockScaledFp8) return std::nullopt;
  const bool tile = layer.n % 16 == 0 && layer.k % 32 == 0;
  if (why == model::Reject::kPreshuffleN128 && (tile || layer.reads_weight_directly())) {
    return Finding::kF1PreshuffleNoN128Gate;
  }
  if (why == model::Reject::kPreshuffleShuffle && layer.reads_weight_directly()) {
    return Finding::kF2PreshuffleSelectionFlags;
  }
  return std::nullopt;
}

ExpectedSelection expected_selection(const model::LayerSpec& layer, model::Platform p,
                                     const model::Environment& env, model::Trace* trace) {
  // The model's first-fit walk (model::select, §3.1), with one difference: a candidate a finding
  // makes dispatch accept is picked. Without one, the result is model::select's.
  for (model::LinearKernel k : model::priority(p, layer.scheme)) {
    if (env.is_disabled(k) || !model::supported(k, p, trace)) continue;
    const model::Reject why = model::can_implement(k, layer, trace);
    if (why == model::Reject::kNone) return {k, std::nullopt};
    if (const auto f = dispatch_accepts_anyway(k, layer, why)) return {k, f};
  }
  return {};
}

}  // namespace mxgate::properties::decision
