// Verbs on accumulator models (docs/accumulators.md): `accumulators` lists the registry,
// `probe-accumulator` measures an implementation's accumulator (for now a simulated model). The
// options, error texts and output are api/accumulator_ops.h, shared with the C API.
#include <cstdio>
#include <string>

#include "api/accumulator_ops.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/verbs.h"

namespace mxgate::cli {
namespace {

void no_positionals(const Args& a) {
  if (!a.positionals().empty()) {
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  }
}

}  // namespace

int cmd_accumulators(const Argv& argv) {
  const Args a(argv, {}, api::accumulators_flags());
  no_positionals(a);
  std::fputs(api::accumulators_text(a).c_str(), stdout);
  return 0;
}

int cmd_probe_accumulator(const Argv& argv) {
  const Args a(argv, api::probe_accumulator_options(), api::probe_accumulator_flags());
  no_positionals(a);
  const api::ProbeAccumulatorSpec spec = api::probe_accumulator_spec(a);
  std::fputs(api::probe_accumulator_text(spec).c_str(), stdout);
  return 0;
}

}  // namespace mxgate::cli
