// The routed-expert GEMMs of `mxgate plan --model` (docs/grouped.md §7.1): per rank, under TP the
// expert intermediate is sharded (w13 N = 2 I / TP, w2 K = I / TP) and every rank holds every
// expert; under EP (vLLM --enable-expert-parallel: EP = TP x DP, the MoE layer's own TP is 1) a
// rank holds E / EP experts with the full I. The grouped family follows the experts' quant, the
// kernel is the first built-in one of that family whose contract admits N x K, and the hazards
// are the weight blocks a rank's shard cuts.
#include "tools/mxgate/plan_experts.h"

#include <algorithm>
#include <cstdio>

#include "contract/contract.h"
#include "gpu/kernel.h"
#include "tools/mxgate/args.h"

namespace mxgate::cli {

namespace {

constexpr const char* kW13 = "moe_w13 (experts gate_up, fused)";
constexpr const char* kW2 = "moe_w2 (experts down)";

std::string str(uint64_t v) { return std::to_string(v); }

// The weight blocks of the experts' quant: rows along N x cols along K (0: none, per-channel or
// unknown), and the grouped family modelling it.
struct QuantModel {
  uint32_t block_n = 0, block_k = 0;
  std::optional<contract::Family> family;
  std::string skipped;
};

QuantModel quant_model(const std::string& quant) {
  if (quant.rfind("FP8-B128", 0) == 0) return {128, 128, contract::Family::kGroupedGemmBlock, ""};
  if (quant.rfind("MXFP8", 0) == 0) return {1, 32, contract::Family::kGroupedGemmMx, ""};
  if (quant == "MXFP4") {
    return {1, 32, std::nullopt, "no grouped family models MXFP4 weights yet"};
  }
  return {0, 0, std::nullopt, "no grouped family models " + quant + " weights"};
}

// "K % 128 = 64 at TP 8: outside the contract (...)" for each dimension a weight block does not
// divide. `sharded`: the dimension is a TP shard of the checkpoint's.
void add_hazard(std::vector<std::string>& out, const std::string& what, uint64_t v, uint32_t block,
                bool sharded, uint32_t tp, bool fp8_block) {
  if (block <= 1 || v % block == 0) return;
  std::string h = what + " % " + str(block) + " = " + str(v % block) +
                  (sharded ? " at TP " + str(tp) : std::string(" unsharded")) +
                  ": outside the contract of ";
  if (fp8_block) {
    h += sharded ? "128x128 weight blocks (a block straddles two ranks; vLLM's Fp8MoEMethod "
                   "refuses the shard at load)"
                 : "128x128 weight blocks (a partial block)";
  } else {
    h += sharded ? "1x32 MX scale blocks (a block straddles two ranks)"
                 : "1x32 MX scale blocks (a partial block)";
  }
  out.push_back(h);
}

// The first built-in kernel of `family` in table order whose contract admits N x K.
void pick_kernel(ExpertGemm& g, contract::Family family) {
  std::optional<std::string> first_refusal;
  for (const gpu::KernelDef& def : gpu::all_kernels()) {
    if (def.family != family) continue;
    const contract::Contract& c = def.contract;
    const uint64_t m = std::max<uint64_t>({1, c.m.min, c.m.align});
    const auto why = contract::check_dims(def.name, c, m, g.n, g.k);
    if (!why) {
      g.kernel = std::string(def.name);
      g.contract = "admits";
      g.offset_align = c.grouped ? c.grouped->offset_align : 1;
      return;
    }
    if (!first_refusal) first_refusal = *why;
  }
  g.contract = first_refusal.value_or("no built-in kernel of the family");
}

std::string json_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    out += (i ? ", \"" : "\"") + json_escape(v[i]) + "\"";
  }
  return out + "]";
}

}  // namespace

std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

