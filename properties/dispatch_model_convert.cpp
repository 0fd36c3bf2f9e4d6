// The conversions across the model/dispatch line (dispatch_model_bridge.h): dispatch's types into
// the model's. model/ keeps its own types on purpose (it is written independently of dispatch/,
// docs/dispatch_model.md §1), so each is translated here, never shared.
#include "properties/dispatch_model_bridge.h"

namespace mxgate::properties::decision {

model::Platform to_model(dispatch::Platform p) {
  switch (p) {
    case dispatch::Platform::kGfx950:
      return model::Platform::kGfx950;
    case dispatch::Platform::kGfx942:
      return model::Platform::kGfx942;
    case dispatch::Platform::kSm90:
      return model::Platform::kSm90;
    case dispatch::Platform::kHost:
      return model::Platform::kHost;
  }
  return model::Platform::kHost;
}

model::Scheme to_model(dispatch::Scheme s) {
  switch (s) {
    case dispatch::Scheme::kMxfp8:
      return model::Scheme::kMxfp8;
    case dispatch::Scheme::kFp8Block:
      return model::Scheme::kFp8Block;
    case dispatch::Scheme::kBf16:
      return model::Scheme::kBf16;
  }
  return model::Scheme::kBf16;
}

model::LayerSpec to_model(const dispatch::LinearConfig& c) {
  model::LayerSpec s;
  s.n = c.n;
  s.k = c.k;
  s.scheme = to_model(c.scheme);
  s.weight_scale = c.weight_scale == dispatch::WeightScaleDtype::kE8m0 ? model::ScaleDtype::kE8m0
                                                                       : model::ScaleDtype::kFp32;
  s.is_bmm = c.is_bmm;
  s.skip_weight_relayout = c.skip_weight_relayout;
  return s;
}

model::ScaleOrder to_model(dispatch::ActScaleOrder o) {
  switch (o) {
    case dispatch::ActScaleOrder::kRowMajor:
      return model::ScaleOrder::kRowMajor;
    case dispatch::ActScaleOrder::kColMajor:
      return model::ScaleOrder::kColMajor;
    case dispatch::ActScaleOrder::kNone:
      return model::ScaleOrder::kNone;
  }
  return model::ScaleOrder::kNone;
}

dispatch::ActScaleOrder to_dispatch(model::ScaleOrder o) {
  switch (o) {
    case model::ScaleOrder::kRowMajor:
      return dispatch::ActScaleOrder::kRowMajor;
    case model::ScaleOrder::kColMajor:
      return dispatch::ActScaleOrder::kColMajor;
    case model::ScaleOrder::kNone:
      return dispatch::ActScaleOrder::kNone;
  }
  return dispatch::ActScaleOrder::kNone;
}

std::optional<model::LinearKernel> linear_kernel_named(std::string_view dispatch_name) {
  for (std::size_t i = 0; i < model::kLinearKernelCount; ++i) {
    const auto k = static_cast<model::LinearKernel>(i);
    if (model::name(k) == dispatch_name) return k;
  }
  return std::nullopt;
}

model::Environment environment(const std::set<std::string>& disabled,
                               bool emulation_dequantizes_at_load) {
  model::Environment env;
  env.emulation_dequantizes_at_load = emulation_dequantizes_at_load;
  for (const std::string& d : disabled) {
    if (const auto k = linear_kernel_named(d)) env.disable(*k);
  }
  return env;
}

}  // namespace mxgate::properties::decision
