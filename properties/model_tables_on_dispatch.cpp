#include "properties/model_tables_on_dispatch.h"

#include <memory>
#include <optional>
#include <set>

#include "dispatch/layer.h"
#include "dispatch/negotiation.h"
#include "dispatch/registry.h"
#include "gpu/host/host_backend.h"
#include "model/decision_tables.h"
#include "properties/dispatch_model_bridge.h"

namespace mxgate::properties {
namespace {

namespace d = mxgate::dispatch;
namespace m = mxgate::model;

d::Platform to_dispatch(m::Platform p) {
  switch (p) {
    case m::Platform::kGfx950:
      return d::Platform::kGfx950;
    case m::Platform::kGfx942:
      return d::Platform::kGfx942;
    case m::Platform::kSm90:
      return d::Platform::kSm90;
    case m::Platform::kHost:
      break;
  }
  return d::Platform::kHost;
}

d::LinearConfig config_of(const m::LayerSpec& l, m::Platform p) {
  d::LinearConfig c;
  c.n = l.n;
  c.k = l.k;
  c.scheme = l.scheme == m::Scheme::kMxfp8      ? d::Scheme::kMxfp8
             : l.scheme == m::Scheme::kFp8Block ? d::Scheme::kFp8Block
                                                : d::Scheme::kBf16;
  c.weight_scale = l.weight_scale == m::ScaleDtype::kE8m0 ? d::WeightScaleDtype::kE8m0
                                                          : d::WeightScaleDtype::kFp32;
  c.platform = to_dispatch(p);
  c.is_bmm = l.is_bmm;
  c.skip_weight_relayout = l.skip_weight_relayout;
  return c;
}

std::set<std::string> disabled_of(const m::Environment& env) {
  std::set<std::string> out;
  for (std::size_t i = 0; i < m::kLinearKernelCount; ++i) {
    const auto k = static_cast<m::LinearKernel>(i);
    if (env.is_disabled(k)) out.insert(std::string(m::name(k)));
  }
  return out;
}

std::optional<std::string> lifecycle_on_dispatch(const m::tables::LifecycleRow& r) {
  const d::LinearConfig c = config_of(r.layer, m::Platform::kHost);
  const d::LinearKernel* k = d::find_linear_kernel(m::name(r.linear_kernel));
  if (k == nullptr) return "dispatch has no linear kernel " + std::string(m::name(r.linear_kernel));
  gpu::HostBackend be;
  d::LinearLayer layer(be, c, *k);
  decision::LayerCheck check(c, layer.linear_kernel(), false, {}, true, {});
  if (check.construction()) return check.construction();
  std::vector<float> w(c.n * c.k);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  layer.load_float_weights(w);
  if (auto v = check.loaded(layer.state())) return v;
  std::vector<float> xv(2 * c.k, 1.0f);
  const d::Activation x = d::make_activation(xv, 2, c.k);
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const m::tables::Step& s = r.steps[i];
    const std::string at = "step " + std::to_string(i) + ": ";
    const gpu::Counters before = be.counters();
    std::optional<std::string> v;
    if (s.kind == m::tables::Step::kProcess) {
      layer.process_weights_after_loading();
      v = check.processed(before, be.counters(), layer.state());
    } else if (s.kind == m::tables::Step::kModelShuffle) {
      const bool shuffled = layer.model_preshuffle();
      v = check.model_preshuffled(shuffled, before, be.counters(), layer.state());
    } else {
      d::Activation in = x;
      const dispatch::ActScaleOrder order = decision::to_dispatch(s.fused);
      if (order != dispatch::ActScaleOrder::kNone) {
        in.pre_quantized = d::quantize_activation_1x128(x, order);
      }
      bool threw = false;
      d::ApplyPath path = d::ApplyPath::kBf16Gemm;
      try {
        path = layer.apply(in).path;
      } catch (const d::DispatchError&) {
        threw = true;
      }
      v = check.applied(s.fused, threw, path, layer.last_apply().delta, layer.state());
    }
    if (v) return at + *v;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> replay_decision_tables_on_dispatch(std::size_t* rows) {
  std::vector<std::string> out;
  std::size_t n = 0;
  const auto note = [&](const char* what, const std::optional<std::string>& v) {
    ++n;
    if (v) out.push_back("I7: " + std::string(what) + ": " + *v);
  };
  for (const m::tables::SelectRow& r : m::tables::select_rows()) {
    note(r.what, decision::check_static(config_of(r.layer, r.platform), disabled_of(r.env), {}));
  }
  for (const m::tables::PlanRow& r : m::tables::plan_rows()) {
    if (!r.env.emulation_dequantizes_at_load) continue;  // dispatch's registry has no such switch
    note(r.what, decision::check_static(config_of(r.layer, r.platform), disabled_of(r.env), {}));
  }
  for (const m::tables::LifecycleRow& r : m::tables::lifecycle_rows()) {
    std::optional<std::string> v;
    try {
      v = lifecycle_on_dispatch(r);
    } catch (const std::exception& e) {
      v = std::string("threw: ") + e.what();
    }
    note(r.what, v);
  }
  for (const m::tables::NegotiationRow& r : m::tables::negotiation_rows()) {
    std::vector<dispatch::ActScaleOrder> orders;
    for (m::ScaleOrder o : r.consumers) orders.push_back(decision::to_dispatch(o));
    note(r.what, decision::check_negotiation(r.consumers, d::negotiate_act_scale_order(orders),
                                             nullptr, {}));
  }
  if (rows != nullptr) *rows = n;
  return out;
}

}  // namespace mxgate::properties
