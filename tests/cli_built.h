// Test fixture for the tests that run the built tool (MXGATE_CLI) as a process
// (test_cli_formats.cpp, test_cli_gate.cpp, test_cli_help.cpp): when the tool is missing each
// test fails at once, naming the target to build, instead of failing every check on a shell error.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

namespace mxgate::test_support {

class CliBuilt : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(MXGATE_CLI, X_OK) != 0) {
      FAIL() << "the CLI " << MXGATE_CLI << " is not built: build the `mxgate` target first";
    }
  }
};

}  // namespace mxgate::test_support
