#include "impl/python_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "common/child_process.h"
#include "impl/plugin.h"
#include "impl/python.h"

extern char** environ;

namespace mxgate::impl {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kTailBytes = 2048;

double timeout_seconds() {
  if (const char* env = std::getenv("MXGATE_PYTHON_TIMEOUT"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    if (end != env && v > 0) return v;
  }
  return 120;
}

std::string tail(const std::string& s) {
  std::string t = s.size() > 600 ? "..." + s.substr(s.size() - 600) : s;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  for (char& c : t) {
    if (c == '\n') c = '|';
  }
  return t;
}

std::string program_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

// The folder holding the package `mxgate` of this source tree, when it has one (appended to the
// worker's PYTHONPATH, after what the caller set).
std::string package_dir() {
#ifdef MXGATE_PYTHON_PACKAGE_DIR
  std::error_code ec;
  if (fs::is_regular_file(fs::path(MXGATE_PYTHON_PACKAGE_DIR) / "mxgate" / "_worker.py", ec)) {
    return MXGATE_PYTHON_PACKAGE_DIR;
  }
#endif
  return "";
}

// libmxgate.so of this build (the package loads it at import): next to the running program's
// build tree, else where this build writes it.
std::string library_path() {
  std::vector<fs::path> candidates;
  const std::string exe = program_dir();
  if (!exe.empty()) {
    candidates.push_back(fs::path(exe) / "../../capi/libmxgate.so");
    candidates.push_back(fs::path(exe) / "../capi/libmxgate.so");
  }
#ifdef MXGATE_CAPI_BUILD_DIR
  candidates.push_back(fs::path(MXGATE_CAPI_BUILD_DIR) / "libmxgate.so");
#endif
  for (const fs::path& p : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return fs::weakly_canonical(p, ec).string();
  }
  return "";
}

// How long a worker may take to start (import its adapter, describe it).
Clock::duration startup_timeout() {
  const double s = std::max(timeout_seconds(), 60.0);
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void put_u64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
uint64_t get_le(const std::string& s, std::size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
  return v;
}

// The worker's environment: the caller's, with this tree's package appended to PYTHONPATH and
// this build's libmxgate.so as MXGATE_LIBRARY unless the caller set one.
std::vector<std::string> worker_environment() {
  std::vector<std::string> env;
  bool has_library = false;
  std::string pythonpath;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    if (kv.rfind("PYTHONPATH=", 0) == 0) {
      pythonpath = kv.substr(11);
      continue;
    }
    if (kv.rfind("MXGATE_LIBRARY=", 0) == 0 && kv.size() > 15) has_library = true;
    env.push_back(kv);
  }
  if (const std::string pkg = package_dir(); !pkg.empty()) {
    pythonpath += (pythonpath.empty() ? "" : ":") + pkg;
  }
  if (!pythonpath.empty()) env.push_back("PYTHONPATH=" + pythonpath);
  if (!has_library) {
    if (const std::string lib = library_path(); !lib.empty())
      env.push_back("MXGATE_LIBRARY=" + lib);
  }
  env.push_back("PYTHONDONTWRITEBYTECODE=1");
  return env;
}

struct Message {
  std::string header;
  std::string body;
};

}  // namespace

std::vector<std::string> python_environment() { return worker_environment(); }

std::string python_interpreter() {
  const char* env = std::getenv("MXGATE_PYTHON");
  if (env != nullptr && *env != '\0') return env;
  // Probed once per process: the first python3 on PATH of a fresh Debian 12 has no numpy.
  static const std::string found = [] {
    const PythonChoice c = discover_python();
    return c.interpreter.empty() ? std::string("python3") : c.interpreter;
  }();
  return found;
}

PythonChoice discover_python() {
  PythonChoice c;
  const char* env = std::getenv("MXGATE_PYTHON");
  c.from_env = env != nullptr && *env != '\0';
  const std::vector<std::string> candidates =
      c.from_env ? std::vector<std::string>{env}
                 : std::vector<std::string>{"python3", "/usr/bin/python3"};
  for (const std::string& p : candidates) {
    std::string quoted = "'";
    for (char ch : p) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    quoted += "'";
    if (std::system((quoted + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0) {
      c.interpreter = p;
      return c;
    }
    c.refused += (c.refused.empty() ? "" : ", ") + p;
  }
  return c;
}

class PythonWorker::Impl {
 public:
  explicit Impl(std::string spec) : spec_(std::move(spec)) {}
  ~Impl() { stop(); }

  // Starts the worker and returns its description; throws PluginError.
  std::string start() {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::string why;
    if (!spawn(why)) throw PluginError(PluginError::Kind::kInput, why);
    Message hello;
    const auto deadline = Clock::now() + startup_timeout();
    if (!receive(hello, deadline, why)) {
      stop();
      throw PluginError(PluginError::Kind::kInput,
                        "--impl " + spec_ + ": the Python worker did not start: " + why);
    }
    if (hello.header == "unavailable") {
      stop();
      throw PluginError(PluginError::Kind::kEnvironment,
                        "--impl " + spec_ + ": adapter unavailable: " + hello.body);
    }
    if (hello.header != "hello 1") {
      stop();
      throw PluginError(
          PluginError::Kind::kInput,
          "--impl " + spec_ + ": " +
              (hello.header == "error" ? hello.body
                                       : "unexpected handshake '" + hello.header +
                                             "' (mxgate._worker of another version?)"));
    }
    description_ = hello.body;
    return description_;
  }

  mxgate_status call(uint32_t index, const std::string& op, const mxgate_call& c,
                     std::string& message) {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::string why;
    if (!child_.running()) {
      // Restarted after a crash or hang: it must describe the same ops.
      Message hello;
      if (!spawn(why) || !receive(hello, Clock::now() + startup_timeout(), why)) {
        stop();
        message = "python worker " + spec_ + " could not be restarted: " + why;
        return MXGATE_ERROR;
      }
      if (hello.header != "hello 1" || hello.body != description_) {
        stop();
        message = "python worker " + spec_ + " restarted with another description";
        return MXGATE_ERROR;
      }
    }
    struct Slot {
      const char* role;
      const mxgate_tensor& t;
      bool output;
    };
    const Slot slots[] = {{"a", c.a, false},
                          {"a_scale", c.a_scale, false},
                          {"b", c.b, false},
                          {"b_scale", c.b_scale, false},
                          {"a_global", c.a_global, false},
                          {"b_global", c.b_global, false},
                          {"out", c.out, true},
                          {"out_scale", c.out_scale, true}};
    std::ostringstream h;
    h << "call " << index << " " << c.m << " " << c.n << " " << c.k << " " << c.tactic << "\n";
    std::string body;
    uint64_t out_bytes = 0;
    for (const Slot& s : slots) {
      if (s.t.data == nullptr) continue;
      h << (s.output ? "out " : "in ") << s.role << " " << to_string(static_cast<Dtype>(s.t.dtype))
        << " " << s.t.rows << " " << s.t.cols << " " << s.t.ld << " "
        << to_string(static_cast<Layout>(s.t.layout)) << " " << s.t.bytes << "\n";
      if (s.output) {
        out_bytes += s.t.bytes;
      } else {
        body.append(static_cast<const char*>(s.t.data), s.t.bytes);
      }
    }
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(timeout_seconds()));
    Message reply;
    if (!send(h.str(), body, deadline, why) || !receive(reply, deadline, why)) {
      message = "python worker " + spec_ + " " + why + " in op " + op;
      stop();
      return MXGATE_ERROR;
    }
    if (reply.header == "unsupported") {
      message = reply.body;
      return MXGATE_UNSUPPORTED;
    }
    if (reply.header == "error") {
      message = reply.body;
      return MXGATE_ERROR;
    }
    if (reply.header != "done" || reply.body.size() != out_bytes) {
      message = "python worker " + spec_ + " answered '" + reply.header + "' with " +
                std::to_string(reply.body.size()) + " bytes; expected done with " +
                std::to_string(out_bytes);
      stop();
      return MXGATE_ERROR;
    }
    std::size_t at = 0;
    for (const Slot& s : slots) {
      if (!s.output || s.t.data == nullptr) continue;
      std::memcpy(s.t.data, reply.body.data() + at, s.t.bytes);
      at += s.t.bytes;
    }
    return MXGATE_DONE;
  }

  mxgate_status survey(uint32_t index, const std::string& target, const std::string& inputs,
                       const std::function<void(uint64_t, uint64_t)>& progress, std::string& lines,
                       std::string& message) {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::string why;
    if (!child_.running()) {
      message = "python worker " + spec_ + " is not running";
      return MXGATE_ERROR;
    }
    const auto deadline_from_now = [] {
      return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(timeout_seconds()));
    };
    const std::string header =
        "survey " + std::to_string(index) + " " + target + " " + inputs + "\n";
    if (!send(header, "", deadline_from_now(), why)) {
      message = "python worker " + spec_ + " " + why + " in its cast survey";
      stop();
      return MXGATE_ERROR;
    }
    for (;;) {
      Message reply;
      if (!receive(reply, deadline_from_now(), why)) {
        message = "python worker " + spec_ + " " + why + " in its cast survey";
        stop();
        return MXGATE_ERROR;
      }
      if (reply.header.rfind("progress ", 0) == 0) {
        unsigned long long done = 0, total = 0;
        if (progress && std::sscanf(reply.header.c_str(), "progress %llu %llu", &done, &total) == 2)
          progress(done, total);
        continue;
      }
      if (reply.header == "done") {
        lines = reply.body;
        return MXGATE_DONE;
      }
      message = reply.body;
      return reply.header == "unsupported" ? MXGATE_UNSUPPORTED : MXGATE_ERROR;
    }
  }

 private:
  bool spawn(std::string& why) {
    stop();
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      why = std::string("socketpair: ") + std::strerror(errno);
      return false;
    }
    const std::vector<std::string> env = worker_environment();
    ChildOptions options;
    options.in = options.out = ChildStream::fd(sv[1]);
    options.err = ChildStream::pipe();
    options.env = &env;
    options.exec_failure = "cannot execute the interpreter (MXGATE_PYTHON)\n";
    options.own_group = true;  // Ctrl-C reaches mxgate, which decides; the worker goes on
    const std::string target(std::string_view(spec_).substr(kPythonPrefix.size()));
    try {
      child_ = ChildProcess::exec({python_interpreter(), "-m", "mxgate._worker", target}, options);
    } catch (const std::runtime_error& e) {
      why = e.what();
      ::close(sv[0]);
      ::close(sv[1]);
      return false;
    }
    ::close(sv[1]);
    sock_ = sv[0];
    err_ = child_.stderr_fd();
    ::fcntl(err_, F_SETFL, ::fcntl(err_, F_GETFL) | O_NONBLOCK);
    stderr_.clear();
    inbox_.clear();
    return true;
  }

