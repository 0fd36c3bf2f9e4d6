#include "properties/props_dispatch_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>

#include "dispatch/negotiation.h"
#include "dispatch/registry.h"
#include "properties/dispatch_apply_oracle.h"
#include "properties/props.h"
#include "properties/shape_catalog.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/mx_quant.h"

namespace mxgate::properties {
namespace {

namespace d = mxgate::dispatch;

// Per-rank N x K of the catalog small enough for a host-model lifecycle: M <= 2 of them costs a
// few milliseconds with the reference (docs/dispatch_model.md §8 measures it).
constexpr std::size_t kCatalogMaxElements = std::size_t{1} << 18;

const std::vector<std::pair<std::size_t, std::size_t>>& catalog_nk() {
  static const std::vector<std::pair<std::size_t, std::size_t>> shapes = [] {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    try {
      for (const ShapeEntry& e : load_shape_catalog(default_shape_catalog_path())) {
        if (e.n * e.k > kCatalogMaxElements) continue;
        const std::pair<std::size_t, std::size_t> nk{e.n, e.k};
        if (std::find(out.begin(), out.end(), nk) == out.end()) out.push_back(nk);
      }
    } catch (const std::exception&) {
      // a tree without corpus/: the small shapes only
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return a.first * a.second < b.first * b.second;  // shrink toward the smallest
    });
    return out;
  }();
  return shapes;
}

Failure violation(const std::string& invariant, const std::string& what) {
  return Failure{invariant + ": " + what, std::nullopt, std::nullopt, std::nullopt};
}

}  // namespace

decision::Tagger tagger(const Context& ctx) {
  if (ctx.coverage == nullptr) return {};
  return {[](void* c, std::string_view t) { static_cast<const Context*>(c)->tag(std::string(t)); },
          const_cast<Context*>(&ctx)};
}

rc::Gen<std::pair<std::size_t, std::size_t>> gen_dispatch_nk() {
  // N = 1 first (the shrink target), the preshuffle alignment (16) and its multiples often; K
  // with every residue of the MX block, sometimes off it (K % 32 != 0: no MXFP8 linear kernel).
  // One weight block of N (128) with K off the shuffle tile reaches the preshuffled linear kernel's
  // K gate.
  const auto small = [](std::size_t k_align, std::vector<std::size_t> ns) {
    return rc::gen::apply(
        [](std::size_t n, std::size_t k) {
          return std::pair{n, k};
        },
        pick(std::move(ns)), gen_k({.align = k_align}, 2));
  };
  const auto& cat = catalog_nk();
  return rc::gen::mapcat(range(0, 8), [small, cat](std::size_t i) {
    if (i < 5 || cat.empty()) return small(kMxBlock, {1, 2, 16, 3, 32, 48, 16, 32, 4, 16});
    return i == 5 ? small(1, {1, 16, 128, 32}) : pick(cat);
  });
}

std::optional<std::string> check_static_decisions(const d::LinearConfig& c,
                                                  const std::set<std::string>& disabled,
                                                  const decision::Tagger& tag) {
  for (d::Scheme s : {d::Scheme::kMxfp8, d::Scheme::kFp8Block, d::Scheme::kBf16}) {
    for (d::WeightScaleDtype ws : {d::WeightScaleDtype::kE8m0, d::WeightScaleDtype::kFp32}) {
      if (s == d::Scheme::kBf16 && ws == d::WeightScaleDtype::kFp32) continue;  // ignored
      d::LinearConfig v = c;
      v.scheme = s;
      v.weight_scale = ws;
      if (auto f = decision::check_static(v, disabled, tag)) return f;
    }
  }
  return std::nullopt;
}

std::size_t dispatch_m_cap(std::size_t n, std::size_t k) {
  if (n * k <= 4096) return std::numeric_limits<std::size_t>::max();
  return n * k <= 65536 ? 8 : 2;
}

