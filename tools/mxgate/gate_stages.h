// The stages of `mxgate gate`, in the order they run: format checks and reference self-checks
// (host), property suites per backend, the coverage of those suites, regression replay per
// backend, the decision-model tables, and the fuzz targets. Each stage adds GateChecks; gate.cpp
// runs them (most in a watchdog child), prints them and writes the reports. A stage that cannot
// run adds an error check; only --skip STAGE (gate_stage_names()) turns a stage into skips.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "impl/contract.h"
#include "properties/property.h"
#include "tools/mxgate/checks.h"
#include "tools/mxgate/gate_protocol.h"

namespace mxgate::cli {

// An implementation under test other than builtin, as the gate's probe child found it: the
// canonical --impl spec its checks load it by, its name and its op families; or the load error.
struct GateImpl {
  std::string spec;  // what --impl said (load errors) or the canonical spec
  std::string name;
  impl::FamilyMask families = 0;
  std::string error;  // "": loaded
  bool environment_error = false;
};

struct GateSettings {
  GateOptions opts;          // seed; --cases of the existing randomized checks (0: their default)
  int property_cases = 100;  // --cases of the property suites
  std::vector<std::string> backends;  // resolved: "host", "hip", "cuda"
  std::vector<GateImpl> impls;        // --impl: plugin implementations, besides builtin
  bool exhaustive = false;            // --exhaustive: the 2^32 sweeps of host cast ops
  std::string heatmap_dir;            // where failing GEMM checks draw their map; "": nowhere
  std::string source_dir;             // MXGATE_SOURCE_DIR
  std::set<std::string> skip;         // --skip: stages reported as skipped
  double fuzz_seconds = 8;            // --fuzz-seconds: the random run of each fuzz target
};

// The stages --skip names: formats, reference, selftest, properties, coverage, regressions,
// decisions, fuzz.
std::span<const std::string_view> gate_stage_names();
// The stage of a check, from its name ("fuzz.fuzz_npy" -> "fuzz", "property.X[impl]" ->
// "properties", "impl.load[...]" -> "properties").
std::string_view gate_stage_of(const std::string& check_name);

struct GateCheck {
  std::string impl;  // the implementation a property / regression check runs on; "" otherwise
  enum class Where {
    kChild,    // `run` in a watchdog child, which creates its own backend
    kParent,   // `run` in the gate itself (it must never touch a device)
    kSkipped,  // not run: `skip_reason`
  };
  std::string name;
  std::string backend;
  Where where = Where::kChild;
  std::function<CheckRun()> run;
  std::string skip_reason;
};

// Coverage of the property checks of one run, merged by the gate as their results come back.
struct CoverageTally {
  properties::Coverage coverage;
  std::size_t expected = 0;   // property checks the full run has (properties x backends)
  std::size_t completed = 0;  // those that came back with their tags
  uint64_t cases = 0;         // their cases
};

void add_host_checks(std::vector<GateCheck>& checks, const GateSettings& s);
// The built-in implementation's property checks (property.NAME) on every backend.
void add_property_checks(std::vector<GateCheck>& checks, const GateSettings& s);
// Per --impl implementation: its load error (impl.load[SPEC], an error check), or a check per
// applicable property and backend (property.NAME[IMPL]); each child loads the plugin itself.
// With --exhaustive, also cast.exhaustive[IMPL] for an implementation with cast ops.
void add_impl_checks(std::vector<GateCheck>& checks, const GateSettings& s);
// properties.coverage: fails when a required input class was never generated; always lists the
// tag distribution. Reads `tally` when it runs, after the property checks.
void add_coverage_check(std::vector<GateCheck>& checks, const GateSettings& s,
                        const CoverageTally& tally);
void add_regression_checks(std::vector<GateCheck>& checks, const GateSettings& s);
// decisions.tables: the decision model's tables of named cases (model/decision_tables.h)
// replayed against the model and against dispatch/ (properties/model_tables_on_dispatch.h).
void add_decision_checks(std::vector<GateCheck>& checks, const GateSettings& s);
// gate_selftest.cpp: selftest.* (gate_selftest.h: each detector proven both ways, a faithful twin
// beside each plant, every answer compared whole): example_plugin, plugin_tactics,
// numpy_adapters, cast_sweep, accumulators, guard_bands.
void add_selftest_checks(std::vector<GateCheck>& checks, const GateSettings& s);
// gate_fuzz.cpp: replay + a time-boxed mutation run per fuzz target linked into the CLI.
void add_fuzz_checks(std::vector<GateCheck>& checks, const GateSettings& s);

// gate.cpp, also used by `mxgate survey` (survey_cli.cpp): one --impl SPEC loaded in a probe
// child (one GateImpl per implementation, or one carrying the load error), and one check run in
// a watchdog child (a crash, hang or exit is an error result naming the last kernel).
class Watchdog;
std::vector<GateImpl> resolve_impl(const std::string& spec, Watchdog& watchdog, double timeout);
CheckRun run_in_child(const GateCheck& c, Watchdog& watchdog, double timeout);
// gate_stages.cpp: a property check of `impl_spec` ("" builtin) on `backend`.
CheckRun property_check(const properties::Property& p, const std::string& backend,
                        const GateSettings& s, const std::string& heatmap_prefix,
                        const std::string& impl_spec);

// A check that could not produce a result (an exception in the child, an environment error).
CheckRun error_run(const std::string& detail);

}  // namespace mxgate::cli
