// The gate's fuzz smoke: for each libFuzzer target of the `fuzz` preset's build
// (<source>/build/fuzz/fuzz/<target>), replay its seeds (corpus/fuzz/<target>, read-only) and
// fuzz for 2 s into a scratch folder. Without that build the stage is one skipped check. A
// failure keeps the scratch folder (log and crash reproducer) and names it.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "tools/mxgate/gate_stages.h"

namespace mxgate::cli {
namespace {

namespace fs = std::filesystem;
using report::CheckOutcome;

constexpr std::array<const char*, 6> kTargets = {"fuzz_npy",      "fuzz_shape_catalog",
                                                 "fuzz_codecs",   "fuzz_negotiation",
                                                 "fuzz_dispatch", "fuzz_regression"};

struct Spawned {
  int exit_code = -1;  // -1: killed by a signal or not started
  std::string log;
};

// Runs `argv` with stdout and stderr into `log_path`; waits for it. The child dies with us.
Spawned spawn(const std::vector<std::string>& argv, const std::string& log_path) {
  Spawned s;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(125);
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  if (pid > 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) s.exit_code = WEXITSTATUS(status);
  }
  std::ifstream in(log_path);
  std::stringstream ss;
  ss << in.rdbuf();
  s.log = ss.str();
  return s;
}

// libFuzzer's "Done N runs in T second(s)".
uint64_t runs_of(const std::string& log) {
  std::smatch m;
  if (std::regex_search(log, m, std::regex(R"(Done ([0-9]+) runs)"))) return std::stoull(m[1]);
  return 0;
}

// The line that says what went wrong: libFuzzer's "==N== ERROR: ..." or a SUMMARY line.
std::string error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line;
  std::string summary;
  while (std::getline(in, line)) {
    if (line.find("ERROR:") != std::string::npos) return line;
    if (line.rfind("SUMMARY:", 0) == 0) summary = line;
  }
  return summary;
}

std::string artifact_in(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    for (const char* kind : {"crash-", "leak-", "timeout-", "oom-", "slow-unit-"}) {
      if (n.rfind(kind, 0) == 0) return e.path().string();
    }
  }
  return "";
}

CheckRun fuzz_check(const std::string& exe, const std::string& seeds) {
  CheckRun run;
  std::string pattern = (fs::temp_directory_path() / "mxgate_fuzz_XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return error_run("cannot create a scratch folder");
  const fs::path scratch = pattern;
  fs::create_directories(scratch / "corpus");
  const std::string artifacts = "-artifact_prefix=" + scratch.string() + "/";
  const std::vector<std::string> common = {exe, artifacts, "-timeout=10", "-rss_limit_mb=2048"};
  std::vector<std::string> replay = common;
  replay.insert(replay.end(), {"-runs=0", seeds});
  std::vector<std::string> fuzz = common;
  fuzz.insert(fuzz.end(), {"-max_total_time=2", (scratch / "corpus").string(), seeds});
  struct Step {
    const char* what;
    std::vector<std::string> argv;
  };
  for (const Step& step : {Step{"replay", replay}, Step{"fuzz", fuzz}}) {
    const std::string log = (scratch / (std::string(step.what) + ".log")).string();
    const Spawned s = spawn(step.argv, log);
    run.report.cases += runs_of(s.log);
    if (s.exit_code == 0) continue;
    run.report.result = CheckOutcome::kFail;
    const std::string why = error_line(s.log);
    run.report.detail =
        std::string(step.what) + " failed (" +
        (s.exit_code < 0 ? std::string("killed") : "exit " + std::to_string(s.exit_code)) + ")" +
        (why.empty() ? "" : ": " + why) + "; log and reproducer in " + scratch.string();
    const std::string artifact = artifact_in(scratch);
    if (!artifact.empty()) {
      run.report.repro = exe + " " + artifact;
    } else {
      for (const std::string& a : step.argv) {
        run.report.repro += (run.report.repro.empty() ? "" : " ") + a;
      }
    }
    return run;
  }
  std::error_code ec;
  fs::remove_all(scratch, ec);
  return run;
}

}  // namespace

void add_fuzz_checks(std::vector<GateCheck>& checks, const GateSettings& s) {
  const fs::path build = fs::path(s.source_dir) / "build" / "fuzz" / "fuzz";
  std::vector<GateCheck> found;
  bool any = false;
  for (const char* target : kTargets) {
    GateCheck g;
    g.name = std::string("fuzz.") + target;
    g.backend = "host";
    const std::string exe = (build / target).string();
    if (::access(exe.c_str(), X_OK) == 0) {
      any = true;
      const std::string seeds = (fs::path(s.source_dir) / "corpus" / "fuzz" / target).string();
      g.run = [exe, seeds] { return fuzz_check(exe, seeds); };
    } else {
      g.where = GateCheck::Where::kSkipped;
      g.skip_reason = std::string("not built (cmake --build build/fuzz --target ") + target + ")";
    }
    found.push_back(std::move(g));
  }
  if (any) {
    for (GateCheck& g : found) checks.push_back(std::move(g));
    return;
  }
  GateCheck g;
  g.name = "fuzz.smoke";
  g.backend = "host";
  g.where = GateCheck::Where::kSkipped;
  g.skip_reason = "no fuzz build (cmake --preset fuzz)";
  checks.push_back(std::move(g));
}

}  // namespace mxgate::cli
