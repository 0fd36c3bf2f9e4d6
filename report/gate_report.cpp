#include "report/gate_report.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <stdexcept>
#include <string>

#include "report/file_output.h"
#include "report/json_writer.h"
#include "report/xml_escape.h"

namespace mxgate::report {
namespace {

std::string hex_bits(uint32_t bits, int width) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", width == 16 ? 4 : 8, static_cast<unsigned>(bits));
  return buf;
}

// JUnit times: seconds with millisecond resolution, never negative or non-finite (the schema
// types them as non-negative decimals).
std::string junit_seconds(double s) {
  if (!std::isfinite(s) || s < 0) s = 0;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

std::string element_line(const LocatedElement& e) {
  return "element (" + std::to_string(e.row) + "," + std::to_string(e.col) + "): expected " +
         e.expected_hex() + ", actual " + e.actual_hex() + ", " + std::to_string(e.ulp_distance) +
         " ulp";
}

void check_stream(const std::ostream& out, const char* what) {
  if (!out) throw std::runtime_error(std::string(what) + ": output stream failed");
}

}  // namespace

std::string_view outcome_name(CheckOutcome outcome) {
  switch (outcome) {
    case CheckOutcome::kPass:
      return "pass";
    case CheckOutcome::kFail:
      return "fail";
    case CheckOutcome::kSkip:
      return "skip";
    case CheckOutcome::kError:
      return "error";
  }
  return "error";
}

LocatedElement LocatedElement::from(const BitMismatch& m, OutputFormat format) {
  LocatedElement e;
  e.row = m.row;
  e.col = m.col;
  e.expected_bits = m.expected_bits;
  e.actual_bits = m.actual_bits;
  e.bit_width = format == OutputFormat::kBf16 ? 16 : 32;
  e.ulp_distance = m.ulp_distance;
  return e;
}

std::string LocatedElement::expected_hex() const { return hex_bits(expected_bits, bit_width); }
std::string LocatedElement::actual_hex() const { return hex_bits(actual_bits, bit_width); }

GateTotals GateReport::totals() const {
  GateTotals t;
  t.checks = checks.size();
  for (const CheckReport& c : checks) {
    switch (c.result) {
      case CheckOutcome::kPass:
        ++t.passed;
        break;
      case CheckOutcome::kFail:
        ++t.failed;
        break;
      case CheckOutcome::kSkip:
        ++t.skipped;
        break;
      case CheckOutcome::kError:
        ++t.errors;
        break;
    }
    if (std::isfinite(c.seconds) && c.seconds > 0) t.seconds += c.seconds;
  }
  return t;
}

std::string iso8601_utc(std::chrono::system_clock::time_point t, bool with_zone) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  if (gmtime_r(&tt, &tm) == nullptr) throw std::runtime_error("iso8601_utc: time out of range");
  char buf[40];
  std::strftime(buf, sizeof buf, with_zone ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

void write_json_report(const GateReport& report, std::ostream& out) {
  JsonWriter w(out);
  const RunInfo& run = report.run;
  w.begin_object();
  w.field("schema", "mxgate-gate-report/1");
  w.key("run").begin_object();
  w.field("tool_version", run.tool_version);
  w.field("seed", run.seed);
  w.field("cases", run.cases);
  w.field("backend", run.backend);
  w.field("time_budget_s", run.time_budget_seconds);
  w.field("start_time", iso8601_utc(run.start_time));
  w.key("impls").begin_array();
  for (const std::string& i : run.impls) w.value(i);
  w.end_array();
  w.end_object();

  w.key("checks").begin_array();
  for (const CheckReport& c : report.checks) {
    w.begin_object();
    w.field("name", c.name);
    w.field("backend", c.backend);
    w.field("impl", c.impl.empty() ? std::optional<std::string>() : c.impl);
    w.field("cases", c.cases);
    w.field("result", outcome_name(c.result));
    w.field("verdict", c.verdict.empty() ? std::string(outcome_name(c.result)) : c.verdict);
    w.field("unsupported", c.unsupported);
    w.field("seconds", c.seconds);
    w.field("detail", c.detail);
    w.field("repro", c.repro);
    w.field("counterexample", c.counterexample);
    w.key("located");
    if (c.located) {
      const LocatedElement& e = *c.located;
      w.begin_object();
      w.field("row", e.row);
      w.field("col", e.col);
      w.field("expected_bits", e.expected_hex());
      w.field("actual_bits", e.actual_hex());
      w.field("ulp_distance", e.ulp_distance);
      w.end_object();
    } else {
      w.null();
    }
    w.key("coverage");
    if (c.coverage) {
      w.begin_object();
      for (const auto& [name, count] : *c.coverage) w.field(name, count);
      w.end_object();
    } else {
      w.null();
    }
    w.field("heatmap", c.heatmap_path);
    w.end_object();
  }
  w.end_array();

  const GateTotals t = report.totals();
  w.key("totals").begin_object();
  w.field("checks", t.checks);
  w.field("passed", t.passed);
  w.field("failed", t.failed);
  w.field("skipped", t.skipped);
  w.field("errors", t.errors);
  w.field("seconds", t.seconds);
  w.end_object();
  w.end_object();
  out << '\n';
  check_stream(out, "write_json_report");
}

void write_junit_xml(const GateReport& report, std::ostream& out) {
  const RunInfo& run = report.run;
  const GateTotals t = report.totals();
  const std::string counts = " tests=\"" + std::to_string(t.checks) + "\" failures=\"" +
                             std::to_string(t.failed) + "\" errors=\"" + std::to_string(t.errors) +
                             "\" skipped=\"" + std::to_string(t.skipped) + "\" time=\"" +
                             junit_seconds(t.seconds) + "\" timestamp=\"" +
                             iso8601_utc(run.start_time, false) + "\"";
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"mxgate\"" << counts << ">\n";
  out << "  <testsuite name=\"mxgate gate\"" << counts << ">\n";
  out << "    <properties>\n";
  const auto property = [&](std::string_view name, const std::string& value) {
    out << "      <property name=\"" << xml_escape_attr(name) << "\" value=\""
        << xml_escape_attr(value) << "\"/>\n";
  };
  property("seed", std::to_string(run.seed));
  property("backend", run.backend);
  property("cases", std::to_string(run.cases));
  property("time_budget_s", junit_seconds(run.time_budget_seconds));
  property("tool_version", run.tool_version);
  std::string impls;
  for (const std::string& i : run.impls) impls += (impls.empty() ? "" : ",") + i;
  property("impls", impls);
  out << "    </properties>\n";

  for (const CheckReport& c : report.checks) {
    const std::string classname = c.impl.empty() || c.impl == "builtin"
                                      ? "mxgate." + c.backend
                                      : "mxgate." + c.impl + "." + c.backend;
    out << "    <testcase classname=\"" << xml_escape_attr(classname) << "\" name=\""
        << xml_escape_attr(c.name) << "\" time=\"" << junit_seconds(c.seconds) << "\"";
    std::string system_out;
    if (c.coverage) {
      for (const auto& [name, count] : *c.coverage) {
        system_out += "coverage " + name + ": " + std::to_string(count) + "\n";
      }
    }
    if (c.heatmap_path) system_out += "heatmap: " + *c.heatmap_path + "\n";
    if (c.unsupported != 0) {
      system_out += "unsupported cases: " + std::to_string(c.unsupported) + "\n";
    }
    if (c.result == CheckOutcome::kPass && system_out.empty()) {
      out << "/>\n";
      continue;
    }
    out << ">\n";
    if (c.result == CheckOutcome::kSkip) {
      out << "      <skipped message=\"" << xml_escape_attr(c.detail) << "\"/>\n";
    } else if (c.result == CheckOutcome::kFail || c.result == CheckOutcome::kError) {
      const bool fail = c.result == CheckOutcome::kFail;
      std::string body = c.detail + "\n";
      if (c.counterexample) body += "counterexample:\n" + *c.counterexample + "\n";
      if (c.located) body += element_line(*c.located) + "\n";
      if (!c.repro.empty()) body += "reproduce: " + c.repro + "\n";
      const char* tag = fail ? "failure" : "error";
      const std::string type = !fail                              ? "mxgate.check_error"
                               : c.verdict == "contract_mismatch" ? "mxgate.contract_mismatch"
                                                                  : "mxgate.check_failed";
      out << "      <" << tag << " message=\"" << xml_escape_attr(c.detail) << "\" type=\"" << type
          << "\">" << xml_escape_text(body) << "</" << tag << ">\n";
    }
    if (!system_out.empty()) {
      out << "      <system-out>" << xml_escape_text(system_out) << "</system-out>\n";
    }
    out << "    </testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
  check_stream(out, "write_junit_xml");
}

void write_json_report_file(const GateReport& report, const std::filesystem::path& path) {
  write_file(path, "JSON report", [&](std::ostream& out) { write_json_report(report, out); });
}

void write_junit_xml_file(const GateReport& report, const std::filesystem::path& path) {
  write_file(path, "JUnit report", [&](std::ostream& out) { write_junit_xml(report, out); });
}

}  // namespace mxgate::report
