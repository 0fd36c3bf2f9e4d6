// A property run's result rendered once, for both readers: the text `mxgate property` prints
// (tools/mxgate/property_cli.cpp) and the JSON of mxgate_api_check (capi/property_check.cpp,
// schema mxgate-check/1, docs/python.md §9), and the property list each of them gives. The gate
// (tools/mxgate/gate_stages.cpp) turns a result into a report::CheckReport instead, with the same
// located-element line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "properties/property.h"

namespace mxgate::properties {

// "element (r,c): expected 0x..., actual 0x..., N ulp" (4 hex digits for a bf16 output, 8 for
// fp32), or "" when the failure locates no element.
std::string located(const Failure& f);

// The reasons of the unsupported cases joined by "; " ("" when none).
std::string unsupported_reasons(const RunResult& r);

// What `mxgate property` prints after "NAME on BACKEND, seed S, N cases, faults F ... ": one line
// ("pass after 100 cases", "unsupported (...)", "fail after 3 cases (2 unsupported: ...)") and,
// on a failure, the shrunk case, the failure and its located element on indented lines.
std::string run_text(const RunResult& r);

// mxgate-check/1 on one line: the property, the implementation's name, the seed and case count
// asked for, then the result (passed, cases, unsupported and why, ops, counterexample, the failure
// with its located element, RapidCheck's message).
// `tactic`: the tactic the result is of (an implementation of several tactics: the first that
// failed, else the last run) and the run's tactic selection (impl/tactics.h describe()).
struct TacticReport {
  std::optional<uint32_t> index;
  std::string name;
  std::string selection;
};
std::string run_json(std::string_view property, std::string_view impl, const RunOptions& asked,
                     const RunResult& r, const TacticReport& tactic = {});

// Every property: as JSON on one line ([{"name", "families", "guards"}]), and as the lines of
// `mxgate property --list` ("NAME [FAMILY,...] GUARDS", "builtin" for a property of no family).
std::string property_list_json();
std::string property_list_text();

}  // namespace mxgate::properties
