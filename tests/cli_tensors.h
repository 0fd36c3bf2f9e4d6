// Test helper for the tests of the tensor verbs of the CLI (test_cli_tensors.cpp,
// test_cli_gemm.cpp, test_cli_tensor_errors.cpp): the tool run as a subprocess, a phrase
// assertion, and the inputs and argument lists those tests share.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate::cli_test {

using test_support::TempDir;

using CliResult = test_support::ShellResult;

// Runs `mxgate ARGS` (ARGS already shell-quoted where needed: temp paths have no spaces).
inline CliResult mxgate(const std::string& args) {
  return test_support::run_shell(std::string(MXGATE_CLI) + " " + args + " 2>&1");
}

inline testing::AssertionResult Contains(const std::string& text, std::string_view phrase) {
  if (text.find(phrase) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "\"" << text << "\" lacks \"" << phrase << "\"";
}

inline uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

// One 32-block row: 448, 1, -2, 0.5, then zeros.
inline std::vector<float> block_448() {
  std::vector<float> x(32, 0.0f);
  x[0] = 448.0f;
  x[1] = 1.0f;
  x[2] = -2.0f;
  x[3] = 0.5f;
  return x;
}

inline std::string quantize_args(const TempDir& d, const char* scheme, const char* convention,
                                 const char* extra = "") {
  return std::string("quantize --scheme ") + scheme + " --format e4m3fn --convention " +
         convention + " --in " + d.file("x.npy") + " --out " + d.file("q") + " " + extra;
}

}  // namespace mxgate::cli_test
