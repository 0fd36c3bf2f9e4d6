// dispatch/ against the decision model (model/, docs/dispatch_model.md) through the glue
// (properties/dispatch_model_bridge.h): on every catalogued layer
// (corpus/shapes/production_shapes.tsv, every TP shard it lists) x scheme x weight-scale dtype x
// layer flags, every linear kernel's support on every platform, its can_implement and planned load
// / apply, and the registry's plan on every platform with no linear kernel and with linear kernels
// disabled; `mxgate plan
// --model` (run as a process) on production models; lifecycles on the host backend observed
// through launch counters and layer state, including planted zoo faults the glue must catch.
// The findings of docs/dispatch_model.md §9 must each still hold (a finding dispatch no longer
// shows is a failure: remove it).
// Does not cover: numerics (the dispatch property and test_dispatch.cpp compare outputs with the
// reference), device backends.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "dispatch/layer.h"
#include "dispatch/registry.h"
#include "gpu/host/host_backend.h"
#include "properties/dispatch_apply_oracle.h"
#include "properties/dispatch_model_bridge.h"
#include "properties/moe_models.h"
#include "properties/shape_catalog.h"
#include "tests/shell.h"

namespace mxgate::properties::decision {
namespace {

using dispatch::LinearConfig;
using dispatch::Platform;
using dispatch::Scheme;
using dispatch::WeightScaleDtype;

// Counts the tags the glue emits (findings, model branches).
struct TagCount {
  std::map<std::string, uint64_t> n;
  Tagger tagger() {
    return Tagger{
        [](void* self, std::string_view t) { ++static_cast<TagCount*>(self)->n[std::string(t)]; },
        this};
  }
  uint64_t count(const std::string& t) const {
    const auto it = n.find(t);
    return it == n.end() ? 0 : it->second;
  }
};

// The apply oracle's layer with the two flags that make other code read the weight directly.
LinearConfig config(Platform p, Scheme s, std::size_t n, std::size_t k, WeightScaleDtype ws,
                    bool is_bmm = false, bool skip = false) {
  LinearConfig c = dispatch::test_support::config(p, s, n, k, ws);
  c.is_bmm = is_bmm;
  c.skip_weight_relayout = skip;
  return c;
}

const std::vector<std::set<std::string>>& disabled_sets() {
  static const std::vector<std::set<std::string>> sets = {
      {},
      {"DotScaledMxfp8"},
      {"PreshuffledBlockScaledFp8"},
      {"EmulationMxfp8"},
      {"BlockScaledFp8"},
      {"Bf16"},
      {"DotScaledMxfp8", "EmulationMxfp8"},
      {"PreshuffledBlockScaledFp8", "BlockScaledFp8"},
  };
  return sets;
}

// A registry, can_implement or plan that departs from the rules on a production shape (a TP
// shard whose K or N falls off an alignment, a platform without a linear kernel, a disabled one)
// sends production layers down the wrong path; each finding of §9 must still be seen.
TEST(DecisionVsDispatch, EveryCatalogLayerSchemeScaleFlagsPlatformAndDisabledSet) {
  const std::vector<ShapeEntry> catalog = load_shape_catalog(default_shape_catalog_path());
  ASSERT_GT(catalog.size(), 500u);
  TagCount tags;
  std::size_t configs = 0;
  std::set<std::pair<uint64_t, uint64_t>> seen;
  for (const ShapeEntry& e : catalog) {
    if (!seen.insert({e.n, e.k}).second) continue;  // the same N x K under another name
    for (Scheme s : {Scheme::kMxfp8, Scheme::kFp8Block, Scheme::kBf16}) {
      for (WeightScaleDtype ws : {WeightScaleDtype::kE8m0, WeightScaleDtype::kFp32}) {
        for (int flags = 0; flags < 4; ++flags) {
          const LinearConfig c =
              config(Platform::kHost, s, e.n, e.k, ws, (flags & 1) != 0, (flags & 2) != 0);
          for (const std::set<std::string>& d : disabled_sets()) {
            ++configs;
            const std::optional<std::string> v = check_static(c, d, tags.tagger());
            ASSERT_FALSE(v.has_value()) << e.model << " " << e.layer << " TP" << e.tp << ": " << *v;
          }
        }
      }
    }
  }
  std::printf("%zu configs x 4 platforms; findings: F1 %llu, F2 %llu\n", configs,
              static_cast<unsigned long long>(tags.count("finding:F1")),
              static_cast<unsigned long long>(tags.count("finding:F2")));
  EXPECT_GT(tags.count("finding:F1"), 0u) << "F1 no longer seen on the catalog: remove it";
  EXPECT_GT(tags.count("finding:F2"), 0u) << "F2 no longer seen on the catalog: remove it";
}

struct PlanLine {
  std::string layer, linear_kernel, apply;
  uint64_t n = 0, k = 0;
  std::vector<std::string> load;
  bool skipped = false;
};

// The JSON lines of `mxgate plan --model M --tp T --json` (the tool's own format).
std::vector<PlanLine> parse_plan_json(const std::string& out) {
  std::vector<PlanLine> lines;
  static const std::regex object(
      R"re(\{"model": "[^"]*", "layer": "([^"]*)", "n": (\d+), "k": (\d+), ([^}]*)\})re");
  static const std::regex linear_kernel(
      R"re("linear_kernel": "([^"]*)", "load": \[([^\]]*)\], "apply": "([^"]*)")re");
  static const std::regex action(R"re("([a-z0-9_]+)")re");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), object); it != std::sregex_iterator();
       ++it) {
    const std::string rest = (*it)[4];
    // The routed-expert GEMMs after the layers are grouped GEMMs, not linear layers
    // (tests/test_plan_experts.cpp checks them).
    if (rest.find("\"grouped_family\"") != std::string::npos) continue;
    PlanLine l;
    l.layer = (*it)[1];
    l.n = std::stoull((*it)[2]);
    l.k = std::stoull((*it)[3]);
    std::smatch m;
    if (std::regex_search(rest, m, linear_kernel)) {
      l.linear_kernel = m[1];
      l.apply = m[3];
      const std::string acts = m[2];
      for (auto a = std::sregex_iterator(acts.begin(), acts.end(), action);
           a != std::sregex_iterator(); ++a) {
        l.load.push_back((*a)[1]);
      }
    } else {
      l.skipped = true;
    }
    lines.push_back(l);
  }
  return lines;
}

