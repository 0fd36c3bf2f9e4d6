// `mxgate survey`: what every implementation does, in one table. Per implementation (builtin,
// every shipped plugin, every shipped Python adapter this interpreter can import, or --impl's):
// each cast op against every convention that defines its target format (all 2^32 fp32 inputs,
// or a sample: properties/cast_survey.h), and every property that applies with its verdict and
// shrunk case. Each piece runs in a watchdog child (a crashing or hanging implementation is an
// error of that piece; the survey goes on). Progress on stderr (tools/mxgate/progress.h); Ctrl-C
// stops a cast piece at its next chunk, any other after it runs, and writes the report so far,
// marked partial, exit 130. docs/python.md §13.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "impl/builtin.h"
#include "impl/python.h"
#include "impl/registry.h"
#include "properties/cast_survey.h"
#include "properties/cast_values.h"
#include "report/json_writer.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/backend_select.h"
#include "tools/mxgate/gate_stages.h"
#include "tools/mxgate/progress.h"
#include "tools/mxgate/verbs.h"
#include "tools/mxgate/watchdog.h"

namespace mxgate::cli {
namespace {

using report::CheckOutcome;

struct ClaimRow {
  std::string claims;  // comma-separated: claims with one expected table
  uint64_t mismatches = 0;
  std::string first;  // "0x7f800000: expected 0x7e, actual 0x7f" or ""
};

struct CastRow {
  std::string op, target, claimed, error;
  uint64_t inputs = 0;
  double seconds = 0;        // the timed sweep
  double setup_seconds = 0;  // before it: run tables, the op's warm-up call (cast_survey.h)
  double op_seconds = -1;    // of the sweep, inside the op's calls; -1: not measured
  std::vector<ClaimRow> claims;
  std::vector<std::string> matches() const {
    std::vector<std::string> out;
    for (const ClaimRow& c : claims) {
      if (c.mismatches == 0) out.push_back(c.claims);  // one expected table: "a,b,c"
    }
    return out;
  }
};

struct PropertyRow {
  std::string property, verdict, counterexample, detail, located, repro;
  uint64_t cases = 0, unsupported = 0;
};

struct ImplRow {
  std::string spec, name, status = "ok", message;
  std::vector<CastRow> casts;
  std::vector<PropertyRow> properties;
};

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);) out.push_back(item);
  return out;
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The casts of one implementation, in a child: records "cast\t..." and "claim\t..." lines
// (properties::survey_lines). A Python adapter's casts run inside its worker, one request per op
// and target (impl::python_survey_cast): no input or output crosses the socket.
std::string cast_payload(const std::string& spec, const std::string& backend,
                         properties::CastInputs inputs, int progress_fd) {
  const std::vector<const impl::Implementation*> all = impl::resolve(spec);
  std::unique_ptr<gpu::Backend> be = make_backend(backend);
  std::string out;
  for (const impl::Implementation* im : all) {
    for (const auto& [op, target] : properties::survey_targets(*im, *be)) {
      const std::string what =
          im->name + " " + op->name + " -> " + std::string(impl::to_string(target));
      Progress bar(what, properties::survey_input_count(inputs), "inputs", progress_fd,
                   progress_fd >= 0);
      if (InterruptScope::interrupted()) break;  // the parent's flag (a shared page)
      const auto progress = [&bar](uint64_t done, uint64_t) {
        bar.update(done);
        return !InterruptScope::interrupted();
      };
      std::optional<std::string> lines;
      if (impl::is_python_spec(spec)) {
        lines = impl::python_survey_cast(
            spec, *op, target, inputs == properties::CastInputs::kAll ? "all" : "sample",
            [&progress](uint64_t done, uint64_t total) { progress(done, total); });
      }
      out += lines ? *lines
                   : properties::survey_lines(properties::survey_cast(*be, *op, target, inputs,
                                                                      uint64_t{1} << 24, progress));
    }
  }
  return out;
}

void parse_casts(const std::string& payload, ImplRow& row) {
  for (const std::string& line : split(payload, '\n')) {
    const std::vector<std::string> f = split(line, '\t');
    if (f.size() >= 6 && f[0] == "cast") {
      CastRow c;
      c.op = f[1];
      c.target = f[2];
      c.claimed = f[3] == "-" ? "" : f[3];
      c.inputs = std::stoull(f[4]);
      c.seconds = std::stod(f[5]);
      c.error = f.size() > 6 ? f[6] : "";
      c.setup_seconds = f.size() > 7 ? std::stod(f[7]) : 0;
      c.op_seconds = f.size() > 8 && !f[8].empty() ? std::stod(f[8]) : -1;
      row.casts.push_back(c);
    } else if (f.size() >= 3 && f[0] == "claim" && !row.casts.empty()) {
      row.casts.back().claims.push_back({f[1], std::stoull(f[2]), f.size() > 3 ? f[3] : ""});
    }
  }
}

