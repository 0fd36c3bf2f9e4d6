// The record of one `mxgate gate` run, and its two machine-readable forms: a JSON report (for
// dashboards and scripts) and a JUnit XML report (for CI systems that render test results).
//
// The structs are plain data filled by the gate; totals are derived from the checks, never
// stored, so the two reports cannot disagree with the per-check results.
//
// JSON layout (schema "mxgate-gate-report/1"); absent optionals are written as null:
//   {"schema", "run": {"tool_version", "seed", "cases", "backend", "time_budget_s",
//    "start_time" (ISO 8601 UTC, "Z"), "impls": [NAME...] (the implementations under test)},
//    "checks": [{"name", "backend", "impl" (the implementation a property / regression check ran
//      on; null for format and reference checks), "cases", "result" ("pass"|"fail"|"skip"|
//      "error"), "verdict" (the result, or "contract_mismatch" for a failure that is one),
//      "unsupported" (cases the implementation could not take; never failures), "seconds",
//      "detail", "repro", "counterexample", "located": {"row", "col", "expected_bits",
//      "actual_bits" ("0x3f800000"; 4 hex digits for bf16), "ulp_distance"}, "coverage": {name:
//      count}, "heatmap"}],
//    "totals": {"checks", "passed", "failed", "skipped", "errors", "seconds"}}
// ulp_distance is an integer; 18446744073709551615 (kNanUlpDistance) means NaN vs a number.
//
// JUnit layout: one <testsuites> holding one <testsuite name="mxgate gate">, <properties> with
// the run info, one <testcase classname="mxgate.BACKEND" name="CHECK"> per check
// (classname "mxgate.IMPL.BACKEND" for a check of an implementation other than builtin), carrying
// <failure> (fail), <error> (error) or <skipped> (skip), whose body holds the detail, the
// counterexample, the located element and the repro command; coverage and the heatmap path go to
// the testcase's <system-out>. Validated by report/junit.xsd.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "reference/verdict.h"

namespace mxgate::report {

enum class CheckOutcome { kPass, kFail, kSkip, kError };

// "pass", "fail", "skip", "error".
std::string_view outcome_name(CheckOutcome outcome);

struct RunInfo {
  std::string tool_version;  // e.g. "mxgate 0.8 (9f18a02)"
  uint64_t seed = 0;
  uint64_t cases = 0;              // 0: each check's default
  std::string backend;             // "host", "hip", "cuda", or "all"
  double time_budget_seconds = 0;  // 0: no budget
  std::chrono::system_clock::time_point start_time{};
  std::vector<std::string> impls;  // the implementations under test ("builtin", plugins)
};

// The element a verdict names (docs/architecture.md §5.4).
struct LocatedElement {
  std::size_t row = 0;
  std::size_t col = 0;
  uint32_t expected_bits = 0;
  uint32_t actual_bits = 0;
  int bit_width = 32;  // 32 (fp32) or 16 (bf16): how many hex digits the bits are written with
  uint64_t ulp_distance = 0;

  static LocatedElement from(const BitMismatch& m, OutputFormat format);
  // "0x3f800001" (fp32) or "0x3f80" (bf16).
  std::string expected_hex() const;
  std::string actual_hex() const;
};

struct CheckReport {
  std::string name;     // dotted, e.g. "gemm.exact.bpreshuffle"
  std::string backend;  // "host", "hip", "cuda"
  std::string impl;     // the implementation it checked; "" for checks of none
  uint64_t cases = 0;
  CheckOutcome result = CheckOutcome::kPass;
  std::string verdict;       // "contract_mismatch" when the failure is one; "" = the result
  uint64_t unsupported = 0;  // cases the implementation could not take
  double seconds = 0;
  std::string detail;                         // first failure, or a one-line summary
  std::string repro;                          // one command that reproduces a failure
  std::optional<std::string> counterexample;  // the shrunk input, as text
  std::optional<LocatedElement> located;
  std::optional<std::map<std::string, uint64_t>> coverage;  // e.g. {"k_mod_128!=0": 41}
  std::optional<std::string> heatmap_path;                  // SVG/PNG written for this check
};

struct GateTotals {
  std::size_t checks = 0;
  std::size_t passed = 0;
  std::size_t failed = 0;
  std::size_t skipped = 0;
  std::size_t errors = 0;
  double seconds = 0;  // sum of the checks' seconds
};

struct GateReport {
  RunInfo run;
  std::vector<CheckReport> checks;
  GateTotals totals() const;
};

// "2025-01-31T12:34:56Z" style (UTC, seconds); with_zone=false drops the "Z" (JUnit timestamps
// are written without a zone designator by most producers and readers).
std::string iso8601_utc(std::chrono::system_clock::time_point t, bool with_zone = true);

// Writers. Throw std::runtime_error naming the report when the stream fails.
void write_json_report(const GateReport& report, std::ostream& out);
void write_junit_xml(const GateReport& report, std::ostream& out);

// The same into a file (created or truncated). Throw std::runtime_error naming the path when it
// cannot be opened or written (missing directory, no permission, disk full).
void write_json_report_file(const GateReport& report, const std::filesystem::path& path);
void write_junit_xml_file(const GateReport& report, const std::filesystem::path& path);

}  // namespace mxgate::report
