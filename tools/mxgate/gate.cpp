// `mxgate gate`: the command run before a merge. Runs every stage (gate_stages.h) with a progress
// line per check, each check in a watchdog child (watchdog.h), then a summary table and the
// optional JSON / JUnit reports. The gate process itself never creates a device backend (device
// contexts do not survive fork): `auto` is resolved by a probe child.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/machinery_fault.h"
#include "dispatch/faults.h"
#include "impl/builtin.h"
#include "impl/plugin.h"
#include "impl/registry.h"
#include "report/gate_report.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/backend_select.h"
#include "tools/mxgate/gate_stages.h"
#include "tools/mxgate/layer_delegate.h"
#include "tools/mxgate/verbs.h"
#include "tools/mxgate/watchdog.h"

namespace mxgate::cli {
namespace {

namespace fs = std::filesystem;
using report::CheckOutcome;
using Clock = std::chrono::steady_clock;

// Test hook (tests/test_cli_gate.cpp): the child of the check named by this variable records
// the launch "test_hang" and then sleeps forever, as a hung kernel would.
constexpr const char* kHangEnv = "MXGATE_GATE_HANG";

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Resolves one `--backend` name in a probe child ("auto" becomes "host", "hip" or "cuda").
// A missing device or a driver failure is an EnvironmentError (exit code 3).
std::string resolve_backend(const std::string& name, Watchdog& watchdog, double timeout) {
  if (name == "host") return "host";
  if (name == "auto" && device_backend_kind().empty()) return "host";
  const ChildOutcome o = watchdog.run(
      [&name]() -> std::string {
        try {
          return "ok " + std::string(make_backend(name)->name());
        } catch (const EnvironmentError& e) {
          return std::string("env ") + e.what();
        } catch (const gpu::GpuError& e) {
          return std::string("env ") + e.what();
        }
      },
      timeout);
  const std::string where = "backend '" + name + "': ";
  switch (o.kind) {
    case ChildOutcome::Kind::kResult:
      if (o.payload.rfind("ok ", 0) == 0) return o.payload.substr(3);
      if (o.payload.rfind("env ", 0) == 0) throw EnvironmentError(o.payload.substr(4));
      throw EnvironmentError(where + "unexpected probe answer '" + o.payload + "'");
    case ChildOutcome::Kind::kTimeout:
      throw EnvironmentError(where + "probe gave no answer after " + seconds_text(timeout) + " s");
    case ChildOutcome::Kind::kSignal:
      throw EnvironmentError(where + "probe crashed: signal " + std::to_string(o.signal) + " (" +
                             ::strsignal(o.signal) + ")");
    case ChildOutcome::Kind::kExit:
      throw EnvironmentError(where + "probe failed: " + o.output_tail);
  }
  return "host";
}

std::vector<std::string> resolve_backends(const std::string& list, Watchdog& watchdog,
                                          double timeout) {
  std::vector<std::string> names;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string n = list.substr(at, comma - at);
    if (n != "auto" && n != "host" && n != "hip" && n != "cuda") {
      throw UsageError("--backend must be auto, host, hip or cuda (or a comma list), not '" + n +
                       "'");
    }
    names.push_back(n);
    at = comma + 1;
  }
  std::vector<std::string> resolved;
  for (const std::string& n : names) {
    const std::string r = resolve_backend(n, watchdog, timeout);
    if (std::find(resolved.begin(), resolved.end(), r) == resolved.end()) resolved.push_back(r);
  }
  return resolved;
}

}  // namespace

