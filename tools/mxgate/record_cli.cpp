// `mxgate replay DIR` and `mxgate shrink RECORD`: the flight recorder's verbs (docs/record.md
// §4-§5), run by the Python package (mxgate._record_cli) with the interpreter the gate uses:
// the record format, its op declarations and the recorded callables (which shrink re-runs) are
// Python's, so the verbs are the package's, not a second reading of the format in C++.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/child_process.h"
#include "impl/python_worker.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/verbs.h"

namespace mxgate::cli {

namespace {

// MXGATE_PYTHON, else the first of python3 and /usr/bin/python3 that imports numpy (the first
// python3 on PATH may lack it); empty when none does.
std::string record_interpreter(const std::vector<std::string>& env) {
  if (const char* e = std::getenv("MXGATE_PYTHON"); e != nullptr && *e != '\0') return e;
  for (const char* candidate : {"python3", "/usr/bin/python3"}) {
    ChildOptions o;
    o.in = ChildStream::null();
    o.out = ChildStream::null();
    o.err = ChildStream::null();
    o.env = &env;
    ChildProcess p = ChildProcess::exec({candidate, "-c", "import numpy"}, o);
    if (p.wait().success()) return candidate;
  }
  return "";
}

int run_python_verb(const char* verb, const Argv& args) {
  const std::vector<std::string> env = impl::python_environment();
  const std::string python = record_interpreter(env);
  if (python.empty()) {
    std::fprintf(stderr,
                 "mxgate %s: no Python with numpy: neither python3 nor /usr/bin/python3 imports "
                 "numpy (set MXGATE_PYTHON)\n",
                 verb);
    return 3;
  }
  std::vector<std::string> argv = {python, "-m", "mxgate._record_cli", verb};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildOptions o;
  o.env = &env;
  o.exec_failure = "mxgate " + std::string(verb) + ": cannot execute " + python + "\n";
  std::fflush(stdout);
  ChildProcess p = ChildProcess::exec(argv, o);
  const ChildExit how = p.wait();
  if (how.kind == ChildExit::Kind::kSignaled) {
    std::fprintf(stderr, "mxgate %s: the Python process %s\n", verb, how.describe().c_str());
    return 3;
  }
  return how.code == 127 ? 3 : how.code;
}

}  // namespace

std::optional<RecordedCase> load_recorded_case(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  std::istringstream lines(ss.str());
  RecordedCase c;
  bool found = false;
  std::string unknown;
  std::size_t line_no = 0;
  for (std::string line; std::getline(lines, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const std::size_t colon = line.find(':');
    const std::string key = line.substr(0, colon);
    std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    if (key == "check-gemm") {
      found = true;
      std::istringstream words(value);
      const std::filesystem::path dir = std::filesystem::path(path).parent_path();
      for (std::string w; words >> w;) {
        if (w.size() > 4 && w.substr(w.size() - 4) == ".npy" && w[0] != '/') {
          w = (dir / w).string();
        }
        c.args.push_back(w);
      }
    } else if (key == "expect") {
      if (value != "fail" && value != "pass") {
        throw UsageError(path + ":" + std::to_string(line_no) + ": expect is fail or pass, not '" +
                         value + "'");
      }
      c.expect_fail = value == "fail";
    } else if (unknown.empty()) {
      unknown = path + ":" + std::to_string(line_no) + ": unknown key '" + key +
                "' in a recorded case (keys: check-gemm, expect)";
    }
  }
  if (found && !unknown.empty()) throw UsageError(unknown);
  if (!found) return std::nullopt;
  return c;
}

int replay_recorded_case(const std::string& path, const RecordedCase& c) {
  std::printf("%s: recorded case, check-gemm on its files (expect %s)\n", path.c_str(),
              c.expect_fail ? "fail" : "pass");
  std::fflush(stdout);
  const int code = cmd_check_gemm(c.args);
  const bool ok = code == (c.expect_fail ? 1 : 0);
  std::printf("%s: %s\n", path.c_str(),
              ok ? (c.expect_fail ? "ok (fails as recorded)" : "ok (passes)")
                 : (c.expect_fail ? "NOT REPRODUCED (passes)" : "FAIL"));
  return ok ? 0 : 1;
}

int cmd_replay(const Argv& args) { return run_python_verb("replay", args); }
int cmd_shrink(const Argv& args) { return run_python_verb("shrink", args); }

}  // namespace mxgate::cli
