// The dispatch property: random linear-layer configs, linear kernels, weights and lifecycles
// (which preparation and load steps run, in which order, how many applies, fused activations in
// which scale order) on the backend under test; after every step invariants I1-I5 of
// docs/invariants.md §2 hold, every apply equals the reference (properties/dispatch_apply_oracle.h)
// bit for bit, and every decision (the registry's pick, load actions, apply paths, declared
// orders, negotiation among the activation's consumers) equals the decision model's, as planned
// and as observed through launch counters and layer state (properties/props_dispatch_cases.h,
// docs/dispatch_model.md §7).
#include <rapidcheck.h>

#include <memory>
#include <sstream>
#include <string>

#include "dispatch/layer.h"
#include "dispatch/negotiation.h"
#include "properties/dispatch_apply_oracle.h"
#include "properties/dispatch_model_bridge.h"
#include "properties/gemm_operands.h"
#include "properties/props.h"
#include "properties/props_dispatch_cases.h"
#include "reference/mx_quant.h"

namespace mxgate::properties {

namespace {

using dispatch::ActScaleOrder;
using gpu::Kernel;
namespace d = mxgate::dispatch;

const d::LinearKernel* named_kernel(std::string_view name) {
  static const d::DotScaledMxfp8 dot;
  static const d::EmulationMxfp8 emu_load(true), emu_step(false);
  static const d::BlockScaledFp8 block;
  static const d::PreshuffledBlockScaledFp8 pre;
  static const d::Bf16 bf16;
  if (name == "DotScaledMxfp8") return &dot;
  if (name == "EmulationMxfp8") return &emu_load;
  if (name == "EmulationMxfp8PerStep") return &emu_step;
  if (name == "BlockScaledFp8") return &block;
  if (name == "PreshuffledBlockScaledFp8") return &pre;
  if (name == "Bf16") return &bf16;
  return nullptr;
}

d::Scheme scheme_of(std::string_view kernel) {
  if (kernel == "BlockScaledFp8" || kernel == "PreshuffledBlockScaledFp8") {
    return d::Scheme::kFp8Block;
  }
  if (kernel == "Bf16") return d::Scheme::kBf16;
  return d::Scheme::kMxfp8;
}

// Steps after the load; a lifecycle always ends with one plain apply.
constexpr std::string_view kSteps[] = {"process",     "model_preshuffle", "apply",
                                       "apply_fused",  // in the negotiated order
                                       "apply_row",    // fused, row-major scales
                                       "apply_col"};   // fused, column-major scales

rc::Gen<Case> gen_dispatch(const Context&, const Ops&) {
  return rc::gen::apply(
      [](const std::string& kernel, const std::string& platform, const std::string& scheme,
         std::pair<std::size_t, std::size_t> nk, const std::string& ws, int flags, std::size_t m,
         const std::string& weights, const std::vector<std::string>& steps, uint64_t seed,
         const std::string& disabled, const std::string& consumers) {
        const auto [n, k] = nk;
        Case c("dispatch.end_to_end");
        c.set("kernel", kernel);
        // A named linear kernel runs on the host platform (every one exists there) with its scheme;
        // the registry picks per platform.
        c.set("platform", kernel == "registry" ? platform : "host");
        const d::Scheme s = kernel == "registry" ? *d::parse_scheme(scheme) : scheme_of(kernel);
        c.set("scheme", d::to_string(s));
        c.set("n", n).set("k", k).set("weight_scale", ws);
        c.set("flags", flags == 1   ? "is_bmm"
                       : flags == 2 ? "skip_weight_relayout"
                       : flags == 3 ? "both"
                                    : "none");
        // Other consumers share the activation (M): a few rows keep them cheap.
        m = std::min(m, consumers == "none" ? dispatch_m_cap(n, k)
                                            : std::min<std::size_t>(8, dispatch_m_cap(n, k)));
        c.set("m", m);
        c.set("weights", s == d::Scheme::kFp8Block ? weights : "float");
        std::string lifecycle;
        for (const std::string& st : steps) lifecycle += st + ",";
        c.set("steps", lifecycle + (consumers == "none" ? "apply" : "apply_fused"));
        c.set("seed", seed);
        c.set("disabled", disabled);
        c.set("consumers", consumers);
        return c;
      },
      // Linear kernels that preshuffle, upcast or dequantize at load (where the zoo's dispatch bugs
      // live) come up more often; shrinking moves toward the plain block linear kernel.
      pick<std::string>({"BlockScaledFp8", "DotScaledMxfp8", "PreshuffledBlockScaledFp8",
                         "registry", "EmulationMxfp8", "EmulationMxfp8PerStep", "Bf16",
                         "DotScaledMxfp8", "PreshuffledBlockScaledFp8", "BlockScaledFp8",
                         "PreshuffledBlockScaledFp8", "DotScaledMxfp8", "registry", "registry",
                         "registry", "PreshuffledBlockScaledFp8", "DotScaledMxfp8",
                         "DotScaledMxfp8"}),
      pick<std::string>({"gfx950", "gfx942", "sm90", "host"}),
      pick<std::string>({"mxfp8", "fp8_block", "bf16"}), gen_dispatch_nk(),
      pick<std::string>({"e8m0", "fp32", "e8m0"}), pick<int>({0, 1, 2, 0, 3, 0, 0}), gen_m(),
      pick<std::string>({"float", "codes", "codes"}),
      rc::gen::resize(
          6, rc::gen::container<std::vector<std::string>>(pick<std::string>(
                 {"process", "model_preshuffle", "apply", "apply_fused", "apply_row", "apply_col",
                  "process", "model_preshuffle", "process", "process", "apply_fused"}))),
      gen_seed(), gen_disabled(), gen_consumers());
}

std::vector<std::string> split_steps(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    bool known = false;
    for (std::string_view k : kSteps) known = known || k == item;
    if (!known) throw CaseError("case field 'steps' has unknown step '" + item + "'");
    out.push_back(item);
  }
  return out;
}

// Integers in [-8, 8]: every correct MXFP8 / bf16 path equals exact_gemm on them.
std::vector<float> ints(std::size_t count, std::mt19937_64& rng) {
  std::vector<float> v(count);
  for (float& x : v) x = static_cast<float>(static_cast<int>(rng() % 17) - 8);
  return v;
}

// A fp8_block checkpoint weight given as codes and scales: small-integer codes, e8m0 scale bytes
// that include the ends of the range (0x00 = 2^-127, 0x01, 0x7F = 1, 0x80) or fp32 scales.
d::QuantizedWeight codes_weight(const d::LinearConfig& c, std::mt19937_64& rng) {
  d::QuantizedWeight w;
  for (float v : ints(c.n * c.k, rng)) w.data.push_back(e4m3_code(v));
  const std::size_t blocks = ((c.n + 127) / 128) * ((c.k + 127) / 128);
  static constexpr uint8_t kBytes[] = {0x00, 0x01, 0x7F, 0x80, 0x7A, 0x85, 0x00, 0x01, 0x00};
  for (std::size_t i = 0; i < blocks; ++i) {
    const uint8_t b = kBytes[rng() % 9];
    if (c.weight_scale == d::WeightScaleDtype::kE8m0) {
      w.scales.push_back(b);
    } else {
      const float f = float_of(static_cast<uint32_t>(std::max<int>(b, 1)) << 23);
      const auto* p = reinterpret_cast<const uint8_t*>(&f);
      w.scales.insert(w.scales.end(), p, p + 4);
    }
  }
  return w;
}

Failure violation(const std::string& invariant, const std::string& what) {
  return Failure{invariant + ": " + what, std::nullopt, std::nullopt, std::nullopt};
}

std::optional<Failure> check_dispatch(const Context& ctx, const Case& c) {
  d::LinearConfig cfg;
  cfg.platform = enum_field<d::Platform>(c, "platform", d::parse_platform);
  cfg.scheme = enum_field<d::Scheme>(c, "scheme", d::parse_scheme);
  cfg.n = c.num("n");
  cfg.k = c.num("k");
  cfg.weight_scale =
      enum_field<d::WeightScaleDtype>(c, "weight_scale", d::parse_weight_scale_dtype);
  const std::string& flags = c.text("flags");
  if (flags != "none" && flags != "is_bmm" && flags != "skip_weight_relayout" && flags != "both") {
    throw CaseError("case field 'flags' must be none, is_bmm, skip_weight_relayout or both");
  }
  cfg.is_bmm = flags == "is_bmm" || flags == "both";
  cfg.skip_weight_relayout = flags == "skip_weight_relayout" || flags == "both";
  const std::size_t m = c.num("m");
  if (cfg.n == 0 || cfg.k == 0 || m == 0) throw CaseError("N, K and M must be positive");
  const std::string& kernel_name = c.text("kernel");
  const d::LinearKernel* named = named_kernel(kernel_name);
  if (named == nullptr && kernel_name != "registry") {
    throw CaseError("case field 'kernel' has unknown value '" + kernel_name + "'");
  }
  const std::vector<std::string> steps = split_steps(c.text("steps"));
  const bool codes = c.text("weights") == "codes";
  const std::set<std::string> disabled = disabled_field(c);
  const decision::Tagger tag = tagger(ctx);
  if (auto v = check_static_decisions(cfg, disabled, tag)) return violation("I7", *v);

  gpu::Backend& be = *ctx.be;
  std::unique_ptr<d::LinearLayer> layer;
  try {
    layer = named ? std::make_unique<d::LinearLayer>(be, cfg, *named)
                  : std::make_unique<d::LinearLayer>(be, cfg, disabled);
  } catch (const d::DispatchError&) {
    // A loud, named refusal is right when no linear kernel can run the config.
    if (auto v = decision::check_refusal(cfg, named ? named->name() : "registry", disabled, tag)) {
      return violation("I7", *v);
    }
    return std::nullopt;
  }
  layer->set_faults(ctx.faults);
  decision::LayerCheck mc(cfg, layer->linear_kernel(), named == nullptr, disabled,
                          kernel_name != "EmulationMxfp8PerStep", tag);
  if (mc.construction()) return violation("I7", *mc.construction());
  ctx.tag("platform:" + std::string(d::to_string(cfg.platform)));
  ctx.tag("flags:" + flags);
  ctx.tag("dispatch:" + std::string(layer->linear_kernel().name()));
  ctx.tag(m == 1 ? "m=1" : "m>1");
  std::mt19937_64 rng(c.num("seed"));
  d::QuantizedWeight w;
  if (codes) {
    w = codes_weight(cfg, rng);
    layer->load_weights(w);
    if (cfg.weight_scale == d::WeightScaleDtype::kE8m0) tag_e8m0(ctx, w.scales);
  } else {
    w = layer->load_float_weights(ints(cfg.n * cfg.k, rng));
  }
  if (auto v = mc.loaded(layer->state())) return violation("I7", *v);
  d::Activation x = d::make_activation(ints(m * cfg.k, rng), m, cfg.k);
  Consumers others(be, c.has("consumers") ? c.text("consumers") : "none", cfg,
                   layer->linear_kernel(), kernel_name != "EmulationMxfp8PerStep", c.num("seed"),
                   ctx);
  if (others.failure()) return others.failure();
  const GemmOutput want = d::test_support::reference(cfg, w, x);
  const bool per_step_kernel = layer->linear_kernel().name() == "EmulationMxfp8" &&
                               layer->linear_kernel().planned_load(cfg).empty();
  bool processed_seen = false, skipped_processing = true;
  for (const std::string& step : steps) {
    if (auto f = others.mirror(step)) return f;  // `same` consumers take the layer's steps
    const gpu::Counters before = be.counters();
    std::optional<std::string> model_violation;  // reported after the invariants below
    if (step == "process") {
      layer->process_weights_after_loading();
      skipped_processing = false;
      model_violation = mc.processed(before, be.counters(), layer->state());
      if (auto f = check_upcast_scales(be, cfg, layer->state(), w)) return f;
    } else if (step == "model_preshuffle") {
      const bool shuffled = layer->model_preshuffle();
      ctx.tag("lifecycle:model_preshuffle");
      model_violation = mc.model_preshuffled(shuffled, before, be.counters(), layer->state());
    } else {
      const ActScaleOrder declared = layer->act_scale_order();
      model::ScaleOrder model_declared = model::ScaleOrder::kNone;
      if (auto v = mc.declared(declared, &model_declared)) return violation("I7", *v);
      ActScaleOrder order = ActScaleOrder::kNone;
      if (step == "apply_fused") {
        // The layer and the activation's other consumers negotiate its order (I3).
        if (auto f = others.negotiate_and_apply(declared, model_declared, x, &order)) return f;
      } else if (step == "apply_row") {
        order = ActScaleOrder::kRowMajor;
      } else if (step == "apply_col") {
        order = ActScaleOrder::kColMajor;
      }
      d::Activation in = x;
      if (order != ActScaleOrder::kNone) in.pre_quantized = d::quantize_activation_1x128(x, order);
      const bool mismatch =
          order != ActScaleOrder::kNone && declared != ActScaleOrder::kNone && order != declared;
      const bool processed = layer->state().load_processed;
      d::ApplyResult r;
      try {
        r = layer->apply(in);
      } catch (const d::DispatchError& e) {
        if (auto v = mc.applied(decision::to_model(order), true, {}, {}, layer->state())) {
          return violation("I7", *v);
        }
        if (mismatch) continue;  // the fused form in the wrong order is refused: I3 holds
        return violation("I4", std::string("apply threw: ") + e.what());
      }
      if (mismatch) {
        return violation("I3", "a " + std::string(dispatch::to_string(order)) +
                                   " pre-quantized activation was accepted by a layer that reads " +
                                   std::string(dispatch::to_string(declared)));
      }
      const gpu::Counters& dl = layer->last_apply().delta;
      model_violation = mc.applied(decision::to_model(order), false, r.path, dl, layer->state());
      if (cfg.k % d::kDotScaledKAlign != 0 &&
          dl.launches_of(gpu::kernel("gemm_mx_dot_scaled")) != 0) {
        return violation("I1", "gemm_mx_dot_scaled launched with K = " + std::to_string(cfg.k) +
                                   " (contract: K % 128 == 0)");
      }
      if (auto f = compare_outputs(
              "I4: apply (path " + std::string(d::to_string(r.path)) + ") vs reference", want,
              r.out)) {
        return f;
      }
      if (processed) {
        processed_seen = true;
        for (std::string_view name :
             {"dequant_mx_to_bf16", "upcast_e8m0", "preshuffle_weight", "gemm_mx_dequant"}) {
          const Kernel k = gpu::kernel(name);
          // The per-step linear kernel's plan dequantizes on every apply (§5.1).
          if (name == "dequant_mx_to_bf16" && per_step_kernel) continue;
          if (dl.launches_of(k) != 0) {
            return violation(
                "I5", "per-step " + std::string(gpu::kernel_name(k)) + " after load processing");
          }
        }
        const std::size_t bound = m * (cfg.k * 2 + cfg.k + cfg.k * 4 + cfg.n * 4) + 256;
        if (!per_step_kernel && dl.bytes_allocated > bound) {
          return violation("I5", std::to_string(dl.bytes_allocated) +
                                     " bytes allocated in one apply after load processing");
        }
      }
    }
    const d::LayerState& st = layer->state();
    if (st.weight_relayouts > 1) {
      return violation("I2",
                       "weight preshuffled " + std::to_string(st.weight_relayouts) + " times");
    }
    if (cfg.reads_weight_directly() && st.weight_relayouts != 0) {
      return violation("I2", "a weight read directly (" + flags + ") was preshuffled");
    }
    if (model_violation) return violation("I7", *model_violation);
  }
  if (skipped_processing) ctx.tag("lifecycle:skipped_processing");
  if (processed_seen) ctx.tag("lifecycle:processed_apply");
  return std::nullopt;
}

}  // namespace

void add_dispatch_properties(std::vector<Property>& out) {
  out.push_back({"dispatch.end_to_end",
                 "a dispatch decision or load-time processing order that gives wrong numbers, "
                 "breaks a kernel contract, relays a weight out twice or re-materializes a "
                 "constant per step (I1-I5)",
                 0, nullptr, gen_dispatch, check_dispatch});
}

}  // namespace mxgate::properties