// Loads one --impl SPEC in a probe child (the gate never dlopens: a plugin that crashes in its
// init takes a child down, not the gate) and lists what it names: one GateImpl per
// implementation, or one carrying the load error.
std::vector<GateImpl> resolve_impl(const std::string& spec, Watchdog& watchdog, double timeout) {
  const ChildOutcome o = watchdog.run(
      [&spec]() -> std::string {
        std::string out;
        try {
          for (const impl::Implementation* i : impl::resolve(spec)) {
            out += "ok " + std::to_string(i->families()) + " " + i->name + " " + i->spec + "\n";
          }
        } catch (const impl::PluginError& e) {
          const bool env = e.kind() == impl::PluginError::Kind::kEnvironment;
          out = std::string(env ? "env " : "err ") + e.what();
        }
        return out;
      },
      timeout);
  GateImpl failed;
  failed.spec = spec;
  switch (o.kind) {
    case ChildOutcome::Kind::kResult: {
      if (o.payload.rfind("env ", 0) == 0 || o.payload.rfind("err ", 0) == 0) {
        failed.error = o.payload.substr(4);
        failed.environment_error = o.payload[0] == 'e' && o.payload[1] == 'n';
        return {failed};
      }
      std::vector<GateImpl> out;
      std::size_t at = 0;
      while (at < o.payload.size()) {
        const std::size_t nl = std::min(o.payload.find('\n', at), o.payload.size());
        std::string line = o.payload.substr(at + 3, nl - at - 3);  // after "ok "
        at = nl + 1;
        GateImpl gi;
        const std::size_t a = line.find(' '), b = line.find(' ', a + 1);
        gi.families = static_cast<impl::FamilyMask>(std::stoul(line.substr(0, a)));
        gi.name = line.substr(a + 1, b - a - 1);
        gi.spec = line.substr(b + 1);
        out.push_back(gi);
      }
      return out;
    }
    case ChildOutcome::Kind::kTimeout:
      failed.error =
          "--impl " + spec + ": loading gave no answer after " + seconds_text(timeout) + " s";
      break;
    case ChildOutcome::Kind::kSignal:
      failed.error = "--impl " + spec + ": loading crashed: signal " + std::to_string(o.signal) +
                     " (" + ::strsignal(o.signal) + ")";
      break;
    case ChildOutcome::Kind::kExit:
      failed.error = "--impl " + spec + ": loading failed: " + o.output_tail;
      break;
  }
  return {failed};
}

namespace {

std::string last_kernel(const ChildOutcome& o) {
  return "last kernel launched: " + (o.last_kernel.empty() ? std::string("none") : o.last_kernel);
}

}  // namespace

CheckRun run_in_child(const GateCheck& c, Watchdog& watchdog, double timeout) {
  const ChildOutcome o = watchdog.run(
      [&c] {
        if (const char* hang = std::getenv(kHangEnv); hang != nullptr && c.name == hang) {
          Watchdog::record_launch("test_hang");
          for (;;) ::pause();
        }
        CheckRun r;
        try {
          r = c.run();
        } catch (const std::exception& e) {
          r = error_run(std::string("check threw: ") + e.what());
        }
        return encode_check_run(r);
      },
      timeout);
  const std::string output = o.output_tail.empty() ? "" : "\noutput: " + o.output_tail;
  switch (o.kind) {
    case ChildOutcome::Kind::kResult:
      try {
        return decode_check_run(o.payload);
      } catch (const ProtocolError& e) {
        return error_run(std::string("unreadable result from the check's process: ") + e.what());
      }
    case ChildOutcome::Kind::kTimeout:
      return error_run("watchdog: " + c.name + " gave no result after " + seconds_text(timeout) +
                       " s, killed; " + last_kernel(o));
    case ChildOutcome::Kind::kSignal:
      return error_run(c.name + " crashed: signal " + std::to_string(o.signal) + " (" +
                       ::strsignal(o.signal) + "); " + last_kernel(o) + output);
    case ChildOutcome::Kind::kExit:
      return error_run(c.name + " exited with status " + std::to_string(o.exit_status) +
                       " without a result; " + last_kernel(o) + output);
  }
  return error_run("unknown child outcome");
}

namespace {

std::string result_word(CheckOutcome o) {
  switch (o) {
    case CheckOutcome::kPass:
      return "pass";
    case CheckOutcome::kFail:
      return "FAIL";
    case CheckOutcome::kSkip:
      return "skip";
    case CheckOutcome::kError:
      return "ERROR";
  }
  return "ERROR";
}

// A "tags: a: 1, b: 2, ..." line broken after commas into lines of at most 100 columns.
void print_tags(const std::string& line) {
  std::string row = "    ";
  std::size_t at = 0;
  while (at < line.size()) {
    std::size_t end = line.find(", ", at);
    end = end == std::string::npos ? line.size() : end + 2;
    const std::string item = line.substr(at, end - at);
    if (row.size() > 10 && row.size() + item.size() > 101) {
      row.pop_back();  // the space after the comma
      std::printf("%s\n", row.c_str());
      row = "          ";
    }
    row += item;
    at = end;
  }
  std::printf("%s\n", row.c_str());
}

// Prints `text` with each line indented; `label` before the first line.
void print_indented(const std::string& label, const std::string& text) {
  std::size_t at = 0;
  bool first = true;
  while (at <= text.size()) {
    const std::size_t nl = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, nl - at);
    if (line.rfind("tags: ", 0) == 0) {
      print_tags(line);
    } else {
      std::printf("    %s%s\n", first ? label.c_str() : "", line.c_str());
    }
    first = false;
    at = nl + 1;
  }
}

