// The strict tab-separated tables of corpus/shapes/ (the shape catalog, the MoE model table): '#'
// comment lines and blank lines skipped, one header line that must be exactly the columns, then
// rows of exactly that many fields. Every problem is a CatalogError "SOURCE:LINE: what".
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mxgate {

struct CatalogError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace tsv {

std::vector<std::string_view> split(std::string_view s, char sep);

// A row's place, for messages.
struct Where {
  std::string_view source;
  std::size_t line;
  [[noreturn]] void fail(const std::string& what) const;
};

// A decimal integer in [min, max]; anything else fails naming the field.
uint64_t parse_uint(std::string_view text, std::string_view field, uint64_t min, uint64_t max,
                    const Where& w);

// Calls row(fields, where) for each data row of `text` after checking the header and the field
// count; a text without a header line is "SOURCE: no header line".
void for_each_row(
    std::string_view text, std::string_view source, std::span<const std::string_view> columns,
    const std::function<void(const std::vector<std::string_view>&, const Where&)>& row);

// The whole file at `path`; "PATH: cannot open the WHAT" when it cannot be read.
std::string read_file(const std::string& path, std::string_view what);

}  // namespace tsv
}  // namespace mxgate
