// Test helper for the tests of report/ (test_report.cpp, test_heatmap.cpp, both in namespace
// mxgate::report): a shell command's exit status, a file's bytes in and out, and whether xmllint
// (the schema and well-formedness checks) is installed.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace mxgate::report {

// Exit status of a shell command (-1 when it did not exit normally).
inline int run(const std::string& command) {
  const int rc = std::system(command.c_str());
  return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline bool have_xmllint() { return run("command -v xmllint >/dev/null 2>&1") == 0; }

}  // namespace mxgate::report