void print_result(const CheckRun& run, double seconds) {
  const report::CheckReport& r = run.report;
  if (r.result == CheckOutcome::kSkip && r.detail.find('\n') == std::string::npos) {
    std::printf("skip (%s)\n", r.detail.c_str());
    return;
  }
  std::printf("%s (%llu cases, %.2f s)\n", result_word(r.result).c_str(),
              static_cast<unsigned long long>(r.cases), seconds);
  const bool failed = r.result == CheckOutcome::kFail || r.result == CheckOutcome::kError;
  // Unsupported cases are never failures but always shown.
  if (!r.detail.empty() &&
      (failed || r.result == CheckOutcome::kSkip || r.coverage || r.unsupported != 0)) {
    print_indented(r.verdict.empty() ? "" : r.verdict + ": ", r.detail);
  }
  if (!failed) return;
  if (r.counterexample) print_indented("counterexample: ", *r.counterexample);
  if (!run.located_text.empty()) print_indented("", run.located_text);
  if (r.heatmap_path) print_indented("heatmap: ", *r.heatmap_path);
  if (!r.repro.empty()) print_indented("reproduce: ", r.repro);
}

void print_summary(const report::GateReport& rep) {
  std::size_t width = 36;
  for (const report::CheckReport& c : rep.checks) width = std::max(width, c.name.size());
  const int w = static_cast<int>(width);
  std::size_t impl_width = 7;
  for (const report::CheckReport& c : rep.checks) impl_width = std::max(impl_width, c.impl.size());
  const int iw = static_cast<int>(impl_width);
  std::printf("\n%-*s %-10s %-*s %12s %-7s %9s\n", w, "check", "backend", iw, "impl", "cases",
              "result", "time");
  for (const report::CheckReport& c : rep.checks) {
    std::printf("%-*s %-10s %-*s %12llu %-7s %8.2fs\n", w, c.name.c_str(), c.backend.c_str(), iw,
                c.impl.empty() ? "-" : c.impl.c_str(), static_cast<unsigned long long>(c.cases),
                result_word(c.result).c_str(), c.seconds);
  }
  const report::GateTotals t = rep.totals();
  std::printf("\n");
  if (t.errors != 0 || t.skipped != 0) {
    std::printf("%zu errors, %zu skipped\n", t.errors, t.skipped);
  }
  std::printf("%zu passed, %zu failed\n", t.passed, t.failed);
}

// A report path whose folder does not exist is a usage error before the run, not after it.
std::string report_option(const Args& a, const std::string& name) {
  const auto path = a.get(name);
  if (!path) return "";
  if (path->empty()) throw UsageError("--" + name + " needs a file name");
  const fs::path dir = fs::path(*path).parent_path();
  if (!dir.empty() && !fs::is_directory(dir)) {
    throw UsageError("--" + name + ": folder '" + dir.string() + "' does not exist");
  }
  return *path;
}

}  // namespace

