// Long CLI runs (`mxgate sweep-cast`): a progress line on stderr and Ctrl-C as "stop at the next
// chunk". Progress lines are written only when stderr is a terminal or MXGATE_PROGRESS=1 (so
// captured stderr, which tests compare, never holds them), the first after one second, then at
// most one a second: "sweep-cast: 12.5% (536870912 of 4294967296 inputs), 3.1e+07 inputs/s,
// 121 s left". While an InterruptScope lives, SIGINT sets a flag instead of ending the process;
// the run stops at its next boundary, reports what it did marked partial and exits
// kInterruptedExit (130, the shell's 128 + SIGINT). README.md (the verbs table).
#pragma once

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace mxgate::cli {

inline constexpr int kInterruptedExit = 130;

class Progress {
 public:
  Progress(std::string what, uint64_t total, std::string unit);
  // Lines to file descriptor `fd` when `on` (a watchdog child writes to its parent's stderr,
  // duplicated before the fork: the child's own stderr is captured).
  Progress(std::string what, uint64_t total, std::string unit, int fd, bool on);
  // `done` of the total units are finished; writes a line when one is due.
  void update(uint64_t done);
  // Whether lines are written at all (stderr a terminal, or MXGATE_PROGRESS=1).
  static bool enabled();

 private:
  std::string what_, unit_;
  uint64_t total_;
  std::chrono::steady_clock::time_point start_, next_;
  bool on_;
  int fd_ = 2;
};

// SIGINT sets a flag (interrupted()) for the scope's lifetime; the previous handler is restored
// at its end.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  static bool interrupted();

 private:
  std::unique_ptr<struct sigaction> previous_;  // no copies: one restore
};

}  // namespace mxgate::cli
