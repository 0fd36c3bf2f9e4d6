// Covers regression files (properties/regression.h) and the verbs that use them: strict parsing
// with errors naming file and line, a canonical round trip, atomic saving, replay in both
// directions (clean pass, each `detects` fault caught), `mxgate repro` exit codes, and
// `mxgate property --save`, and what the checked-in zoo cases say about themselves (their header
// names their minimal case and they are that small). Also Case (properties/case.h) text parsing.
// Does not cover: replaying the checked-in corpus (ctest label `regression` does), the property
// suites themselves.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gpu/host/host_backend.h"
#include "impl/plugin.h"
#include "properties/regression.h"
#include "properties/zoo.h"
#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate::properties {
namespace {

using test_support::TempDir;

constexpr const char* kZ9 =
    "# Z9: the trailing partial K block dropped\n"
    "property: gemm.exact\n"
    "impl: builtin\n"
    "seed: 3\n"
    "case: op=gemm_blockscale m=1 n=1 k=160 layout=row_major out=fp32 seed=0\n"
    "detects: z9_drop_trailing_k_block\n";

using CliResult = test_support::ShellResult;

CliResult mxgate(const std::string& args) {
  return test_support::run_shell("MXGATE_FAULTS= " + std::string(MXGATE_CLI) + " " + args +
                                 " 2>&1");
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Guards against a checked-in zoo case whose header claims a minimal case it is not (z09 once
// said "K=block+32" above a k=32 case): the header is the zoo's words for its fault, and the
// case satisfies the zoo's minimality predicate.
TEST(RegressionCorpus, ZooHeadersNameTheMinimalCaseTheyMeet) {
  const std::vector<std::string> files = list_regressions(default_regression_dir());
  ASSERT_GE(files.size(), dispatch::all_faults().size());
  for (const std::string& path : files) {
    const Regression r = load_regression(path);
    ASSERT_EQ(r.detects.size(), 1u) << path;
    const dispatch::Fault f = r.detects[0];
    const std::string first_line = r.comment.substr(0, r.comment.find('\n'));
    EXPECT_EQ(first_line, zoo_regression_comment(f)) << path;
    EXPECT_TRUE(zoo_class(f).is_minimal(r.c)) << path << ": " << r.c.describe();
  }
}

// A regression file whose fields are silently misread replays a different case than the one
// that failed.
TEST(RegressionFile, ParsesEveryField) {
  const Regression r = parse_regression(kZ9, "z9.case");
  EXPECT_EQ(r.c.property(), "gemm.exact");
  EXPECT_EQ(r.seed, 3u);
  EXPECT_EQ(r.c.num("k"), 160u);
  EXPECT_EQ(r.c.text("op"), "gemm_blockscale");
  EXPECT_EQ(r.impl, "builtin");
  ASSERT_EQ(r.detects.size(), 1u);
  EXPECT_EQ(r.detects[0], dispatch::Fault::kZ9DropTrailingKBlock);
  EXPECT_EQ(r.comment, "Z9: the trailing partial K block dropped");
}

// A typo must be an error naming the file and line, never a default value.
TEST(RegressionFile, ErrorsNameFileAndLine) {
  const std::pair<std::string, std::string> bad[] = {
      {"property: gemm.exact\ncase: m=1\nsede: 3\n", "f.case:3: unknown key 'sede'"},
      {"property: gemm.exakt\n", "f.case:1: unknown property 'gemm.exakt'"},
      {"property: gemm.exact\ncase: m=1\ndetects: z99\n", "f.case:3: unknown fault 'z99'"},
      {"property: gemm.exact\nseed: -1\ncase: m=1\n", "f.case:2: seed is not"},
      {"property: gemm.exact\nseed: 99999999999999999999\ncase: m=1\n", "f.case:2: seed"},
      {"property: gemm.exact\n", "f.case: no 'case' line"},
      {"case: m=1\n", "f.case: no 'property' line"},
      {"property: gemm.exact\ncase: m=1 m=2\n", "field 'm' appears twice"},
      {"property: gemm.exact\ncase: m\n", "case token 'm' is not key=value"},
      {"property gemm.exact\n", "f.case:1: expected 'key: value'"},
  };
  for (const auto& [text, want] : bad) {
    try {
      parse_regression(text, "f.case");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const RegressionError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

// Two spellings of one file must format to one text, or saved corpora churn and diff.
TEST(RegressionFile, FormatIsCanonical) {
  const Regression r = parse_regression(
      "property: gemm.exact\ndetects: z9_drop_trailing_k_block\ncase:   m=1  n=2\n"
      "detects: z1_no_per_step_fallback,z9_drop_trailing_k_block\n",
      "x");
  EXPECT_EQ(format_regression(r),
            "property: gemm.exact\nimpl: builtin\nseed: 0\ncase: m=1 n=2\n"
            "detects: z1_no_per_step_fallback,z9_drop_trailing_k_block\n");
  const Regression back = parse_regression(format_regression(r), "y");
  EXPECT_EQ(format_regression(back), format_regression(r));
}

// A save that dies halfway must not leave a truncated file where a good one was.
TEST(RegressionFile, SaveIsAtomicAndNamesBadPaths) {
  TempDir dir;
  const Regression r = parse_regression(kZ9, "z9.case");
  save_regression(r, dir.file("z9.case"));
  EXPECT_EQ(format_regression(load_regression(dir.file("z9.case"))), format_regression(r));
  try {
    save_regression(r, dir.file("no/such/dir/z9.case"));
    ADD_FAILURE() << "saved into a missing directory";
  } catch (const RegressionError& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/z9.case: cannot write"), std::string::npos);
  }
  EXPECT_THROW(load_regression(dir.file("missing.case")), RegressionError);
}

// Replay must check both directions: the fixed system passes, the planted bug still fails.
TEST(RegressionReplay, CleanPassAndFaultCaught) {
  gpu::HostBackend be;
  const ReplayOutcome ok = replay(parse_regression(kZ9, "z9.case"), be);
  EXPECT_TRUE(ok.ok) << ok.summary;
  ASSERT_EQ(ok.detected.size(), 1u);
  EXPECT_TRUE(ok.detected[0].second);
  // The same case cannot detect a fault that lives elsewhere: replay says so.
  std::string other = kZ9;
  other.replace(other.find("z9_drop_trailing_k_block"), 24, "z13_swizzle_read_linear");
  const ReplayOutcome missed = replay(parse_regression(other, "z13.case"), be);
  EXPECT_FALSE(missed.ok);
  EXPECT_NE(missed.summary.find("PASSES (not detected) with z13_swizzle_read_linear"),
            std::string::npos)
      << missed.summary;
}

// Files written before implementations existed (no `impl:` line, the op named `kernel=`) must
// still replay on the built-in kernel they name, not fail to parse or replay something else.
TEST(RegressionReplay, FilesWithoutImplLineReplayOnBuiltin) {
  const std::string old =
      "property: gemm.exact\n"
      "case: kernel=gemm_blockscale m=1 n=1 k=160 layout=row_major out=fp32 seed=0\n"
      "detects: z9_drop_trailing_k_block\n";
  const Regression r = parse_regression(old, "old.case");
  EXPECT_EQ(r.impl, "builtin");
  gpu::HostBackend be;
  const ReplayOutcome out = replay(r, be);
  EXPECT_TRUE(out.ok) << out.summary;
  ASSERT_EQ(out.detected.size(), 1u);
  EXPECT_TRUE(out.detected[0].second);
  // A file naming an implementation that does not exist is refused, naming it.
  Regression other = r;
  other.impl = "no_such_plugin";
  EXPECT_THROW((void)replay(other, be), impl::PluginError);
}

// `mxgate repro` is what a person runs on a file from a bug report: 0 ok, 1 a failed replay,
// 2 a malformed file (naming it).
TEST(RegressionCli, ReproExitCodes) {
  TempDir dir;
  write(dir.file("good.case"), kZ9);
  std::string bad = kZ9;
  bad.replace(bad.find("z9_drop_trailing_k_block"), 24, "z13_swizzle_read_linear");
  write(dir.file("missed.case"), bad);
  write(dir.file("broken.case"), "property: gemm.exact\n");
  const CliResult good = mxgate("repro " + dir.file("good.case"));
  EXPECT_EQ(good.exit_code, 0) << good.out;
  EXPECT_NE(good.out.find("fails with z9_drop_trailing_k_block"), std::string::npos);
  EXPECT_EQ(mxgate("repro " + dir.file("missed.case")).exit_code, 1);
  const CliResult broken = mxgate("repro " + dir.file("broken.case"));
  EXPECT_EQ(broken.exit_code, 2);
  EXPECT_NE(broken.out.find("broken.case: no 'case' line"), std::string::npos) << broken.out;
}

// A failing property run must leave a file that replays to the same failure (the round trip a
// bug report relies on), and print one command that reproduces the run.
TEST(RegressionCli, PropertySaveWritesAReplayableCase) {
  TempDir dir;
  const CliResult run = mxgate(
      "property gemm.exact --cases 50 --faults z9_drop_trailing_k_block "
      "--save " +
      dir.file("found.case"));
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("reproduce: mxgate property gemm.exact --backend host --seed 1 "
                         "--cases 50 --faults z9_drop_trailing_k_block"),
            std::string::npos)
      << run.out;
  const Regression r = load_regression(dir.file("found.case"));
  ASSERT_EQ(r.detects.size(), 1u);
  gpu::HostBackend be;
  EXPECT_TRUE(replay(r, be).ok);
  const CliResult repro = mxgate("repro " + dir.file("found.case"));
  EXPECT_EQ(repro.exit_code, 0) << repro.out;
}

// Unknown names and missing devices are usage (2) and environment (3) errors.
TEST(RegressionCli, PropertyUsageAndEnvironmentErrors) {
  EXPECT_EQ(mxgate("property no.such_property").exit_code, 2);
  EXPECT_EQ(mxgate("property gemm.exact --faults z99").exit_code, 2);
  const CliResult cuda = mxgate("property gemm.exact --backend cuda --cases 1");
  EXPECT_EQ(cuda.exit_code, 3) << cuda.out;
  EXPECT_NE(cuda.out.find("backend 'cuda' is not in this build"), std::string::npos) << cuda.out;
}

}  // namespace
}  // namespace mxgate::properties