std::optional<Failure> check_upcast_scales(gpu::Backend& be, const d::LinearConfig& c,
                                           const d::LayerState& st,
                                           const d::QuantizedWeight& loaded) {
  if (c.scheme != d::Scheme::kFp8Block || c.weight_scale != d::WeightScaleDtype::kE8m0 ||
      st.weight_scale_dtype != contract::Dtype::kF32) {
    return std::nullopt;
  }
  const std::vector<float> got = be.download_as<float>(st.weight_scale);
  if (got.size() != loaded.scales.size()) {
    return violation("load", "the upcast weight scales hold " + std::to_string(got.size()) +
                                 " values for " + std::to_string(loaded.scales.size()) +
                                 " e8m0 bytes");
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float want = decode_e8m0(loaded.scales[i], E8m0Decode::kOcp);
    if (bits_of(got[i]) != bits_of(want) && !(std::isnan(got[i]) && std::isnan(want))) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "weight scale %zu: e8m0 byte 0x%02X upcast to 0x%08X, the OCP value is "
                    "0x%08X (docs/dispatch_model.md §4.3)",
                    i, loaded.scales[i], bits_of(got[i]), bits_of(want));
      return violation("load", buf);
    }
  }
  return std::nullopt;
}

rc::Gen<std::string> gen_disabled() {
  return pick<std::string>({"none", "none", "none", "none", "none", "DotScaledMxfp8",
                            "PreshuffledBlockScaledFp8", "EmulationMxfp8", "BlockScaledFp8", "Bf16",
                            "DotScaledMxfp8,EmulationMxfp8"});
}

std::set<std::string> disabled_field(const Case& c) {
  std::set<std::string> out;
  if (!c.has("disabled") || c.text("disabled") == "none") return out;
  std::stringstream ss(c.text("disabled"));
  std::string name;
  while (std::getline(ss, name, ',')) {
    if (d::find_linear_kernel(name) == nullptr) {
      throw CaseError("case field 'disabled' names unknown linear kernel '" + name + "'");
    }
    out.insert(name);
  }
  return out;
}

rc::Gen<std::string> gen_consumers() {
  return pick<std::string>({"none", "none", "none", "same", "same", "col", "row", "bf16", "plain",
                            "direct", "model_col", "same,col", "same,row", "col,col", "same,bf16",
                            "model_col,same", "row,direct,plain"});
}

// ---- Consumers -------------------------------------------------------------------------------

struct Consumers::One {
  std::string kind;
  d::LinearConfig cfg;
  std::unique_ptr<d::LinearLayer> layer;
  std::unique_ptr<decision::LayerCheck> check;
  d::QuantizedWeight weight;
  std::optional<GemmOutput> want;  // the reference of `weight` and the case's activation
};

Consumers::Consumers(gpu::Backend& be, const std::string& field, const d::LinearConfig& layer,
                     const d::LinearKernel& linear_kernel, bool emulation_at_load, uint64_t seed,
                     const Context& ctx)
    : be_(be), ctx_(ctx) {
  static const d::BlockScaledFp8 block;
  static const d::PreshuffledBlockScaledFp8 pre;
  static const d::Bf16 bf16;
  if (field == "none") return;
  std::stringstream ss(field);
  std::string kind;
  std::mt19937_64 rng(seed ^ 0x5bd1e995u);
  while (std::getline(ss, kind, ',')) {
    auto one = std::make_unique<One>();
    one->kind = kind;
    const bool same = kind == "same";
    one->cfg = layer;
    // N = 16: the preshuffle tile, the smallest layer every kind can run.
    one->cfg.n = 16;
    if (!same) {
      one->cfg.platform = d::Platform::kHost;
      one->cfg.scheme = kind == "bf16" ? d::Scheme::kBf16 : d::Scheme::kFp8Block;
      one->cfg.is_bmm = kind == "direct";
      one->cfg.skip_weight_relayout = false;
    }
    const bool preshuffled =
        kind == "col" || kind == "model_col" || kind == "plain" || kind == "direct";
    const d::LinearKernel* k = same             ? &linear_kernel
                               : kind == "row"  ? static_cast<const d::LinearKernel*>(&block)
                               : kind == "bf16" ? static_cast<const d::LinearKernel*>(&bf16)
                               : preshuffled    ? static_cast<const d::LinearKernel*>(&pre)
                                                : nullptr;
    if (k == nullptr) throw CaseError("case field 'consumers' has unknown kind '" + kind + "'");
    try {
      one->layer = std::make_unique<d::LinearLayer>(be_, one->cfg, *k);
    } catch (const d::DispatchError&) {
      // This K is not for this kind (the preshuffle tile): right only if the model agrees.
      if (auto v = decision::check_refusal(one->cfg, k->name(), {}, tagger(ctx))) {
        failure_ = violation("I7", "consumer " + kind + ": " + *v);
        return;
      }
      continue;
    }
    one->layer->set_faults(ctx.faults);
    one->check = std::make_unique<decision::LayerCheck>(
        one->cfg, *k, false, std::set<std::string>{}, !same || emulation_at_load, tagger(ctx));
    const auto fail = [&](const std::string& what) {
      std::string text = "consumer " + kind;
      text += ": " + what;
      failure_ = violation("I7", text);
    };
    if (one->check->construction()) {
      fail(*one->check->construction());
      return;
    }
    std::vector<float> w(one->cfg.n * one->cfg.k);
    for (float& x : w) x = static_cast<float>(static_cast<int>(rng() % 17) - 8);
    one->weight = one->layer->load_float_weights(w);
    if (auto v = one->check->loaded(one->layer->state())) {
      fail(*v);
      return;
    }
    all_.push_back(std::move(one));
    // Their preparation: the model's shuffle before processing (model_col; refused for the
    // directly-read weight), or after it (col: the model-side guard).
    std::vector<std::string> steps;
    if (kind == "model_col" || kind == "direct") steps = {"model_preshuffle", "process"};
    if (kind == "col") steps = {"process", "model_preshuffle"};
    for (const std::string& st : steps) {
      if (auto f = step(*all_.back(), st)) {
        failure_ = f;
        return;
      }
    }
  }
  ctx.tag("consumers:" + std::to_string(all_.size()));
}

