// The gate's self-test stage (selftest.*): faults planted on purpose, each of which the gate's own
// machinery must detect, so that a detector that went blind fails the gate instead of passing
// everything. One check per detector:
//   selftest.example_plugin   the example plugin's planted-fault implementations (example:all)
//                             fail some property (run_property, no shrinking);
//   selftest.numpy_adapters   the same for the numpy adapters with planted faults
//                             (python/mxgate/adapters/numpy_faulty.py, through the worker);
//   selftest.cast_sweep       the cast sweep over one binade finds the example's ties-away cast;
//   selftest.accumulator_probe  the accumulator probe tells a simulated sm90_fp8_mma from the
//                             declared fp32_rn (and names each);
//   selftest.guard_bands      a kernel that writes one element past its output trips the guard
//                             bands; one that skips an element leaves the NaN poison.
// A plant that passes fails its check, naming the plant. Test hook (tests/test_cli_gate.cpp):
// MXGATE_SELFTEST_DISARM=NAME runs the clean counterpart in place of the plant NAME, so the test
// can see a plant that passes fail the gate.
#include <cmath>
#include <cstdlib>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpu/backend.h"
#include "gpu/host/host_backend.h"
#include "impl/plugin.h"
#include "impl/python_worker.h"
#include "impl/registry.h"
#include "impl/tactics.h"
#include "probe/accumulator_probe.h"
#include "properties/cast_sweep.h"
#include "properties/property.h"
#include "reference/accumulator.h"
#include "tools/mxgate/gate_stages.h"

