#include "properties/moe_models.h"

#include <array>

namespace mxgate {
namespace {

constexpr std::array<std::string_view, 9> kColumns = {
    "model",  "routed_experts", "shared_experts", "top_k", "moe_intermediate",
    "hidden", "expert_quant",   "keys",           "source"};

using tsv::parse_uint;
using tsv::split;
using tsv::Where;

}  // namespace

std::vector<MoeModel> parse_moe_models(std::string_view text, std::string_view source) {
  std::vector<MoeModel> out;
  tsv::for_each_row(
      text, source, kColumns, [&](const std::vector<std::string_view>& f, const Where& w) {
        MoeModel m;
        m.line = w.line;
        m.model = f[0];
        if (m.model.empty()) w.fail("model must not be empty");
        for (const MoeModel& seen : out) {
          if (seen.model == m.model) {
            w.fail("model '" + m.model + "' is listed twice (first on line " +
                   std::to_string(seen.line) + ")");
          }
        }
        m.routed_experts = static_cast<uint32_t>(parse_uint(f[1], "routed_experts", 2, 4096, w));
        m.shared_experts = static_cast<uint32_t>(parse_uint(f[2], "shared_experts", 0, 64, w));
        m.top_k = static_cast<uint32_t>(parse_uint(f[3], "top_k", 1, 4096, w));
        if (m.top_k > m.routed_experts) {
          w.fail("top_k " + std::to_string(m.top_k) + " exceeds routed_experts " +
                 std::to_string(m.routed_experts));
        }
        m.moe_intermediate = parse_uint(f[4], "moe_intermediate", 1, 1ull << 24, w);
        m.hidden = parse_uint(f[5], "hidden", 1, 1ull << 24, w);
        m.expert_quant = f[6];
        if (m.expert_quant.empty()) w.fail("expert_quant must not be empty");
        m.keys = f[7];
        if (split(f[7], ',').size() != 5) {
          w.fail("keys '" + m.keys + "' must name 5 config.json keys (- for an absent one)");
        }
        m.source = f[8];
        if (m.source.empty()) w.fail("source must not be empty");
        out.push_back(std::move(m));
      });
  return out;
}

std::vector<MoeModel> load_moe_models(const std::string& path) {
  return parse_moe_models(tsv::read_file(path, "MoE model table"), path);
}

std::string default_moe_models_path() {
  return std::string(MXGATE_SOURCE_DIR) + "/corpus/shapes/moe_models.tsv";
}

const MoeModel* find_moe_model(const std::vector<MoeModel>& table, std::string_view model) {
  for (const MoeModel& m : table) {
    if (m.model == model) return &m;
  }
  return nullptr;
}

bool is_expert_gemm(const ShapeEntry& e) {
  return e.layer.rfind("moe_w13", 0) == 0 || e.layer.rfind("moe_w2", 0) == 0;
}

}  // namespace mxgate
