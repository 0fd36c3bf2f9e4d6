// Covers scripts/check-format, the style check scripts/test runs first: it fails (exit 1) on a
// C++ file that clang-format with the repo's .clang-format would change, naming the file, and
// passes one it would leave alone. Does not cover: the style rules themselves (.clang-format).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

test_support::ShellResult check_format(const std::string& file) {
  return test_support::run_shell(
      test_support::shell_quote(std::string(MXGATE_SOURCE_DIR) + "/scripts/check-format") + " " +
      test_support::shell_quote(file) + " 2>&1");
}

// Guards against a style check that cannot fail (or fails on a clean file): a planted file with
// two spaces and a one-line body must be named; the same code as clang-format writes it passes.
TEST(CheckFormat, FailsOnADifferenceAndNamesTheFile) {
  if (test_support::run_shell("command -v clang-format-14 >/dev/null || command -v clang-format "
                              ">/dev/null")
          .exit_code != 0) {
    GTEST_SKIP() << "clang-format is not installed (scripts/bootstrap installs it)";
  }
  const test_support::TempDir dir;
  std::filesystem::copy_file(std::string(MXGATE_SOURCE_DIR) + "/.clang-format",
                             dir.file(".clang-format"));
  const std::string bad = dir.file("bad.cpp"), good = dir.file("good.cpp");
  std::ofstream(bad) << "int  f(int x){return x+1;}\n";
  std::ofstream(good) << "int f(int x) { return x + 1; }\n";
  const test_support::ShellResult r = check_format(bad);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(bad), std::string::npos) << r.out;
  const test_support::ShellResult ok = check_format(good);
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
}

}  // namespace
}  // namespace mxgate
