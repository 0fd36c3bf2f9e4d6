// Checks that `mxgate gate` runs. Each check is self-contained and reports how many cases it
// ran; on failure its detail names the first bad case and `repro` is one command that shows it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mxgate::cli {

struct GateOptions {
  uint64_t seed = 1;
  uint64_t cases = 0;  // 0: each check's default
};

struct CheckResult {
  bool passed = true;
  uint64_t cases = 0;
  std::string detail;  // first failure, or a one-line summary
  std::string repro;   // command that reproduces the failure
};

struct Check {
  std::string name;     // dotted: "formats.measured_bytes"
  std::string backend;  // "host" for reference self-checks
  std::function<CheckResult(const GateOptions&)> run;
};

void add_format_checks(std::vector<Check>& checks);
void add_reference_checks(std::vector<Check>& checks);

}  // namespace mxgate::cli
