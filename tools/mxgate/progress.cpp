#include "tools/mxgate/progress.h"

#include <sys/mman.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mxgate::cli {
namespace {

// The flag lives in a shared page once an InterruptScope exists, so that the children the
// watchdog forks afterwards (the survey's cast pieces, in their own process groups, which the
// terminal's SIGINT does not reach) see their parent's Ctrl-C and stop at their next chunk.
volatile std::sig_atomic_t g_local = 0;
volatile std::sig_atomic_t* g_interrupted = &g_local;

void on_sigint(int) { *g_interrupted = 1; }

}  // namespace

bool Progress::enabled() {
  const char* env = std::getenv("MXGATE_PROGRESS");
  if (env != nullptr && *env != '\0') return std::strcmp(env, "0") != 0;
  return isatty(STDERR_FILENO) != 0;
}

Progress::Progress(std::string what, uint64_t total, std::string unit)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      next_(start_ + std::chrono::seconds(1)),
      on_(enabled()) {}

Progress::Progress(std::string what, uint64_t total, std::string unit, int fd, bool on)
    : Progress(std::move(what), total, std::move(unit)) {
  on_ = on && fd >= 0;
  fd_ = fd;
}

void Progress::update(uint64_t done) {
  const auto now = std::chrono::steady_clock::now();
  if (!on_ || now < next_ || done == 0) return;
  next_ = now + std::chrono::seconds(1);
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = static_cast<double>(done) / seconds;
  const double left = done < total_ ? static_cast<double>(total_ - done) / rate : 0.0;
  std::fflush(stderr);
  dprintf(fd_, "%s: %.1f%% (%llu of %llu %s), %.3g %s/s, %.0f s left\n", what_.c_str(),
          100.0 * static_cast<double>(done) / static_cast<double>(total_),
          static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_),
          unit_.c_str(), rate, unit_.c_str(), left);
}

InterruptScope::InterruptScope() : previous_(std::make_unique<struct sigaction>()) {
  if (g_interrupted == &g_local) {
    void* page = ::mmap(nullptr, sizeof(std::sig_atomic_t), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED) g_interrupted = static_cast<volatile std::sig_atomic_t*>(page);
  }
  *g_interrupted = 0;
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, previous_.get());
}

InterruptScope::~InterruptScope() { sigaction(SIGINT, previous_.get(), nullptr); }

bool InterruptScope::interrupted() { return *g_interrupted != 0; }

}  // namespace mxgate::cli
