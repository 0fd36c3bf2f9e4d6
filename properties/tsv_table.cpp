#include "properties/tsv_table.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace mxgate::tsv {

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

void Where::fail(const std::string& what) const {
  throw CatalogError(std::string(source) + ":" + std::to_string(line) + ": " + what);
}

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

void for_each_row(
    std::string_view text, std::string_view source, std::span<const std::string_view> columns,
    const std::function<void(const std::vector<std::string_view>&, const Where&)>& row) {
  bool header_seen = false;
  std::size_t line_no = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    const Where w{source, line_no};
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string_view> f = split(line, '\t');
    if (!header_seen) {
      if (f.size() != columns.size() || !std::equal(f.begin(), f.end(), columns.begin())) {
        std::string want;
        for (std::string_view c : columns) want += (want.empty() ? "" : " ") + std::string(c);
        w.fail("header must be the tab-separated columns: " + want);
      }
      header_seen = true;
      continue;
    }
    if (f.size() != columns.size()) {
      w.fail("expected " + std::to_string(columns.size()) + " tab-separated fields, found " +
             std::to_string(f.size()));
    }
    row(f, w);
  }
  if (!header_seen) throw CatalogError(std::string(source) + ": no header line");
}

std::string read_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CatalogError(path + ": cannot open the " + std::string(what));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace mxgate::tsv
