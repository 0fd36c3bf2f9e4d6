// The property suites: named properties, each a RapidCheck generator of cases and a checker
// that runs one case on a gpu::Backend (with the zoo faults of the context planted) and compares
// it with the reference. run_property drives RapidCheck (seeded, case count, shrinking) and
// returns the shrunk counterexample; check_case replays one case (regression files, `mxgate
// repro`). Coverage counts the input classes the generated cases exercised.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/faults.h"
#include "gpu/backend.h"
#include "properties/case.h"
#include "reference/format.h"
#include "reference/gemm_oracle.h"
#include "reference/verdict.h"

namespace rc {
template <typename T>
class Gen;
}  // namespace rc

namespace mxgate::properties {

// Input classes exercised, by tag ("e8m0:0x00", "k%128=32", "kernel:gemm_blockscale", ...).
class Coverage {
 public:
  void add(const std::string& tag, uint64_t count = 1) { counts_[tag] += count; }
  uint64_t count(const std::string& tag) const;
  const std::map<std::string, uint64_t>& counts() const { return counts_; }
  void merge(const Coverage& other);

 private:
  std::map<std::string, uint64_t> counts_;
};

// The classes a gate run must exercise (`properties.coverage` of the gate, docs/architecture.md
// §2.4); missing() lists those `c` never saw.
std::span<const std::string_view> required_coverage();
std::vector<std::string> missing(const Coverage& c);

struct Context {
  gpu::Backend* be = nullptr;    // the backend under test (host models or a device)
  dispatch::Faults faults;       // zoo faults planted in what runs (none for the gate)
  Coverage* coverage = nullptr;  // tags of generated cases (not of shrink steps); may be null
  uint32_t kernel_faults() const { return dispatch::kernel_fault_bits(faults); }
  void tag(const std::string& t) const {
    if (coverage != nullptr) coverage->add(t);
  }
};

// What a failing case got wrong. `where` locates the first differing element; for GEMM outputs
// `expected` / `actual` hold the whole outputs (reports draw their mismatch map).
struct Failure {
  std::string what;
  std::optional<BitMismatch> where;
  std::optional<GemmOutput> expected;
  std::optional<GemmOutput> actual;
};

struct Property {
  std::string_view name;    // "quantize.bit_exact"
  std::string_view guards;  // one sentence: the failure it guards against
  rc::Gen<Case> (*gen)(const Context&);
  std::optional<Failure> (*check)(const Context&, const Case&);
};

std::span<const Property> all_properties();
const Property* find_property(std::string_view name);

struct RunOptions {
  uint64_t seed = 1;
  int cases = 100;
  int max_size = 100;
  bool shrink = true;
};

struct RunResult {
  bool passed = true;
  int cases = 0;  // cases run: all of them on a pass; successes + 1 on a failure
  std::optional<Case> counterexample;  // the shrunk case
  std::optional<Failure> failure;      // what the shrunk case got wrong
  std::string message;                 // RapidCheck's summary on a failure or give-up
};

// Runs `p` under RapidCheck with the given seed and case count; generated cases tag `ctx`'s
// coverage. Exceptions from a case (a kernel error, a guard hit) are failures of that case.
RunResult run_property(const Property& p, const Context& ctx, const RunOptions& opts);

// One case, no generator: the failure or nullopt. Exceptions thrown by the system under test
// become failures; a malformed case throws CaseError.
std::optional<Failure> check_case(const Property& p, const Context& ctx, const Case& c);

// The RapidCheck case count / seed RC_PARAMS asks for ("max_success=N seed=S"), or `fallback`.
int cases_from_rc_params(int fallback);
uint64_t seed_from_rc_params(uint64_t fallback);

// Failure helpers for the checkers.
std::optional<Failure> compare_outputs(const std::string& what, const GemmOutput& expected,
                                       const GemmOutput& actual);
// Byte-for-byte comparison of stored codes of `format` (E4M3FN codes, E8M0 scale bytes); the
// located element's ulp_distance is in that format's codes (reference/verdict.h).
std::optional<Failure> compare_codes(const std::string& what, Format format, std::size_t rows,
                                     std::size_t cols, std::span<const uint8_t> expected,
                                     std::span<const uint8_t> actual);

}  // namespace mxgate::properties