std::string verdict_of(const CheckRun& run) {
  const report::CheckReport& r = run.report;
  if (!r.verdict.empty()) return r.verdict;
  switch (r.result) {
    case CheckOutcome::kPass:
      return "pass";
    case CheckOutcome::kFail:
      return "FAIL";
    case CheckOutcome::kSkip:
      return "unsupported";
    case CheckOutcome::kError:
      return "ERROR";
  }
  return "ERROR";
}

// "a,b;c" as "a, b; c".
std::string display(const std::string& claims) {
  std::string out;
  for (char c : claims) out += c == ',' ? ", " : c == ';' ? "; " : std::string(1, c);
  return out;
}

// Seconds with two decimals, as the tables show them.
std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", s);
  return buf;
}

// Markdown cells: no pipes or newlines.
std::string cell(std::string s) {
  s = one_line(std::move(s));
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string markdown(const std::vector<ImplRow>& rows, properties::CastInputs inputs,
                     const GateSettings& s, bool partial) {
  std::ostringstream md;
  md << "# mxgate survey\n\n";
  if (partial) md << "**Partial: interrupted (Ctrl-C); the rows below ran, the rest did not.**\n\n";
  md << "Seed " << s.opts.seed << ", " << s.property_cases << " cases per property, backend "
     << s.backends.front() << ", cast inputs "
     << (inputs == properties::CastInputs::kAll ? "all 2^32 fp32 bit patterns"
                                                : "sampled (393216 fp32 bit patterns)")
     << ".\n\n## Implementations\n\n| implementation | spec | status |\n|---|---|---|\n";
  for (const ImplRow& r : rows) {
    md << "| " << cell(r.name.empty() ? r.spec : r.name) << " | `" << cell(r.spec) << "` | "
       << cell(r.status == "ok" ? "ok" : r.status + ": " + r.message) << " |\n";
  }
  md << "\n## Casts\n\nEach cast op and target against every convention defining the target: "
        "the conventions it equals bit for bit, else the closest one's count and first "
        "differing input; the seconds of the timed sweep over the inputs, of them the seconds "
        "inside the op's calls (- where not measured: a device sweep), and the seconds of the "
        "setup before the sweep (the claims' run tables, the resident inputs, the op's warm-up "
        "call: a compile or jit).\n\n| implementation | op | target | claims | inputs | "
        "bit-exact with | claim differs | closest otherwise | sweep s | in op s | setup s "
        "|\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const ImplRow& r : rows) {
    for (const CastRow& c : r.casts) {
      const std::vector<std::string> m = c.matches();
      std::string claim_state = "-";
      const ClaimRow* closest = nullptr;
      for (const ClaimRow& cl : c.claims) {
        for (const std::string& name : split(cl.claims, ',')) {
          if (name == c.claimed) {
            claim_state = cl.mismatches == 0 ? "no"
                                             : "**" + std::to_string(cl.mismatches) +
                                                   " inputs; first " + cl.first + "**";
          }
        }
        if (closest == nullptr || cl.mismatches < closest->mismatches) closest = &cl;
      }
      std::string other = "-";
      if (m.empty() && closest != nullptr) {
        other = display(closest->claims) + ": " + std::to_string(closest->mismatches) +
                " inputs; first " + closest->first;
      }
      md << "| " << cell(r.name) << " | " << cell(c.op) << " | " << c.target << " | "
         << cell(c.claimed.empty() ? "(none)" : c.claimed) << " | " << c.inputs << " | "
         << cell(!c.error.empty() ? "ERROR: " + c.error
                 : m.empty()      ? "**none**"
                                  : display(joined(m, ";")))
         << " | " << cell(claim_state) << " | " << cell(other) << " | " << seconds(c.seconds)
         << " | " << (c.op_seconds < 0 ? "-" : seconds(c.op_seconds)) << " | "
         << seconds(c.setup_seconds) << " |\n";
    }
  }
  md << "\n## Properties\n\n| implementation | property | verdict | cases | unsupported | shrunk "
        "case |\n|---|---|---|---|---|---|\n";
  for (const ImplRow& r : rows) {
    for (const PropertyRow& p : r.properties) {
      const bool bad = p.verdict != "pass" && p.verdict != "unsupported";
      md << "| " << cell(r.name) << " | " << p.property << " | "
         << (bad ? "**" + p.verdict + "**" : p.verdict) << " | " << p.cases << " | "
         << p.unsupported << " | " << cell(bad ? p.counterexample : "") << " |\n";
    }
  }
  md << "\n## Failures\n\n";
  bool any = false;
  for (const ImplRow& r : rows) {
    for (const PropertyRow& p : r.properties) {
      if (p.verdict == "pass" || p.verdict == "unsupported") continue;
      any = true;
      md << "- **" << cell(r.name) << "** `" << p.property << "` " << p.verdict << ": "
         << cell(p.detail) << (p.counterexample.empty() ? "" : "; case `" + p.counterexample + "`")
         << (p.located.empty() ? "" : "; " + cell(p.located))
         << (p.repro.empty() ? "" : "; reproduce `" + p.repro + "`") << "\n";
    }
  }
  if (!any) md << "(none)\n";
  return md.str();
}

