// Covers Ctrl-C and progress on long CLI runs (tools/mxgate/progress.h) as real processes:
// `mxgate sweep-cast` over all 2^32 inputs of the example plugin's e4m3fn cast writes progress
// lines on stderr under MXGATE_PROGRESS=1, and SIGINT stops it at its next chunk with its partial
// result marked on stdout and exit status 130; `mxgate survey` stops after its running piece and
// writes the report so far marked partial, exit status 130; `mxgate property` stops before its
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

// Guards against Ctrl-C killing a sweep without its partial result (or not stopping it at all),
// and against progress lines that never come.
TEST(CliInterrupt, SweepCastStopsAtTheNextChunkWithItsPartialResult) {
  const std::vector<std::string> env = {"MXGATE_PROGRESS=1", "PATH=/usr/bin:/bin"};
  ChildOptions o;
  o.out = ChildStream::pipe();
  o.err = ChildStream::pipe();
  o.env = &env;
  ChildProcess c = ChildProcess::exec({MXGATE_CLI, "sweep-cast", "--impl", "example", "--op",
                                       "cast_satfinite", "--format", "e4m3fn"},
                                      o);
  // A progress line: the sweep runs (it takes far longer than this test waits).
  const std::string progress = read_until(c.stderr_fd(), "inputs/s", 60);
  ASSERT_NE(progress.find("sweep-cast cast_satfinite: "), std::string::npos) << progress;
  EXPECT_NE(progress.find(" s left"), std::string::npos) << progress;
  ASSERT_EQ(kill(c.pid(), SIGINT), 0);
  const std::optional<ChildExit> how = c.wait_until(mxgate::deadline_after(60));
  const std::string out = read_until(c.stdout_fd(), "(never printed)", 10);  // to its end
  ASSERT_TRUE(how.has_value()) << "still running after SIGINT; stdout: " << out;
  EXPECT_EQ(how->kind, ChildExit::Kind::kExited) << how->describe();
  EXPECT_EQ(how->code, 130) << how->describe();
  EXPECT_NE(out.find("interrupted (partial): "), std::string::npos) << out;
  EXPECT_NE(out.find(" of 4294967296 inputs checked, 0 differ"), std::string::npos) << out;
}

// Guards against Ctrl-C losing a survey's report (or not stopping it): the implementations that
// ran are written, marked partial, and the next one never starts.
TEST(CliInterrupt, SurveyStopsAfterThePieceThatRunsWithAPartialReport) {
  const std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
  ChildOptions o;
  o.out = ChildStream::pipe();
  o.err = ChildStream::pipe();
  o.env = &env;
  ChildProcess c = ChildProcess::exec({MXGATE_CLI, "survey", "--impl", "builtin,example",
                                       "--cast-inputs", "sample", "--cases", "5", "--json"},
                                      o);
  const std::string started = read_until(c.stderr_fd(), "builtin ... ", 60);
  ASSERT_NE(started.find("builtin ... "), std::string::npos) << started;
  ASSERT_EQ(kill(c.pid(), SIGINT), 0);
  const std::string out = read_until(c.stdout_fd(), "(never printed)", 120);  // to its end
  const std::optional<ChildExit> how = c.wait_until(mxgate::deadline_after(60));
  ASSERT_TRUE(how.has_value()) << "still running after SIGINT";
  EXPECT_EQ(how->kind, ChildExit::Kind::kExited) << how->describe();
  EXPECT_EQ(how->code, 130) << how->describe();
  EXPECT_NE(out.find("\"partial\": true"), std::string::npos) << out;
  EXPECT_NE(out.find("\"spec\": \"builtin\""), std::string::npos) << out;
  EXPECT_EQ(out.find("\"name\": \"example"), std::string::npos) << out;
}

// Guards against Ctrl-C ending a property run without its result, or the run going on to its
// 100,000 cases; and against its progress lines never coming.
TEST(CliInterrupt, PropertyStopsBeforeTheNextCaseWithThePartialResult) {
  const std::vector<std::string> env = {"MXGATE_PROGRESS=1", "PATH=/usr/bin:/bin"};
  ChildOptions o;
  o.out = ChildStream::pipe();
  o.err = ChildStream::pipe();
  o.env = &env;
  ChildProcess c =
      ChildProcess::exec({MXGATE_CLI, "property", "gemm.exact", "--cases", "100000"}, o);
  const std::string progress = read_until(c.stderr_fd(), "cases/s", 60);
  ASSERT_NE(progress.find("property gemm.exact: "), std::string::npos) << progress;
  ASSERT_EQ(kill(c.pid(), SIGINT), 0);
  const std::optional<ChildExit> how = c.wait_until(mxgate::deadline_after(60));
  const std::string out = read_until(c.stdout_fd(), "(never printed)", 10);  // to its end
  ASSERT_TRUE(how.has_value()) << "still running after SIGINT; stdout: " << out;
  EXPECT_EQ(how->kind, ChildExit::Kind::kExited) << how->describe();
  EXPECT_EQ(how->code, 130) << how->describe();
  EXPECT_NE(out.find("interrupted (partial): "), std::string::npos) << out;
  EXPECT_NE(out.find(" of 100000 cases run, none failed"), std::string::npos) << out;
}

}  // namespace