  void stop() {
    if (sock_ >= 0) ::close(sock_);
    sock_ = err_ = -1;
    child_.kill();
    child_.close_pipes();
  }

  void drain_stderr() {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(err_, buf, sizeof buf);
      if (n <= 0) return;
      stderr_.append(buf, static_cast<std::size_t>(n));
      if (stderr_.size() > 2 * kTailBytes) stderr_.erase(0, stderr_.size() - kTailBytes);
    }
  }

  // How the worker ended (it closed its socket): waits for it a little.
  std::string ended() {
    std::string how = "closed its connection";
    if (child_.running()) {
      if (const auto exit = child_.wait_until(deadline_after(1.0))) {
        how = "died: " + exit->describe();
      }
    }
    drain_stderr();
    if (!stderr_.empty()) how += "; its last output: " + tail(stderr_);
    return how;
  }

  std::string timed_out() {
    drain_stderr();
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", timeout_seconds());
    std::string how =
        "gave no answer within " + std::string(seconds) + " s (MXGATE_PYTHON_TIMEOUT), killed";
    if (!stderr_.empty()) how += "; its last output: " + tail(stderr_);
    return how;
  }

  // Waits until `fd` is ready for `events` while draining stderr; false on the deadline.
  bool wait(int fd, short events, Clock::time_point deadline) {
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd fds[2] = {{fd, events, 0}, {err_, POLLIN, 0}};
      const int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
      if (n < 0 && errno != EINTR) return false;
      if (n > 0 && fds[1].revents != 0) drain_stderr();
      if (n > 0 && fds[0].revents != 0) return true;
    }
  }

  bool send(const std::string& header, const std::string& body, Clock::time_point deadline,
            std::string& why) {
    std::string frame;
    put_u32(frame, static_cast<uint32_t>(header.size()));
    frame += header;
    put_u64(frame, body.size());
    const std::string* parts[] = {&frame, &body};
    for (const std::string* part : parts) {
      std::size_t at = 0;
      while (at < part->size()) {
        if (!wait(sock_, POLLOUT, deadline)) {
          why = timed_out();
          return false;
        }
        const ssize_t n = ::send(sock_, part->data() + at, part->size() - at, MSG_NOSIGNAL);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) {
          why = ended();
          return false;
        }
        at += static_cast<std::size_t>(n);
      }
    }
    return true;
  }

  // Reads until inbox_ holds `count` bytes.
  bool fill(std::size_t count, Clock::time_point deadline, std::string& why) {
    char buf[1 << 16];
    while (inbox_.size() < count) {
      if (!wait(sock_, POLLIN, deadline)) {
        why = timed_out();
        return false;
      }
      const ssize_t n = ::recv(sock_, buf, sizeof buf, 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        why = ended();
        return false;
      }
      inbox_.append(buf, static_cast<std::size_t>(n));
    }
    return true;
  }

  bool receive(Message& m, Clock::time_point deadline, std::string& why) {
    if (!fill(4, deadline, why)) return false;
    const std::size_t hlen = get_le(inbox_, 0, 4);
    if (!fill(4 + hlen + 8, deadline, why)) return false;
    const std::size_t blen = get_le(inbox_, 4 + hlen, 8);
    if (!fill(4 + hlen + 8 + blen, deadline, why)) return false;
    m.header = inbox_.substr(4, hlen);
    while (!m.header.empty() && m.header.back() == '\n') m.header.pop_back();
    m.body = inbox_.substr(4 + hlen + 8, blen);
    inbox_.erase(0, 4 + hlen + 8 + blen);
    return true;
  }

  std::string spec_;
  std::string description_;
  ChildProcess child_;
  int sock_ = -1;
  int err_ = -1;  // the child's stderr pipe (child_ owns it)
  std::string stderr_;
  std::string inbox_;
  std::mutex mutex_;
};

