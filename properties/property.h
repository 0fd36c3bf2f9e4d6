// The property suites: named properties, each a RapidCheck generator of cases and a checker
// that runs one case on an op of the implementation under test (impl/op.h; the built-in
// kernels by default, with the zoo faults of the context planted) and compares it with the
// reference. A property declares the op families it applies to; its generator picks one of the
// implementation's ops of those families and generates only inside that op's contract.
// run_property drives RapidCheck (seeded, case count, shrinking) and returns the shrunk
// counterexample; check_case replays one case (regression files, `mxgate repro`). Coverage
// counts the input classes the generated cases exercised.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/faults.h"
#include "gpu/backend.h"
#include "impl/contract.h"
#include "impl/harness.h"
#include "impl/op.h"
#include "properties/case.h"
#include "reference/format.h"
#include "reference/gemm_oracle.h"
#include "reference/verdict.h"

namespace rc {
template <typename T>
class Gen;
}  // namespace rc

namespace mxgate::properties {

// Input classes exercised, by tag ("e8m0:0x00", "k%128=32", "op:gemm_blockscale", "model:...",
// ...).
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
  dispatch::Faults faults;       // zoo faults planted in the built-in kernels (none for the gate)
  Coverage* coverage = nullptr;  // tags of generated cases (not of shrink steps); may be null
  const impl::Implementation* impl = nullptr;  // under test; nullptr: the built-in one
  const impl::Implementation& implementation() const;
  // What the op calls of this run share (impl/harness.h): the backend and the kernel faults.
  impl::RunContext run() const { return {*be, dispatch::kernel_fault_bits(faults)}; }
  void tag(const std::string& t) const {
    if (coverage != nullptr) coverage->add(t);
  }
};

// What a failing case got wrong. `where` locates the first differing element; for GEMM outputs
// `expected` / `actual` hold the whole outputs (reports draw their mismatch map). `kind`: wrong
// numbers, a contract mismatch (the op declined a case inside its contract) or an error (the op
// returned one, threw, damaged a guard band).
struct Failure {
  enum class Kind { kWrong, kContractMismatch, kError };
  std::string what;
  std::optional<BitMismatch> where;
  std::optional<GemmOutput> expected;
  std::optional<GemmOutput> actual;
  Kind kind = Kind::kWrong;
};
std::string_view to_string(Failure::Kind k);  // "fail", "contract_mismatch", "error"

using Ops = std::vector<const impl::Op*>;

struct Property {
  std::string_view name;    // "quantize.bit_exact"
  std::string_view guards;  // one sentence: the failure it guards against
  // The op families it applies to; 0: not a property of ops (reference self-checks, the
  // dispatch framework), which runs on the built-in implementation only.
  impl::FamilyMask families;
  // Whether it can check `op` (a layout or dtype it needs); nullptr: every op of the families.
  bool (*accepts)(const impl::Op& op);
  // A generator over `ops` (the implementation's available ops it accepts, never empty for a
  // property of ops).
  rc::Gen<Case> (*gen)(const Context&, const Ops& ops);
  std::optional<Failure> (*check)(const Context&, const Case&);
  // The most cases one run needs (0: as many as asked): a property of one large fixed shape
  // (dequantize.large_offsets) runs it once.
  int max_cases = 0;
  // What `op` lacks when accepts refuses it, as a clause ("fp32 block scales"), for the run's
  // list of ops not checked; nullptr (or ""): the generic reason.
  std::string (*declines)(const impl::Op& op) = nullptr;
};

std::span<const Property> all_properties();
const Property* find_property(std::string_view name);

// Whether `p` applies to `impl` at all (an op of its families, or it is the built-in one for a
// property of no family).
bool applies(const Property& p, const impl::Implementation& impl);
// The ops of the context's implementation `p` can check on the context's backend, in the
// implementation's order; `why_not` (optional) receives why each op of its families was left
// out ("... needs cuda memory ...", "... not available on backend hip").
Ops candidate_ops(const Property& p, const Context& ctx,
                  std::vector<std::string>* why_not = nullptr);
// The op a case names (field `op`); throws impl::Unsupported when the implementation has none
// of that name, CaseError when the field is missing.
const impl::Op& case_op(const Context& ctx, const Case& c);

struct RunOptions {
  uint64_t seed = 1;
  int cases = 100;
  int max_size = 100;
  bool shrink = true;
  // Asked before each case with the cases done so far (may be empty); false stops the run there
  // (RunResult::stopped), e.g. on Ctrl-C: the cases before are the result.
  std::function<bool(int cases_done)> keep_going;
};

struct RunResult {
  bool passed = true;
  int cases = 0;  // cases run: all of them on a pass; successes + 1 on a failure
  std::optional<Case> counterexample;  // the shrunk case
  std::optional<Failure> failure;      // what the shrunk case got wrong
  std::string message;                 // RapidCheck's summary on a failure or give-up
  // Cases the implementation could not take (impl::Unsupported): never failures, always
  // reported. A property with no op to check reports that one reason and runs no case.
  int unsupported = 0;
  std::vector<std::string> unsupported_reasons;  // distinct, at most 8
  std::vector<std::string> ops;                  // the ops it picked from
  // The ops of its families it could not take while it checked others, each with why ("impl/op:
  // ..."): never silently dropped (a run with no op to check reports them as unsupported).
  std::vector<std::string> ops_not_checked;
  bool stopped = false;  // keep_going stopped it: a partial run (or a shrink cut short)
};

// Runs `p` under RapidCheck with the given seed and case count; generated cases tag `ctx`'s
// coverage. Exceptions from a case (a kernel error, a guard hit) are failures of that case.
RunResult run_property(const Property& p, const Context& ctx, const RunOptions& opts);

// One case, no generator: the failure or nullopt. Exceptions thrown by the system under test
// become failures (impl::InvocationError keeps its kind); a malformed case throws CaseError; a
// case the implementation cannot take throws impl::Unsupported.
std::optional<Failure> check_case(const Property& p, const Context& ctx, const Case& c);

// The RapidCheck case count / seed RC_PARAMS asks for ("max_success=N seed=S"), or `fallback`.
int cases_from_rc_params(int fallback);
uint64_t seed_from_rc_params(uint64_t fallback);

// Failure helpers for the checkers.
std::optional<Failure> compare_outputs(const std::string& what, const GemmOutput& expected,
                                       const GemmOutput& actual);
// "WHAT: N bytes, expected M" when two code buffers differ in size.
std::optional<Failure> size_failure(const std::string& what, std::size_t expected,
                                    std::size_t actual);
// Byte-for-byte comparison of stored codes of `format` (E4M3FN codes, E8M0 scale bytes); the
// located element's ulp_distance is in that format's codes (reference/verdict.h).
std::optional<Failure> compare_codes(const std::string& what, Format format, std::size_t rows,
                                     std::size_t cols, std::span<const uint8_t> expected,
                                     std::span<const uint8_t> actual);

}  // namespace mxgate::properties