std::vector<ExpertGemm> expert_gemms(const MoeModel& m, const std::string& table_path, uint32_t tp,
                                     uint32_t ep) {
  const std::string at = table_path + ":" + str(m.line) + ": " + m.model;
  if (ep > 0 && ep % tp != 0) {
    throw UsageError("--ep " + str(ep) + " is not a multiple of --tp " + str(tp) +
                     ": the expert-parallel group is the TP x DP ranks (vLLM: EP = TP x DP)");
  }
  if (ep > 0 && m.routed_experts % ep != 0) {
    throw UsageError("--ep " + str(ep) + " does not divide the " + str(m.routed_experts) +
                     " routed experts of " + at);
  }
  if (ep == 0 && m.moe_intermediate % tp != 0) {
    throw UsageError("--tp " + str(tp) + " does not divide moe_intermediate " +
                     str(m.moe_intermediate) + " of " + at);
  }
  ExpertGemm base;
  base.model = m.model;
  base.mode = ep > 0 ? "EP" : "TP";
  base.tp = tp;
  base.ep = ep;
  base.routed_experts = m.routed_experts;
  base.experts_per_rank = ep > 0 ? m.routed_experts / ep : m.routed_experts;
  base.shared_experts = m.shared_experts;
  base.top_k = m.top_k;
  base.moe_intermediate = m.moe_intermediate;
  base.intermediate_per_rank = ep > 0 ? m.moe_intermediate : m.moe_intermediate / tp;
  base.quant = m.expert_quant;
  base.table_line = m.line;
  const std::string suffix = ep > 0 ? " [EP]" : "";
  const uint64_t i = base.intermediate_per_rank;
  const bool sharded = ep == 0 && tp > 1;

  ExpertGemm w13 = base;  // gate rows then up rows (vLLM FusedMoE w13_weight [E, 2 I / TP, H])
  w13.layer = kW13 + suffix;
  w13.n = 2 * i;
  w13.k = m.hidden;
  w13.n_parts = {i, i};
  ExpertGemm w2 = base;  // w2_weight [E, H, I / TP]
  w2.layer = kW2 + suffix;
  w2.n = m.hidden;
  w2.k = i;

  const QuantModel q = quant_model(m.expert_quant);
  const bool fp8_block = q.block_n == 128;
  add_hazard(w13.hazards, "N part", i, q.block_n, sharded, tp, fp8_block);
  add_hazard(w13.hazards, "K", w13.k, q.block_k, false, tp, fp8_block);
  add_hazard(w2.hazards, "N", w2.n, q.block_n, false, tp, fp8_block);
  add_hazard(w2.hazards, "K", w2.k, q.block_k, sharded, tp, fp8_block);
  for (ExpertGemm* g : {&w13, &w2}) {
    if (q.family) {
      g->family = std::string(contract::to_string(*q.family));
      pick_kernel(*g, *q.family);
    } else {
      g->skipped = q.skipped;
    }
  }
  return {w13, w2};
}

void check_against_catalog(const ExpertGemm& g, const std::vector<ShapeEntry>& catalog,
                           const std::string& catalog_path, const std::string& table_path) {
  const uint32_t size = g.ep > 0 ? g.ep : g.tp;
  for (const ShapeEntry& e : catalog) {
    if (e.model != g.model || e.layer != g.layer || e.mode != g.mode || e.tp != size) continue;
    const bool parts_ok = e.n_parts.empty() || g.n_parts.empty() || e.n_parts == g.n_parts;
    if (e.n == g.n && e.k == g.k && parts_ok && e.quant == g.quant) return;
    throw UsageError(catalog_path + ":" + str(e.line) + ": " + g.layer + " of " + g.model + " is " +
                     str(e.n) + " x " + str(e.k) + " " + e.quant + " at " + g.mode + " " +
                     str(size) + ", but " + table_path + ":" + str(g.table_line) + " gives " +
                     str(g.n) + " x " + str(g.k) + " " + g.quant);
  }
}

