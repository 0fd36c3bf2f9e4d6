// The accumulator verbs (docs/accumulators.md) with the CLI's option checks and error texts:
// `accumulators` lists the registry of reference/accumulator.h, `probe-accumulator` measures a
// simulated model, and every --accumulator / --simulate spec (check-gemm's included) is parsed
// here. tools/mxgate/accumulator_cli.cpp prints the text; capi/ returns the listing.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "probe/accumulator_probe.h"
#include "reference/accumulator.h"
#include "verbs/args.h"

namespace mxgate::verbs {

// NAME or NAME:param=value,... (parse_accumulator_spec); a bad spec is a UsageError
// "--OPTION: " + the reference's message (unknown model with the names, unknown parameter with
// the model's, a value out of range).
AccumulatorModel accumulator_spec(const std::string& option, const std::string& spec);

// ---- accumulators [--json] ----------------------------------------------------------------------

const std::set<std::string>& accumulators_flags();  // json
// Text: per model its name and kind, description, one line per parameter (name, value, meaning)
// and its sources. JSON: [{"name", "kind", "parameters": {NAME: "VALUE", ...}, "description",
// "source"}], the values as strings as in the text.
std::string accumulators_text(const Args& a);

// ---- probe-accumulator --------------------------------------------------------------------------

// simulate impl backend scaling m n k format (--impl and --backend are the CLI's: it resolves
// the implementation, verbs/ knows none).
const std::set<std::string>& probe_accumulator_options();
const std::set<std::string>& probe_accumulator_flags();  // json

struct ProbeAccumulatorSpec {
  // Exactly one of: --simulate (the implementation is this model's simulation), --impl SPEC[:OP]
  // (an implementation's GEMM op, run by the caller).
  std::optional<AccumulatorModel> model;
  std::string impl;
  ProbeOptions options;
  std::string scaling;  // as given: per-tensor | block
  bool json = false;
};
ProbeAccumulatorSpec probe_accumulator_spec(const Args& a);
// Runs the probe on `gemm` (the simulation of spec.model when null; `implementation` names the
// implementation's op, "SPEC:OP", in the output); what the CLI prints. A model or implementation
// the probe cannot run on is a UsageError.
std::string probe_accumulator_text(const ProbeAccumulatorSpec& spec, const Fp8Gemm* gemm = nullptr,
                                   const std::string& implementation = "");

}  // namespace mxgate::verbs
