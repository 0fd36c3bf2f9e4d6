// The cast half of `mxgate survey`: a cast op's codes for a set of fp32 inputs (all 2^32, or a
// sample) compared with every claim that defines its target format: each convention of
// reference/convention.h and, for e8m0, each e8m0 rule of reference/e8m0.h ("e8m0:RULE"). The
// expected codes come from the reference's independent oracles as run tables
// (reference/encode_oracle.h build_runs, EncodeOracle, e8m0_oracle), the same truth as the device
// sweep's (gpu/kernels/cast_sweep expected_runs), so one pass over the op's output checks every
// claim: the op is called once per chunk, each distinct table compared with it run by run over
// slices of the chunk on every core.
// docs/python.md §13.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpu/backend.h"
#include "impl/op.h"
#include "reference/encode_oracle.h"
#include "reference/format.h"

namespace mxgate::properties {

// Which inputs a survey casts.
enum class CastInputs {
  kAll,     // every fp32 bit pattern, 2^32
  kSample,  // the patterns whose low 16 bits are 0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001 or
            // 0xFFFF (393,216 inputs: every sign and exponent, the ties of formats with at most
            // 7 significand bits and their neighbours, zeros, Inf, NaN payload edges)
};

// The expected codes of `claim` (a convention name or "e8m0:RULE") for format `f`; nullopt when
// the claim does not define `f`.
std::optional<std::vector<Run>> claim_runs(const std::string& claim, Format f);

// Every claim defining `f`, in registry order (conventions, then e8m0 rules for e8m0).
std::vector<std::string> claims_for(Format f);

struct ClaimResult {
  std::vector<std::string> claims;  // claims with this same expected output (one table)
  uint64_t mismatches = 0;
  std::optional<uint32_t> first_input;  // the smallest differing input
  uint32_t expected = 0, actual = 0;    // its codes
};

struct CastSurvey {
  std::string op;
  impl::Dtype target = impl::Dtype::kNone;
  std::string claimed;  // the op's claim ("" when none)
  uint64_t inputs = 0;
  std::string error;  // the op failed (an error, a decline, guard damage): the sweep stopped
  std::vector<ClaimResult> results;          // one per distinct expected table
  std::vector<std::string> matches() const;  // claims it equals bit for bit
  double seconds = 0;        // the timed sweep alone: every input through the op and compared
  double setup_seconds = 0;  // one-time setup before it: the claims' run tables (cached per
                             // process), the resident inputs (filled once per process), the
                             // op's warm-up call on the sweep's first chunk
  double op_seconds = -1;    // of `seconds`, the time inside the op's calls (the rest is
                             // mxgate's: the comparison, the poison, the inputs); -1 where not
                             // measured (the device sweep times its chunks as one)
};

// The (op, target) pairs of `impl` a survey casts: cast ops of host memory, or of the memory of
// `be`, and each target dtype the op declares that the reference has a format for.
std::vector<std::pair<const impl::Op*, impl::Dtype>> survey_targets(const impl::Implementation& im,
                                                                    const gpu::Backend& be);

// Casts the inputs with `op` on `be` (harness: guarded buffers, poisoned outputs) in chunks and
// compares against every claim of the target. Setup first, timed apart (setup_seconds): the
// claims' run tables (built once per claim and format in a process), then one warm-up call of
// the op on the sweep's first call's inputs (same count, so a compile or jit per shape happens
// there, not inside the timed sweep); then the sweep (seconds). Never throws for the op's failures
// (CastSurvey::error); throws impl::Unsupported for an op that is not a cast. `progress` (may be
// empty) hears the inputs done and the total after every chunk; returning false stops the survey
// there (Ctrl-C): CastSurvey::error then says so, and the counts are of the inputs before the stop.
using SurveyProgress = std::function<bool(uint64_t done, uint64_t total)>;
CastSurvey survey_cast(gpu::Backend& be, const impl::Op& op, impl::Dtype target, CastInputs inputs,
                       uint64_t chunk = uint64_t{1} << 24, const SurveyProgress& progress = {});

// How many inputs `inputs` casts (2^32 or the sample's 393,216).
uint64_t survey_input_count(CastInputs inputs);

// One survey as text lines, the form `mxgate survey` carries from its child and from a Python
// worker (tools/mxgate/survey_cli.cpp parse_casts): "cast\tOP\tTARGET\tCLAIMED|-\tINPUTS\t
// SECONDS\tERROR\tSETUP_SECONDS\tOP_SECONDS" then one "claim\tCLAIMS\tMISMATCHES\tFIRST" line per
// distinct table (the later fields last, so a reader of the older seven fields still reads them).
std::string survey_lines(const CastSurvey& s);

}  // namespace mxgate::properties
