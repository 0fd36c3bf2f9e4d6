#include "properties/shape_catalog.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <sstream>

namespace mxgate {
namespace {

constexpr std::array<std::string_view, 12> kColumns = {"model",   "layer",     "parallel", "tp",
                                                       "n",       "k",         "quant",    "mode",
                                                       "n_parts", "bmm_batch", "flagged",  "flags"};

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

uint64_t parse_uint(std::string_view text, std::string_view field, uint64_t max, const Where& w) {
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    w.fail(std::string(field) + " '" + std::string(text) + "' is not a non-negative integer");
  }
  if (v == 0 || v > max) {
    w.fail(std::string(field) + " " + std::string(text) + " is outside [1, " + std::to_string(max) +
           "]");
  }
  return v;
}

}  // namespace

std::vector<ShapeEntry> parse_shape_catalog(std::string_view text, std::string_view source) {
  std::vector<ShapeEntry> out;
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
    ShapeEntry e;
    e.line = line_no;
    e.model = f[0];
    e.layer = f[1];
    if (e.model.empty() || e.layer.empty()) w.fail("model and layer must not be empty");
    e.parallel = f[2];
    if (e.parallel != "column" && e.parallel != "row" && e.parallel != "replicated") {
      w.fail("parallel '" + e.parallel + "' is not column, row or replicated");
    }
    e.tp = static_cast<uint32_t>(parse_uint(f[3], "tp", 1024, w));
    e.n = parse_uint(f[4], "n", 1ull << 31, w);
    e.k = parse_uint(f[5], "k", 1ull << 31, w);
    e.quant = f[6];
    if (e.quant.empty()) w.fail("quant must not be empty");
    e.mode = f[7];
    if (e.mode != "TP" && e.mode != "EP") w.fail("mode '" + e.mode + "' is not TP or EP");
    if (f[8] != "-") {
      uint64_t sum = 0;
      for (std::string_view p : split(f[8], ',')) {
        e.n_parts.push_back(parse_uint(p, "n_parts entry", 1ull << 31, w));
        sum += e.n_parts.back();
      }
      if (sum != e.n) {
        w.fail("n_parts add up to " + std::to_string(sum) + ", but n is " + std::to_string(e.n));
      }
    }
    if (f[9] != "-") e.bmm_batch = static_cast<uint32_t>(parse_uint(f[9], "bmm_batch", 4096, w));
    if (f[10] != "0" && f[10] != "1") w.fail("flagged must be 0 or 1");
    e.flagged = f[10] == "1";
    if (f[11] != "-") {
      for (std::string_view flag : split(f[11], ';')) {
        if (flag.empty()) w.fail("empty flag in '" + std::string(f[11]) + "'");
        e.flags.emplace_back(flag);
      }
    }
    out.push_back(std::move(e));
  }
  if (!header_seen) throw CatalogError(std::string(source) + ": no header line");
  return out;
}

std::vector<ShapeEntry> load_shape_catalog(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CatalogError(path + ": cannot open the shape catalog");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_shape_catalog(ss.str(), path);
}

std::string default_shape_catalog_path() {
  return std::string(MXGATE_SOURCE_DIR) + "/corpus/shapes/production_shapes.tsv";
}

}  // namespace mxgate
