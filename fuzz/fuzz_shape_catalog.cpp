// fuzz_shape_catalog: parse_shape_catalog on arbitrary text. CatalogError is the only allowed
// failure; every parsed entry must carry a line number inside the text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "properties/shape_catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto entries = mxgate::parse_shape_catalog(text, "fuzz");
    std::size_t lines = 1;
    for (char c : text) lines += c == '\n' ? 1 : 0;
    for (const auto& e : entries) {
      if (e.line == 0 || e.line > lines) {
        std::fprintf(stderr, "fuzz_shape_catalog: entry line %zu outside 1..%zu\n", e.line, lines);
        __builtin_trap();
      }
    }
  } catch (const mxgate::CatalogError&) {
  }
  return 0;
}
