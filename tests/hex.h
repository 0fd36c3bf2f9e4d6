// Test helper: the one way tests print codes and fp32 values (failure messages, expected CLI
// output): hex(0x7e) is "0x7e" (lower case, at least `digits` hex digits), hexfloat(448.0f) is
// "0x1.cp+8" (printf %a).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace mxgate::test_support {

inline std::string hex(uint32_t v, int digits = 2) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%0*x", digits, static_cast<unsigned>(v));
  return b;
}

inline std::string hexfloat(float v) {
  char b[48];
  std::snprintf(b, sizeof b, "%a", static_cast<double>(v));
  return b;
}

}  // namespace mxgate::test_support