std::string expert_summary(const MoeModel& m, const std::string& table_path, uint32_t tp,
                           uint32_t ep, bool shared_catalogued) {
  std::string s =
      m.model + ": " + str(m.routed_experts) + " routed experts (top-" + str(m.top_k) + "), ";
  if (m.shared_experts == 0) {
    s += "no shared expert";
  } else {
    s += str(m.shared_experts) + " shared (" +
         (shared_catalogued ? "dense: its shared_expert_* layers above, at TP " + str(tp)
                            : std::string("not catalogued")) +
         ")";
  }
  if (ep > 0) {
    s += "; EP " + str(ep) + " = TP " + str(tp) + " x DP " + str(ep / tp) + ": " +
         str(m.routed_experts / ep) + " experts per rank, the full moe_intermediate " +
         str(m.moe_intermediate);
  } else {
    s += "; TP " + str(tp) + ": " + str(m.routed_experts) + " experts per rank, moe_intermediate " +
         str(m.moe_intermediate) + " / " + str(tp) + " = " + str(m.moe_intermediate / tp) +
         " per rank";
  }
  return s + " (" + table_path + ":" + str(m.line) + ")";
}

std::string expert_text(const ExpertGemm& g) {
  char head[160];
  std::snprintf(head, sizeof head, "%-28.28s %-40.40s %6llu x %-6llu %-17s ", g.model.c_str(),
                g.layer.c_str(), static_cast<unsigned long long>(g.n),
                static_cast<unsigned long long>(g.k), g.quant.c_str());
  std::string line = head;
  if (!g.family) {
    line += "(not modelled: " + g.skipped + ")";
  } else {
    line += *g.family + " kernel=" +
            (g.kernel ? *g.kernel + " (contract admits; offsets % " + str(g.offset_align) + ")"
                      : "none (" + g.contract + ")");
  }
  line += " experts/rank=" + str(g.experts_per_rank) + " top_k=" + str(g.top_k);
  for (const std::string& h : g.hazards) line += "; " + h;
  return line;
}

std::string expert_json(const ExpertGemm& g) {
  std::vector<std::string> parts;
  for (uint64_t p : g.n_parts) parts.push_back(str(p));
  std::string nparts = "[";
  for (std::size_t i = 0; i < parts.size(); ++i) nparts += (i ? ", " : "") + parts[i];
  nparts += "]";
  const auto opt = [](const std::optional<std::string>& v) {
    return v ? "\"" + json_escape(*v) + "\"" : std::string("null");
  };
  std::string out = "{\"model\": \"" + json_escape(g.model) + "\", \"layer\": \"" +
                    json_escape(g.layer) + "\", \"n\": " + str(g.n) + ", \"k\": " + str(g.k) +
                    ", \"n_parts\": " + nparts + ", \"quant\": \"" + json_escape(g.quant) +
                    "\", \"grouped_family\": " + opt(g.family) + ", \"kernel\": " + opt(g.kernel);
  if (g.family) {
    out += ", \"contract\": \"" + json_escape(g.contract) + "\"";
    if (g.kernel) out += ", \"offset_align\": " + str(g.offset_align);
  } else {
    out += ", \"skipped\": \"" + json_escape(g.skipped) + "\"";
  }
  out += ", \"mode\": \"" + g.mode + "\", \"tp\": " + str(g.tp) + ", \"ep\": " + str(g.ep) +
         ", \"routed_experts\": " + str(g.routed_experts) +
         ", \"experts_per_rank\": " + str(g.experts_per_rank) +
         ", \"shared_experts\": " + str(g.shared_experts) + ", \"top_k\": " + str(g.top_k) +
         ", \"moe_intermediate\": " + str(g.moe_intermediate) +
         ", \"intermediate_per_rank\": " + str(g.intermediate_per_rank) +
         ", \"hazards\": " + json_list(g.hazards) + ", \"moe_models_line\": " + str(g.table_line) +
         "}";
  return out;
}

}  // namespace mxgate::cli
