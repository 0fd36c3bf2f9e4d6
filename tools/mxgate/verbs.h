// The verbs of the mxgate CLI. Each returns the process exit code:
// 0 success, 1 a check failed, 2 usage or input error (thrown as UsageError), 3 environment
// error (EnvironmentError, backend_select.h: no GPU when one was demanded, a driver failure).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mxgate::cli {

using Argv = std::vector<std::string>;

struct Verb {
  std::string_view name;
  std::string_view synopsis;
  std::string_view help;
  int (*run)(const Argv& args);
};

int cmd_encode(const Argv& args);
int cmd_decode(const Argv& args);
int cmd_conventions(const Argv& args);
int cmd_gate(const Argv& args);
int cmd_shapes(const Argv& args);
int cmd_quantize(const Argv& args);
int cmd_dequantize(const Argv& args);
int cmd_gemm(const Argv& args);
int cmd_check_gemm(const Argv& args);
int cmd_plan(const Argv& args);
int cmd_property(const Argv& args);
int cmd_zoo(const Argv& args);
int cmd_repro(const Argv& args);
int cmd_impls(const Argv& args);
int cmd_sweep_cast(const Argv& args);
int cmd_survey(const Argv& args);
int cmd_accumulators(const Argv& args);
int cmd_probe_accumulator(const Argv& args);
int cmd_fuzz(const Argv& args);
int cmd_replay(const Argv& args);

// A shrunk recorded call (mxgate shrink, docs/record.md §5): `check-gemm: OPTIONS` over .npy
// files beside the case (paths relative to it) and `expect: fail|pass`; `mxgate repro` replays
// it. load_recorded_case: nullopt for a file without a check-gemm line (a regression file).
struct RecordedCase {
  Argv args;
  bool expect_fail = true;
};
std::optional<RecordedCase> load_recorded_case(const std::string& path);
int replay_recorded_case(const std::string& path, const RecordedCase& c);
int cmd_shrink(const Argv& args);

}  // namespace mxgate::cli
