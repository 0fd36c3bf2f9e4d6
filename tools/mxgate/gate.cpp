// `mxgate gate`: runs every registered check, a progress line each, then a summary table.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dispatch/faults.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/checks.h"
#include "tools/mxgate/verbs.h"

namespace mxgate::cli {

int cmd_gate(const Argv& argv) {
  const Args a(argv, {"only", "seed", "cases"});
  if (!a.positionals().empty()) {
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  }
  // The gate certifies the system without planted bugs: faults are for `mxgate zoo` and tests.
  if (const char* f = std::getenv(dispatch::kFaultsEnv); f != nullptr && *f != '\0') {
    throw UsageError(std::string("refusing to run with faults on (") + dispatch::kFaultsEnv + "=" +
                     f + "); unset it: faults are for tests and the zoo");
  }
  GateOptions opts;
  opts.seed = static_cast<uint64_t>(a.integer("seed", 1, 0, (1LL << 62)));
  opts.cases = static_cast<uint64_t>(a.integer("cases", 0, 0, (1LL << 40)));
  const std::string only = a.get("only").value_or("");

  std::vector<Check> checks;
  add_format_checks(checks);
  add_reference_checks(checks);
  std::vector<const Check*> selected;
  for (const Check& c : checks) {
    if (only.empty() || c.name.find(only) != std::string::npos) selected.push_back(&c);
  }
  if (selected.empty()) throw UsageError("--only '" + only + "' matches no check");

  struct Row {
    const Check* check;
    CheckResult result;
    double seconds;
  };
  std::vector<Row> rows;
  std::printf("mxgate gate: %zu checks, seed %llu\n", selected.size(),
              static_cast<unsigned long long>(opts.seed));
  std::fflush(stdout);
  size_t i = 0;
  for (const Check* c : selected) {
    ++i;
    std::printf("[%zu/%zu] %s (%s) ... ", i, selected.size(), c->name.c_str(), c->backend.c_str());
    std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    CheckResult r;
    try {
      r = c->run(opts);
    } catch (const std::exception& e) {
      r.passed = false;
      r.detail = std::string("check threw: ") + e.what();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s (%llu cases, %.2f s)\n", r.passed ? "pass" : "FAIL",
                static_cast<unsigned long long>(r.cases), s);
    if (!r.passed) {
      std::printf("    %s\n", r.detail.c_str());
      if (!r.repro.empty()) std::printf("    reproduce: %s\n", r.repro.c_str());
    }
    std::fflush(stdout);
    rows.push_back({c, r, s});
  }
  size_t failed = 0;
  std::printf("\n%-36s %-8s %12s %-7s %9s\n", "check", "backend", "cases", "result", "time");
  for (const Row& r : rows) {
    failed += r.result.passed ? 0 : 1;
    std::printf("%-36s %-8s %12llu %-7s %8.2fs\n", r.check->name.c_str(), r.check->backend.c_str(),
                static_cast<unsigned long long>(r.result.cases), r.result.passed ? "pass" : "FAIL",
                r.seconds);
  }
  std::printf("\n%zu passed, %zu failed\n", rows.size() - failed, failed);
  return failed ? 1 : 0;
}

}  // namespace mxgate::cli
