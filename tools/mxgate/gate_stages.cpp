// The gate's stages except the fuzz smoke (gate_fuzz.cpp). The `run` functions of child checks
// execute in a forked watchdog child: each creates its own backend.
#include "tools/mxgate/gate_stages.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gpu/backend.h"
#include "gpu/host/host_backend.h"
#include "impl/builtin.h"
#include "impl/plugin.h"
#include "impl/registry.h"
#include "impl/tactics.h"
#include "model/decision_tables.h"
#include "properties/cast_sweep.h"
#include "properties/model_tables_on_dispatch.h"
#include "properties/regression.h"
#include "tools/mxgate/backend_select.h"
#include "tools/mxgate/property_runs.h"

namespace mxgate::cli {

using report::CheckOutcome;

CheckRun error_run(const std::string& detail) {
  CheckRun r;
  r.report.result = CheckOutcome::kError;
  r.report.detail = detail;
  return r;
}

namespace {

// The backend of one child check. An EnvironmentError or GpuError from creating it is returned
// as an environment error of the check (the gate exits 3).
std::unique_ptr<gpu::Backend> child_backend(const std::string& name, CheckRun& run) {
  try {
    return make_backend(name);
  } catch (const EnvironmentError& e) {
    run = error_run(std::string("environment error: ") + e.what());
  } catch (const gpu::GpuError& e) {
    run = error_run(std::string("environment error: ") + e.what());
  }
  run.environment_error = true;
  return nullptr;
}

void locate(const properties::Failure& f, CheckRun& run) {
  run.located_text = located(f);
  if (f.where) {
    const OutputFormat format = f.expected ? f.expected->format : OutputFormat::kFp32;
    run.report.located = report::LocatedElement::from(*f.where, format);
  }
}

// The implementation `spec` names, in a child: exactly one (the gate passes canonical specs).
const impl::Implementation* child_impl(const std::string& spec, CheckRun& run) {
  try {
    const std::vector<const impl::Implementation*> all = impl::resolve(spec);
    if (all.size() == 1) return all.front();
    run = error_run("--impl " + spec + " names " + std::to_string(all.size()) +
                    " implementations in the check's process");
  } catch (const impl::PluginError& e) {
    run = error_run(e.what());
    run.environment_error = e.kind() == impl::PluginError::Kind::kEnvironment;
  }
  return nullptr;
}

}  // namespace

CheckRun property_check(const properties::Property& p, const std::string& backend,
                        const GateSettings& s, const std::string& heatmap_prefix,
                        const std::string& impl_spec) {
  CheckRun run;
  const impl::Implementation* im = impl_spec.empty() ? &impl::builtin() : nullptr;
  if (im == nullptr && (im = child_impl(impl_spec, run)) == nullptr) return run;
  const std::unique_ptr<gpu::Backend> be = child_backend(backend, run);
  if (!be) return run;
  properties::Coverage coverage;
  properties::RunOptions ro;
  ro.seed = s.opts.seed;
  ro.cases = s.property_cases;
  // Every tactic of the implementation (a seeded sample past the limit, said in the detail); the
  // first failing one is the verdict, named with its tactic (docs/plugins.md §3.6).
  const impl::TacticSelection sel = impl::select_tactics(*im, impl::kDefaultTacticLimit, ro.seed);
  properties::RunResult r;
  std::optional<impl::Implementation> failing;
  uint64_t cases = 0, unsupported = 0;
  std::vector<std::string> reasons;
  for (const uint32_t t : sel.chosen) {
    impl::Implementation view = impl::tactic_view(*im, t);
    if (t != sel.chosen.front() && !properties::applies(p, view)) continue;  // tactic 0 always runs
    const properties::Context ctx{be.get(), {}, &coverage, &view};
    r = properties::run_property(p, ctx, ro);
    cases += static_cast<uint64_t>(r.cases);
    unsupported += static_cast<uint64_t>(r.unsupported);
    for (const std::string& why : r.unsupported_reasons) {
      reasons.push_back(view.tactic_label().empty() ? why
                                                    : view.tactic_label().substr(1) + ": " + why);
    }
    if (!r.passed) {
      failing = std::move(view);
      break;
    }
  }
  r.unsupported = static_cast<int>(unsupported);
  r.unsupported_reasons = reasons;
  if (reasons.size() > 8) r.unsupported_reasons.resize(8);
  run.has_tags = true;
  run.tags = coverage.counts();
  run.report.cases = cases;
  run.report.unsupported = unsupported;
  std::string impl_opt = im->builtin ? "" : " --impl " + im->spec;
  if (failing && sel.count > 1) impl_opt += " --tactic " + std::to_string(*failing->tactic);
  const std::string tactics = sel.describe();
  if (r.passed && cases == 0 && unsupported != 0) {
    run.report.result = CheckOutcome::kSkip;
    run.report.detail = "unsupported: " + properties::unsupported_reasons(r);
    return run;
  }
  if (r.passed) {
    if (unsupported != 0) {
      run.report.detail =
          std::to_string(unsupported) + " unsupported: " + properties::unsupported_reasons(r);
    }
    for (const std::string& why : r.ops_not_checked) {
      run.report.detail += (run.report.detail.empty() ? "" : "\n") + ("not checked: " + why);
    }
    if (!tactics.empty()) {
      run.report.detail += (run.report.detail.empty() ? "" : "\n") + tactics;
    }
    return run;
  }
  using Kind = properties::Failure::Kind;
  const Kind kind = r.failure ? r.failure->kind : Kind::kWrong;
  run.report.result = kind == Kind::kError ? CheckOutcome::kError : CheckOutcome::kFail;
  if (kind == Kind::kContractMismatch) run.report.verdict = "contract_mismatch";
  run.report.detail = r.failure ? r.failure->what : r.message;
  if (failing && sel.count > 1) {
    run.report.detail = failing->tactic_label().substr(1) + ": " + run.report.detail;
  }
  if (!tactics.empty()) run.report.detail += "\n" + tactics;
  if (r.counterexample) run.report.counterexample = r.counterexample->describe();
  run.report.repro = "mxgate property " + std::string(p.name) + impl_opt + " --backend " + backend +
                     " --seed " + std::to_string(ro.seed) + " --cases " + std::to_string(ro.cases);
  if (r.failure) {
    locate(*r.failure, run);
    if (!heatmap_prefix.empty()) {
      run.report.heatmap_path = write_failure_heatmap(
          *r.failure, std::string(p.name) + " on " + backend + ", seed " + std::to_string(ro.seed),
          heatmap_prefix);
    }
  }
  return run;
}

namespace {

CheckRun regression_check(const std::string& path, const std::string& backend) {
  CheckRun run;
  run.report.repro = "mxgate repro " + path + " --backend " + backend;
  properties::Regression reg;
  try {
    reg = properties::load_regression(path);
  } catch (const std::exception& e) {
    run.report.result = CheckOutcome::kFail;
    run.report.detail = std::string("malformed regression file: ") + e.what();
    return run;
  }
  const std::unique_ptr<gpu::Backend> be = child_backend(backend, run);
  if (!be) return run;
  const properties::ReplayOutcome out = properties::replay(reg, *be);
  run.report.counterexample = reg.c.describe();
  if (out.unsupported) {
    // Not applicable here (a device-only case on the host): visible, never a pass.
    run.report.result = CheckOutcome::kSkip;
    run.report.detail = out.summary;
    return run;
  }
  run.report.cases = 1 + reg.detects.size();
  if (out.ok) return run;
  run.report.result = CheckOutcome::kFail;
  run.report.detail = out.summary;
  if (out.clean) locate(*out.clean, run);
  return run;
}

// "a: 1, b: 2, ..." in tag order.
std::string tag_list(const properties::Coverage& c) {
  std::string out;
  for (const auto& [tag, count] : c.counts()) {
    out += (out.empty() ? "" : ", ") + tag + ": " + std::to_string(count);
  }
  return out.empty() ? "(none)" : out;
}

CheckRun coverage_check(const CoverageTally& t) {
  CheckRun run;
  run.report.cases = t.cases;
  run.report.coverage = t.coverage.counts();
  const std::vector<std::string> absent = properties::missing(t.coverage);
  const std::size_t required = properties::required_coverage().size();
  const std::string over = " over " + std::to_string(t.completed) + " of " +
                           std::to_string(t.expected) + " property checks";
  if (absent.empty()) {
    run.report.detail = "all " + std::to_string(required) + " required input classes seen" + over;
  } else {
    std::string list;
    for (const std::string& m : absent) list += (list.empty() ? "" : ", ") + m;
    run.report.detail = std::to_string(absent.size()) + " of " + std::to_string(required) +
                        " required input classes never generated" + over + ": " + list;
    // Only a full run must reach every class; a partial one (--only, a time budget, a crashed
    // suite, reported on its own) cannot be held to it.
    if (t.completed == 0) {
      run.report.result = CheckOutcome::kSkip;
      run.report.detail = "no property check ran";
    } else {
      run.report.result = t.completed < t.expected ? CheckOutcome::kSkip : CheckOutcome::kFail;
    }
  }
  run.report.detail += "\ntags: " + tag_list(t.coverage);
  return run;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

void add_host_checks(std::vector<GateCheck>& checks, const GateSettings& s) {
  std::vector<Check> plain;
  add_format_checks(plain);
  add_reference_checks(plain);
  for (Check& c : plain) {
    GateCheck g;
    g.name = c.name;
    g.backend = c.backend;
    g.run = [run = std::move(c.run), opts = s.opts] {
      const CheckResult r = run(opts);
      CheckRun out;
      out.report.result = r.passed ? CheckOutcome::kPass : CheckOutcome::kFail;
      out.report.cases = r.cases;
      if (!r.passed) out.report.detail = r.detail;
      out.report.repro = r.repro;
      return out;
    };
    checks.push_back(std::move(g));
  }
}

void add_property_checks(std::vector<GateCheck>& checks, const GateSettings& s) {
  for (const std::string& backend : s.backends) {
    for (const properties::Property& p : properties::all_properties()) {
      if (!properties::applies(p, impl::builtin())) continue;
      GateCheck g;
      g.name = "property." + std::string(p.name);
      g.backend = backend;
      std::string prefix;
      if (!s.heatmap_dir.empty()) {
        prefix = (std::filesystem::path(s.heatmap_dir) / g.name).string();
        if (s.backends.size() > 1) prefix += "." + backend;
      }
      g.impl = "builtin";
      g.run = [&p, backend, s, prefix] { return property_check(p, backend, s, prefix, ""); };
      checks.push_back(std::move(g));
    }
  }
}

// Every host cast op of the implementation, every target: the 2^32 sweep.
CheckRun exhaustive_cast_check(const std::string& spec) {
  CheckRun run;
  const impl::Implementation* im = child_impl(spec, run);
  if (im == nullptr) return run;
  gpu::HostBackend be;
  const auto targets = properties::sweep_targets(*im);
  if (targets.empty()) {
    run.report.result = CheckOutcome::kSkip;
    run.report.detail = "no host cast op";
    return run;
  }
  std::string detail;
  for (const auto& [op, target] : targets) {
    const properties::SweepResult r = properties::sweep_cast(be, *op, target, 0, uint64_t{1} << 32);
    run.report.cases += r.inputs;
    const std::string what = op->name + " -> " + std::string(impl::to_string(target));
    if (r.mismatches == 0) {
      detail += (detail.empty() ? "" : "\n") + what + ": all 2^32 inputs equal";
      continue;
    }
    run.report.result = CheckOutcome::kFail;
    detail += (detail.empty() ? "" : "\n") + what + ": " + std::to_string(r.mismatches) +
              " inputs differ; first " + r.describe();
    if (run.report.repro.empty()) {
      char from[16];
      std::snprintf(from, sizeof from, "0x%08x", *r.first_input);
      run.report.repro = "mxgate sweep-cast --impl " + im->spec + " --op " + op->name +
                         " --format " + std::string(impl::to_string(target)) + " --from " + from +
                         " --count 1";
    }
  }
  run.report.detail = detail;
  return run;
}

void add_impl_checks(std::vector<GateCheck>& checks, const GateSettings& s) {
  for (const GateImpl& gi : s.impls) {
    if (!gi.error.empty()) {
      GateCheck g;
      g.name = "impl.load[" + gi.spec + "]";
      g.backend = joined(s.backends);
      g.impl = gi.spec;
      g.where = GateCheck::Where::kParent;
      g.run = [gi] {
        CheckRun r = error_run(gi.error);
        r.environment_error = gi.environment_error;
        return r;
      };
      checks.push_back(std::move(g));
      continue;
    }
    for (const std::string& backend : s.backends) {
      for (const properties::Property& p : properties::all_properties()) {
        if (p.families == 0 || (p.families & gi.families) == 0) continue;
        GateCheck g;
        g.name = "property." + std::string(p.name) + "[" + gi.name + "]";
        g.backend = backend;
        g.impl = gi.name;
        std::string prefix;
        if (!s.heatmap_dir.empty()) {
          prefix = (std::filesystem::path(s.heatmap_dir) /
                    ("property." + std::string(p.name) + "." + gi.name))
                       .string();
          if (s.backends.size() > 1) prefix += "." + backend;
        }
        g.run = [&p, backend, s, prefix, spec = gi.spec] {
          return property_check(p, backend, s, prefix, spec);
        };
        checks.push_back(std::move(g));
      }
    }
    if (s.exhaustive && (gi.families & impl::family_bit(impl::Family::kCast)) != 0) {
      GateCheck g;
      g.name = "cast.exhaustive[" + gi.name + "]";
      g.backend = "host";
      g.impl = gi.name;
      g.run = [spec = gi.spec] { return exhaustive_cast_check(spec); };
      checks.push_back(std::move(g));
    }
  }
}

void add_coverage_check(std::vector<GateCheck>& checks, const GateSettings& s,
                        const CoverageTally& tally) {
  GateCheck g;
  g.name = "properties.coverage";
  g.backend = joined(s.backends);
  g.where = GateCheck::Where::kParent;
  g.run = [&tally] { return coverage_check(tally); };
  checks.push_back(std::move(g));
}

std::span<const std::string_view> gate_stage_names() {
  static constexpr std::string_view kNames[] = {"formats",    "reference", "selftest",
                                                "properties", "coverage",  "regressions",
                                                "decisions",  "fuzz"};
  return kNames;
}

std::string_view gate_stage_of(const std::string& name) {
  const std::string head = name.substr(0, name.find_first_of(".["));
  if (head == "property" || head == "impl" || head == "cast") return "properties";
  if (name == "properties.coverage") return "coverage";
  if (head == "regression") return "regressions";
  for (std::string_view s : gate_stage_names()) {
    if (s == head) return s;
  }
  return "";
}

namespace {

// The model's rows and dispatch on the same rows (I7).
CheckRun decision_tables_check() {
  CheckRun run;
  std::size_t model_rows = 0, dispatch_rows = 0;
  std::vector<std::string> bad = model::tables::replay_model(&model_rows);
  for (std::string& v : bad) v = "model: " + v;
  for (std::string& v : properties::replay_decision_tables_on_dispatch(&dispatch_rows)) {
    bad.push_back("dispatch: " + v);
  }
  run.report.cases = model_rows + dispatch_rows;
  if (bad.empty()) {
    run.report.detail = std::to_string(model_rows) + " rows on the model, " +
                        std::to_string(dispatch_rows) + " on dispatch";
    return run;
  }
  run.report.result = CheckOutcome::kFail;
  for (const std::string& v : bad) run.report.detail += (run.report.detail.empty() ? "" : "\n") + v;
  run.report.repro = "mxgate gate --only decisions.tables";
  return run;
}

}  // namespace

void add_decision_checks(std::vector<GateCheck>& checks, const GateSettings&) {
  GateCheck g;
  g.name = "decisions.tables";
  g.backend = "host";
  g.run = [] { return decision_tables_check(); };
  checks.push_back(std::move(g));
}

void add_regression_checks(std::vector<GateCheck>& checks, const GateSettings& s) {
  const std::vector<std::string> files =
      properties::list_regressions(properties::default_regression_dir());
  if (files.empty()) {
    // A missing corpus is a stage that cannot run: an error, not a silent pass.
    GateCheck g;
    g.name = "regression.corpus";
    g.backend = joined(s.backends);
    g.where = GateCheck::Where::kParent;
    g.run = [] {
      return error_run("no regression file in " + properties::default_regression_dir());
    };
    checks.push_back(std::move(g));
    return;
  }
  for (const std::string& backend : s.backends) {
    for (const std::string& path : files) {
      GateCheck g;
      g.name = "regression." + std::filesystem::path(path).stem().string();
      g.backend = backend;
      try {
        g.impl = properties::load_regression(path).impl;  // the implementation it replays on
      } catch (const std::exception&) {
        g.impl = "-";  // malformed: the check itself reports it
      }
      g.run = [path, backend] { return regression_check(path, backend); };
      checks.push_back(std::move(g));
    }
  }
}

}  // namespace mxgate::cli
