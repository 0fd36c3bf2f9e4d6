// A property run's result as text and as JSON (run_report.h): one renderer for the CLI and the
// C API.
#include "properties/run_report.h"

#include <cstdio>
#include <optional>
#include <sstream>
#include <vector>

#include "report/json_writer.h"

namespace mxgate::properties {
namespace {

bool bf16_output(const Failure& f) {
  return f.expected && f.expected->format == OutputFormat::kBf16;
}

std::vector<std::string> family_names(impl::FamilyMask mask) {
  std::vector<std::string> out;
  for (impl::Family f : impl::all_families()) {
    if (mask & impl::family_bit(f)) out.emplace_back(impl::to_string(f));
  }
  return out;
}

// " (2 unsupported: REASON; REASON)" or "".
std::string unsupported_note(const RunResult& r) {
  if (r.unsupported == 0) return "";
  return " (" + std::to_string(r.unsupported) + " unsupported: " + unsupported_reasons(r) + ")";
}

void write_failure(report::JsonWriter& w, const std::optional<Failure>& f) {
  w.key("failure");
  if (!f) {
    w.null();
    return;
  }
  w.begin_object().field("kind", to_string(f->kind)).field("what", f->what);
  w.field("output", bf16_output(*f) ? "bf16" : "fp32").key("where");
  if (f->where) {
    w.begin_object().field("row", f->where->row).field("col", f->where->col);
    w.field("expected_bits", f->where->expected_bits).field("actual_bits", f->where->actual_bits);
    w.field("ulp", f->where->ulp_distance).end_object();
  } else {
    w.null();
  }
  w.end_object();
}

}  // namespace

std::string located(const Failure& f) {
  if (!f.where) return "";
  const bool bf16 = bf16_output(f);
  char buf[160];
  std::snprintf(buf, sizeof buf, "element (%zu,%zu): expected 0x%0*X, actual 0x%0*X, %llu ulp",
                f.where->row, f.where->col, bf16 ? 4 : 8, f.where->expected_bits, bf16 ? 4 : 8,
                f.where->actual_bits, static_cast<unsigned long long>(f.where->ulp_distance));
  return buf;
}

std::string unsupported_reasons(const RunResult& r) {
  std::string out;
  for (const std::string& w : r.unsupported_reasons) out += (out.empty() ? "" : "; ") + w;
  return out;
}

std::string run_text(const RunResult& r) {
  if (r.passed && r.cases == 0) return "unsupported" + unsupported_note(r) + "\n";
  const std::string verdict = r.passed    ? std::string("pass")
                              : r.failure ? std::string(to_string(r.failure->kind))
                                          : std::string("fail");
  std::string out =
      verdict + " after " + std::to_string(r.cases) + " cases" + unsupported_note(r) + "\n";
  for (const std::string& why : r.ops_not_checked) out += "    not checked: " + why + "\n";
  if (r.passed) return out;
  if (r.counterexample) out += "    shrunk case: " + r.counterexample->describe() + "\n";
  if (r.failure) {
    out += "    failure: " + r.failure->what + "\n";
    const std::string loc = located(*r.failure);
    if (!loc.empty()) out += "    " + loc + "\n";
  }
  return out;
}

std::string run_json(std::string_view property, std::string_view impl, const RunOptions& asked,
                     const RunResult& r, const TacticReport& tactic) {
  std::ostringstream os;
  report::JsonWriter w(os, 0);
  w.begin_object().field("schema", "mxgate-check/1").field("property", property);
  w.field("impl", impl).field("seed", asked.seed).field("cases_requested", asked.cases);
  w.field("passed", r.passed).field("cases", r.cases).field("unsupported", r.unsupported);
  w.key("unsupported_reasons").begin_array();
  for (const std::string& s : r.unsupported_reasons) w.value(s);
  w.end_array().key("ops").begin_array();
  for (const std::string& s : r.ops) w.value(s);
  w.end_array().key("ops_not_checked").begin_array();
  for (const std::string& s : r.ops_not_checked) w.value(s);
  w.end_array();
  w.field("counterexample",
          r.counterexample ? std::optional(r.counterexample->describe()) : std::nullopt);
  write_failure(w, r.failure);
  w.field("message", r.message);
  w.field("tactic", tactic.index ? std::optional<uint64_t>(*tactic.index) : std::nullopt);
  w.field("tactic_name", tactic.name).field("tactics", tactic.selection).end_object();
  return os.str();
}

std::string property_list_json() {
  std::ostringstream os;
  report::JsonWriter w(os, 0);
  w.begin_array();
  for (const Property& p : all_properties()) {
    w.begin_object().field("name", p.name).key("families").begin_array();
    for (const std::string& f : family_names(p.families)) w.value(f);
    w.end_array().field("guards", p.guards).end_object();
  }
  w.end_array();
  return os.str();
}

std::string property_list_text() {
  std::string out;
  for (const Property& p : all_properties()) {
    std::string families;
    for (const std::string& f : family_names(p.families)) {
      families += (families.empty() ? "" : ",") + f;
    }
    // "%-32s": the name padded to 32 columns, never cut.
    std::string name(p.name);
    if (name.size() < 32) name.resize(32, ' ');
    out += name + " [" + (families.empty() ? "builtin" : families) + "] " + std::string(p.guards) +
           "\n";
  }
  return out;
}

}  // namespace mxgate::properties
