// Test helper for the .npy tests (test_npy_parse.cpp, test_npy_files.cpp): .npy files assembled
// by hand from the spec, the error parse_npy throws for one, and a phrase check on messages.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reference/npy.h"

namespace mxgate::test_support {

using Bytes = std::vector<uint8_t>;

inline Bytes to_bytes(std::string_view text) { return Bytes(text.begin(), text.end()); }

// A .npy file assembled by hand from the spec: magic, version, little-endian header size (2 bytes
// for 1.0, 4 bytes for 2.0 and 3.0), header text, data. No alignment padding: readers must not
// require it, and leaving it out keeps the headers in these tests readable.
inline Bytes npy_file(uint8_t major, std::string_view header, std::string_view data) {
  Bytes out = to_bytes("\x93NUMPY");
  out.push_back(major);
  out.push_back(0);
  const size_t length_size = major == 1 ? 2 : 4;
  for (size_t i = 0; i < length_size; ++i) {
    out.push_back(uint8_t(header.size() >> (8 * i)));
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// The message of the NpyError that parse_npy throws; any other outcome fails the test.
inline std::string parse_error(const Bytes& file) {
  try {
    parse_npy(file);
  } catch (const NpyError& e) {
    return e.what();
  }
  ADD_FAILURE() << "parse_npy accepted the input";
  return "";
}

inline testing::AssertionResult Contains(const std::string& message, std::string_view phrase) {
  if (message.find(phrase) != std::string::npos) {
    return testing::AssertionSuccess();
  }
  return testing::AssertionFailure() << "\"" << message << "\" lacks \"" << phrase << "\"";
}

inline std::string header_for(std::string_view descr, std::string_view shape) {
  return "{'descr': '" + std::string(descr) +
         "', 'fortran_order': False, 'shape': " + std::string(shape) + ", }\n";
}

}  // namespace mxgate::test_support
