#include "properties/moe_models.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <sstream>

namespace mxgate {
namespace {

constexpr std::array<std::string_view, 9> kColumns = {
    "model",  "routed_experts", "shared_experts", "top_k", "moe_intermediate",
    "hidden", "expert_quant",   "keys",           "source"};

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

struct Where {
  std::string_view source;
  std::size_t line;
  [[noreturn]] void fail(const std::string& what) const {
    throw CatalogError(std::string(source) + ":" + std::to_string(line) + ": " + what);
  }
};

// An integer in [min, max].
uint64_t parse_uint(std::string_view text, std::string_view field, uint64_t min, uint64_t max,
                    const Where& w) {
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    w.fail(std::string(field) + " '" + std::string(text) + "' is not a non-negative integer");
  }
  if (v < min || v > max) {
    w.fail(std::string(field) + " " + std::string(text) + " is outside [" + std::to_string(min) +
           ", " + std::to_string(max) + "]");
  }
  return v;
}

}  // namespace

std::vector<MoeModel> parse_moe_models(std::string_view text, std::string_view source) {
  std::vector<MoeModel> out;
  bool header_seen = false;
  std::size_t line_no = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    const Where w{source, line_no};
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string_view> f = split(line, '\t');
    if (!header_seen) {
      if (f.size() != kColumns.size() || !std::equal(f.begin(), f.end(), kColumns.begin())) {
        std::string want;
        for (std::string_view c : kColumns) want += (want.empty() ? "" : " ") + std::string(c);
        w.fail("header must be the tab-separated columns: " + want);
      }
      header_seen = true;
      continue;
    }
    if (f.size() != kColumns.size()) {
      w.fail("expected " + std::to_string(kColumns.size()) + " tab-separated fields, found " +
             std::to_string(f.size()));
    }
    MoeModel m;
    m.line = line_no;
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
  }
  if (!header_seen) throw CatalogError(std::string(source) + ": no header line");
  return out;
}

std::vector<MoeModel> load_moe_models(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CatalogError(path + ": cannot open the MoE model table");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_moe_models(ss.str(), path);
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
