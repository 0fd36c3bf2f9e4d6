// A child process under a deadline, the one place mxgate forks: the Python worker and its
// `--list` call (impl/python_worker.cpp), the gate's watchdog (tools/mxgate/watchdog.cpp) and the
// in-process fuzz runner (tools/mxgate/fuzz_runner.cpp).
//
// A child either execs a program or runs a function and _exits with what it returns (no atexit
// handlers or static destructors of state copied from the parent). Each of its standard streams
// is inherited, /dev/null, a pipe back to the parent or a descriptor the caller opened. By default
// it is killed when the parent dies (PR_SET_PDEATHSIG); it may lead its own process group, so
// that whatever it spawned is killed with it. Waiting takes a deadline; killing reaps; how the
// child ended comes back decoded (an exit code or a signal).
//
// POSIX (Linux) only; host code only.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mxgate {

using ChildClock = std::chrono::steady_clock;

// The deadline `seconds` from now (negative or zero: now).
ChildClock::time_point deadline_after(double seconds);

// How a child ended.
struct ChildExit {
  enum class Kind { kExited, kSignaled };
  Kind kind = Kind::kExited;
  int code = 0;    // the exit status (kExited)
  int signal = 0;  // the signal that ended it (kSignaled)

  bool success() const { return kind == Kind::kExited && code == 0; }
  // "exited with status 3", "killed by signal 11 (Segmentation fault)".
  std::string describe() const;
};

// Where one standard stream of the child goes.
struct ChildStream {
  enum class Kind { kInherit, kNull, kPipe, kFd };
  Kind kind = Kind::kInherit;
  int descriptor = -1;  // kFd: the caller's (it stays the caller's to close)

  static ChildStream inherit() { return {}; }
  static ChildStream null() { return {Kind::kNull, -1}; }
  // A pipe to the parent: ChildProcess::stdin_fd / stdout_fd / stderr_fd.
  static ChildStream pipe() { return {Kind::kPipe, -1}; }
  static ChildStream fd(int caller_fd) { return {Kind::kFd, caller_fd}; }
};

struct ChildOptions {
  ChildStream in, out, err;
  // stderr into stdout's pipe or descriptor (err is then ignored).
  bool err_to_out = false;
  // The child leads its own process group: it and everything it spawned are killed together.
  bool own_group = false;
  // SIGKILL the child when the parent dies.
  bool die_with_parent = true;
  // exec only: the environment (nullptr: the parent's) and what the child writes to its stderr
  // when exec fails (exit status 127; empty: "cannot execute PROGRAM").
  const std::vector<std::string>* env = nullptr;
  std::string exec_failure;
};

class ChildProcess {
 public:
  ChildProcess() = default;
  // Kills and reaps a child still running; closes the parent's pipe ends.
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Execs argv[0] (searched on PATH) with `argv`. Throws std::runtime_error when the pipes or the
  // fork fail; a program that cannot be executed is a child exiting with status 127.
  static ChildProcess exec(const std::vector<std::string>& argv, const ChildOptions& options);
  // Runs `body` in a forked child, which then _exits with its return value; an exception escaping
  // it is written to stderr and exits 70. stdout / stderr are flushed before the fork (else
  // buffered text would be written by both processes). Throws std::runtime_error as exec does.
  static ChildProcess fork(const std::function<int()>& body, const ChildOptions& options);

  pid_t pid() const { return pid_; }
  // Started and not yet reaped.
  bool running() const { return pid_ > 0; }
  // The parent's ends of the kPipe streams (-1 when none); the child's ends are closed.
  int stdin_fd() const { return in_; }
  int stdout_fd() const { return out_; }
  int stderr_fd() const { return err_; }
  void close_stdin();
  // Closes the parent's ends of every pipe.
  void close_pipes();

  // Waits until the child exits (and reaps it) or `deadline` passes (nullopt: it still runs).
  // With own_group, whatever it left running in its group is killed before it is reaped.
  std::optional<ChildExit> wait_until(ChildClock::time_point deadline);
  ChildExit wait();
  // SIGKILLs the child (and its group with own_group) and reaps it; how it ended (normally
  // killed by SIGKILL; an exit when it ended first). Nullopt when no child runs.
  std::optional<ChildExit> kill();

 private:
  void reap(ChildExit& how);

  pid_t pid_ = -1;
  bool own_group_ = false;
  int in_ = -1, out_ = -1, err_ = -1;
};

// One descriptor read until its end of file, into `into`, of which only about the last
// `keep_tail` bytes are kept (0: all).
struct ChildCapture {
  int fd;
  std::string* into;
  std::size_t keep_tail = 0;
};

// Reads every capture until each reaches its end of file (true) or `deadline` passes (false).
bool read_until_closed(std::span<const ChildCapture> captures, ChildClock::time_point deadline);

}  // namespace mxgate
