// fuzz_regression: parse_regression (properties/regression.h) on arbitrary text. RegressionError
// is the only allowed failure. A parsed file must round-trip: format_regression of it parses to
// the same property, case text and faults. Replay is not run here (a parsed case may still hold
// field values its checker rejects with CaseError; `mxgate repro` reports those as exit 2).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "properties/regression.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using mxgate::properties::Regression;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Regression r;
  try {
    r = mxgate::properties::parse_regression(text, "fuzz");
  } catch (const mxgate::properties::RegressionError&) {
    return 0;
  }
  const std::string again = mxgate::properties::format_regression(r);
  Regression back;
  try {
    back = mxgate::properties::parse_regression(again, "fuzz-roundtrip");
  } catch (const mxgate::properties::RegressionError& e) {
    std::fprintf(stderr, "fuzz_regression: formatted file does not parse: %s\n%s\n", e.what(),
                 again.c_str());
    __builtin_trap();
  }
  if (back.c.property() != r.c.property() || back.c.describe() != r.c.describe() ||
      back.detects != r.detects || back.seed != r.seed) {
    std::fprintf(stderr, "fuzz_regression: round trip changed the file:\n%s", again.c_str());
    __builtin_trap();
  }
  return 0;
}
