// `mxgate plan`: the linear kernel the dispatch registry picks for one linear layer, the
// load-time actions its process_weights_after_loading runs and the path apply then takes.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/registry.h"
#include "properties/moe_models.h"
#include "properties/shape_catalog.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/layer_delegate.h"
#include "tools/mxgate/plan_experts.h"
#include "tools/mxgate/verbs.h"

namespace mxgate::cli {

namespace {

using namespace mxgate::dispatch;

// "a,b,,c" -> {a, b, c}.
std::set<std::string> comma_set(const std::string& list) {
  std::set<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    if (end > start) out.insert(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The catalog's quant column as a dispatch scheme; nullopt for formats dispatch does not model.
std::optional<std::pair<Scheme, WeightScaleDtype>> scheme_of(const std::string& quant) {
  if (quant.rfind("MXFP8", 0) == 0) return std::pair{Scheme::kMxfp8, WeightScaleDtype::kE8m0};
  if (quant == "FP8-B128") return std::pair{Scheme::kFp8Block, WeightScaleDtype::kFp32};
  if (quant == "FP8-B128(ue8m0)") return std::pair{Scheme::kFp8Block, WeightScaleDtype::kE8m0};
  if (quant == "BF16") return std::pair{Scheme::kBf16, WeightScaleDtype::kE8m0};
  return std::nullopt;
}

// The config as mxgate.layers' LayerConfig text (docs/layers.md §1), for `plan --impl`.
std::string layer_text(const LinearConfig& c, const std::string& platform) {
  return std::string("scheme=") + (c.scheme == Scheme::kMxfp8 ? "mxfp8" : "fp8_block") +
         " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
         " weight_scale=" + (c.weight_scale == WeightScaleDtype::kE8m0 ? "e8m0" : "fp32") +
         " platform=" + platform + " is_bmm=" + (c.is_bmm ? "1" : "0") +
         " skip_weight_relayout=" + (c.skip_weight_relayout ? "1" : "0");
}

// A catalogued layer as dispatch's config: BMM layers are is_bmm, MLA's kv_b_proj is read
// directly (skip_weight_relayout).
LinearConfig catalogued_config(const ShapeEntry& e, Platform platform,
                               const std::pair<Scheme, WeightScaleDtype>& scheme) {
  LinearConfig c;
  c.platform = platform;
  c.scheme = scheme.first;
  c.weight_scale = scheme.second;
  c.n = e.n;
  c.k = e.k;
  c.is_bmm = e.bmm_batch.has_value();
  c.skip_weight_relayout = e.layer.find("kv_b_proj") != std::string::npos;
  return c;
}

// One MoE model's summary line and expert GEMMs.
struct ModelExperts {
  std::string summary;
  std::vector<ExpertGemm> gemms;
};

// The routed-expert GEMMs of every matched model with a row in the MoE model table, at TP tp
// (ep > 0: under expert parallelism), each checked against the catalog's row of it.
std::vector<ModelExperts> model_experts(const Args& a, const std::vector<std::string>& models,
                                        const std::vector<ShapeEntry>& all, uint32_t tp,
                                        uint32_t ep) {
  const std::string table_path = a.get("moe-models").value_or(default_moe_models_path());
  const std::string catalog_path = a.get("catalog").value_or(default_shape_catalog_path());
  std::vector<MoeModel> table;
  try {
    table = load_moe_models(table_path);
  } catch (const CatalogError& e) {
    throw UsageError(e.what());
  }
  std::vector<ModelExperts> out;
  for (const std::string& name : models) {
    const MoeModel* m = find_moe_model(table, name);
    const ShapeEntry* expert_row = nullptr;
    bool shared = false;
    for (const ShapeEntry& e : all) {
      if (e.model != name) continue;
      if (is_expert_gemm(e) && !expert_row) expert_row = &e;
      if (e.layer.rfind("shared_expert", 0) == 0 && e.tp == tp) shared = true;
    }
    if (!m && expert_row) {
      throw UsageError(catalog_path + ":" + std::to_string(expert_row->line) +
                       ": the catalog lists expert GEMMs of '" + name + "', but " + table_path +
                       " has no row for it");
    }
    if (!m) continue;
    ModelExperts me{expert_summary(*m, table_path, tp, ep, shared),
                    expert_gemms(*m, table_path, tp, ep)};
    for (const ExpertGemm& g : me.gemms) check_against_catalog(g, all, catalog_path, table_path);
    out.push_back(std::move(me));
  }
  if (ep > 0 && out.empty()) {
    std::string names;
    for (const std::string& n : models) names += (names.empty() ? "'" : ", '") + n + "'";
    throw UsageError("--ep " + std::to_string(ep) + ": " + names +
                     " has no routed experts (no row in " + table_path + ")");
  }
  return out;
}

// `plan --model NAME --tp T [--ep E]`: every catalogued layer of the model at that TP size, then
// its routed-expert GEMMs (plan_experts.h). BMM layers (bmm_batch) are is_bmm; MLA's kv_b_proj is
// read directly to build W_UK / W_UV (docs/architecture.md §1.1, item 3), so it is
// skip_weight_relayout. The catalog's moe_w13 / moe_w2 rows are expert GEMMs, not linear layers.
int plan_model(const Args& a, Platform platform, const std::set<std::string>& disabled) {
  const std::string model = a.require("model");
  const long long tp = a.integer("tp", 0, 1, 1024);
  if (!tp) throw UsageError("--model needs --tp T");
  const long long ep = a.integer("ep", 0, 1, 4096);
  for (const char* single : {"scheme", "n", "k", "flags", "weight-scale"}) {
    if (a.get(single)) throw UsageError(std::string("--") + single + " does not go with --model");
  }
  if (a.get("impl") && (a.get("ep") || a.get("moe-models"))) {
    throw UsageError("--ep and --moe-models do not go with --impl (it compares linear layers)");
  }
  std::vector<ShapeEntry> all;
  try {
    all = load_shape_catalog(a.get("catalog").value_or(default_shape_catalog_path()));
  } catch (const CatalogError& e) {
    throw UsageError(e.what());
  }
  std::vector<const ShapeEntry*> rows;
  std::vector<std::string> models;  // in catalog order
  bool at_tp = false;
  for (const ShapeEntry& e : all) {
    if (e.model.find(model) == std::string::npos) continue;
    if (std::find(models.begin(), models.end(), e.model) == models.end()) {
      models.push_back(e.model);
    }
    if (e.tp != static_cast<uint32_t>(tp)) continue;
    at_tp = true;
    if (!is_expert_gemm(e)) rows.push_back(&e);
  }
  if (models.empty()) throw UsageError("--model '" + model + "' matches no catalogued model");
  if (!at_tp) {
    throw UsageError("no layer of '" + model + "' is catalogued at TP " + std::to_string(tp));
  }
  const bool json = a.flag("json");
  const std::optional<std::string> impl = a.get("impl");
  // Before any output: bad sizes or a table that disagrees with the catalog print nothing.
  const std::vector<ModelExperts> experts =
      impl ? std::vector<ModelExperts>{}
           : model_experts(a, models, all, static_cast<uint32_t>(tp), static_cast<uint32_t>(ep));
  std::vector<std::string> configs;
  std::vector<std::string> labels;
  if (json && !impl) std::printf("[");
  bool first = true;
  for (const ShapeEntry* e : rows) {
    const auto sch = scheme_of(e->quant);
    std::string line;
    if (impl) {  // the user's decisions beside the model's, in Python; BF16 has no layer scheme
      if (sch && sch->first != Scheme::kBf16) {
        const LinearConfig c = catalogued_config(*e, platform, *sch);
        const bool sharded = e->tp > 1 && (e->parallel == "column" || e->parallel == "row");
        configs.push_back(
            layer_text(c, a.require("platform")) +
            (sharded ? " tp=" + std::to_string(e->tp) + " parallel=" + e->parallel : ""));
        labels.push_back(e->model + " " + e->layer);
      }
      continue;
    }
    if (!sch) {
      if (json) {
        line = "{\"model\": \"" + json_escape(e->model) + "\", \"layer\": \"" +
               json_escape(e->layer) + "\", \"n\": " + std::to_string(e->n) +
               ", \"k\": " + std::to_string(e->k) + ", \"skipped\": \"quant " + e->quant +
               " is not modelled by dispatch\"}";
      } else {
        std::printf("%-28.28s %-40.40s %6llu x %-6llu %-17s (not modelled)\n", e->model.c_str(),
                    e->layer.c_str(), static_cast<unsigned long long>(e->n),
                    static_cast<unsigned long long>(e->k), e->quant.c_str());
      }
    } else {
      const LinearConfig c = catalogued_config(*e, platform, *sch);
      Plan pl;
      try {
        pl = plan(c, disabled);
      } catch (const DispatchError& err) {
        throw UsageError(e->layer + ": " + err.what());
      }
      if (json) {
        // {"linear_kernel": ..., "load": [...], "apply": ...}
        const std::string body = plan_json(pl);
        line = "{\"model\": \"" + json_escape(e->model) + "\", \"layer\": \"" +
               json_escape(e->layer) + "\", \"n\": " + std::to_string(e->n) +
               ", \"k\": " + std::to_string(e->k) + ", " + body.substr(1);
      } else {
        std::string load;
        for (LoadAction l : pl.load) load += (load.empty() ? "" : ",") + std::string(to_string(l));
        std::printf("%-28.28s %-40.40s %6llu x %-6llu %-17s %-26s load=[%s] apply=%s\n",
                    e->model.c_str(), e->layer.c_str(), static_cast<unsigned long long>(e->n),
                    static_cast<unsigned long long>(e->k), e->quant.c_str(),
                    pl.linear_kernel.c_str(), load.c_str(),
                    std::string(to_string(pl.apply)).c_str());
      }
    }
    if (json) {
      std::printf("%s%s", first ? "" : ", ", line.c_str());
      first = false;
    }
  }
  if (impl) {
    if (configs.empty()) throw UsageError("no layer of '" + model + "' has an MXFP8 or FP8 scheme");
    return run_layer_plan(*impl, configs, labels, json);
  }
  for (const ModelExperts& me : experts) {
    if (!json) std::printf("%s\n", me.summary.c_str());
    for (const ExpertGemm& g : me.gemms) {
      if (json) {
        std::printf("%s%s", first ? "" : ", ", expert_json(g).c_str());
        first = false;
      } else {
        std::printf("%s\n", expert_text(g).c_str());
      }
    }
  }
  if (json) std::printf("]\n");
  return 0;
}

}  // namespace

int cmd_plan(const Argv& argv) {
  const Args a(argv,
               {"platform", "scheme", "n", "k", "flags", "weight-scale", "disable", "model", "tp",
                "ep", "catalog", "moe-models", "impl"},
               {"json"});
  if (!a.positionals().empty()) {
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  }
  LinearConfig c;
  const std::string platform = a.require("platform");
  const auto p = parse_platform(platform);
  if (!p) throw UsageError("--platform '" + platform + "' is not one of gfx950 gfx942 sm90 host");
  c.platform = *p;
  const std::set<std::string> disabled = comma_set(a.get("disable").value_or(""));
  for (const std::string& d : disabled) {
    if (find_linear_kernel(d) == nullptr) {
      throw UsageError("--disable: unknown linear kernel '" + d + "'");
    }
  }
  if (a.get("impl") && !disabled.empty()) {
    throw UsageError("--disable does not go with --impl (the model's plan is the registry's)");
  }
  if (a.get("impl") && a.get("impl")->rfind("py:", 0) != 0) {
    throw UsageError("--impl '" + *a.get("impl") +
                     "': plan compares a py:MODULE:OBJECT layer "
                     "adapter (docs/layers.md)");
  }
  if (a.get("model")) return plan_model(a, *p, disabled);
  if (a.get("tp") || a.get("ep") || a.get("catalog") || a.get("moe-models")) {
    throw UsageError("--tp, --ep, --catalog and --moe-models go with --model");
  }
  const std::string scheme = a.require("scheme");
  const auto s = parse_scheme(scheme);
  if (!s) throw UsageError("--scheme '" + scheme + "' is not one of mxfp8 fp8_block bf16");
  c.scheme = *s;
  a.require("n");
  a.require("k");
  c.n = static_cast<std::size_t>(a.integer("n", 0, 1, 1LL << 30));
  c.k = static_cast<std::size_t>(a.integer("k", 0, 1, 1LL << 30));
  if (auto ws = a.get("weight-scale")) {
    const auto d = parse_weight_scale_dtype(*ws);
    if (!d) throw UsageError("--weight-scale '" + *ws + "' is not one of e8m0 fp32");
    if (c.scheme == Scheme::kBf16) throw UsageError("--weight-scale does not apply to bf16");
    c.weight_scale = *d;
  } else {
    c.weight_scale =
        c.scheme == Scheme::kFp8Block ? WeightScaleDtype::kFp32 : WeightScaleDtype::kE8m0;
  }
  for (const std::string& f : comma_set(a.get("flags").value_or(""))) {
    if (f == "is_bmm") {
      c.is_bmm = true;
    } else if (f == "skip_weight_relayout") {
      c.skip_weight_relayout = true;
    } else {
      throw UsageError("--flags: unknown flag '" + f + "' (is_bmm, skip_weight_relayout)");
    }
  }
  if (const auto impl = a.get("impl")) {
    if (c.scheme == Scheme::kBf16) throw UsageError("--impl compares mxfp8 and fp8_block layers");
    return run_layer_plan(*impl, {layer_text(c, platform)}, {}, a.flag("json"));
  }
  Plan pl;
  try {
    pl = plan(c, disabled);
  } catch (const DispatchError& e) {
    throw UsageError(e.what());
  }
  if (a.flag("json")) {
    std::printf("%s\n", plan_json(pl).c_str());
    return 0;
  }
  std::printf("layer:         %s\nlinear kernel: %s\nload:         ", describe(c).c_str(),
              pl.linear_kernel.c_str());
  if (pl.load.empty()) std::printf(" (none)");
  for (LoadAction l : pl.load) std::printf(" %s", std::string(to_string(l)).c_str());
  std::printf("\napply:         %s\n", std::string(to_string(pl.apply)).c_str());
  return 0;
}

}  // namespace mxgate::cli
