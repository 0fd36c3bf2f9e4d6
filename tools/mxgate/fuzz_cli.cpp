// `mxgate fuzz TARGET [PATH...]`: one fuzz target of fuzz/ linked into the CLI, on its seeds (or
// the files / folders given: a reproducer the gate saved), then a time-boxed mutation run.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tools/mxgate/args.h"
#include "tools/mxgate/backend_select.h"
#include "tools/mxgate/fuzz_runner.h"
#include "tools/mxgate/verbs.h"

namespace mxgate::cli {

int cmd_fuzz(const Argv& argv) {
  const Args a(argv, {"seconds", "seed"}, {});
  if (a.positionals().empty()) throw UsageError("name a fuzz target (fuzz_dispatch, ...)");
  const std::string& name = a.positionals()[0];
  const FuzzTarget* t = find_fuzz_target(name);
  if (t == nullptr) {
    std::string list;
    for (const FuzzTarget& f : fuzz_targets())
      list += (list.empty() ? "" : ", ") + std::string(f.name);
    throw UsageError("unknown fuzz target '" + name + "' (targets: " + list + ")");
  }
  if (t->one_input == nullptr) {
    throw EnvironmentError(name +
                           " is not linked into this build (clang's FuzzedDataProvider.h "
                           "was not found; scripts/bootstrap installs clang-14)");
  }
  std::vector<std::string> paths(a.positionals().begin() + 1, a.positionals().end());
  const bool given = !paths.empty();
  if (!given)
    paths.push_back((std::filesystem::path(MXGATE_SOURCE_DIR) / "corpus" / "fuzz" / name).string());
  // A given reproducer replays only; the seeds are fuzzed for 10 s unless --seconds says otherwise.
  const double seconds = static_cast<double>(a.integer("seconds", given ? 0 : 10, 0, 86400));
  const uint64_t seed = static_cast<uint64_t>(a.integer("seed", 1, 0, (1LL << 62)));
  const std::string scratch =
      (std::filesystem::temp_directory_path() / ("mxgate_fuzz_" + name)).string();
  const FuzzResult r = run_fuzz_target(*t, paths, seconds, seed, scratch);
  if (r.error) throw UsageError(r.detail);
  std::printf("%s: %llu inputs replayed, %llu mutated inputs (seed %llu, %g s)\n", name.c_str(),
              static_cast<unsigned long long>(r.replayed),
              static_cast<unsigned long long>(r.fuzzed), static_cast<unsigned long long>(seed),
              seconds);
  if (r.ok) return 0;
  std::printf("FAIL: %s\nreproduce: mxgate fuzz %s %s\n", r.detail.c_str(), name.c_str(),
              r.artifact.c_str());
  return 1;
}

}  // namespace mxgate::cli