std::optional<Failure> Consumers::step(One& one, const std::string& step) {
  const gpu::Counters before = be_.counters();
  std::optional<std::string> v;
  if (step == "process") {
    one.layer->process_weights_after_loading();
    v = one.check->processed(before, be_.counters(), one.layer->state());
  } else {
    const bool shuffled = one.layer->model_preshuffle();
    v = one.check->model_preshuffled(shuffled, before, be_.counters(), one.layer->state());
  }
  const d::LayerState& st = one.layer->state();
  if (!v && st.weight_relayouts > 1)
    v = "weight preshuffled " + std::to_string(st.weight_relayouts) + " times (I2)";
  if (v) return violation("I7", "consumer " + one.kind + ", " + step + ": " + *v);
  return std::nullopt;
}

std::optional<Failure> Consumers::mirror(const std::string& s) {
  if (s != "process" && s != "model_preshuffle") return std::nullopt;
  for (const auto& one : all_) {
    if (one->kind != "same") continue;
    if (auto f = step(*one, s)) return f;
  }
  return std::nullopt;
}

Consumers::~Consumers() = default;

std::optional<Failure> Consumers::negotiate_and_apply(dispatch::ActScaleOrder main_declared,
                                                      model::ScaleOrder main_model_declared,
                                                      const d::Activation& x,
                                                      dispatch::ActScaleOrder* order) {
  std::vector<dispatch::ActScaleOrder> declared = {main_declared};
  std::vector<model::ScaleOrder> model_declared = {main_model_declared};
  for (const auto& one : all_) {
    model::ScaleOrder m = model::ScaleOrder::kNone;
    const dispatch::ActScaleOrder got = one->layer->act_scale_order();
    if (auto v = one->check->declared(got, &m)) return violation("I3", one->kind + ": " + *v);
    declared.push_back(got);
    model_declared.push_back(m);
  }
  *order = d::negotiate_act_scale_order(declared);
  std::optional<model::ScaleOrder> agreed;
  if (auto v = decision::check_negotiation(model_declared, *order, &agreed, tagger(ctx_))) {
    return violation("I3", *v);
  }
  d::Activation in = x;
  if (*order != dispatch::ActScaleOrder::kNone)
    in.pre_quantized = d::quantize_activation_1x128(x, *order);
  for (const auto& one : all_) {
    bool threw = false;
    d::ApplyResult r;
    try {
      r = one->layer->apply(in);
    } catch (const d::DispatchError&) {
      threw = true;
    }
    if (auto v = one->check->applied(decision::to_model(*order), threw, r.path,
                                     one->layer->last_apply().delta, one->layer->state())) {
      return violation("I3", "consumer " + one->kind + ": " + *v);
    }
    if (threw) continue;
    if (!one->want) one->want = d::test_support::reference(one->cfg, one->weight, x);
    if (auto f = compare_outputs("I4: consumer " + one->kind + " (path " +
                                     std::string(d::to_string(r.path)) + ") vs reference",
                                 *one->want, r.out)) {
      return f;
    }
  }
  return std::nullopt;
}

}  // namespace mxgate::properties
