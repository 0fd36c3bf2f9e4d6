// Regression files (corpus/regressions/*.case): one shrunk counterexample each, replayable
// without its generator. Text, one "key: value" per line, '#' comments:
//
//   # why this case exists (free text)
//   property: gemm.exact
//   impl: builtin                  (the implementation it ran on: an --impl SPEC; default
//                                   builtin)
//   seed: 7                        (the run that found it; informational)
//   tactic: 2                      (optional: the tactic it ran, docs/plugins.md §3.6)
//   case: op=gemm_blockscale m=1 n=1 k=160 layout=row_major out=fp32 seed=0
//   detects: z9_drop_trailing_k_block   (optional: with this fault on the case must fail; the
//                                        zoo's faults live in the built-in kernels)
//
// Replay: the case must pass with no fault on, and fail with each `detects` fault on. ctest
// label `regression` replays every file; `mxgate repro FILE` replays one. A case the
// implementation cannot take (impl::Unsupported) is reported as unsupported, not as a pass.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/faults.h"
#include "gpu/backend.h"
#include "properties/case.h"
#include "properties/property.h"

namespace mxgate::properties {

class RegressionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct Regression {
  std::string comment;  // the '#' lines, joined
  std::string impl = "builtin";
  uint64_t seed = 0;
  std::optional<uint32_t> tactic;  // the implementation's tactic view it replays on
  Case c;
  std::vector<dispatch::Fault> detects;
};

// Strict parse: unknown keys, a missing property or case, an unknown property or fault, a
// malformed case are RegressionErrors naming `source` and the line.
Regression parse_regression(std::string_view text, std::string_view source);
Regression load_regression(const std::string& path);
std::string format_regression(const Regression& r);
// Writes atomically (temporary file + rename); throws RegressionError naming the path.
void save_regression(const Regression& r, const std::string& path);

struct ReplayOutcome {
  bool ok = true;                          // clean pass and every `detects` fault caught
  std::optional<Failure> clean;            // failure with no fault on (a regression)
  std::optional<std::string> unsupported;  // the implementation could not take the case
  std::vector<std::pair<dispatch::Fault, bool>> detected;  // per `detects` fault
  std::string summary;                                     // one line per check
};
// Replays on `impl` (nullptr: the implementation the file records, resolved by impl/registry.h;
// throws impl::PluginError when that fails).
ReplayOutcome replay(const Regression& r, gpu::Backend& be,
                     const impl::Implementation* impl = nullptr);

// corpus/regressions of this source tree, and the *.case files in a folder, sorted.
std::string default_regression_dir();
std::vector<std::string> list_regressions(const std::string& dir);

}  // namespace mxgate::properties