// The catalog's quant column as a model layer (docs/dispatch_model.md §10: MXFP8 weights carry
// e8m0 scales; FP8-B128 fp32 scales, FP8-B128(ue8m0) e8m0 ones), with the flags of layers other
// code reads directly (§4.4: BMM groups; MLA's kv_b_proj).
std::optional<model::LayerSpec> production_layer(const ShapeEntry& e) {
  model::LayerSpec s;
  s.n = e.n;
  s.k = e.k;
  if (e.quant.rfind("MXFP8", 0) == 0) {
    s.scheme = model::Scheme::kMxfp8;
  } else if (e.quant == "FP8-B128") {
    s.scheme = model::Scheme::kFp8Block;
    s.weight_scale = model::ScaleDtype::kFp32;
  } else if (e.quant == "FP8-B128(ue8m0)") {
    s.scheme = model::Scheme::kFp8Block;
  } else if (e.quant == "BF16") {
    s.scheme = model::Scheme::kBf16;
  } else {
    return std::nullopt;
  }
  s.is_bmm = e.bmm_batch.has_value();
  s.skip_weight_relayout = e.layer.find("kv_b_proj") != std::string::npos;
  return s;
}

// What users read: `mxgate plan --model` must print, for every production layer, the linear
// kernel, load actions and apply path of the rules (up to the findings), on every platform.
TEST(DecisionVsDispatch, MxgatePlanModelPrintsTheModelsPlan) {
  const std::vector<ShapeEntry> catalog = load_shape_catalog(default_shape_catalog_path());
  TagCount tags;
  for (const auto& [model_name, tp] :
       std::vector<std::pair<std::string, int>>{{"DeepSeek-V3/R1", 8},
                                                {"DeepSeek-V4.1-Flash", 4},
                                                {"DeepSeek-V4-Flash", 1},
                                                {"Kimi-K2", 8},
                                                {"Qwen3-30B-A3B-FP8", 16}}) {
    for (const char* platform : {"gfx950", "gfx942", "sm90", "host"}) {
      const auto r = test_support::run_shell(
          std::string(MXGATE_CLI) + " plan --platform " + platform + " --model " +
          test_support::shell_quote(model_name) + " --tp " + std::to_string(tp) + " --json");
      ASSERT_EQ(r.exit_code, 0) << model_name << " on " << platform << ": " << r.out;
      const std::vector<PlanLine> lines = parse_plan_json(r.out);
      std::vector<const ShapeEntry*> rows;
      for (const ShapeEntry& e : catalog) {
        if (e.model == model_name && e.tp == static_cast<uint32_t>(tp) && !is_expert_gemm(e)) {
          rows.push_back(&e);
        }
      }
      ASSERT_EQ(lines.size(), rows.size()) << model_name << " on " << platform;
      const model::Platform p = to_model(*dispatch::parse_platform(platform));
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::optional<model::LayerSpec> spec = production_layer(*rows[i]);
        const std::string at = model_name + " " + rows[i]->layer + " on " + platform;
        EXPECT_EQ(lines[i].n, rows[i]->n) << at;
        EXPECT_EQ(lines[i].skipped, !spec.has_value()) << at;
        if (!spec) continue;
        const ExpectedSelection want = expected_selection(*spec, p, {}, nullptr);
        ASSERT_TRUE(want.linear_kernel.has_value()) << at;
        if (want.via) tags.tagger()("finding:" + std::string(name(*want.via)));
        EXPECT_EQ(lines[i].linear_kernel, model::name(*want.linear_kernel)) << at;
        model::WeightState w = model::loaded(*spec);
        const model::Actions load = model::process(*want.linear_kernel, *spec, {}, w);
        std::vector<std::string> load_names;
        for (model::LoadAction a : load) load_names.emplace_back(model::name(a));
        EXPECT_EQ(lines[i].load, load_names) << at;
        EXPECT_EQ(
            lines[i].apply,
            model::name(model::apply(*want.linear_kernel, *spec, w, model::ScaleOrder::kNone).path))
            << at;
      }
    }
  }
  // DeepSeek-V3/R1's fused_qkv_a_proj (N = 2112) on ROCm is finding F1.
  EXPECT_GT(tags.count("finding:F1"), 0u);
}

