// The checks of the bridge (dispatch_model_bridge.h): dispatch's static decisions, refusals, one
// layer's lifecycle and the negotiation, each against the model.
#include "properties/dispatch_model_bridge.h"

#include <array>
#include <functional>
#include <map>
#include <string>

#include "dispatch/negotiation.h"
#include "dispatch/registry.h"

namespace mxgate::properties::decision {
namespace {

constexpr std::array<dispatch::Platform, model::kPlatformCount> kPlatforms = {
    dispatch::Platform::kGfx950, dispatch::Platform::kGfx942, dispatch::Platform::kSm90,
    dispatch::Platform::kHost};

std::string str(std::string_view s) { return std::string(s); }

// Launch counts per built-in kernel, by its kernel-table name (gpu/kernel_table.cpp): what one
// step launched, or what the model expects it to. Kernels launched zero times are absent.
struct Launches {
  std::map<std::string, uint64_t, std::less<>> n;
  void add(std::string_view kernel, uint64_t count = 1) {
    if (count == 0) return;
    (void)gpu::kernel(kernel);  // a misspelt name is a logic error, not a silent zero
    n[std::string(kernel)] += count;
  }
  uint64_t operator[](std::string_view kernel) const {
    const auto it = n.find(kernel);
    return it == n.end() ? 0 : it->second;
  }
  bool operator==(const Launches&) const = default;
};

Launches delta(const gpu::Counters& before, const gpu::Counters& after) {
  Launches d;
  for (const auto& [name, count] : after.since(before).launches) d.add(name, count);
  return d;
}

std::string describe(const Launches& l) {
  std::string out;
  for (const gpu::KernelDef& k : gpu::all_kernels()) {  // table order
    if (l[k.name] == 0) continue;
    out += (out.empty() ? "" : " + ") + std::to_string(l[k.name]) + "x " + str(k.name);
  }
  return out.empty() ? "no launch" : out;
}

// docs/dispatch_model.md §7: the gpu kernel each load action launches once.
std::string_view launch_of(model::LoadAction a) {
  switch (a) {
    case model::LoadAction::kDequantizeWeightToBf16:
      return "dequant_mx_to_bf16";
    case model::LoadAction::kUpcastWeightScaleToFp32:
      return "upcast_e8m0";
    case model::LoadAction::kPreshuffleWeight:
      return "preshuffle_weight";
  }
  return "preshuffle_weight";
}

// docs/dispatch_model.md §7: what one apply on `path` launches. The activation of a block GEMM
// is quantized on the host (gpu/ has no 1x128 group-quant kernel); an MXFP8 activation by one
// quantize_mx launch (either cast).
Launches launches_of(const model::ApplyOutcome& o) {
  Launches l;
  switch (o.path) {
    case model::ApplyPath::kBf16Gemm:
      l.add("gemm_bf16");
      break;
    case model::ApplyPath::kMxfp8DotScaled:
      l.add("quantize_mx");
      l.add("gemm_mx_dot_scaled");
      break;
    case model::ApplyPath::kMxfp8DequantPerStep:
      // §5.1: dequant_mxfp8_to_bf16 of the weight, then a plain linear on the activation.
      l.add("dequant_mx_to_bf16");
      l.add("gemm_bf16");
      break;
    case model::ApplyPath::kFp8Blockscale:
      l.add("gemm_blockscale");
      break;
    case model::ApplyPath::kFp8BlockscaleBpreshuffle:
      l.add("gemm_blockscale_bpreshuffle");
      break;
  }
  if (o.per_step_upcast) l.add("upcast_e8m0");
  return l;
}

// Either quantize kernel stands for the per-token MXFP8 quantizer (§7).
Launches fold_quantizers(Launches l) {
  const uint64_t hw = l["quantize_mx_hw"];
  l.n.erase("quantize_mx_hw");
  l.add("quantize_mx", hw);
  return l;
}

std::string action_list(const model::Actions& a) {
  std::string out = "[";
  for (model::LoadAction x : a) out += (out.size() > 1 ? ", " : "") + str(model::name(x));
  return out + "]";
}

std::string action_list(const std::vector<dispatch::LoadAction>& a) {
  std::string out = "[";
  for (dispatch::LoadAction x : a)
    out += (out.size() > 1 ? ", " : "") + str(dispatch::to_string(x));
  return out + "]";
}

bool same_actions(const model::Actions& m, const std::vector<dispatch::LoadAction>& d,
                  std::size_t from = 0) {
  if (d.size() - from != m.count) return false;
  for (std::size_t i = 0; i < m.count; ++i) {
    if (dispatch::to_string(d[from + i]) != model::name(m.at[i])) return false;
  }
  return true;
}

// The model's view of a dispatch layer's weight (§7).
model::WeightState observed(const dispatch::LayerState& st) {
  model::WeightState w;
  w.element = st.weight_elem_size >= 2 ? model::Element::kBf16 : model::Element::kFp8;
  w.layout = st.weight_layout == dispatch::WeightLayout::kAiterPreshuffled
                 ? model::Layout::kPreshuffled
                 : model::Layout::kPlain;
  w.scale = st.weight_scale_dtype == contract::Dtype::kE8m0  ? model::WeightScale::kE8m0
            : st.weight_scale_dtype == contract::Dtype::kF32 ? model::WeightScale::kFp32
                                                             : model::WeightScale::kNone;
  w.relayouts = st.weight_relayouts;
  return w;
}

std::string describe(const model::WeightState& w) {
  std::string out = w.element == model::Element::kBf16 ? "bf16" : "fp8";
  out += w.layout == model::Layout::kPreshuffled ? " preshuffled" : " plain";
  if (w.element == model::Element::kFp8) {
    out += w.scale == model::WeightScale::kE8m0   ? " e8m0 scales"
           : w.scale == model::WeightScale::kFp32 ? " fp32 scales"
                                                  : " no scales";
  }
  return out + ", " + std::to_string(w.relayouts) + " relayout(s)";
}

// The dispatch linear kernels and the model's linear kernel + load-time choice each stands for.
struct LinearKernelPair {
  const dispatch::LinearKernel* linear_kernel;
  model::LinearKernel model;
  bool emulation_at_load;
};

const std::array<LinearKernelPair, 6>& linear_kernel_pairs() {
  static const dispatch::EmulationMxfp8 per_step(false);
  static const std::array<LinearKernelPair, 6> pairs = [] {
    std::array<LinearKernelPair, 6> out{};
    std::size_t i = 0;
    for (const dispatch::LinearKernel* k : dispatch::all_linear_kernels()) {
      out[i++] = {k, *linear_kernel_named(k->name()), true};
    }
    out[i] = {&per_step, model::LinearKernel::kEmulationMxfp8, false};
    return out;
  }();
  return pairs;
}

std::string layer_text(const dispatch::LinearConfig& c) { return dispatch::describe(c); }

// "the model picks K", or, where a finding makes dispatch take another candidate, both.
std::string model_pick(const ExpectedSelection& want,
                       const std::optional<model::LinearKernel>& rules) {
  const auto text = [](const std::optional<model::LinearKernel>& k) {
    return k ? "picks " + str(model::name(*k)) : std::string("refuses");
  };
  if (!want.via) return "the model " + text(want.linear_kernel);
  return "the model " + text(rules) + " and, with finding " + str(name(*want.via)) +
         ", expects dispatch to pick " + str(model::name(*want.linear_kernel));
}

}  // namespace

void Tagger::branches(const model::Trace& t) const {
  if (!on()) return;
  t.for_each([this](model::Branch b) { (*this)("model:" + str(model::name(b))); });
}

// ---- static decisions ------------------------------------------------------------------------

std::optional<std::string> check_static(const dispatch::LinearConfig& c,
                                        const std::set<std::string>& disabled, const Tagger& tag,
                                        bool all_platforms) {
  const model::LayerSpec spec = to_model(c);
  model::Trace trace;
  for (const LinearKernelPair& kp : linear_kernel_pairs()) {
    const auto kname = [&] {
      return str(kp.linear_kernel->name()) + (kp.emulation_at_load ? "" : " (per step)");
    };
    for (dispatch::Platform p : kPlatforms) {
      if (kp.linear_kernel->supported(p) != model::supported(kp.model, to_model(p), &trace)) {
        return kname() + " is " + (kp.linear_kernel->supported(p) ? "" : "not ") + "supported on " +
               str(dispatch::to_string(p)) + ", the model says the opposite (§3.3)";
      }
    }
    const model::Reject why = model::can_implement(kp.model, spec, &trace);
    const auto dispatch_why = kp.linear_kernel->can_implement(c);
    const std::optional<Finding> f = dispatch_accepts_anyway(kp.model, spec, why);
    if (!dispatch_why && why != model::Reject::kNone) {
      if (!f) {
        return kname() + " accepts " + layer_text(c) +
               "; the model rejects it: " + str(model::name(why)) + " (§3.4)";
      }
      if (tag.on()) tag("finding:" + str(name(*f)));
    } else if (dispatch_why && why == model::Reject::kNone) {
      return kname() + " rejects " + layer_text(c) + " (" + *dispatch_why +
             "); the model says it can implement it (§3.4)";
    } else if (dispatch_why && f) {
      return "finding " + str(name(*f)) + " no longer holds: " + kname() + " rejects " +
             layer_text(c) + " as the rules do (" + str(summary(*f)) + "): remove the finding";
    }
    if (dispatch_why) continue;
    model::Environment env;
    env.emulation_dequantizes_at_load = kp.emulation_at_load;
    model::WeightState w = model::loaded(spec);
    const model::Actions load = model::process(kp.model, spec, env, w, &trace);
    const model::ApplyPath path =
        model::apply(kp.model, spec, w, model::ScaleOrder::kNone, &trace).path;
    const std::vector<dispatch::LoadAction> planned = kp.linear_kernel->planned_load(c);
    if (!same_actions(load, planned)) {
      return kname() + " plans load " + action_list(planned) + " for " + layer_text(c) +
             "; the model " + action_list(load) + " (§4)";
    }
    if (dispatch::to_string(kp.linear_kernel->planned_apply(c)) != model::name(path)) {
      return kname() + " plans apply " +
             str(dispatch::to_string(kp.linear_kernel->planned_apply(c))) + " for " +
             layer_text(c) + "; the model " + str(model::name(path)) + " (§5)";
    }
  }
  static const std::set<std::string> kNoneDisabled;
  const std::set<std::string>* sets[2] = {&kNoneDisabled, &disabled};
  for (std::size_t si = 0; si < (disabled.empty() ? 1u : 2u); ++si) {
    const std::set<std::string>& d = *sets[si];
    const model::Environment env = environment(d);
    for (dispatch::Platform p : kPlatforms) {
      if (!all_platforms && p != c.platform) continue;
      dispatch::LinearConfig cp = c;
      cp.platform = p;
      const ExpectedSelection want = expected_selection(spec, to_model(p), env, &trace);
      const model::Selection pure = model::select(spec, to_model(p), env, &trace);
      if (!want.via && want.linear_kernel != pure.linear_kernel) {
        return "glue: the expected selection departs from model::select without a finding";
      }
      std::optional<dispatch::Plan> got;
      try {
        got = dispatch::plan(cp, d);
      } catch (const dispatch::DispatchError&) {
      }
      const auto where = [&] {
        std::string dis;
        for (const std::string& x : d) dis += (dis.empty() ? "" : ",") + x;
        return "registry on " + layer_text(cp) + (dis.empty() ? "" : " (disabled " + dis + ")");
      };
      if (!want.linear_kernel) {
        if (got) {
          return where() + " picks " + got->linear_kernel +
                 "; the model: no linear kernel can run it (§3.1)";
        }
        continue;
      }
      if (!got) {
        return where() + " refuses; " + model_pick(want, pure.linear_kernel) + " (§3.1)";
      }
      if (want.via && tag.on()) tag("finding:" + str(name(*want.via)));
      if (got->linear_kernel != model::name(*want.linear_kernel)) {
        return where() + " picks " + got->linear_kernel + "; " +
               model_pick(want, pure.linear_kernel) + " (§3)";
      }
      model::WeightState w = model::loaded(spec);
      const model::Actions load = model::process(*want.linear_kernel, spec, env, w, &trace);
      const model::ApplyPath path =
          model::apply(*want.linear_kernel, spec, w, model::ScaleOrder::kNone, &trace).path;
      if (!same_actions(load, got->load) || dispatch::to_string(got->apply) != model::name(path)) {
        return where() + ": plan " + dispatch::plan_json(*got) + "; the model: load " +
               action_list(load) + ", apply " + str(model::name(path)) + " (§4, §5)";
      }
    }
  }
  tag.branches(trace);
  return std::nullopt;
}

std::optional<std::string> check_refusal(const dispatch::LinearConfig& c,
                                         std::string_view linear_kernel,
                                         const std::set<std::string>& disabled, const Tagger& tag) {
  const model::LayerSpec spec = to_model(c);
  model::Trace trace;
  if (linear_kernel == "registry") {
    const ExpectedSelection want =
        expected_selection(spec, to_model(c.platform), environment(disabled), &trace);
    const model::Selection pure =
        model::select(spec, to_model(c.platform), environment(disabled), &trace);
    tag.branches(trace);
    if (want.linear_kernel) {
      return "the registry refused " + layer_text(c) + "; " + model_pick(want, pure.linear_kernel) +
             " (§3.1)";
    }
    return std::nullopt;
  }
  const std::optional<model::LinearKernel> k = linear_kernel_named(linear_kernel);
  if (!k) return "linear kernel '" + str(linear_kernel) + "' is unknown to the model";
  const model::Platform p = to_model(c.platform);
  if (!model::supported(*k, p, &trace)) return std::nullopt;
  const model::Reject why = model::can_implement(*k, spec, &trace);
  tag.branches(trace);
  if (why == model::Reject::kNone || dispatch_accepts_anyway(*k, spec, why)) {
    return str(linear_kernel) + " refused " + layer_text(c) +
           "; the model says it can run it (§3.4)";
  }
  return std::nullopt;
}

// ---- LayerCheck ------------------------------------------------------------------------------

LayerCheck::LayerCheck(const dispatch::LinearConfig& c, const dispatch::LinearKernel& linear_kernel,
                       bool registry, const std::set<std::string>& disabled, bool emulation_at_load,
                       const Tagger& tag)
    : spec_(to_model(c)), env_(environment(disabled, emulation_at_load)), tag_(tag) {
  const std::optional<model::LinearKernel> k = linear_kernel_named(linear_kernel.name());
  if (!k) {
    construction_ = "linear kernel '" + str(linear_kernel.name()) + "' is unknown to the model";
    return;
  }
  linear_kernel_ = *k;
  model::Trace trace;
  const model::Platform p = to_model(c.platform);
  if (registry) {
    const ExpectedSelection want = expected_selection(spec_, p, env_, &trace);
    const model::Selection pure = model::select(spec_, p, env_, &trace);
    if (want.via && tag_.on()) tag_("finding:" + str(name(*want.via)));
    if (!want.linear_kernel || *want.linear_kernel != linear_kernel_) {
      construction_ = "the registry picked " + str(linear_kernel.name()) + " for " + layer_text(c) +
                      "; " + model_pick(want, pure.linear_kernel) + " (§3)";
    }
  } else {
    const model::Reject why = model::supported(linear_kernel_, p, &trace)
                                  ? model::can_implement(linear_kernel_, spec_, &trace)
                                  : model::Reject::kUnsupported;
    const std::optional<Finding> f = dispatch_accepts_anyway(linear_kernel_, spec_, why);
    if (f && tag_.on()) tag_("finding:" + str(name(*f)));
    if (why != model::Reject::kNone && !f) {
      construction_ = str(linear_kernel.name()) + " was created for " + layer_text(c) +
                      "; the model rejects it: " + str(model::name(why)) + " (§3.4)";
    }
  }
  tag_.branches(trace);
}

std::optional<std::string> LayerCheck::state_matches(const dispatch::LayerState& st,
                                                     std::string_view step) const {
  model::WeightState got = observed(st);
  // §7: a scale no GEMM reads (the weight is bf16) is not compared.
  if (w_.element == model::Element::kBf16 && got.element == model::Element::kBf16) {
    got.scale = w_.scale;
  }
  if (got == w_) return std::nullopt;
  return "after " + str(step) + " the weight is " + describe(got) + "; the model: " + describe(w_) +
         " (§4)";
}

std::optional<std::string> LayerCheck::loaded(const dispatch::LayerState& st) {
  w_ = model::loaded(spec_);
  actions_seen_ = st.load_actions.size();
  return state_matches(st, "load");
}

std::optional<std::string> LayerCheck::processed(const gpu::Counters& before,
                                                 const gpu::Counters& after,
                                                 const dispatch::LayerState& st) {
  model::Trace trace;
  const model::Actions acts = model::process(linear_kernel_, spec_, env_, w_, &trace);
  tag_.branches(trace);
  Launches want;
  for (model::LoadAction a : acts) want.add(launch_of(a));
  const Launches got = delta(before, after);
  if (got != want) {
    return "load processing launched " + describe(got) + "; the model's actions " +
           action_list(acts) + " launch " + describe(want) + " (§4, §7)";
  }
  if (!same_actions(acts, st.load_actions, actions_seen_)) {
    return "load processing reports " +
           action_list(std::vector<dispatch::LoadAction>(
               st.load_actions.begin() + static_cast<long>(actions_seen_), st.load_actions.end())) +
           "; the model " + action_list(acts) + " (§4)";
  }
  actions_seen_ = st.load_actions.size();
  return state_matches(st, "load processing");
}

std::optional<std::string> LayerCheck::model_preshuffled(bool shuffled, const gpu::Counters& before,
                                                         const gpu::Counters& after,
                                                         const dispatch::LayerState& st) {
  model::Trace trace;
  const bool want = model::model_preshuffle(linear_kernel_, spec_, w_, &trace);
  tag_.branches(trace);
  Launches expect;
  if (want) expect.add("preshuffle_weight");
  const Launches got = delta(before, after);
  if (shuffled != want || got != expect) {
    return std::string("model_preshuffle ") + (shuffled ? "shuffled" : "did not shuffle") + " (" +
           describe(got) + "); the model " + (want ? "shuffles" : "does not") + " (§4.6)";
  }
  return state_matches(st, "model_preshuffle");
}

std::optional<std::string> LayerCheck::declared(dispatch::ActScaleOrder dispatch_declared,
                                                model::ScaleOrder* model_declared) {
  model::Trace trace;
  const model::ScaleOrder want = model::declared_order(linear_kernel_, w_, &trace);
  tag_.branches(trace);
  if (model_declared != nullptr) *model_declared = want;
  if (to_model(dispatch_declared) != want) {
    return "the layer declares activation scales " + str(dispatch::to_string(dispatch_declared)) +
           "; the model: " + str(model::name(want)) + " (§5.4)";
  }
  return std::nullopt;
}

std::optional<std::string> LayerCheck::applied(model::ScaleOrder fused, bool threw,
                                               dispatch::ApplyPath reported, const gpu::Counters& d,
                                               const dispatch::LayerState& st) {
  model::Trace trace;
  const model::ApplyOutcome o = model::apply(linear_kernel_, spec_, w_, fused, &trace);
  tag_.branches(trace);
  const auto input = [fused] {
    return fused == model::ScaleOrder::kNone
               ? std::string("the plain activation")
               : "a " + str(model::name(fused)) + " pre-quantized activation";
  };
  if (o.refused != threw) {
    return "apply " + std::string(threw ? "refused " : "accepted ") + input() + "; the model " +
           (o.refused ? "refuses" : "accepts") + " it (§5.3)";
  }
  if (!threw) {
    // What the apply launched first (observed), then what dispatch says it did.
    gpu::Counters zero;
    const Launches got = fold_quantizers(delta(zero, d));
    if (got != launches_of(o)) {
      return "apply on " + input() + " launched " + describe(got) + "; the model's path " +
             str(model::name(o.path)) + (o.per_step_upcast ? " with a per-step upcast" : "") +
             " launches " + describe(launches_of(o)) + " (§5, §7)";
    }
    if (dispatch::to_string(reported) != model::name(o.path)) {
      return "apply reports path " + str(dispatch::to_string(reported)) +
             "; the model: " + str(model::name(o.path)) + " (§5)";
    }
  }
  return state_matches(st, "apply");
}

std::optional<std::string> check_negotiation(std::span<const model::ScaleOrder> declared,
                                             dispatch::ActScaleOrder dispatch_result,
                                             std::optional<model::ScaleOrder>* agreed,
                                             const Tagger& tag) {
  model::Trace trace;
  const std::optional<model::ScaleOrder> want = model::negotiate(declared, &trace);
  tag.branches(trace);
  if (agreed != nullptr) *agreed = want;
  const model::ScaleOrder got = to_model(dispatch_result);
  if ((want ? *want : model::ScaleOrder::kNone) != got) {
    std::string orders;
    for (model::ScaleOrder o : declared)
      orders += (orders.empty() ? "" : ",") + str(model::name(o));
    return "negotiation over [" + orders + "] gave " + str(dispatch::to_string(dispatch_result)) +
           "; the model: " + (want ? str(model::name(*want)) : "give up the fused path") + " (§6)";
  }
  return std::nullopt;
}

}  // namespace mxgate::properties::decision
