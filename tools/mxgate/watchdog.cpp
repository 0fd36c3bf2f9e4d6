#include "tools/mxgate/watchdog.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>

#include "gpu/backend.h"

namespace mxgate::cli {
namespace {

constexpr std::size_t kPageBytes = 4096;
constexpr std::size_t kNameBytes = 256;
constexpr std::size_t kOutputTailBytes = 4096;

// The shared page: the NUL-terminated name of the last kernel launched by the current child.
char* g_page = nullptr;

using Clock = std::chrono::steady_clock;

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

[[noreturn]] void child_main(const std::function<std::string()>& body, pid_t parent, int result_fd,
                             int output_fd) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(125);  // the gate died before prctl took effect
  // A background process group reading the terminal would be stopped (SIGTTIN): no stdin.
  if (const int null = ::open("/dev/null", O_RDONLY); null > STDIN_FILENO) {
    ::dup2(null, STDIN_FILENO);
    ::close(null);
  }
  ::dup2(output_fd, STDOUT_FILENO);
  ::dup2(output_fd, STDERR_FILENO);
  ::close(output_fd);
  gpu::set_launch_observer(&Watchdog::record_launch);
  std::string payload;
  try {
    payload = body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "uncaught exception: %s\n", e.what());
    std::fflush(stderr);
    ::_exit(70);
  } catch (...) {
    std::fprintf(stderr, "uncaught exception\n");
    std::fflush(stderr);
    ::_exit(70);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  write_all(result_fd, payload);
  ::close(result_fd);
  // _exit: no atexit handlers or static destructors of state copied from the parent.
  ::_exit(0);
}

// Reads what is available on `fd` into `out`; false at end of file or on an error.
bool drain(int fd, std::string& out, std::size_t keep_tail) {
  char buf[8192];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  out.append(buf, static_cast<std::size_t>(n));
  if (keep_tail != 0 && out.size() > 2 * keep_tail) out.erase(0, out.size() - keep_tail);
  return true;
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
  int output_pipe[2];
  if (::pipe2(result_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  if (::pipe2(output_pipe, O_CLOEXEC) != 0) {
    ::close(result_pipe[0]);
    ::close(result_pipe[1]);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::memset(g_page, 0, kNameBytes);
  // Buffered output would otherwise be written twice, once by each process.
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {result_pipe[0], result_pipe[1], output_pipe[0], output_pipe[1]}) ::close(fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(result_pipe[0]);
    ::close(output_pipe[0]);
    child_main(body, parent, result_pipe[1], output_pipe[1]);
  }
  ::setpgid(pid, pid);  // also here: the child may not have run yet when we kill its group
  ::close(result_pipe[1]);
  ::close(output_pipe[1]);

  ChildOutcome out;
  std::string output;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_seconds));
  pollfd fds[2] = {{result_pipe[0], POLLIN, 0}, {output_pipe[0], POLLIN, 0}};
  bool timed_out = false;
  // Read both pipes until the child (and anything it spawned) closed them, then wait for it to
  // exit; both under the one deadline.
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    const int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2 && n > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      if (!drain(fds[i].fd, i == 0 ? out.payload : output, i == 0 ? 0 : kOutputTailBytes)) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
      }
    }
  }
  while (!timed_out) {
    siginfo_t info{};
    // WNOWAIT: the child stays a zombie, so its pid cannot be reused before we kill its group.
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      break;
    }
    if (Clock::now() >= deadline) {
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid, SIGKILL);  // the child's group: on a timeout, and strays it left behind
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  for (const pollfd& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  out.last_kernel.assign(g_page, ::strnlen(g_page, kNameBytes));
  out.output_tail = tail_of(output, 1024);
  if (timed_out) {
    out.kind = ChildOutcome::Kind::kTimeout;
  } else if (WIFSIGNALED(status)) {
    out.kind = ChildOutcome::Kind::kSignal;
    out.signal = WTERMSIG(status);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    out.kind = ChildOutcome::Kind::kExit;
    out.exit_status = WEXITSTATUS(status);
  }
  if (out.kind != ChildOutcome::Kind::kResult) out.payload.clear();
  return out;
}

}  // namespace mxgate::cli
