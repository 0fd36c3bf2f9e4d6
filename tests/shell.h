// Test helper: run a shell command line and capture what it prints, for the tests that run the
// built tool (MXGATE_CLI) or scripts as real processes.
#pragma once

#include <stdio.h>
#include <sys/wait.h>

#include <stdexcept>
#include <string>

namespace mxgate::test_support {

struct ShellResult {
  int exit_code = -1;  // -1 when the command did not exit normally
  std::string out;     // its stdout (append " 2>&1" to the command to include stderr)
};

// Runs `command` through /bin/sh. Throws std::runtime_error when the shell cannot be started.
inline ShellResult run_shell(const std::string& command) {
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("popen failed: " + command);
  ShellResult r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `s` as one single-quoted shell word.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace mxgate::test_support
