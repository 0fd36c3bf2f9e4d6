// `python -m mxgate.layers` from the CLI: the interpreter the gate's self-test discovers
// (MXGATE_PYTHON, else the first of python3 and /usr/bin/python3 that imports numpy) and the
// environment the Python worker gets (this tree's python/ appended to PYTHONPATH; this build's
// libmxgate.so as MXGATE_LIBRARY and this program as MXGATE_CLI unless set).
#include "tools/mxgate/layer_delegate.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "impl/python_worker.h"

namespace mxgate::cli {

namespace {

namespace fs = std::filesystem;

void set_environment() {
  const char* path = std::getenv("PYTHONPATH");
  std::string pythonpath = path != nullptr ? path : "";
  const std::string pkg = std::string(MXGATE_SOURCE_DIR) + "/python";
  if (pythonpath.find(pkg) == std::string::npos) {
    pythonpath += (pythonpath.empty() ? "" : ":") + pkg;
    setenv("PYTHONPATH", pythonpath.c_str(), 1);
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return;
  const fs::path lib = exe.parent_path() / "../../capi/libmxgate.so";
  const char* have = std::getenv("MXGATE_LIBRARY");
  if ((have == nullptr || *have == '\0') && fs::is_regular_file(lib, ec)) {
    setenv("MXGATE_LIBRARY", fs::weakly_canonical(lib, ec).c_str(), 1);
  }
  setenv("MXGATE_CLI", exe.c_str(), 0);
}

// Runs the interpreter with `-m mxgate.layers ARGS`; its output is captured into *out when out
// is given (else it goes to ours). Returns its exit status (127: it could not run).
int run_python(const std::vector<std::string>& args, std::string* out) {
  set_environment();
  // The self-test's discovery (impl/python_worker.h); none imports numpy: python3 runs and says so.
  const impl::PythonChoice py = impl::discover_python();
  const std::string python = !py.interpreter.empty()
                                 ? py.interpreter
                                 : (py.from_env ? std::getenv("MXGATE_PYTHON") : "python3");
  std::vector<std::string> all = {python, "-m", "mxgate.layers"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : all) argv.push_back(s.data());
  argv.push_back(nullptr);
  int fds[2] = {-1, -1};
  if (out != nullptr && pipe(fds) != 0) return 127;
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    if (out != nullptr) {
      dup2(fds[1], 1);
      dup2(fds[1], 2);
      close(fds[0]);
      close(fds[1]);
    }
    execvp(argv[0], argv.data());
    _exit(127);
  }
  if (out != nullptr) {
    close(fds[1]);
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
    close(fds[0]);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The first line of `text` that starts with `prefix` (after indentation), without it.
std::string line_after(const std::string& text, const std::string& prefix) {
  const std::size_t at = text.find(prefix);
  if (at == std::string::npos) return "";
  const std::size_t end = text.find('\n', at);
  return text.substr(at + prefix.size(), end == std::string::npos ? end : end - at - prefix.size());
}

}  // namespace

bool is_layer_property(const std::string& name) {
  return name.rfind("layer.", 0) == 0 || name.rfind("moe.", 0) == 0;
}

bool is_layer_spec(const std::string& spec) { return are_layer_specs({spec}).front(); }

std::vector<bool> are_layer_specs(const std::vector<std::string>& specs) {
  std::vector<bool> out(specs.size(), false);
  std::vector<std::string> args = {"is-layer"};
  std::vector<std::size_t> asked;  // the index in specs of each py: spec asked
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].rfind("py:", 0) != 0) continue;
    args.push_back(specs[i]);
    asked.push_back(i);
  }
  if (asked.empty()) return out;
  std::string text;
  const int rc = run_python(args, &text);
  if (rc != 0 && rc != 1) return out;
  // "layer\tSPEC" or "other\tSPEC", one line per spec asked, in order.
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, end - at);
    if (line.rfind("layer\t", 0) == 0 || line.rfind("other\t", 0) == 0) lines.push_back(line);
    at = end + 1;
  }
  if (lines.size() != asked.size()) return out;
  for (std::size_t j = 0; j < asked.size(); ++j) {
    out[asked[j]] = lines[j] == "layer\t" + specs[asked[j]];
  }
  return out;
}

int run_layer_properties(const std::string& names, const std::string& spec, uint64_t seed,
                         int cases) {
  return run_python({"property", names, "--impl", spec, "--seed", std::to_string(seed), "--cases",
                     std::to_string(cases)},
                    nullptr);
}

int run_layer_plan(const std::string& spec, const std::vector<std::string>& configs,
                   const std::vector<std::string>& labels, bool json) {
  std::vector<std::string> args = {"plan", "--impl", spec};
  for (std::size_t i = 0; i < configs.size(); ++i) {
    args.insert(args.end(), {"--config", configs[i]});
    if (!labels.empty()) args.insert(args.end(), {"--label", labels[i]});
  }
  if (json) args.push_back("--json");
  return run_python(args, nullptr);
}

void add_layer_checks(std::vector<GateCheck>& checks, const std::vector<std::string>& specs,
                      const GateSettings& s) {
  for (const std::string& spec : specs) {
    GateCheck g;
    g.name = "layer.*[" + spec + "]";
    g.backend = "host";
    g.impl = spec;
    g.where = GateCheck::Where::kParent;
    g.run = [spec, seed = s.opts.seed, cases = s.opts.cases ? s.opts.cases : 100] {
      std::string out;
      const int rc = run_python({"property", "layer.*", "--impl", spec, "--seed",
                                 std::to_string(seed), "--cases", std::to_string(cases)},
                                &out);
      CheckRun r;
      if (rc == 0) {
        r.report.detail = "every layer property passed";
      } else if (rc == 1) {
        r.report.result = report::CheckOutcome::kFail;
        r.report.detail = line_after(out, "failure: ");
        r.report.counterexample = line_after(out, "shrunk case: ");
        r.report.repro = line_after(out, "cli: ");
      } else {
        r = error_run("python -m mxgate.layers exited " + std::to_string(rc) + ": " +
                      out.substr(out.size() > 300 ? out.size() - 300 : 0));
        r.environment_error = rc == 3;
      }
      return r;
    };
    checks.push_back(std::move(g));
  }
}

}  // namespace mxgate::cli
