// Covers Ctrl-C and progress on long CLI runs (tools/mxgate/progress.h) as real processes:
// `mxgate sweep-cast` over all 2^32 inputs of the example plugin's e4m3fn cast writes progress
// lines on stderr under MXGATE_PROGRESS=1, and SIGINT stops it at its next chunk with its partial
// result marked on stdout and exit status 130; `mxgate survey` stops after its running piece and
// writes the report so far marked partial, exit status 130 (a cast piece at its next chunk, with
// its progress lines on the survey's stderr); `mxgate property` stops before its
// next case with the cases run so far, exit status 130.
// Does not cover: the verdicts of these runs (test_plugins.cpp, the survey and property tests).
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <csignal>
#include <optional>
#include <string>
#include <vector>

#include "common/child_process.h"

namespace {

using mxgate::ChildExit;
using mxgate::ChildOptions;
using mxgate::ChildProcess;
using mxgate::ChildStream;

// Reads `fd` until `text` has appeared in what was read or `seconds` pass; what was read.
std::string read_until(int fd, const std::string& text, double seconds) {
  std::string got;
  const auto deadline = mxgate::deadline_after(seconds);
  while (got.find(text) == std::string::npos && mxgate::ChildClock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

// What an interrupted CLI run left: its stdout, the stderr read before the signal, how it ended.
struct Interrupted {
  std::string out, err_before;
  ChildExit how;
};

// Runs the CLI with `args` (MXGATE_PROGRESS=1 when `progress`), sends SIGINT once `marker`
// appears on its stderr, and reads its stdout to the end.
Interrupted interrupt_when(const std::vector<std::string>& args, bool progress,
                           const std::string& marker) {
  const std::vector<std::string> env = {progress ? "MXGATE_PROGRESS=1" : "MXGATE_PROGRESS=0",
                                        "PATH=/usr/bin:/bin"};
  ChildOptions o;
  o.out = ChildStream::pipe();
  o.err = ChildStream::pipe();
  o.env = &env;
  std::vector<std::string> argv = {MXGATE_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess c = ChildProcess::exec(argv, o);
  Interrupted r;
  r.err_before = read_until(c.stderr_fd(), marker, 60);
  if (r.err_before.find(marker) == std::string::npos) return r;  // the caller's check fails
  EXPECT_EQ(kill(c.pid(), SIGINT), 0);
  r.out = read_until(c.stdout_fd(), "(never printed)", 120);  // to its end
  const std::optional<ChildExit> how = c.wait_until(mxgate::deadline_after(60));
  EXPECT_TRUE(how.has_value()) << "still running after SIGINT; stdout: " << r.out;
  if (how) r.how = *how;
  return r;
}

// Guards against Ctrl-C killing a sweep without its partial result (or not stopping it at all),
// and against progress lines that never come.
TEST(CliInterrupt, SweepCastStopsAtTheNextChunkWithItsPartialResult) {
  // A progress line: the sweep runs (it takes far longer than this test waits).
  const Interrupted r = interrupt_when(
      {"sweep-cast", "--impl", "example", "--op", "cast_satfinite", "--format", "e4m3fn"}, true,
      "inputs/s");
  ASSERT_NE(r.err_before.find("sweep-cast cast_satfinite: "), std::string::npos) << r.err_before;
  EXPECT_NE(r.err_before.find(" s left"), std::string::npos) << r.err_before;
  EXPECT_EQ(r.how.kind, ChildExit::Kind::kExited) << r.how.describe();
  EXPECT_EQ(r.how.code, 130) << r.how.describe();
  EXPECT_NE(r.out.find("interrupted (partial): "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" of 4294967296 inputs checked, 0 differ"), std::string::npos) << r.out;
}

// Guards against Ctrl-C losing a survey's report (or not stopping it): the implementations that
// ran are written, marked partial, and the next one never starts.
TEST(CliInterrupt, SurveyStopsAfterThePieceThatRunsWithAPartialReport) {
  const Interrupted r = interrupt_when(
      {"survey", "--impl", "builtin,example", "--cast-inputs", "sample", "--cases", "5", "--json"},
      false, "builtin ... ");
  ASSERT_NE(r.err_before.find("builtin ... "), std::string::npos) << r.err_before;
  EXPECT_EQ(r.how.kind, ChildExit::Kind::kExited) << r.how.describe();
  EXPECT_EQ(r.how.code, 130) << r.how.describe();
  EXPECT_NE(r.out.find("\"partial\": true"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"spec\": \"builtin\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"name\": \"example"), std::string::npos) << r.out;
}

// Guards against a survey's cast piece ignoring Ctrl-C until all its 2^32 inputs are done (the
// piece runs in a child of its own process group, which the terminal's SIGINT does not reach)
// and against its progress lines never reaching the survey's stderr.
TEST(CliInterrupt, SurveyCastPieceStopsAtItsNextChunk) {
  const Interrupted r = interrupt_when(
      {"survey", "--impl", "example", "--cast-inputs", "all", "--cases", "5", "--json"}, true,
      "inputs/s");
  ASSERT_NE(r.err_before.find(" -> e4m3fn: "), std::string::npos) << r.err_before;
  EXPECT_EQ(r.how.kind, ChildExit::Kind::kExited) << r.how.describe();
  EXPECT_EQ(r.how.code, 130) << r.how.describe();
  EXPECT_NE(r.out.find("\"partial\": true"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("interrupted (Ctrl-C) after "), std::string::npos) << r.out;
}

// Guards against Ctrl-C ending a property run without its result, or the run going on to its
// 100,000 cases; and against its progress lines never coming.
TEST(CliInterrupt, PropertyStopsBeforeTheNextCaseWithThePartialResult) {
  const Interrupted r =
      interrupt_when({"property", "gemm.exact", "--cases", "100000"}, true, "cases/s");
  ASSERT_NE(r.err_before.find("property gemm.exact: "), std::string::npos) << r.err_before;
  EXPECT_EQ(r.how.kind, ChildExit::Kind::kExited) << r.how.describe();
  EXPECT_EQ(r.how.code, 130) << r.how.describe();
  EXPECT_NE(r.out.find("interrupted (partial): "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" of 100000 cases run, none failed"), std::string::npos) << r.out;
}

}  // namespace