// §3.4: DS-V4.1-Flash at TP16 shards the shared expert's down_proj to K = 144, off the MX block:
// no linear kernel can run it, and the tool must say so (exit 2), not pick one.
TEST(DecisionVsDispatch, MxgatePlanRefusesWhatNoKernelCanRun) {
  model::LayerSpec s;
  s.n = 5120;
  s.k = 144;
  EXPECT_FALSE(model::plan(s, model::Platform::kGfx950, {}).has_value());
  const auto r = test_support::run_shell(std::string(MXGATE_CLI) +
                                         " plan --platform gfx950 --model DeepSeek-V4.1-Flash "
                                         "--tp 16 --json 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("shared_expert_down_proj"), std::string::npos) << r.out;
}

// ---- lifecycles on the host backend ----------------------------------------------------------

// Runs one layer through `steps` ("process", "model_preshuffle", "apply", "apply_row",
// "apply_col") with the glue's checks; returns the first violation.
std::optional<std::string> run_lifecycle(const LinearConfig& c, const dispatch::LinearKernel* named,
                                         const std::vector<std::string>& steps,
                                         const dispatch::Faults& faults, TagCount& tags) {
  gpu::HostBackend be;
  std::unique_ptr<dispatch::LinearLayer> owned =
      named ? std::make_unique<dispatch::LinearLayer>(be, c, *named)
            : std::make_unique<dispatch::LinearLayer>(be, c);
  dispatch::LinearLayer& layer = *owned;
  layer.set_faults(faults);
  LayerCheck check(c, layer.linear_kernel(), named == nullptr, {}, true, tags.tagger());
  if (check.construction()) return check.construction();
  std::vector<float> w(c.n * c.k);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  layer.load_float_weights(w);
  if (auto v = check.loaded(layer.state())) return v;
  std::vector<float> xv(2 * c.k, 1.0f);
  const dispatch::Activation x = dispatch::make_activation(xv, 2, c.k);
  for (const std::string& s : steps) {
    const gpu::Counters before = be.counters();
    std::optional<std::string> v;
    if (s == "process") {
      layer.process_weights_after_loading();
      v = check.processed(before, be.counters(), layer.state());
    } else if (s == "model_preshuffle") {
      const bool shuffled = layer.model_preshuffle();
      v = check.model_preshuffled(shuffled, before, be.counters(), layer.state());
    } else {
      const dispatch::ActScaleOrder order = s == "apply_row"   ? dispatch::ActScaleOrder::kRowMajor
                                            : s == "apply_col" ? dispatch::ActScaleOrder::kColMajor
                                                               : dispatch::ActScaleOrder::kNone;
      dispatch::Activation in = x;
      if (order != dispatch::ActScaleOrder::kNone) {
        in.pre_quantized = dispatch::quantize_activation_1x128(x, order);
      }
      bool threw = false;
      dispatch::ApplyPath path = dispatch::ApplyPath::kBf16Gemm;
      try {
        path = layer.apply(in).path;
      } catch (const dispatch::DispatchError&) {
        threw = true;
      }
      v = check.applied(to_model(order), threw, path, layer.last_apply().delta, layer.state());
    }
    if (v) return s + ": " + *v;
  }
  return std::nullopt;
}

const dispatch::DotScaledMxfp8 kDot;
const dispatch::BlockScaledFp8 kBlock;
const dispatch::PreshuffledBlockScaledFp8 kPre;

// The glue passes dispatch where it follows the rules, on every linear kernel's lifecycle out of
// order; the per-step MXFP8 fallback launches what the rules' fallback does (§5.1, finding F3
// fixed: no finding is needed for it).
TEST(DecisionVsDispatchLifecycle, CleanDispatchPasses) {
  TagCount tags;
  const auto host = Platform::kHost;
  EXPECT_EQ(run_lifecycle(config(host, Scheme::kMxfp8, 1, 160, WeightScaleDtype::kE8m0), &kDot,
                          {"apply", "process", "apply", "process", "apply"}, {}, tags),
            std::nullopt);
  EXPECT_GT(tags.count("model:apply.per_step_fallback"), 0u);
  EXPECT_EQ(tags.count("finding:F3"), 0u);
  EXPECT_EQ(run_lifecycle(config(host, Scheme::kFp8Block, 128, 256, WeightScaleDtype::kE8m0), &kPre,
                          {"apply_row", "apply_col", "model_preshuffle", "process", "apply_col",
                           "apply_row", "process", "model_preshuffle", "apply"},
                          {}, tags),
            std::nullopt);
  EXPECT_EQ(run_lifecycle(config(Platform::kGfx950, Scheme::kFp8Block, 256, 128,
                                 WeightScaleDtype::kE8m0, true),
                          nullptr, {"model_preshuffle", "process", "apply_row", "apply"}, {}, tags),
            std::nullopt);
  EXPECT_EQ(run_lifecycle(config(host, Scheme::kFp8Block, 1, 32, WeightScaleDtype::kE8m0), &kBlock,
                          {"apply", "process", "apply", "apply_col"}, {}, tags),
            std::nullopt);
  EXPECT_GT(tags.count("model:apply.fused_refused"), 0u);
  EXPECT_GT(tags.count("model:load.keep_layout_already_preshuffled"), 0u);
}

struct PlantedRow {
  dispatch::Fault fault;
  LinearConfig c;
  const dispatch::LinearKernel* linear_kernel;
  std::vector<std::string> steps;
  const char* needle;  // a word the violation must contain
};

// The glue must be able to fail: each dispatch zoo fault (a wrong decision of dispatch/) planted
// on its minimal lifecycle is caught by the decision checks alone, before any output compare.
TEST(DecisionVsDispatchLifecycle, PlantedWrongDecisionsAreCaught) {
  using dispatch::Fault;
  const auto host = Platform::kHost;
  const auto e8m0 = WeightScaleDtype::kE8m0;
  const std::vector<PlantedRow> rows = {
      {Fault::kZ1NoPerStepFallback,
       config(host, Scheme::kMxfp8, 1, 160, e8m0),
       &kDot,
       {"apply"},
       "gemm_mx_dot_scaled"},
      {Fault::kZ2IgnoreActScaleOrder,
       config(host, Scheme::kFp8Block, 1, 32, e8m0),
       &kBlock,
       {"apply_col"},
       "accepted"},
      {Fault::kZ3NoPreshuffleGuard,
       config(host, Scheme::kFp8Block, 16, 64, e8m0),
       &kPre,
       {"model_preshuffle", "process"},
       "preshuffle_weight"},
      {Fault::kZ4RelayoutDirectlyRead,
       config(host, Scheme::kFp8Block, 16, 64, e8m0, false, true),
       &kPre,
       {"process"},
       "preshuffle_weight"},
      {Fault::kZ6PerStepRematerialize,
       config(host, Scheme::kMxfp8, 1, 160, e8m0),
       &kDot,
       {"process"},
       "dequant_mx_to_bf16"},
      {Fault::kZ7EarlyReturnSkipsUpcast,
       config(host, Scheme::kFp8Block, 16, 64, e8m0, true),
       &kPre,
       {"process"},
       "upcast_e8m0"},
  };
  for (const PlantedRow& r : rows) {
    TagCount tags;
    const std::optional<std::string> v =
        run_lifecycle(r.c, r.linear_kernel, r.steps, {r.fault}, tags);
    ASSERT_TRUE(v.has_value()) << dispatch::to_string(r.fault) << " escaped the model checks";
    EXPECT_NE(v->find(r.needle), std::string::npos) << dispatch::to_string(r.fault) << ": " << *v;
  }
}

// Finding F3 (docs/dispatch_model.md §9.3) in numbers: an unaligned-K MXFP8 layer must give the
// same output whether or not load processing ran (I4; vLLM's fallback dequantizes the weight
// and multiplies the plain activation, like the processed path). A fallback that MX-quantizes
// the activation (dispatch's until F3 was fixed) turns x = 1.0625 (bf16) into 1.0 (E4M3 with a
// 2^-8 scale: 272 is a tie between 256 and 288, to even 256); integer data (the property's)
// cannot see it.
TEST(DecisionFindings, F3PerStepFallbackEqualsTheProcessedPath) {
  const LinearConfig c = config(Platform::kHost, Scheme::kMxfp8, 1, 160, WeightScaleDtype::kE8m0);
  std::vector<float> w(160, 0.0f), xv(160, 0.0f);
  w[0] = 1.0f;
  xv[0] = 1.0625f;
  const dispatch::Activation x = dispatch::make_activation(xv, 1, 160);
  gpu::HostBackend be;
  dispatch::LinearLayer unprocessed(be, c, kDot), processed(be, c, kDot);
  unprocessed.load_float_weights(w);
  processed.load_float_weights(w);
  processed.process_weights_after_loading();
  const float a = unprocessed.apply(x).out.fp32[0], b = processed.apply(x).out.fp32[0];
  EXPECT_EQ(b, 1.0625f);
  EXPECT_EQ(a, b) << "per-step fallback " << a << " vs processed " << b;
}

}  // namespace
}  // namespace mxgate::properties::decision