namespace mxgate::cli {
namespace {

using report::CheckOutcome;

constexpr const char* kDisarmEnv = "MXGATE_SELFTEST_DISARM";

bool disarmed(const std::string& plant) {
  const char* d = std::getenv(kDisarmEnv);
  return d != nullptr && plant == d;
}

// The planted-fault implementations' properties over every tactic (a seeded sample past the
// limit, as the zoo runs them: a fault may live in one tactic only): the first that fails names
// the detection. nullopt: every applicable property passed `cases` cases on every tactic run.
std::optional<std::string> first_detection(const impl::Implementation& im, gpu::Backend& be,
                                           uint64_t seed, int cases) {
  properties::RunOptions ro;
  ro.seed = seed;
  ro.cases = cases;
  ro.shrink = false;
  const impl::TacticSelection sel = impl::select_tactics(im, impl::kDefaultTacticLimit, seed);
  for (const uint32_t t : sel.chosen) {
    const impl::Implementation view = impl::tactic_view(im, t);
    const properties::Context ctx{&be, {}, nullptr, &view};
    for (const properties::Property& p : properties::all_properties()) {
      if (!properties::applies(p, view)) continue;
      const properties::RunResult r = properties::run_property(p, ctx, ro);
      if (!r.passed) return std::string(p.name) + view.tactic_label();
    }
  }
  return std::nullopt;
}

// Runs every planted implementation of `specs` (a clean one in `clean_spec` stands in for a
// disarmed plant) and reports each detection; `what` names the set in the detail.
CheckRun planted_impls_check(const std::vector<std::string>& specs, const std::string& clean_spec,
                             const std::string& what, const GateOptions& opts) {
  CheckRun run;
  gpu::HostBackend be;
  std::vector<const impl::Implementation*> planted;
  const impl::Implementation* clean = nullptr;
  try {
    for (const std::string& spec : specs) {
      for (const impl::Implementation* im : impl::resolve(spec)) {
        if (im->planted_fault) planted.push_back(im);
      }
    }
    clean = impl::resolve(clean_spec).at(0);
  } catch (const impl::PluginError& e) {
    if (e.kind() == impl::PluginError::Kind::kEnvironment) {
      // Unsupported here (no interpreter with numpy, no plugin init): visible, never a pass.
      run.report.result = CheckOutcome::kSkip;
      run.report.detail = what + " cannot be loaded here: " + e.what();
      return run;
    }
    return error_run(what + " cannot be loaded: " + e.what());
  }
  if (planted.empty()) return error_run(what + ": no planted-fault implementation found");
  std::vector<std::string> missed;
  for (const impl::Implementation* im : planted) {
    const impl::Implementation& runs = disarmed(im->name) ? *clean : *im;
    const std::optional<std::string> by = first_detection(runs, be, opts.seed, 100);
    ++run.report.cases;
    if (by) {
      run.report.detail +=
          (run.report.detail.empty() ? "" : "\n") + im->name + ": caught by " + *by;
    } else {
      missed.push_back(im->name);
      run.report.detail += (run.report.detail.empty() ? "" : "\n") + im->name +
                           ": PLANTED FAULT PASSED every property (" + im->description + ")";
    }
  }
  if (!missed.empty()) {
    run.report.result = CheckOutcome::kFail;
    run.report.repro = "mxgate zoo --impl " + specs.front();
  }
  return run;
}

CheckRun example_plugin_check(const GateOptions& opts) {
  return planted_impls_check({"example:all"}, "example", "the example plugin", opts);
}

// A shell word: `s` in single quotes.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

CheckRun numpy_adapters_check(const GateOptions& opts) {
  // An interpreter without numpy cannot run them: unsupported here, a visible skip.
  const std::string python = impl::python_interpreter();
  if (std::system((quoted(python) + " -c 'import numpy' >/dev/null 2>&1").c_str()) != 0) {
    CheckRun run;
    run.report.result = CheckOutcome::kSkip;
    run.report.detail = "MXGATE_PYTHON (" + python + ") cannot import numpy";
    return run;
  }
  const std::string m = "py:mxgate.adapters.numpy_faulty:";
  return planted_impls_check(
      {m + "ScaleTransposed", m + "DropTrailingK", m + "ShiftE8m0", m + "ActScalesColMajor",
       m + "E8m0NanAsInf", m + "E8m0NanAsMax", m + "Fp4NibbleSwapped", m + "Nvfp4GlobalTwice"},
      "py:mxgate.adapters.numpy:NumpyAdapter", "the numpy adapters with planted faults", opts);
}

// The sweep over [1, 1.25) holds ties of every target's mantissa: ties away from zero differ there.
CheckRun cast_sweep_check() {
  CheckRun run;
  const std::string plant = "example_faulty_cast_ties_away";
  const impl::Implementation* im = nullptr;
  try {
    im = impl::resolve("example:" + std::string(disarmed(plant) ? "example" : plant)).at(0);
  } catch (const std::exception& e) {
    return error_run(std::string("the example plugin cannot be loaded: ") + e.what());
  }
  gpu::HostBackend be;
  const auto targets = properties::sweep_targets(*im);
  if (targets.empty()) return error_run(plant + " has no host cast op");
  int detected = 0;
  for (const auto& [op, target] : targets) {
    const properties::SweepResult r =
        properties::sweep_cast(be, *op, target, 0x3F800000u, 0x3FA00000u);
    run.report.cases += r.inputs;
    const std::string what = plant + " " + op->name + " -> " + std::string(impl::to_string(target));
    if (r.mismatches == 0) {
      run.report.detail += (run.report.detail.empty() ? "" : "\n") + what + ": all equal";
    } else {
      ++detected;
      run.report.detail += (run.report.detail.empty() ? "" : "\n") + what + ": " +
                           std::to_string(r.mismatches) + " inputs differ; first " + r.describe();
    }
  }
  // One fault: caught when some target's sweep shows it (a target without ties in [1, 1.25), e8m0,
  // cannot).
  if (detected == 0) {
    run.report.result = CheckOutcome::kFail;
    run.report.detail +=
        "\n" + plant + ": PLANTED FAULT PASSED the sweep of [1, 1.25) on every target";
    run.report.repro =
        "mxgate sweep-cast --impl example:" + plant + " --from 0x3f800000 --count 0x200000";
  }
  return run;
}

// The probe must name each simulated model; the plant is sm90_fp8_mma where fp32_rn is declared.
CheckRun accumulator_probe_check() {
  CheckRun run;
  const std::string declared = "fp32_rn", plant = "sm90_fp8_mma";
  const AccumulatorModel* d = find_accumulator(declared);
  const AccumulatorModel* p = find_accumulator(disarmed("accumulator:" + plant) ? declared : plant);
  if (d == nullptr || p == nullptr) return error_run("accumulator registry lacks " + plant);
  ProbeOptions o;
  o.m = o.n = 1;
  const ProbeResult clean = probe_accumulator(simulated_fp8_gemm(*d), o);
  const ProbeResult planted = probe_accumulator(simulated_fp8_gemm(*p), o);
  run.report.cases = static_cast<uint64_t>(clean.calls + planted.calls);
  run.report.detail = "declared " + declared + ": probe says " + clean.model + "\nsimulated " +
                      plant + ": probe says " + planted.model;
  if (clean.model != declared) {
    run.report.result = CheckOutcome::kFail;
    run.report.detail += "\nthe probe misnames the declared model " + declared;
  }
  if (planted.model == declared || planted.model != plant) {
    run.report.result = CheckOutcome::kFail;
    run.report.detail += "\nPLANTED FAULT PASSED: accumulator:" + plant + " simulated, " +
                         "the probe says " + planted.model;
  }
  if (run.report.result == CheckOutcome::kFail) {
    run.report.repro = "mxgate probe-accumulator --simulate " + plant;
  }
  return run;
}

// fault_write_past_end must trip the guard bands; fault_skip_element must leave its NaN poison.
CheckRun guard_bands_check() {
  CheckRun run;
  gpu::HostBackend be;
  constexpr uint64_t kCount = 64;
  std::vector<std::string> missed;
  {
    // Disarmed: the skip-element kernel with nothing skipped writes exactly the buffer.
    const bool off = disarmed("fault_write_past_end");
    gpu::FaultArgs args;
    args.p = {kCount, off ? kCount : 0};
    args.out = be.allocate(kCount * 4, "selftest_victim");
    bool caught = false;
    std::string message;
    try {
      be.run({gpu::kernel(off ? "fault_skip_element" : "fault_write_past_end"), args});
    } catch (const gpu::GpuError& e) {
      message = e.what();
      caught = message.find("past its end") != std::string::npos;
    }
    be.release(args.out);
    ++run.report.cases;
    if (caught) {
      run.report.detail = "fault_write_past_end: " + message;
    } else {
      missed.push_back("fault_write_past_end");
      run.report.detail = "fault_write_past_end: PLANTED FAULT PASSED the guard bands" +
                          (message.empty() ? std::string() : " (" + message + ")");
    }
  }
  {
    const bool off = disarmed("fault_skip_element");
    constexpr uint64_t kSkip = 17;
    gpu::FaultArgs args;
    args.p = {kCount, off ? kCount : kSkip};
    args.out = be.allocate(kCount * 4, "selftest_out");
    be.run({gpu::kernel("fault_skip_element"), args});
    const std::vector<float> got = be.download_as<float>(args.out);
    be.release(args.out);
    ++run.report.cases;
    if (std::isnan(got.at(kSkip))) {
      run.report.detail += "\nfault_skip_element: the poison survives in element 17";
    } else {
      missed.push_back("fault_skip_element");
      run.report.detail += "\nfault_skip_element: PLANTED FAULT PASSED: no poison left";
    }
  }
  if (!missed.empty()) {
    run.report.result = CheckOutcome::kFail;
    run.report.repro = "mxgate gate --only selftest.guard_bands";
  }
  return run;
}

}  // namespace

void add_selftest_checks(std::vector<GateCheck>& checks, const GateSettings& s) {
  const auto add = [&](const char* name, std::function<CheckRun()> run) {
    GateCheck g;
    g.name = std::string("selftest.") + name;
    g.backend = "host";
    g.run = std::move(run);
    checks.push_back(std::move(g));
  };
  add("example_plugin", [opts = s.opts] { return example_plugin_check(opts); });
  add("numpy_adapters", [opts = s.opts] { return numpy_adapters_check(opts); });
  add("cast_sweep", [] { return cast_sweep_check(); });
  add("accumulator_probe", [] { return accumulator_probe_check(); });
  add("guard_bands", [] { return guard_bands_check(); });
}

}  // namespace mxgate::cli
