// Test helper: GoogleTest parameter names for the measured rows of reference/measured_bytes.h
// (the row's source and its convention or rule, as an identifier), shared by the tests that
// replay every row in the library (test_conventions.cpp) and through the CLI
// (test_cli_formats.cpp), so a row keeps one name in both.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

#include "reference/measured_bytes.h"

namespace mxgate::test_support {

// "probe.cu e4m3 SAT" -> "probe_cu_e4m3_SAT": letters and digits, runs of others as one '_'.
inline std::string identifier(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      out += ch;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

inline std::string encode_row_name(const ::testing::TestParamInfo<std::size_t>& p) {
  const MeasuredEncode& m = measured_encodes()[p.param];
  return identifier(m.source) + "_" + std::string(m.convention);
}

inline std::string e8m0_row_name(const ::testing::TestParamInfo<std::size_t>& p) {
  const MeasuredE8m0& m = measured_e8m0_encodes()[p.param];
  return identifier(m.source) + "_" + std::string(name(m.rule));
}

inline std::string decode_row_name(const ::testing::TestParamInfo<std::size_t>& p) {
  const MeasuredE8m0Decode& m = measured_e8m0_decodes()[p.param];
  return identifier(m.source) + "_" + std::string(m.convention);
}

}  // namespace mxgate::test_support