PythonWorker::PythonWorker(std::string spec) : impl_(std::make_unique<Impl>(std::move(spec))) {}
PythonWorker::~PythonWorker() = default;

std::string PythonWorker::start() { return impl_->start(); }

mxgate_status PythonWorker::call(uint32_t index, const std::string& op, const mxgate_call& c,
                                 std::string& message) {
  return impl_->call(index, op, c, message);
}

mxgate_status PythonWorker::survey(uint32_t index, const std::string& target,
                                   const std::string& inputs,
                                   const std::function<void(uint64_t, uint64_t)>& progress,
                                   std::string& lines, std::string& message) {
  return impl_->survey(index, target, inputs, progress, lines, message);
}

std::vector<std::string> shipped_python_specs(std::string* why) {
  const std::vector<std::string> env = worker_environment();
  ChildOptions options;
  options.out = ChildStream::pipe();
  options.env = &env;
  std::string text;
  bool listed = false;
  try {
    ChildProcess child =
        ChildProcess::exec({python_interpreter(), "-m", "mxgate._worker", "--list"}, options);
    const auto deadline = Clock::now() + startup_timeout();
    const ChildCapture capture[] = {{child.stdout_fd(), &text}};
    if (read_until_closed(capture, deadline)) {
      const auto exit = child.wait_until(deadline);
      listed = exit && exit->success();
    }
  } catch (const std::runtime_error& e) {
    if (why != nullptr) *why = e.what();
    return {};
  }
  std::vector<std::string> specs;
  if (!listed) {
    if (why != nullptr) {
      *why = python_interpreter() +
             " -m mxgate._worker --list failed (MXGATE_PYTHON; is the package on "
             "PYTHONPATH?)";
    }
    return specs;
  }
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    if (is_python_spec(line)) specs.push_back(line);
  }
  return specs;
}

}  // namespace mxgate::impl