void write_json(std::ostream& os, const std::vector<ImplRow>& rows, properties::CastInputs inputs,
                const GateSettings& s, bool partial) {
  report::JsonWriter w(os);
  w.begin_object().field("schema", "mxgate-survey/1").field("seed", s.opts.seed);
  w.field("partial", partial);
  w.field("cases", s.property_cases).field("backend", s.backends.front());
  w.field("cast_inputs", inputs == properties::CastInputs::kAll ? "all" : "sample");
  w.key("implementations").begin_array();
  for (const ImplRow& r : rows) {
    w.begin_object().field("spec", r.spec).field("name", r.name).field("status", r.status);
    w.field("message", r.message).key("casts").begin_array();
    for (const CastRow& c : r.casts) {
      w.begin_object().field("op", c.op).field("target", c.target).field("claimed", c.claimed);
      w.field("inputs", c.inputs).field("seconds", c.seconds);
      w.field("setup_seconds", c.setup_seconds);
      if (c.op_seconds >= 0) w.field("op_seconds", c.op_seconds);
      w.field("error", c.error);
      w.key("matches").begin_array();
      for (const std::string& m : c.matches()) w.value(m);
      w.end_array().key("claims").begin_array();
      for (const ClaimRow& cl : c.claims) {
        w.begin_object().key("conventions").begin_array();
        for (const std::string& n : split(cl.claims, ',')) w.value(n);
        w.end_array().field("mismatches", cl.mismatches).field("first", cl.first).end_object();
      }
      w.end_array().end_object();
    }
    w.end_array().key("properties").begin_array();
    for (const PropertyRow& p : r.properties) {
      w.begin_object().field("property", p.property).field("verdict", p.verdict);
      w.field("cases", p.cases).field("unsupported", p.unsupported);
      w.field("counterexample", p.counterexample).field("detail", p.detail);
      w.field("located", p.located).field("reproduce", p.repro).end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
  os << "\n";
}

}  // namespace

int cmd_survey(const Argv& argv) {
  const Args a(argv,
               {"impl", "markdown", "seed", "cases", "backend", "cast-inputs", "check-timeout"},
               {"json"});
  if (!a.positionals().empty()) {
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  }
  const std::string ci = a.get("cast-inputs").value_or("all");
  if (ci != "all" && ci != "sample") throw UsageError("--cast-inputs must be all or sample");
  const properties::CastInputs inputs =
      ci == "all" ? properties::CastInputs::kAll : properties::CastInputs::kSample;
  const std::string backend = a.get("backend").value_or("host");
  if (backend != "host" && backend != "hip" && backend != "cuda") {
    throw UsageError("--backend must be host, hip or cuda");
  }
  const auto md_path = a.get("markdown");
  if (md_path) {
    std::ofstream probe(*md_path, std::ios::app);
    if (!probe) throw UsageError("--markdown: cannot write '" + *md_path + "'");
  }
  GateSettings s;
  s.opts.seed = static_cast<uint64_t>(a.integer("seed", 1, 0, (1LL << 62)));
  s.property_cases = static_cast<int>(a.integer("cases", 100, 1, 1000000));
  s.backends = {backend};
  const double timeout = static_cast<double>(a.integer("check-timeout", 1800, 1, 1LL << 30));
  const bool json = a.flag("json");
  FILE* progress = json ? stderr : stdout;

  std::vector<std::string> specs;
  if (const auto list = a.get("impl")) {
    specs = split(*list, ',');
  } else {
    specs.push_back("builtin");
    for (const std::string& n : impl::shipped_plugin_names()) specs.push_back(n + ":all");
    std::string why;
    const std::vector<std::string> py = impl::shipped_python_specs(&why);
    if (py.empty()) std::fprintf(progress, "python adapters: none listed (%s)\n", why.c_str());
    specs.insert(specs.end(), py.begin(), py.end());
  }
  Watchdog watchdog;
  // The cast children's progress lines go to this process's stderr (theirs is captured).
  const int progress_fd = Progress::enabled() ? ::dup(STDERR_FILENO) : -1;
  std::vector<ImplRow> rows;
  const InterruptScope interrupt;
  Progress done("survey", specs.size(), "implementations");
  for (std::size_t next = 0; next < specs.size() && !InterruptScope::interrupted(); ++next) {
    const std::string& spec = specs[next];
    done.update(next);
    if (spec.empty()) continue;
    std::vector<GateImpl> found;
    if (spec == "builtin") {
      GateImpl b;
      b.spec = "builtin";
      b.name = "builtin";
      b.families = impl::builtin().families();
      found.push_back(b);
    } else {
      found = resolve_impl(spec, watchdog, timeout);
    }
    for (const GateImpl& gi : found) {
      if (InterruptScope::interrupted()) break;
      ImplRow row;
      row.spec = gi.spec;
      row.name = gi.name;
      std::fprintf(progress, "%s ... ", gi.error.empty() ? gi.name.c_str() : gi.spec.c_str());
      std::fflush(progress);
      if (!gi.error.empty()) {
        row.status = gi.environment_error ? "unavailable" : "load error";
        row.message = gi.error;
        std::fprintf(progress, "%s: %s\n", row.status.c_str(), one_line(gi.error).c_str());
        rows.push_back(row);
        continue;
      }
      if (gi.families & impl::family_bit(impl::Family::kCast)) {
        const ChildOutcome o = watchdog.run(
            [&] { return cast_payload(gi.spec, backend, inputs, progress_fd); }, timeout);
        if (o.kind == ChildOutcome::Kind::kResult) {
          parse_casts(o.payload, row);
        } else {
          CastRow err;
          err.op = "(casts)";
          err.error = o.kind == ChildOutcome::Kind::kTimeout
                          ? "no result within " + std::to_string(timeout) + " s"
                          : "the cast survey's process ended: " + one_line(o.output_tail);
          row.casts.push_back(err);
        }
        std::fprintf(progress, "%zu casts; ", row.casts.size());
        std::fflush(progress);
      }
      for (const properties::Property& p : properties::all_properties()) {
        const bool applies = gi.spec == "builtin" ? properties::applies(p, impl::builtin())
                                                  : (p.families & gi.families) != 0;
        if (!applies || InterruptScope::interrupted()) continue;
        GateCheck c;
        c.name = std::string(p.name) + "[" + gi.name + "]";
        c.backend = backend;
        const std::string impl_spec = gi.spec == "builtin" ? "" : gi.spec;
        c.run = [&p, backend, s, impl_spec] {
          return property_check(p, backend, s, "", impl_spec);
        };
        const CheckRun run = run_in_child(c, watchdog, timeout);
        PropertyRow pr;
        pr.property = std::string(p.name);
        pr.verdict = verdict_of(run);
        pr.cases = run.report.cases;
        pr.unsupported = run.report.unsupported;
        pr.counterexample = run.report.counterexample.value_or("");
        pr.detail = run.report.detail;
        pr.located = run.located_text;
        pr.repro = run.report.repro;
        std::fprintf(progress, "%s %s; ", pr.property.c_str(), pr.verdict.c_str());
        std::fflush(progress);
        row.properties.push_back(pr);
      }
      std::fprintf(progress, "\n");
      rows.push_back(row);
    }
  }
  const bool partial = InterruptScope::interrupted();
  if (partial) std::fprintf(progress, "interrupted: the report holds what ran (partial)\n");
  const std::string md = markdown(rows, inputs, s, partial);
  if (md_path) {
    std::ofstream out(*md_path);
    out << md;
    std::fprintf(progress, "markdown: %s\n", md_path->c_str());
  }
  if (json) {
    write_json(std::cout, rows, inputs, s, partial);
  } else {
    std::printf("\n%s", md.c_str());
  }
  if (progress_fd >= 0) ::close(progress_fd);
  return partial ? kInterruptedExit : 0;
}

}  // namespace mxgate::cli
