// The gate's self-test stage (gate_selftest.h): the checks of the plugin call path and the Python
// adapters, and the stage's list. Each runs a faithful twin beside its plants:
//   selftest.example_plugin  the correct `example` passes gemm.exact at a residue shape (M != N,
//                            K % 128 != 0) and every applicable property; each planted-fault
//                            implementation of the example plugin fails some property;
//   selftest.plugin_tactics  example_tactics passes on each of its three tactics, and
//                            example_faulty_tactic fails in tactic 2 alone, at the located element;
//   selftest.numpy_adapters  the numpy reference adapter passes where the faulty ones fail, with
//                            an interpreter that can import numpy (found, and named).
#include "tools/mxgate/gate_selftest.h"

#include <cstdlib>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpu/host/host_backend.h"
#include "impl/plugin.h"
#include "impl/python_worker.h"
#include "impl/registry.h"
#include "impl/tactics.h"
#include "properties/case.h"
#include "properties/property.h"

namespace mxgate::cli {
namespace selftest {

using report::CheckOutcome;

void say(CheckRun& run, const std::string& line) {
  run.report.detail += (run.report.detail.empty() ? "" : "\n") + line;
}

bool expect_answer(CheckRun& run, const std::string& what, const std::string& expected,
                   const std::string& got) {
  ++run.report.cases;
  if (got == expected) {
    say(run, what + ": " + got);
    return true;
  }
  run.report.result = CheckOutcome::kFail;
  say(run, what + ": WRONG ANSWER: expected \"" + expected + "\", got \"" + got + "\"");
  return false;
}

std::string case_answer(const std::string& property, const impl::Implementation& im,
                        gpu::Backend& be, const std::string& case_text) {
  const properties::Property* p = properties::find_property(property);
  if (p == nullptr) return "fail: no property " + property;
  try {
    const properties::Case c = properties::Case::parse(property, case_text);
    const std::optional<properties::Failure> f =
        properties::check_case(*p, properties::Context{&be, {}, nullptr, &im}, c);
    if (!f) return "pass";
    if (f->where) {
      return "fail at (" + std::to_string(f->where->row) + ", " + std::to_string(f->where->col) +
             ")";
    }
    return "fail: " + f->what;
  } catch (const impl::Unsupported& e) {
    return std::string("unsupported: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("fail: ") + e.what();
  }
}

namespace {

// The residue shape every GEMM twin and plant runs at: M != N, M odd (a partial 4-row tile, an
// odd last row), K = 160 = 5 MX blocks of 32 = one 128-block and a partial one of 32.
constexpr const char* kResidueGemmMx = "op=gemm_mx m=5 n=3 k=160 layout=row_major out=fp32 seed=1";

// The implementation's properties over every tactic (a seeded sample past the limit, as the zoo
// runs them): the first that fails names the detection; nullopt: every applicable property
// passed `cases` cases on every tactic run. `unsupported` (optional) receives the properties
// whose cases were all unsupported (a visible non-result, never a pass).
std::optional<std::string> first_detection(const impl::Implementation& im, gpu::Backend& be,
                                           uint64_t seed, int cases,
                                           std::vector<std::string>* unsupported = nullptr) {
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
      if (!r.passed) {
        return std::string(p.name) + view.tactic_label() +
               (r.failure ? ": " + r.failure->what.substr(0, 160) : std::string());
      }
      if (unsupported != nullptr && r.cases == 0 && r.unsupported > 0) {
        unsupported->push_back(std::string(p.name) + view.tactic_label());
      }
    }
  }
  return std::nullopt;
}

// The faithful twin `clean`: gemm.exact at the residue shape passes (`gemm_op` names its
// gemm_mx), and so does every applicable property over `cases` cases. Fails the check otherwise.
void twin_passes(CheckRun& run, const impl::Implementation& clean, const std::string& gemm_op,
                 gpu::Backend& be, const GateOptions& opts, int cases) {
  std::string text = kResidueGemmMx;
  text.replace(text.find("gemm_mx"), 7, gemm_op);
  // Expected: "pass" (the twin is correct; any located element names the broken call path).
  expect_answer(run, clean.name + " (faithful twin) gemm.exact " + text, "pass",
                case_answer("gemm.exact", clean, be, text));
  std::vector<std::string> unsupported;
  const std::optional<std::string> by = first_detection(clean, be, opts.seed, cases, &unsupported);
  ++run.report.cases;
  if (by) {
    run.report.result = CheckOutcome::kFail;
    say(run, clean.name + " (faithful twin): FAILED " + *by);
  } else {
    say(run,
        clean.name + " (faithful twin): every property passes " + std::to_string(cases) + " cases");
  }
  // Properties none of whose cases it can take here (a device-only case, an op it lacks): listed,
  // never counted as passes.
  if (!unsupported.empty()) {
    std::string list;
    for (const std::string& u : unsupported) list += (list.empty() ? "" : ", ") + u;
    say(run, clean.name + " (faithful twin): every case unsupported, not a pass: " + list);
  }
}

// Runs every planted implementation of `specs` beside the faithful twin `clean_spec`: the twin
// passes, each plant is caught. `what` names the set in the detail.
CheckRun planted_impls_check(const std::vector<std::string>& specs, const std::string& clean_spec,
                             const std::string& gemm_op, const std::string& what,
                             const GateOptions& opts, int twin_cases) {
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
      // Unsupported here (no plugin init): visible, never a pass.
      run.report.result = CheckOutcome::kSkip;
      run.report.detail = what + " cannot be loaded here: " + e.what();
      return run;
    }
    return error_run(what + " cannot be loaded: " + e.what());
  }
  if (planted.empty()) return error_run(what + ": no planted-fault implementation found");
  twin_passes(run, *clean, gemm_op, be, opts, twin_cases);
  std::vector<std::string> missed;
  for (const impl::Implementation* im : planted) {
    const std::optional<std::string> by = first_detection(*im, be, opts.seed, 100);
    ++run.report.cases;
    if (by) {
      say(run, im->name + ": caught by " + *by);
    } else {
      missed.push_back(im->name);
      say(run, im->name + ": PLANTED FAULT PASSED every property (" + im->description + ")");
    }
  }
  if (!missed.empty()) run.report.result = CheckOutcome::kFail;
  if (run.report.result == CheckOutcome::kFail) {
    run.report.repro =
        "mxgate zoo --impl " + specs.front() + "; mxgate property all --impl " + clean_spec;
  }
  return run;
}

}  // namespace

