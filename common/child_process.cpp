#include "common/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>
#include <utility>

extern char** environ;

namespace mxgate {
namespace {

// A pipe whose parent end is `parent` and child end `child`; -1 when the stream has none.
struct Ends {
  int parent = -1;
  int child = -1;
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// `out` true: the child writes the stream (stdout, stderr), the parent reads it.
Ends make_pipe(const ChildStream& s, bool out, std::vector<Ends>& made) {
  if (s.kind != ChildStream::Kind::kPipe) return {};
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    const std::string why = std::string("pipe: ") + std::strerror(errno);
    for (Ends& e : made) {
      close_fd(e.parent);
      close_fd(e.child);
    }
    throw std::runtime_error(why);
  }
  const Ends e = out ? Ends{p[0], p[1]} : Ends{p[1], p[0]};
  made.push_back(e);
  return e;
}

// In the child: points `target` at the stream. Only async-signal-safe calls (exec follows).
void redirect(const ChildStream& s, int pipe_end, int target) {
  int from = -1;
  switch (s.kind) {
    case ChildStream::Kind::kInherit:
      return;
    case ChildStream::Kind::kNull:
      from = ::open("/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY);
      break;
    case ChildStream::Kind::kPipe:
      from = pipe_end;
      break;
    case ChildStream::Kind::kFd:
      from = s.descriptor;
      break;
  }
  if (from < 0) return;
  if (from == target) {
    ::fcntl(target, F_SETFD, 0);  // dup2 onto itself would keep close-on-exec
  } else {
    ::dup2(from, target);
  }
  if (s.kind == ChildStream::Kind::kNull && from != target) ::close(from);
}

// The child's side of the fork: its group, its parent's death, its streams.
void set_up_child(const ChildOptions& o, pid_t parent, const Ends& in, const Ends& out,
                  const Ends& err) {
  if (o.own_group) ::setpgid(0, 0);
  if (o.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(125);  // the parent died before prctl took effect
  }
  redirect(o.in, in.child, STDIN_FILENO);
  redirect(o.out, out.child, STDOUT_FILENO);
  if (o.err_to_out) {
    if (o.out.kind != ChildStream::Kind::kInherit) ::dup2(STDOUT_FILENO, STDERR_FILENO);
  } else {
    redirect(o.err, err.child, STDERR_FILENO);
  }
  for (int fd : {in.child, out.child, err.child, in.parent, out.parent, err.parent}) {
    if (fd > STDERR_FILENO) ::close(fd);
  }
}

ChildExit decode(int status) {
  ChildExit how;
  if (WIFSIGNALED(status)) {
    how.kind = ChildExit::Kind::kSignaled;
    how.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    how.code = WEXITSTATUS(status);
  }
  return how;
}

}  // namespace

ChildClock::time_point deadline_after(double seconds) {
  return ChildClock::now() + std::chrono::duration_cast<ChildClock::duration>(
                                 std::chrono::duration<double>(std::max(seconds, 0.0)));
}

std::string ChildExit::describe() const {
  if (kind == Kind::kSignaled) {
    return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  }
  return "exited with status " + std::to_string(code);
}

ChildProcess::~ChildProcess() {
  kill();
  close_pipes();
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept { *this = std::move(other); }

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    kill();
    close_pipes();
    pid_ = std::exchange(other.pid_, -1);
    own_group_ = other.own_group_;
    in_ = std::exchange(other.in_, -1);
    out_ = std::exchange(other.out_, -1);
    err_ = std::exchange(other.err_, -1);
  }
  return *this;
}

void ChildProcess::close_stdin() { close_fd(in_); }

void ChildProcess::close_pipes() {
  close_fd(in_);
  close_fd(out_);
  close_fd(err_);
}

namespace {

// Forks; in the child sets up `o` and calls `then` (which does not return).
template <class Then>
void start(const ChildOptions& o, Then then, pid_t& pid, bool& own_group, int& in_fd, int& out_fd,
           int& err_fd) {
  std::vector<Ends> made;
  const Ends in = make_pipe(o.in, false, made);
  const Ends out = make_pipe(o.out, true, made);
  const Ends err = o.err_to_out ? Ends{} : make_pipe(o.err, true, made);
  const pid_t parent = ::getpid();
  const pid_t p = ::fork();
  if (p < 0) {
    const std::string why = std::string("fork: ") + std::strerror(errno);
    for (Ends& e : made) {
      close_fd(e.parent);
      close_fd(e.child);
    }
    throw std::runtime_error(why);
  }
  if (p == 0) {
    set_up_child(o, parent, in, out, err);
    then();
  }
  // Also here: the child may not have run yet when its group is killed.
  if (o.own_group) ::setpgid(p, p);
  for (Ends e : made) close_fd(e.child);
  pid = p;
  own_group = o.own_group;
  in_fd = in.parent;
  out_fd = out.parent;
  err_fd = err.parent;
}

}  // namespace

ChildProcess ChildProcess::exec(const std::vector<std::string>& argv, const ChildOptions& o) {
  if (argv.empty()) throw std::runtime_error("exec: no program");
  // Everything exec needs is built before the fork: the child only dups and execs.
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (std::string& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);
  std::vector<std::string> env = o.env != nullptr ? *o.env : std::vector<std::string>();
  std::vector<char*> envp;
  for (std::string& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  char** const envv = o.env != nullptr ? envp.data() : environ;
  const std::string failure =
      o.exec_failure.empty() ? "cannot execute " + argv[0] + "\n" : o.exec_failure;
  ChildProcess c;
  start(
      o,
      [&] {
        ::signal(SIGPIPE, SIG_DFL);  // an ignored signal stays ignored across exec
        ::execvpe(argp[0], argp.data(), envv);
        (void)!::write(STDERR_FILENO, failure.data(), failure.size());
        ::_exit(127);
      },
      c.pid_, c.own_group_, c.in_, c.out_, c.err_);
  return c;
}

ChildProcess ChildProcess::fork(const std::function<int()>& body, const ChildOptions& o) {
  std::fflush(stdout);
  std::fflush(stderr);
  ChildProcess c;
  start(
      o,
      [&] {
        int code = 0;
        try {
          code = body();
        } catch (const std::exception& e) {
          std::fprintf(stderr, "uncaught exception: %s\n", e.what());
          code = 70;
        } catch (...) {
          std::fprintf(stderr, "uncaught exception\n");
          code = 70;
        }
        std::fflush(stdout);
        std::fflush(stderr);
        // _exit: no atexit handlers or static destructors of state copied from the parent.
        ::_exit(code);
      },
      c.pid_, c.own_group_, c.in_, c.out_, c.err_);
  return c;
}

void ChildProcess::reap(ChildExit& how) {
  // The child is a zombie until reaped, so its pid (and group id) cannot be reused yet.
  if (own_group_) ::kill(-pid_, SIGKILL);
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  if (r == pid_) {
    how = decode(status);
  } else {
    how.code = -1;  // reaped elsewhere (SIGCHLD ignored): how it ended is unknown, not a success
  }
  pid_ = -1;
}

std::optional<ChildExit> ChildProcess::wait_until(ChildClock::time_point deadline) {
  if (pid_ <= 0) return std::nullopt;
  const bool forever = deadline == ChildClock::time_point::max();
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    siginfo_t info{};
    // WNOWAIT: the child stays a zombie, so its group can be killed before its pid is reused.
    const int r = ::waitid(P_PID, static_cast<id_t>(pid_), &info,
                           WEXITED | WNOWAIT | (forever ? 0 : WNOHANG));
    if ((r == 0 && info.si_pid == pid_) || (r < 0 && errno != EINTR)) {
      ChildExit how;
      reap(how);
      return how;
    }
    if (forever) continue;
    const auto now = ChildClock::now();
    if (now >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::min<ChildClock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(10));
  }
}

ChildExit ChildProcess::wait() { return *wait_until(ChildClock::time_point::max()); }

std::optional<ChildExit> ChildProcess::kill() {
  if (pid_ <= 0) return std::nullopt;
  if (own_group_) ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  ChildExit how;
  reap(how);
  return how;
}

bool read_until_closed(std::span<const ChildCapture> captures, ChildClock::time_point deadline) {
  std::vector<pollfd> fds;
  for (const ChildCapture& c : captures) fds.push_back({c.fd, POLLIN, 0});
  char buf[8192];
  for (;;) {
    if (std::none_of(fds.begin(), fds.end(), [](const pollfd& f) { return f.fd >= 0; })) {
      return true;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - ChildClock::now());
    if (left.count() <= 0) return false;
    const int n =
        ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) return false;
    for (std::size_t i = 0; i < fds.size() && n > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        fds[i].fd = -1;  // poll skips negative descriptors
        continue;
      }
      std::string& into = *captures[i].into;
      into.append(buf, static_cast<std::size_t>(got));
      const std::size_t keep = captures[i].keep_tail;
      if (keep != 0 && into.size() > 2 * keep) into.erase(0, into.size() - keep);
    }
  }
}

}  // namespace mxgate
