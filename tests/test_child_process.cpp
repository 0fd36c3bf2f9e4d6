// Covers common/child_process.h, the one fork / wait / kill of mxgate: a child past its deadline
// is reported as still running and killed by kill(), exit codes and signals come back decoded,
// piped output is captured to its end (or its tail), streams go to /dev/null or a caller's file,
// a child leading its own group takes what it spawned down with it, an exception escaping a
// forked body exits 70, and an unexecutable program exits 127 with the caller's text.
// Does not cover: PR_SET_PDEATHSIG (it needs the parent to die), the users' own reports
// (test_cli_gate.cpp, test_cli_impls.cpp, python/tests/test_worker.py).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/child_process.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

ChildOptions piped() {
  ChildOptions o;
  o.out = ChildStream::pipe();
  o.err = ChildStream::pipe();
  return o;
}

// Reads the child's stdout and stderr (both piped) to their end; false if 30 s pass first.
bool read_both(const ChildProcess& c, std::string* out, std::string* err) {
  const std::array<ChildCapture, 2> caps = {{{c.stdout_fd(), out}, {c.stderr_fd(), err}}};
  return read_until_closed(caps, deadline_after(30));
}

// Guards against a hung child hanging its parent: the deadline must come back as "still
// running" in about the time asked, and kill() must end it with SIGKILL and reap it.
TEST(ChildProcess, ATimeoutLeavesTheChildRunningAndKillEndsIt) {
  ChildProcess c = ChildProcess::exec({"sleep", "30"}, ChildOptions{});
  const auto start = ChildClock::now();
  EXPECT_FALSE(c.wait_until(deadline_after(0.2)).has_value());
  const double waited = std::chrono::duration<double>(ChildClock::now() - start).count();
  EXPECT_GE(waited, 0.2);
  EXPECT_LT(waited, 5.0);
  EXPECT_TRUE(c.running());
  const auto how = c.kill();
  ASSERT_TRUE(how.has_value());
  EXPECT_EQ(how->kind, ChildExit::Kind::kSignaled);
  EXPECT_EQ(how->signal, SIGKILL);
  EXPECT_FALSE(c.running());
  EXPECT_FALSE(c.kill().has_value());
}

// Guards against exit codes and signals being confused or lost (the worker's "died: ..." text,
// the fuzz runner's crash verdict): each comes back as what ended the child.
TEST(ChildProcess, ExitCodeAndSignalAreReported) {
  const ChildExit three = ChildProcess::exec({"sh", "-c", "exit 3"}, ChildOptions{}).wait();
  EXPECT_EQ(three.kind, ChildExit::Kind::kExited);
  EXPECT_EQ(three.code, 3);
  EXPECT_FALSE(three.success());
  EXPECT_EQ(three.describe(), "exited with status 3");

  const ChildExit zero = ChildProcess::fork([] { return 0; }, ChildOptions{}).wait();
  EXPECT_TRUE(zero.success());

  const ChildExit segv = ChildProcess::fork(
                             [] {
                               ::raise(SIGSEGV);
                               return 0;
                             },
                             ChildOptions{})
                             .wait();
  EXPECT_EQ(segv.kind, ChildExit::Kind::kSignaled);
  EXPECT_EQ(segv.signal, SIGSEGV);
  EXPECT_EQ(segv.describe().rfind("killed by signal 11 (", 0), 0u) << segv.describe();
}

// Guards against lost output (a crash's explanation): stdout and stderr are captured apart to
// their end, and a child that exits is reaped by wait_until before the deadline.
TEST(ChildProcess, OutputIsCaptured) {
  ChildProcess c =
      ChildProcess::exec({"sh", "-c", "echo out-line; echo err-line >&2; exit 4"}, piped());
  std::string out, err;
  EXPECT_TRUE(read_both(c, &out, &err));
  EXPECT_EQ(out, "out-line\n");
  EXPECT_EQ(err, "err-line\n");
  const auto how = c.wait_until(deadline_after(30));
  ASSERT_TRUE(how.has_value());
  EXPECT_EQ(how->code, 4);
}