int cmd_gate(const Argv& argv) {
  const Args a(argv,
               {"only", "seed", "cases", "backend", "time-budget", "report", "junit",
                "check-timeout", "impl", "skip", "fuzz-seconds"},
               {"exhaustive"});
  if (!a.positionals().empty()) {
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  }
  // The gate certifies the system without planted bugs: faults are for `mxgate zoo` and tests.
  if (const char* f = std::getenv(dispatch::kFaultsEnv); f != nullptr && *f != '\0') {
    throw UsageError(std::string("refusing to run with faults on (") + dispatch::kFaultsEnv + "=" +
                     f + "); unset it: faults are for tests and the zoo");
  }
  // A fault planted in mxgate's own machinery (common/machinery_fault.h): only the self-test's
  // tests set one; the run says so loudly, and an unknown name is a usage error.
  if (const char* f = std::getenv(kMachineryFaultEnv); f != nullptr && *f != '\0') {
    const auto row = find_machinery_fault(f);
    if (!row) {
      throw UsageError(std::string("unknown ") + kMachineryFaultEnv + " '" + f +
                       "' (known: " + machinery_fault_names() + ")");
    }
    std::printf(
        "mxgate gate: WARNING: %s=%s plants a fault in mxgate's own machinery (%s): "
        "for the self-test's tests only, this run's verdicts are not to be trusted\n",
        kMachineryFaultEnv, f, std::string(row->what).c_str());
  }
  GateSettings s;
  s.opts.seed = static_cast<uint64_t>(a.integer("seed", 1, 0, (1LL << 62)));
  s.opts.cases = static_cast<uint64_t>(a.integer("cases", 0, 0, (1LL << 40)));
  s.property_cases =
      s.opts.cases == 0 ? 100 : static_cast<int>(std::min<uint64_t>(s.opts.cases, INT_MAX));
  const std::string only = a.get("only").value_or("");
  const long long budget = a.integer("time-budget", -1, 0, 1LL << 40);  // -1: none
  const double timeout = static_cast<double>(a.integer("check-timeout", 600, 1, 1LL << 30));
  const std::string json_path = report_option(a, "report");
  const std::string junit_path = report_option(a, "junit");
  const std::string report_for_heatmaps = !json_path.empty() ? json_path : junit_path;
  if (!report_for_heatmaps.empty()) {
    s.heatmap_dir = fs::path(report_for_heatmaps).parent_path().string();
    if (s.heatmap_dir.empty()) s.heatmap_dir = ".";
  }
  s.source_dir = MXGATE_SOURCE_DIR;
  s.exhaustive = a.flag("exhaustive");
  s.fuzz_seconds = static_cast<double>(a.integer("fuzz-seconds", 8, 0, 3600));
  if (const auto skip = a.get("skip")) {
    for (std::size_t at = 0; at <= skip->size();) {
      const std::size_t comma = std::min(skip->find(',', at), skip->size());
      const std::string stage = skip->substr(at, comma - at);
      at = comma + 1;
      const auto names = gate_stage_names();
      if (std::find(names.begin(), names.end(), stage) == names.end()) {
        std::string list;
        for (std::string_view n : names) list += (list.empty() ? "" : ", ") + std::string(n);
        throw UsageError("--skip: unknown stage '" + stage + "' (stages: " + list + ")");
      }
      s.skip.insert(stage);
    }
  }

  const auto wall_start = std::chrono::system_clock::now();
  const auto start = Clock::now();
  Watchdog watchdog;
  s.backends = resolve_backends(a.get("backend").value_or("auto"), watchdog, timeout);
  std::vector<std::string> layer_specs;
  if (const auto specs = a.get("impl")) {
    std::vector<std::string> listed;
    for (std::size_t at = 0; at <= specs->size();) {
      const std::size_t comma = std::min(specs->find(',', at), specs->size());
      const std::string spec = specs->substr(at, comma - at);
      at = comma + 1;
      if (!spec.empty() && spec != "builtin") listed.push_back(spec);  // builtin: always tested
    }
    // One Python answers which py: specs are LayerAdapters (their layer properties, run by
    // Python); the others, a bad spec too, resolve as implementations (an error naming it).
    const std::vector<bool> layer = are_layer_specs(listed);
    for (std::size_t i = 0; i < listed.size(); ++i) {
      const std::string& spec = listed[i];
      if (layer[i]) {
        layer_specs.push_back(spec);
        continue;
      }
      for (GateImpl& gi : resolve_impl(spec, watchdog, timeout)) {
        const bool seen = std::any_of(s.impls.begin(), s.impls.end(), [&](const GateImpl& o) {
          return o.error.empty() && o.spec == gi.spec;
        });
        if (!seen) s.impls.push_back(std::move(gi));
      }
    }
    if (specs->empty()) throw UsageError("--impl needs a SPEC (mxgate impls lists them)");
  }

  CoverageTally tally;
  std::size_t builtin_properties = 0;
  for (const properties::Property& p : properties::all_properties()) {
    builtin_properties += properties::applies(p, impl::builtin()) ? 1 : 0;
  }
  tally.expected = builtin_properties * s.backends.size();
  std::vector<GateCheck> all;
  add_host_checks(all, s);
  add_selftest_checks(all, s);
  add_property_checks(all, s);
  add_impl_checks(all, s);
  add_layer_checks(all, layer_specs, s);
  add_coverage_check(all, s, tally);
  add_regression_checks(all, s);
  add_decision_checks(all, s);
  add_fuzz_checks(all, s);
  // Only the user skips a stage, and every check of it is listed as skipped (never dropped).
  for (GateCheck& c : all) {
    const std::string stage(gate_stage_of(c.name));
    if (!stage.empty() && s.skip.count(stage) != 0) {
      c.where = GateCheck::Where::kSkipped;
      c.skip_reason = "--skip " + stage;
    }
  }
  std::vector<const GateCheck*> selected;
  for (const GateCheck& c : all) {
    // A plugin that did not load is reported whatever --only says: nothing asked for is lost.
    const bool load_error = c.name.rfind("impl.load[", 0) == 0;
    if (only.empty() || load_error || c.name.find(only) != std::string::npos) {
      selected.push_back(&c);
    }
  }
  if (selected.empty()) throw UsageError("--only '" + only + "' matches no check");

  std::string impl_names = "builtin";
  for (const GateImpl& gi : s.impls) impl_names += "," + (gi.error.empty() ? gi.name : gi.spec);
  for (const std::string& spec : layer_specs) impl_names += "," + spec;
  std::printf("mxgate gate: %zu checks, seed %llu, backend %s, impl %s, check timeout %s s%s\n",
              selected.size(), static_cast<unsigned long long>(s.opts.seed),
              joined(s.backends, ",").c_str(), impl_names.c_str(), seconds_text(timeout).c_str(),
              budget < 0 ? "" : (", time budget " + std::to_string(budget) + " s").c_str());
  std::fflush(stdout);

  report::GateReport rep;
  rep.run.tool_version = "mxgate";
  rep.run.seed = s.opts.seed;
  rep.run.cases = s.opts.cases;
  rep.run.backend = s.backends.size() == 1 ? s.backends[0] : "all";
  rep.run.time_budget_seconds = budget < 0 ? 0 : static_cast<double>(budget);
  rep.run.start_time = wall_start;
  rep.run.impls = {"builtin"};
  for (const GateImpl& gi : s.impls) rep.run.impls.push_back(gi.error.empty() ? gi.name : gi.spec);
  for (const std::string& spec : layer_specs) rep.run.impls.push_back(spec);
  bool environment_error = false;
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const GateCheck& c = *selected[i];
    std::printf("[%zu/%zu] %s (%s) ... ", i + 1, selected.size(), c.name.c_str(),
                c.backend.c_str());
    std::fflush(stdout);
    const auto t0 = Clock::now();
    const double elapsed = std::chrono::duration<double>(t0 - start).count();
    CheckRun run;
    if (c.where == GateCheck::Where::kSkipped) {
      run.report.result = CheckOutcome::kSkip;
      run.report.detail = c.skip_reason;
    } else if (budget >= 0 && elapsed >= static_cast<double>(budget)) {
      run.report.result = CheckOutcome::kSkip;
      run.report.detail = "time budget";
    } else if (c.where == GateCheck::Where::kParent) {
      try {
        run = c.run();
      } catch (const std::exception& e) {
        run = error_run(std::string("check threw: ") + e.what());
      }
    } else {
      run = run_in_child(c, watchdog, timeout);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    run.report.name = c.name;
    run.report.backend = c.backend;
    run.report.impl = c.impl;
    run.report.seconds = seconds;
    environment_error = environment_error || run.environment_error;
    // Coverage is the built-in implementation's (its required classes name built-in ops). A
    // property that ran and found every case not applicable here (dequantize.large_offsets on
    // the host: a skip with its reason) completed: it must not excuse a coverage hole.
    if (run.has_tags && c.impl == "builtin" &&
        (run.report.result == CheckOutcome::kPass || run.report.result == CheckOutcome::kFail ||
         run.report.result == CheckOutcome::kSkip)) {
      for (const auto& [tag, count] : run.tags) tally.coverage.add(tag, count);
      ++tally.completed;
      tally.cases += run.report.cases;
    }
    print_result(run, seconds);
    std::fflush(stdout);
    rep.checks.push_back(std::move(run.report));
  }
  print_summary(rep);
  if (!json_path.empty()) {
    report::write_json_report_file(rep, json_path);
    std::printf("report: %s\n", json_path.c_str());
  }
  if (!junit_path.empty()) {
    report::write_junit_xml_file(rep, junit_path);
    std::printf("junit: %s\n", junit_path.c_str());
  }
  std::fflush(stdout);
  if (environment_error) return 3;
  const report::GateTotals t = rep.totals();
  return t.failed + t.errors != 0 ? 1 : 0;
}

}  // namespace mxgate::cli
