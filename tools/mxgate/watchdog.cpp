#include "tools/mxgate/watchdog.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "common/child_process.h"
#include "gpu/backend.h"

namespace mxgate::cli {
namespace {

constexpr std::size_t kPageBytes = 4096;
constexpr std::size_t kNameBytes = 256;
constexpr std::size_t kOutputTailBytes = 4096;

// The shared page: the NUL-terminated name of the last kernel launched by the current child.
char* g_page = nullptr;

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string tail_of(const std::string& s, std::size_t bytes) {
  std::string t = s.size() > bytes ? s.substr(s.size() - bytes) : s;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

}  // namespace

Watchdog::Watchdog() {
  void* p = ::mmap(nullptr, kPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
  g_page = static_cast<char*>(p);
}

Watchdog::~Watchdog() {
  ::munmap(g_page, kPageBytes);
  g_page = nullptr;
}

void Watchdog::record_launch(std::string_view kernel_name) {
  if (g_page == nullptr) return;
  const std::size_t n = std::min(kernel_name.size(), kNameBytes - 1);
  std::memcpy(g_page, kernel_name.data(), n);
  g_page[n] = '\0';
}

ChildOutcome Watchdog::run(const std::function<std::string()>& body, double timeout_seconds) {
  int result_pipe[2];
  if (::pipe2(result_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::memset(g_page, 0, kNameBytes);
  // Its own group (a fuzzer it spawned dies with it); no stdin, since a background process group
  // reading the terminal would be stopped (SIGTTIN).
  ChildOptions options;
  options.in = ChildStream::null();
  options.out = ChildStream::pipe();
  options.err_to_out = true;
  options.own_group = true;
  ChildProcess child;
  try {
    child = ChildProcess::fork(
        [&] {
          ::close(result_pipe[0]);
          gpu::set_launch_observer(&Watchdog::record_launch);
          const std::string payload = body();  // an exception escaping it exits 70
          std::fflush(stdout);
          std::fflush(stderr);
          write_all(result_pipe[1], payload);
          ::close(result_pipe[1]);
          return 0;
        },
        options);
  } catch (...) {
    ::close(result_pipe[0]);
    ::close(result_pipe[1]);
    throw;
  }
  ::close(result_pipe[1]);

  ChildOutcome out;
  std::string output;
  const ChildClock::time_point deadline = deadline_after(timeout_seconds);
  // Read both pipes until the child (and anything it spawned) closed them, then wait for it to
  // exit; both under the one deadline.
  const std::array<ChildCapture, 2> captures = {
      {{result_pipe[0], &out.payload}, {child.stdout_fd(), &output, kOutputTailBytes}}};
  std::optional<ChildExit> how;
  if (read_until_closed(captures, deadline)) how = child.wait_until(deadline);
  const bool timed_out = !how.has_value();
  if (timed_out) child.kill();  // its whole group
  ::close(result_pipe[0]);
  out.last_kernel.assign(g_page, ::strnlen(g_page, kNameBytes));
  out.output_tail = tail_of(output, 1024);
  if (timed_out) {
    out.kind = ChildOutcome::Kind::kTimeout;
  } else if (how->kind == ChildExit::Kind::kSignaled) {
    out.kind = ChildOutcome::Kind::kSignal;
    out.signal = how->signal;
  } else if (how->code != 0) {
    out.kind = ChildOutcome::Kind::kExit;
    out.exit_status = how->code;
  }
  if (out.kind != ChildOutcome::Kind::kResult) out.payload.clear();
  return out;
}

}  // namespace mxgate::cli