// Guards against a forked body's output going astray: with err_to_out both streams share the
// one pipe, and only about the last keep_tail bytes are kept of a long output.
TEST(ChildProcess, ForkedBodyOutputSharesOnePipeAndKeepsItsTail) {
  ChildOptions o;
  o.out = ChildStream::pipe();
  o.err_to_out = true;
  ChildProcess c = ChildProcess::fork(
      [] {
        for (int i = 0; i < 5000; ++i) std::printf("line %d\n", i);
        std::fflush(stdout);
        std::fprintf(stderr, "last words\n");
        return 0;
      },
      o);
  EXPECT_EQ(c.stderr_fd(), -1);
  std::string out;
  const std::array<ChildCapture, 1> caps = {{{c.stdout_fd(), &out, 1024}}};
  EXPECT_TRUE(read_until_closed(caps, deadline_after(30)));
  EXPECT_LE(out.size(), 2048u);
  EXPECT_NE(out.find("line 4999\nlast words\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("line 0\n"), std::string::npos);
  EXPECT_TRUE(c.wait().success());
}

// Guards against a reader waiting forever on a child that keeps its pipe open: the deadline
// ends the read with what arrived so far.
TEST(ChildProcess, ReadingStopsAtTheDeadline) {
  ChildProcess c = ChildProcess::exec({"sh", "-c", "echo started; exec sleep 30"}, piped());
  std::string out;
  const std::array<ChildCapture, 1> caps = {{{c.stdout_fd(), &out}}};
  EXPECT_FALSE(read_until_closed(caps, deadline_after(0.5)));
  EXPECT_EQ(out, "started\n");
  EXPECT_EQ(c.kill()->signal, SIGKILL);
}

// Guards against streams going to the wrong place: stdin from /dev/null reads nothing, and a
// caller's descriptor receives the child's stdout.
TEST(ChildProcess, StreamsGoToNullOrTheCallersFile) {
  const test_support::TempDir dir;
  const std::string path = dir.file("out.txt");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ChildOptions o;
  o.in = ChildStream::null();
  o.out = ChildStream::fd(fd);
  const ChildExit how = ChildProcess::exec({"sh", "-c", "wc -c; echo to-file"}, o).wait();
  ::close(fd);
  EXPECT_TRUE(how.success());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "0\nto-file\n");
}

// Guards against strays outliving a killed check (a fuzzer the check spawned): with own_group,
// killing the child kills its group, so the grandchild's end of the pipe closes.
TEST(ChildProcess, OwnGroupIsKilledTogether) {
  ChildOptions o = piped();
  o.own_group = true;
  ChildProcess c = ChildProcess::exec({"sh", "-c", "sleep 30 & sleep 30"}, o);
  EXPECT_FALSE(c.wait_until(deadline_after(0.2)).has_value());
  c.kill();
  std::string out;
  const std::array<ChildCapture, 1> caps = {{{c.stdout_fd(), &out}}};
  EXPECT_TRUE(read_until_closed(caps, deadline_after(10)));
}

// Guards against an exception escaping a forked body running the parent's code on (a second
// gate in the child): it is reported on stderr and the child exits 70.
TEST(ChildProcess, AnExceptionInAForkedBodyExits70) {
  ChildProcess c = ChildProcess::fork([]() -> int { throw std::runtime_error("boom"); }, piped());
  std::string out, err;
  EXPECT_TRUE(read_both(c, &out, &err));
  EXPECT_EQ(err, "uncaught exception: boom\n");
  EXPECT_EQ(c.wait().code, 70);
}

// Guards against a missing program looking like a program that ran: exec failure exits 127 and
// writes the caller's text (the Python worker names MXGATE_PYTHON with it).
TEST(ChildProcess, AnUnexecutableProgramExits127WithTheCallersText) {
  ChildOptions o = piped();
  o.exec_failure = "no such interpreter\n";
  ChildProcess c = ChildProcess::exec({"/nonexistent/mxgate-program"}, o);
  std::string out, err;
  EXPECT_TRUE(read_both(c, &out, &err));
  EXPECT_EQ(err, "no such interpreter\n");
  EXPECT_EQ(c.wait().code, 127);
}

// Guards against a child's environment leaking or being dropped: exec with `env` sees exactly it.
TEST(ChildProcess, ExecPassesTheGivenEnvironment) {
  const std::vector<std::string> env = {"MXGATE_CHILD_TEST=seen", "PATH=/usr/bin:/bin"};
  ChildOptions o = piped();
  o.env = &env;
  ChildProcess c = ChildProcess::exec({"sh", "-c", "echo \"$MXGATE_CHILD_TEST:$HOME\""}, o);
  std::string out, err;
  EXPECT_TRUE(read_both(c, &out, &err));
  EXPECT_EQ(out, "seen:\n");
  EXPECT_TRUE(c.wait().success());
}

}  // namespace
}  // namespace mxgate