CheckRun example_plugin_check(const GateOptions& opts) {
  return planted_impls_check({"example:all"}, "example", "gemm_mx", "the example plugin", opts, 20);
}

// The example plugin's tactics (plugins/example/example.c): rows, cols and tile4x4 compute one
// result in three visiting orders; example_faulty_tactic's tile4x4 walks whole 4-row tiles of M
// only. At M = 5 = one whole tile + a partial one of row 4, tactic 2 never writes row 4: it keeps
// the NaN poison, and the first differing element in row-major order is (4, 0).
CheckRun plugin_tactics_check() {
  CheckRun run;
  gpu::HostBackend be;
  const struct {
    const char* impl;
    const char* expected;
  } kRows[] = {
      {"example_tactics", "tactic 0 pass; tactic 1 pass; tactic 2 pass"},
      {"example_faulty_tactic", "tactic 0 pass; tactic 1 pass; tactic 2 fail at (4, 0)"},
  };
  for (const auto& row : kRows) {
    const impl::Implementation* im = nullptr;
    try {
      im = impl::resolve(std::string("example:") + row.impl).at(0);
    } catch (const std::exception& e) {
      return error_run(std::string("the example plugin cannot be loaded: ") + e.what());
    }
    std::string got;
    for (uint32_t t = 0; t < im->tactic_count(); ++t) {
      const impl::Implementation view = impl::tactic_view(*im, t);
      got += (got.empty() ? "" : "; ") + std::string("tactic ") + std::to_string(t) + " " +
             case_answer("gemm.exact", view, be, kResidueGemmMx);
    }
    expect_answer(run, std::string(row.impl) + " gemm.exact " + kResidueGemmMx, row.expected, got);
  }
  if (run.report.result == CheckOutcome::kFail) {
    run.report.repro = "mxgate property gemm.exact --impl example:example_faulty_tactic --tactic 2";
  }
  return run;
}

// The interpreter: MXGATE_PYTHON if set; else the first of `python3` (PATH) and /usr/bin/python3
// that can import numpy (the README installs numpy for /usr/bin/python3, and the first python3 on
// PATH of a fresh machine may lack it). The worker (impl/python_worker.h) is told which.
CheckRun numpy_adapters_check(const GateOptions& opts) {
  const impl::PythonChoice py = impl::discover_python();
  const std::string& chosen = py.interpreter;
  const std::string& refused = py.refused;
  const bool from_env = py.from_env;
  if (chosen.empty()) {
    CheckRun run;
    run.report.result = CheckOutcome::kSkip;
    run.report.detail =
        from_env ? "MXGATE_PYTHON (" + refused + ") cannot import numpy"
                 : "no interpreter can import numpy (tried " + refused + "; set MXGATE_PYTHON)";
    return run;
  }
  ::setenv("MXGATE_PYTHON", chosen.c_str(), 1);  // this check's own process (a watchdog child)
  const std::string m = "py:mxgate.adapters.numpy_faulty:";
  CheckRun run = planted_impls_check(
      {m + "ScaleTransposed", m + "DropTrailingK", m + "ShiftE8m0", m + "ActScalesColMajor",
       m + "E8m0NanAsInf", m + "E8m0NanAsMax", m + "Fp4NibbleSwapped", m + "Nvfp4GlobalTwice"},
      "py:mxgate.adapters.numpy:NumpyAdapter", "gemm_mx", "the numpy adapters", opts, 10);
  const std::string which = "interpreter: " + chosen +
                            (from_env          ? " (MXGATE_PYTHON)"
                             : refused.empty() ? ""
                                               : " (" + refused + " lacks numpy)");
  run.report.detail = which + (run.report.detail.empty() ? "" : "\n" + run.report.detail);
  return run;
}

}  // namespace selftest

void add_selftest_checks(std::vector<GateCheck>& checks, const GateSettings& s) {
  const auto add = [&](const char* name, std::function<CheckRun()> run) {
    GateCheck g;
    g.name = std::string("selftest.") + name;
    g.backend = "host";
    g.run = std::move(run);
    checks.push_back(std::move(g));
  };
  add("example_plugin", [opts = s.opts] { return selftest::example_plugin_check(opts); });
  add("plugin_tactics", [] { return selftest::plugin_tactics_check(); });
  add("numpy_adapters", [opts = s.opts] { return selftest::numpy_adapters_check(opts); });
  add("cast_sweep", [] { return selftest::cast_sweep_check(); });
  add("accumulators", [opts = s.opts] { return selftest::accumulators_check(opts); });
  add("guard_bands", [] { return selftest::guard_bands_check(); });
}

}  // namespace mxgate::cli
