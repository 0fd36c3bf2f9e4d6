// `mxgate property`, `mxgate zoo`, `mxgate repro`: the property suites from the command line,
// the proof on the bug zoo, and regression-file replay.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "impl/registry.h"
#include "impl/tactics.h"
#include "properties/property.h"
#include "properties/regression.h"
#include "properties/run_report.h"
#include "properties/zoo.h"
#include "report/heatmap.h"
#include "report/json_writer.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/backend_select.h"
#include "tools/mxgate/impl_select.h"
#include "tools/mxgate/layer_delegate.h"
#include "tools/mxgate/progress.h"
#include "tools/mxgate/property_runs.h"
#include "tools/mxgate/verbs.h"

namespace mxgate::cli {

using properties::Case;
using properties::Failure;

dispatch::Faults faults_option(const std::optional<std::string>& list) {
  dispatch::Faults f = dispatch::faults_from_environment();
  if (list) f.enable(dispatch::parse_faults(*list));
  return f;
}

std::string describe(const dispatch::Faults& f) {
  std::string out;
  for (dispatch::Fault x : f.list()) {
    out += (out.empty() ? "" : ",") + std::string(dispatch::to_string(x));
  }
  return out.empty() ? "none" : out;
}

std::optional<std::string> write_failure_heatmap(const Failure& f, const std::string& title,
                                                 const std::string& prefix) {
  if (!f.expected || !f.actual) return std::nullopt;
  const GemmOutput& e = *f.expected;
  const GemmOutput& a = *f.actual;
  report::HeatmapGrid grid;
  if (e.format == OutputFormat::kBf16) {
    if (e.bf16.size() != a.bf16.size()) return std::nullopt;
    grid = report::heatmap_from_bf16(e.rows, e.cols, e.bf16, a.bf16);
  } else {
    if (e.fp32.size() != a.fp32.size()) return std::nullopt;
    grid = report::heatmap_from_fp32(e.rows, e.cols, e.fp32, a.fp32);
  }
  report::HeatmapOptions opts;
  opts.title = title;
  const std::filesystem::path parent = std::filesystem::path(prefix).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  report::write_heatmap_svg_file(grid, opts, prefix + ".svg");
  report::write_heatmap_png_file(grid, opts, prefix + ".png");
  return prefix + ".svg";
}

namespace {

// layer.* properties, or `all` of a LayerAdapter: run by Python (docs/layers.md §6).
std::optional<int> maybe_layer_run(const Args& a) {
  const std::vector<std::string>& names = a.positionals();
  const bool layer = std::all_of(names.begin(), names.end(), is_layer_property);
  const std::string spec = a.get("impl").value_or("");
  if (!layer && !(names.size() == 1 && names[0] == "all" && is_layer_spec(spec))) {
    return std::nullopt;
  }
  if (spec.rfind("py:", 0) != 0 || spec.find(',') != std::string::npos) {
    throw UsageError(
        "layer properties need --impl py:MODULE:OBJECT (one mxgate.layers."
        "LayerAdapter or mxgate.moe.MoEAdapter)");
  }
  for (const char* o : {"faults", "save", "backend"}) {
    if (a.get(o)) throw UsageError(std::string("--") + o + " does not go with layer properties");
  }
  std::string joined_names;
  for (const std::string& n : names) joined_names += (joined_names.empty() ? "" : ",") + n;
  if (joined_names == "all") joined_names = "layer.*";
  return run_layer_properties(joined_names, spec,
                              static_cast<uint64_t>(a.integer("seed", 1, 0, (1LL << 62))),
                              static_cast<int>(a.integer("cases", 100, 1, 1000000)));
}

}  // namespace

int cmd_property(const Argv& argv) {
  const Args a(argv,
               {"backend", "seed", "cases", "faults", "save", "impl", "tactic", "max-tactics"},
               {"list"});
  if (a.flag("list")) {
    std::fputs(properties::property_list_text().c_str(), stdout);
    return 0;
  }
  if (a.positionals().empty()) throw UsageError("name a property (or `all`); --list lists them");
  if (const std::optional<int> rc = maybe_layer_run(a)) return *rc;
  std::vector<const properties::Property*> props;
  bool all = false;
  for (const std::string& name : a.positionals()) {
    if (name == "all") {
      all = true;
      for (const properties::Property& p : properties::all_properties()) props.push_back(&p);
    } else if (const properties::Property* p = properties::find_property(name)) {
      props.push_back(p);
    } else {
      throw UsageError("unknown property '" + name + "' (mxgate property --list)");
    }
  }
  const std::string backend_name = a.get("backend").value_or("host");
  const std::vector<const impl::Implementation*> impls = impls_option(a.get("impl"));
  std::unique_ptr<gpu::Backend> be = make_backend(backend_name);
  properties::RunOptions opts;
  opts.seed = static_cast<uint64_t>(a.integer("seed", 1, 0, (1LL << 62)));
  opts.cases = static_cast<int>(a.integer("cases", 100, 1, 1000000));
  const dispatch::Faults faults = faults_option(a.get("faults"));
  if (a.get("save") && (props.size() != 1 || impls.size() != 1)) {
    throw UsageError("--save needs exactly one property and one implementation");
  }
  // Tactics (docs/plugins.md §3.6): every one, a seeded sample past --max-tactics, or --tactic N.
  std::optional<uint32_t> only_tactic;
  if (a.get("tactic")) only_tactic = static_cast<uint32_t>(a.integer("tactic", 0, 0, 4095));
  const auto tactic_limit =
      static_cast<uint32_t>(a.integer("max-tactics", impl::kDefaultTacticLimit, 0, 4096));
  int failed = 0, ran = 0;
  const InterruptScope interrupt;
  for (const impl::Implementation* base : impls) {
    impl::TacticSelection sel;
    try {
      sel = impl::select_tactics(*base, tactic_limit, opts.seed, only_tactic);
    } catch (const std::out_of_range& e) {
      throw UsageError(e.what());
    }
    if (const std::string d = sel.describe(); !d.empty()) {
      std::printf("%s %s\n", base->name.c_str(), d.c_str());
    }
    for (const uint32_t tactic : sel.chosen) {
      const impl::Implementation view = impl::tactic_view(*base, tactic);
      const impl::Implementation* im = &view;
      const bool tactics = base->tactic_count() > 1;
      const std::string impl_tag = im->builtin ? "" : " [" + im->name + im->tactic_label() + "]";
      const std::string impl_opt = (im->builtin ? "" : " --impl " + im->spec) +
                                   (tactics ? " --tactic " + std::to_string(tactic) : "");
      for (const properties::Property* p : props) {
        if (InterruptScope::interrupted()) break;
        if (!properties::applies(*p, *im)) {
          // `all` runs what applies; a property named on its own says why it does not.
          if (!all && tactic == sel.chosen.front()) {
            std::printf("%.*s%s: does not apply (no op of its families)\n",
                        static_cast<int>(p->name.size()), p->name.data(), impl_tag.c_str());
          }
          continue;
        }
        ++ran;
        properties::Coverage cov;
        const properties::Context ctx{be.get(), faults, &cov, im};
        std::printf("%.*s%s on %s, seed %llu, %d cases, faults %s ... ",
                    static_cast<int>(p->name.size()), p->name.data(), impl_tag.c_str(),
                    std::string(be->name()).c_str(), static_cast<unsigned long long>(opts.seed),
                    opts.cases, describe(faults).c_str());
        std::fflush(stdout);
        Progress progress("property " + std::string(p->name), static_cast<uint64_t>(opts.cases),
                          "cases");
        opts.keep_going = [&progress](int done) {
          progress.update(static_cast<uint64_t>(done));
          return !InterruptScope::interrupted();
        };
        const properties::RunResult r = properties::run_property(*p, ctx, opts);
        std::fputs(properties::run_text(r).c_str(), stdout);
        if (r.stopped) {
          std::printf("    interrupted (partial): %d of %d cases run%s\n", r.cases, opts.cases,
                      r.passed ? ", none failed" : "; the shrink was cut short");
        }
        if (r.passed) continue;
        ++failed;
        std::printf("    reproduce: mxgate property %.*s%s --backend %s --seed %llu --cases %d%s\n",
                    static_cast<int>(p->name.size()), p->name.data(), impl_opt.c_str(),
                    backend_name.c_str(), static_cast<unsigned long long>(opts.seed), opts.cases,
                    faults.none() ? "" : (" --faults " + describe(faults)).c_str());
        if (const auto save = a.get("save"); save && r.counterexample) {
          properties::Regression reg;
          reg.comment = "found by: mxgate property " + std::string(p->name) + impl_opt +
                        " --seed " + std::to_string(opts.seed) + "\n" +
                        (r.failure ? r.failure->what : "");
          reg.impl = im->spec;
          if (tactics) reg.tactic = tactic;
          reg.seed = opts.seed;
          reg.c = *r.counterexample;
          reg.detects = faults.list();
          properties::save_regression(reg, *save);
          std::printf("    saved: %s\n", save->c_str());
        }
      }
    }
  }
  if (InterruptScope::interrupted()) return kInterruptedExit;
  if (ran == 0) throw UsageError("no named property applies to the implementation(s) named");
  return failed ? 1 : 0;
}

namespace {

std::string median_text(double m) {
  if (std::isinf(m)) return "missed";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", m);
  return buf;
}

// The shrunk case with M and N scaled up (K kept: it decides the fault) so a GEMM fault draws
// its pattern on a readable output. N stays a multiple of the shrunk N (contract alignment).
Case showcase(const Case& c) {
  Case big = c;
  if (c.has("m")) big.set("m", 96 + c.num("m") % 4);  // M % 4 kept: TMA alignment
  if (c.has("n") && c.has("tp")) {
    big.set("n", c.num("n") * 4);
    big.set("tp", c.num("tp") * 4);
  } else if (c.has("n")) {
    big.set("n", c.num("n") * std::max<uint64_t>(1, 256 / c.num("n")));
  }
  return big;
}

}  // namespace

namespace {

// `mxgate zoo --impl SPEC`: the proof over implementations with planted faults.
int impl_zoo(const Args& a, const std::vector<const impl::Implementation*>& impls, gpu::Backend& be,
             const properties::ZooOptions& opts) {
  const bool json = a.flag("json");
  std::vector<properties::ImplZooResult> results;
  for (const impl::Implementation* im : impls) {
    if (!json) {
      std::printf("[%zu/%zu] %s ... ", results.size() + 1, impls.size(), im->name.c_str());
      std::fflush(stdout);
    }
    properties::ImplZooResult r = properties::run_impl_zoo(*im, be, opts);
    if (!json) {
      std::printf("%s (%.1f s)\n",
                  r.detected  ? "detected"
                  : r.planted ? "MISSED"
                              : "passes every property",
                  r.seconds);
      if (r.detected) {
        std::printf("    caught by %s, median %s cases over %d seeds%s\n", r.caught_by.c_str(),
                    median_text(r.median).c_str(), opts.seeds,
                    r.planted ? "" : " -- NOT a planted fault: a real failure");
        if (r.counterexample) {
          std::printf("    counterexample: %s\n", r.counterexample->describe().c_str());
        }
        if (r.tactic) {
          std::printf("    reproduce: mxgate property %s --impl %s --tactic %u --seed %llu\n",
                      r.caught_by.substr(0, r.caught_by.find(' ')).c_str(), im->spec.c_str(),
                      *r.tactic, static_cast<unsigned long long>(opts.seed));
        }
        if (r.failure) {
          std::printf("    failure: %s\n", r.failure->what.c_str());
          const std::string loc = located(*r.failure);
          if (!loc.empty()) std::printf("    %s\n", loc.c_str());
        }
        for (const auto& d : r.detections) {
          std::printf("    %-30s median %s\n", d.property.c_str(), median_text(d.median).c_str());
        }
      }
    }
    results.push_back(std::move(r));
  }
  bool all_ok = true;
  for (const auto& r : results) all_ok = all_ok && r.ok();
  if (json) {
    report::JsonWriter w(std::cout);
    w.begin_object().field("schema", "mxgate-impl-zoo/1").field("seed", opts.seed);
    w.field("seeds", opts.seeds).field("cases_cap", opts.cases).field("backend", be.name());
    w.key("implementations").begin_array();
    for (const auto& r : results) {
      w.begin_object().field("impl", r.impl).field("planted", r.planted);
      w.field("detected", r.detected).field("caught_by", r.caught_by);
      w.field("tactic", r.tactic ? std::optional<uint64_t>(*r.tactic) : std::nullopt);
      w.field("median_cases", r.detected ? r.median : std::numeric_limits<double>::infinity());
      w.field("counterexample",
              r.counterexample ? std::optional(r.counterexample->describe()) : std::nullopt);
      w.field("failure", r.failure ? std::optional(r.failure->what) : std::nullopt);
      w.key("detections").begin_array();
      for (const auto& d : r.detections) {
        w.begin_object().field("property", d.property).field("median", d.median).end_object();
      }
      w.end_array().field("seconds", r.seconds).end_object();
    }
    w.end_array().end_object();
    std::cout << "\n";
  } else {
    std::printf("\n%-44s %-8s %-9s %-30s %8s\n", "implementation", "planted", "detected",
                "caught by", "median");
    for (const auto& r : results) {
      std::printf("%-44s %-8s %-9s %-30s %8s\n", r.impl.c_str(), r.planted ? "yes" : "no",
                  r.detected ? "yes" : "no", r.caught_by.c_str(),
                  r.detected ? median_text(r.median).c_str() : "-");
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace

int cmd_zoo(const Argv& argv) {
  const Args a(
      argv,
      {"backend", "seed", "seeds", "cases", "fault", "save-regressions", "heatmap-dir", "impl"},
      {"json", "expected-only"});
  if (!a.positionals().empty())
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  std::vector<const impl::Implementation*> impls;
  if (a.get("impl")) {
    for (const char* o : {"fault", "save-regressions", "heatmap-dir"}) {
      if (a.get(o))
        throw UsageError(std::string("--") + o + " is for the built-in zoo, not --impl");
    }
    if (a.flag("expected-only")) throw UsageError("--expected-only is for the built-in zoo");
    impls = impls_option(a.get("impl"));
  }
  std::unique_ptr<gpu::Backend> be = make_backend(a.get("backend").value_or("host"));
  properties::ZooOptions opts;
  opts.seed = static_cast<uint64_t>(a.integer("seed", 1, 0, (1LL << 62)));
  opts.seeds = static_cast<int>(a.integer("seeds", 20, 1, 1000));
  opts.cases = static_cast<int>(a.integer("cases", 100, 1, 100000));
  opts.all_properties = !a.flag("expected-only");
  if (!impls.empty()) return impl_zoo(a, impls, *be, opts);
  std::vector<dispatch::Fault> faults;
  if (const auto f = a.get("fault")) {
    faults = dispatch::parse_faults(*f).list();
    if (faults.empty()) throw UsageError("--fault names no fault");
  } else {
    faults.assign(dispatch::all_faults().begin(), dispatch::all_faults().end());
  }
  const bool json = a.flag("json");
  const auto save_dir = a.get("save-regressions");
  const auto heatmap_dir = a.get("heatmap-dir");
  if (save_dir) std::filesystem::create_directories(*save_dir);
  std::vector<properties::ZooResult> results;
  std::vector<std::optional<std::string>> heatmaps;
  for (dispatch::Fault f : faults) {
    if (!json) {
      std::printf("[%zu/%zu] %.*s ... ", results.size() + 1, faults.size(),
                  static_cast<int>(dispatch::to_string(f).size()), dispatch::to_string(f).data());
      std::fflush(stdout);
    }
    properties::ZooResult r = properties::run_zoo(f, *be, opts);
    std::optional<std::string> heat;
    if (heatmap_dir && r.counterexample) {
      const properties::Property& p = *properties::find_property(r.shrunk_by);
      const properties::Context ctx{be.get(), {f}, nullptr};
      if (auto big = properties::check_case(p, ctx, showcase(*r.counterexample))) {
        heat = write_failure_heatmap(*big, std::string(dispatch::to_string(f)) + ": " + r.shrunk_by,
                                     *heatmap_dir + "/" + std::string(dispatch::to_string(f)));
      }
    }
    if (save_dir && r.counterexample) {
      properties::Regression reg;
      reg.comment =
          properties::zoo_regression_comment(f) + "\n" + (r.failure ? r.failure->what : "");
      reg.seed = opts.seed;
      reg.c = *r.counterexample;
      reg.detects = {f};
      char name[16];
      std::snprintf(name, sizeof name, "z%02d_", dispatch::fault_number(f));
      properties::save_regression(reg, *save_dir + "/" + name + r.shrunk_by + ".case");
    }
    if (!json && r.not_applicable) {
      std::printf("n/a (%s)\n", r.not_applicable_reason.c_str());
    } else if (!json) {
      std::printf("%s (%.1f s)\n", r.detected ? "detected" : "MISSED", r.seconds);
      if (r.detected) {
        std::printf("    caught by %s, median %s cases over %d seeds; minimal: %s\n",
                    r.caught_by.c_str(), median_text(r.median).c_str(), opts.seeds,
                    r.minimal ? "yes" : "NO");
        if (r.counterexample) {
          std::printf("    counterexample (%s): %s\n", r.shrunk_by.c_str(),
                      r.counterexample->describe().c_str());
        }
        if (r.failure) std::printf("    failure: %s\n", r.failure->what.c_str());
        for (const auto& d : r.detections) {
          std::printf("    %-30s median %s\n", d.property.c_str(), median_text(d.median).c_str());
        }
        if (heat) std::printf("    heatmap: %s\n", heat->c_str());
      }
    }
    results.push_back(std::move(r));
    heatmaps.push_back(heat);
  }
  bool all_ok = true;
  // A device-only class on the host is reported not applicable: neither a pass nor a miss.
  for (const auto& r : results) all_ok = all_ok && (r.not_applicable || (r.detected && r.minimal));
  if (json) {
    report::JsonWriter w(std::cout);
    w.begin_object().field("schema", "mxgate-zoo/1").field("seed", opts.seed);
    w.field("seeds", opts.seeds).field("cases_cap", opts.cases).field("backend", be->name());
    w.key("faults").begin_array();
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      const properties::ZooClass& zc = properties::zoo_class(r.fault);
      w.begin_object().field("fault", dispatch::to_string(r.fault)).field("detected", r.detected);
      w.field("not_applicable", r.not_applicable);
      w.field("not_applicable_reason",
              r.not_applicable ? std::optional(r.not_applicable_reason) : std::nullopt);
      w.field("caught_by", r.caught_by);
      // Non-finite doubles are written as null: a missed fault has no median.
      w.field("median_cases", r.detected ? r.median : std::numeric_limits<double>::infinity());
      w.field("expected_property", zc.property).field("minimal_case", zc.minimal);
      w.field("minimal", r.minimal).field("shrunk_by", r.shrunk_by);
      w.field("counterexample",
              r.counterexample ? std::optional(r.counterexample->describe()) : std::nullopt);
      w.field("failure", r.failure ? std::optional(r.failure->what) : std::nullopt);
      w.key("detections").begin_array();
      for (const auto& d : r.detections) {
        w.begin_object().field("property", d.property).key("cases").begin_array();
        for (int c : d.cases) w.value(c);
        w.end_array().field("median", d.median).end_object();
      }
      w.end_array();
      w.field("heatmap", heatmaps[i]).field("seconds", r.seconds).end_object();
    }
    w.end_array().end_object();
    std::cout << "\n";
  } else {
    std::printf("\n%-32s %-9s %-30s %8s %-7s\n", "fault", "detected", "caught by", "median",
                "minimal");
    for (const auto& r : results) {
      if (r.not_applicable) {
        std::printf("%-32.*s %-9s %-30s %8s %-7s\n",
                    static_cast<int>(dispatch::to_string(r.fault).size()),
                    dispatch::to_string(r.fault).data(), "n/a",
                    std::string(properties::zoo_class(r.fault).property).c_str(), "-", "-");
        continue;
      }
      std::printf("%-32.*s %-9s %-30s %8s %-7s\n",
                  static_cast<int>(dispatch::to_string(r.fault).size()),
                  dispatch::to_string(r.fault).data(), r.detected ? "yes" : "NO",
                  r.caught_by.c_str(), median_text(r.median).c_str(), r.minimal ? "yes" : "NO");
    }
  }
  return all_ok ? 0 : 1;
}

int cmd_repro(const Argv& argv) {
  const Args a(argv, {"backend", "impl"});
  if (a.positionals().empty()) throw UsageError("name one or more regression files");
  const impl::Implementation* override_impl = a.get("impl") ? &one_impl(*a.get("impl")) : nullptr;
  std::unique_ptr<gpu::Backend> be = make_backend(a.get("backend").value_or("host"));
  std::vector<properties::Regression> regs;
  std::vector<std::string> reg_paths;
  int recorded_failed = 0;
  for (const std::string& path : a.positionals()) {
    if (const std::optional<RecordedCase> rc = load_recorded_case(path)) {
      recorded_failed += replay_recorded_case(path, *rc);
      continue;
    }
    reg_paths.push_back(path);
    try {
      regs.push_back(properties::load_regression(path));
    } catch (const properties::RegressionError& e) {
      throw UsageError(e.what());
    }
  }
  int failed = 0;
  for (std::size_t i = 0; i < regs.size(); ++i) {
    const properties::Regression& r = regs[i];
    if (!override_impl) (void)impls_option(r.impl);  // a file naming a bad plugin: exit 2 / 3
    const properties::ReplayOutcome out = properties::replay(r, *be, override_impl);
    const std::string impl_name = (override_impl ? override_impl->name : r.impl) +
                                  (r.tactic ? " tactic " + std::to_string(*r.tactic) : "");
    std::printf("%s: %s [%s] on %s: %s\n", reg_paths[i].c_str(), r.c.property().c_str(),
                impl_name.c_str(), std::string(be->name()).c_str(),
                out.unsupported ? "unsupported"
                : out.ok        ? "ok"
                                : "FAIL");
    std::printf("    case: %s\n", r.c.describe().c_str());
    std::string s = out.summary;
    for (std::size_t at = 0; (at = s.find('\n', at)) != std::string::npos; at += 5) {
      s.replace(at, 1, "\n    ");
    }
    std::printf("    %s\n", s.c_str());
    if (out.clean) {
      const std::string loc = located(*out.clean);
      if (!loc.empty()) std::printf("    %s\n", loc.c_str());
    }
    failed += out.ok ? 0 : 1;
  }
  return failed + recorded_failed ? 1 : 0;
}

}  // namespace mxgate::cli
