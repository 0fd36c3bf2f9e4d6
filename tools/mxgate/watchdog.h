// The gate's watchdog: runs one check in a forked child under a deadline, so that a hung kernel
// or a crash costs that check only and the run goes on with the next one.
//
// The child runs in its own process group (so a fuzzer it spawned dies with it) and is killed
// when the gate dies (PR_SET_PDEATHSIG). Its stdout and stderr are captured (their tail explains
// a crash); its result comes back over a separate pipe as the string `body` returns. The kernel
// the child launched last is recorded by a gpu launch observer into a MAP_SHARED page created
// before any fork, which the parent reads when the child hangs or crashes.
//
// CUDA and HIP contexts do not survive fork: a process using a Watchdog must never create a
// device backend itself; each child creates its own.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace mxgate::cli {

struct ChildOutcome {
  enum class Kind {
    kResult,   // exited 0; `payload` holds what `body` returned
    kTimeout,  // no result within the deadline; killed with SIGKILL
    kSignal,   // killed by `signal`
    kExit,     // exited with `exit_status` != 0 (an exception escaped `body`)
  };
  Kind kind = Kind::kResult;
  std::string payload;
  int signal = 0;
  int exit_status = 0;
  std::string last_kernel;  // the last kernel the child launched; "" when none
  std::string output_tail;  // the last lines the child wrote to stdout / stderr
};

class Watchdog {
 public:
  // Maps the shared page. Throws std::runtime_error when mmap fails.
  Watchdog();
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Forks a child that runs `body` and returns its result, or how the child ended. Throws
  // std::runtime_error when the child cannot be started (pipe, fork).
  ChildOutcome run(const std::function<std::string()>& body, double timeout_seconds);

  // The launch observer the child installs: copies `kernel_name` into the shared page.
  static void record_launch(std::string_view kernel_name);
};

}  // namespace mxgate::cli
