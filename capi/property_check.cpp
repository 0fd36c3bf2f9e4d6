// libmxgate.so, part two: mxgate_api_check (include/mxgate/api.h), a property of properties/ run
// against an implementation built in memory by the caller (an mxgate_impl whose ops' run
// functions are the caller's callbacks: the Python package's ctypes adapters, docs/python.md §9),
// with the CLI property runner's generators, contracts and shrinking, on a host backend. The
// result is JSON (schema mxgate-check/1), rendered by properties/run_report.h as `mxgate property`
// renders its text. Part one, mxgate_api_run and the verbs, is verb_calls.cpp.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "capi/call_result.h"
#include "capi/heap_policy.h"
#include "capi/in_memory_impl.h"
#include "gpu/host/host_backend.h"
#include "impl/harness.h"
#include "impl/tactics.h"
#include "mxgate/api.h"
#include "mxgate/plugin.h"
#include "properties/case.h"
#include "properties/property.h"
#include "properties/run_report.h"
#include "verbs/args.h"

namespace mxgate::capi {
namespace {

using verbs::UsageError;

// A property run allocates and frees operand, oracle and buffer memory of up to a few MB per case.
// property nullptr: the property list. Options: seed, cases, max-size, case (one case's text:
// replayed without its generator), no-shrink (a flag). Throws UsageError on bad input (an unknown
// property or option, a malformed implementation or case).
std::string check_json(const char* property, const std::vector<verbs::Args::Named>& options,
                       const mxgate_impl* mi) {
  if (property == nullptr) return properties::property_list_json();
  keep_freed_heap();
  const properties::Property* p = properties::find_property(property);
  if (p == nullptr) {
    throw UsageError("unknown property '" + std::string(property) + "' (mxgate property --list)");
  }
  const verbs::Args a(options, {"seed", "cases", "max-size", "case", "tactic", "max-tactics"},
                      {"no-shrink"});
  const impl::Implementation base = in_memory_implementation(mi);
  gpu::HostBackend be;
  properties::RunOptions ro;
  ro.seed = static_cast<uint64_t>(a.integer("seed", 1, 0, (1LL << 62)));
  ro.cases = static_cast<int>(a.integer("cases", 100, 1, 100000000));
  ro.max_size = static_cast<int>(a.integer("max-size", 100, 1, 100000));
  ro.shrink = !a.flag("no-shrink");
  // Every tactic (docs/plugins.md §3.6), a seeded sample past max-tactics, or `tactic` alone; the
  // result is the first failing tactic's, else the last one run.
  std::optional<uint32_t> only;
  if (a.get("tactic")) only = static_cast<uint32_t>(a.integer("tactic", 0, 0, 4095));
  impl::TacticSelection sel;
  try {
    sel = impl::select_tactics(
        base, static_cast<uint32_t>(a.integer("max-tactics", impl::kDefaultTacticLimit, 0, 4096)),
        ro.seed, only);
  } catch (const std::out_of_range& e) {
    throw UsageError(e.what());
  }
  properties::RunResult r;
  properties::TacticReport tr;
  tr.selection = sel.describe();
  int cases = 0, unsupported = 0;
  std::vector<std::string> reasons;
  for (const uint32_t t : sel.chosen) {
    const impl::Implementation im = impl::tactic_view(base, t);
    // A view past tactic 0 holds only the ops of more tactics; tactic 0 always runs (a property
    // with no op of its families reports that, unsupported).
    if (t != sel.chosen.front() && !properties::applies(*p, im)) continue;
    const properties::Context ctx{&be, {}, nullptr, &im};
    r = properties::RunResult{};
    if (const auto text = a.get("case")) {
      properties::Case c;
      try {
        c = properties::Case::parse(std::string(p->name), *text);
        r.counterexample = c;
        r.failure = properties::check_case(*p, ctx, c);
        r.cases = 1;
      } catch (const properties::CaseError& e) {
        throw UsageError(std::string("case: ") + e.what());
      } catch (const impl::Unsupported& e) {
        r.unsupported = 1;
        r.unsupported_reasons.emplace_back(e.what());
      }
      r.passed = !r.failure;
      if (r.passed) r.counterexample.reset();
    } else {
      r = properties::run_property(*p, ctx, ro);
    }
    cases += r.cases;
    unsupported += r.unsupported;
    for (const std::string& why : r.unsupported_reasons) {
      if (reasons.size() < 8) reasons.push_back(why);
    }
    if (sel.count > 1) {
      tr.index = t;
      const std::string label = im.tactic_label();
      const std::size_t open = label.find('(');
      tr.name = open == std::string::npos ? std::to_string(t)
                                          : label.substr(open + 1, label.size() - open - 2);
    }
    if (!r.passed) break;
  }
  if (r.passed) r.cases = cases;
  r.unsupported = unsupported;
  r.unsupported_reasons = reasons;
  return properties::run_json(p->name, base.name, ro, r, tr);
}

}  // namespace
}  // namespace mxgate::capi

extern "C" {

int mxgate_api_check(const char* property, size_t option_count, const char* const* names,
                     const char* const* values, const mxgate_impl* impl,
                     mxgate_api_result** result) {
  if (!result) {
    mxgate::capi::last_error = "result is NULL";
    return MXGATE_API_ERROR_INPUT;
  }
  *result = nullptr;
  return mxgate::capi::guarded([&] {
    const auto named = mxgate::capi::named_options(option_count, names, values);
    auto r = std::make_unique<mxgate_api_result>();
    r->text = mxgate::capi::check_json(property, named, impl);
    *result = r.release();
  });
}

}  // extern "C"
