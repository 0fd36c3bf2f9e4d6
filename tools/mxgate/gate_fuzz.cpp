// The gate's fuzz stage: for each fuzz target of fuzz/ (linked into this CLI: fuzz_runner.h), one
// check fuzz.TARGET that replays its seeds (corpus/fuzz/TARGET, read-only) and then mutates them
// for --fuzz-seconds from the gate's seed. A target that cannot run (not linked, no corpus) is an
// error check, never a skip: only `--skip fuzz` skips the stage. A failure names the input that
// failed (saved under a scratch folder) and the command that replays it.
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "tools/mxgate/fuzz_runner.h"
#include "tools/mxgate/gate_stages.h"

namespace mxgate::cli {
namespace {

namespace fs = std::filesystem;
using report::CheckOutcome;

CheckRun fuzz_check(const FuzzTarget& t, const std::string& seeds, double seconds, uint64_t seed) {
  CheckRun run;
  std::error_code ec;
  if (!fs::is_directory(seeds, ec)) return error_run("no seed corpus: " + seeds);
  std::string pattern = (fs::temp_directory_path() / "mxgate_fuzz_XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return error_run("cannot create a scratch folder");
  const FuzzResult r = run_fuzz_target(t, {seeds}, seconds, seed, pattern);
  run.report.cases = r.replayed + r.fuzzed;
  if (r.ok) {
    run.report.detail = std::to_string(r.replayed) + " seeds replayed, " +
                        std::to_string(r.fuzzed) + " mutated inputs";
    fs::remove_all(pattern, ec);
    return run;
  }
  run.report.result = r.error ? CheckOutcome::kError : CheckOutcome::kFail;
  run.report.detail = r.detail;
  if (!r.artifact.empty())
    run.report.repro = "mxgate fuzz " + std::string(t.name) + " " + r.artifact;
  return run;
}

}  // namespace

void add_fuzz_checks(std::vector<GateCheck>& checks, const GateSettings& s) {
  for (const FuzzTarget& t : fuzz_targets()) {
    GateCheck g;
    g.name = "fuzz." + std::string(t.name);
    g.backend = "host";
    const std::string seeds = (fs::path(s.source_dir) / "corpus" / "fuzz" / t.name).string();
    g.run = [&t, seeds, seconds = s.fuzz_seconds, seed = s.opts.seed] {
      return fuzz_check(t, seeds, seconds, seed);
    };
    checks.push_back(std::move(g));
  }
}

}  // namespace mxgate::cli
