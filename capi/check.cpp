#include "capi/check.h"

#include <sstream>

#include "gpu/host/host_backend.h"
#include "impl/harness.h"
#include "impl/plugin.h"
#include "properties/case.h"
#include "properties/property.h"
#include "report/json_writer.h"
#include "verbs/args.h"

namespace mxgate::capi {
namespace {

using properties::Failure;
using verbs::UsageError;

std::vector<std::string> family_names(impl::FamilyMask mask) {
  std::vector<std::string> out;
  for (impl::Family f : impl::all_families()) {
    if (mask & impl::family_bit(f)) out.emplace_back(impl::to_string(f));
  }
  return out;
}

std::string property_list() {
  std::ostringstream os;
  report::JsonWriter w(os, 0);
  w.begin_array();
  for (const properties::Property& p : properties::all_properties()) {
    w.begin_object().field("name", p.name).key("families").begin_array();
    for (const std::string& f : family_names(p.families)) w.value(f);
    w.end_array().field("guards", p.guards).end_object();
  }
  w.end_array();
  return os.str();
}

void write_failure(report::JsonWriter& w, const std::optional<Failure>& f) {
  w.key("failure");
  if (!f) {
    w.null();
    return;
  }
  w.begin_object().field("kind", properties::to_string(f->kind)).field("what", f->what);
  const bool bf16 = f->expected && f->expected->format == OutputFormat::kBf16;
  w.field("output", bf16 ? "bf16" : "fp32").key("where");
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

std::string check_json(const char* property, const NamedOptions& options, const mxgate_impl* mi) {
  if (property == nullptr) return property_list();
  const properties::Property* p = properties::find_property(property);
  if (p == nullptr) {
    throw UsageError("unknown property '" + std::string(property) + "' (mxgate property --list)");
  }
  const verbs::Args a(options, {"seed", "cases", "max-size", "case"}, {"no-shrink"});
  if (mi == nullptr) throw UsageError("impl is NULL");
  const mxgate_plugin plugin{
      MXGATE_PLUGIN_ABI_VERSION, sizeof(mxgate_plugin), "python", nullptr, 1, mi};
  std::vector<impl::Implementation> impls;
  try {
    impls = impl::implementations_of("python (in-process)", plugin);
  } catch (const impl::PluginError& e) {
    throw UsageError(e.what());
  }
  const impl::Implementation& im = impls.front();
  gpu::HostBackend be;
  const properties::Context ctx{&be, {}, nullptr, &im};
  properties::RunOptions ro;
  ro.seed = static_cast<uint64_t>(a.integer("seed", 1, 0, (1LL << 62)));
  ro.cases = static_cast<int>(a.integer("cases", 100, 1, 100000000));
  ro.max_size = static_cast<int>(a.integer("max-size", 100, 1, 100000));
  ro.shrink = !a.flag("no-shrink");
  properties::RunResult r;
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
  std::ostringstream os;
  report::JsonWriter w(os, 0);
  w.begin_object().field("schema", "mxgate-check/1").field("property", p->name);
  w.field("impl", im.name).field("seed", ro.seed).field("cases_requested", ro.cases);
  w.field("passed", r.passed).field("cases", r.cases).field("unsupported", r.unsupported);
  w.key("unsupported_reasons").begin_array();
  for (const std::string& s : r.unsupported_reasons) w.value(s);
  w.end_array().key("ops").begin_array();
  for (const std::string& s : r.ops) w.value(s);
  w.end_array();
  w.field("counterexample",
          r.counterexample ? std::optional(r.counterexample->describe()) : std::nullopt);
  write_failure(w, r.failure);
  w.field("message", r.message).end_object();
  return os.str();
}

}  // namespace mxgate::capi
