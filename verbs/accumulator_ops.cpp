#include "verbs/accumulator_ops.h"

#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "reference/format.h"
#include "report/json_writer.h"

namespace mxgate::verbs {
namespace {

using report::JsonWriter;

constexpr const char* kProbeFormats = "e4m3fn e5m2 e4m3fnuz e5m2fnuz";

// "  NAME                 VALUE    MEANING": the name and value left-aligned in 20 and 8
// columns (wider ones push the rest right).
std::string parameter_line(const AccumulatorParameter& p) {
  auto pad = [](const std::string& s, std::size_t width) {
    return s.size() < width ? s + std::string(width - s.size(), ' ') : s;
  };
  return "  " + pad(p.name, 20) + " " + pad(p.value, 8) + " " + p.meaning + "\n";
}

}  // namespace

AccumulatorModel accumulator_spec(const std::string& option, const std::string& spec) {
  try {
    return parse_accumulator_spec(spec);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--" + option + ": " + e.what());
  }
}

const std::set<std::string>& accumulators_flags() {
  static const std::set<std::string> flags = {"json"};
  return flags;
}

std::string accumulators_text(const Args& a) {
  if (a.flag("json")) {
    std::ostringstream out;
    JsonWriter w(out);
    w.begin_array();
    for (const AccumulatorModel& m : all_accumulators()) {
      w.begin_object();
      w.field("name", m.name).field("kind", to_string(m.kind));
      w.key("parameters").begin_object();
      for (const AccumulatorParameter& p : accumulator_parameters(m)) w.field(p.name, p.value);
      w.end_object();
      w.field("description", m.description).field("source", m.source);
      w.field("status", m.status);
      w.end_object();
    }
    w.end_array();
    return out.str() + "\n";
  }
  std::string out;
  for (const AccumulatorModel& m : all_accumulators()) {
    out += m.name + " (" + std::string(to_string(m.kind)) + ")\n  " + m.description + "\n";
    for (const AccumulatorParameter& p : accumulator_parameters(m)) {
      out += parameter_line(p);
    }
    out += "  source: " + m.source + "\n";
    out += "  status: " + m.status + "\n\n";
  }
  return out;
}

const std::set<std::string>& probe_accumulator_options() {
  static const std::set<std::string> options = {"simulate", "impl", "backend", "scaling",
                                                "m",        "n",    "k",       "format"};
  return options;
}

const std::set<std::string>& probe_accumulator_flags() {
  static const std::set<std::string> flags = {"json"};
  return flags;
}

ProbeAccumulatorSpec probe_accumulator_spec(const Args& a) {
  ProbeAccumulatorSpec spec;
  const std::optional<std::string> simulate = a.get("simulate"), impl = a.get("impl");
  if (simulate.has_value() == impl.has_value()) {
    throw UsageError(simulate ? "--simulate and --impl exclude each other"
                              : "missing required option --simulate or --impl");
  }
  if (simulate) spec.model = accumulator_spec("simulate", *simulate);
  if (impl) spec.impl = *impl;
  if (simulate && a.get("backend")) throw UsageError("--backend is for --impl, not --simulate");
  ProbeOptions& o = spec.options;
  spec.scaling = a.get("scaling").value_or("per-tensor");
  if (spec.scaling == "per-tensor") {
    o.scaling = ProbeScaling::kPerTensor;
  } else if (spec.scaling == "block") {
    o.scaling = ProbeScaling::kBlock;
  } else {
    throw UsageError("--scaling: '" + spec.scaling + "' is not a scaling (per-tensor, block)");
  }
  o.m = static_cast<std::size_t>(a.integer("m", 16, 1, 1 << 16));
  o.n = static_cast<std::size_t>(a.integer("n", 16, 1, 1 << 16));
  o.k = static_cast<std::size_t>(a.integer("k", 1024, 256, 1 << 20));
  if (o.scaling == ProbeScaling::kBlock && o.k % 128 != 0) {
    throw UsageError("--k: block scaling needs a multiple of 128, got " + std::to_string(o.k));
  }
  if (const std::optional<std::string> f = a.get("format")) {
    const std::optional<Format> parsed = parse_format(*f);
    if (!parsed || info(*parsed).bits != 8 || *parsed == Format::kE8M0) {
      throw UsageError("--format: '" + *f +
                       "' is not an FP8 element format (formats: " + kProbeFormats + ")");
    }
    o.format = *parsed;
  }
  spec.json = a.flag("json");
  return spec;
}

std::string probe_accumulator_text(const ProbeAccumulatorSpec& spec, const Fp8Gemm* gemm,
                                   const std::string& implementation) {
  const ProbeOptions& o = spec.options;
  if (gemm == nullptr && !spec.model) {
    throw std::logic_error("probe_accumulator_text: no implementation to probe");
  }
  // "simulate MODEL" or "impl SPEC:OP" (text), "simulate:MODEL" or "impl:SPEC:OP" (JSON).
  const bool simulated = gemm == nullptr;
  const std::string what = simulated                ? spec.model->name
                           : implementation.empty() ? spec.impl
                                                    : implementation;
  const std::string kind = simulated ? "simulate" : "impl";
  ProbeResult r;
  try {
    r = probe_accumulator(simulated ? simulated_fp8_gemm(*spec.model) : *gemm, o);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());  // e.g. a chunk crossing the block scales, an op's contract
  }
  if (spec.json) {
    std::ostringstream out;
    JsonWriter w(out);
    w.begin_object();
    w.field("implementation", kind + ":" + what);
    w.field("scaling", spec.scaling).field("k", o.k);
    w.field("precision_bits", r.precision_bits);
    w.field("precision_at_output_limit", r.precision_at_output_limit);
    w.field("rounding", r.rounding);
    w.field("chunk_k", r.chunk_k).field("chunk_verified", r.chunk_verified);
    w.field("group_size", r.group_size);
    w.field("normalize_group_sum", r.normalize_group_sum);
    w.field("sub_sum", r.sub_sum);
    w.field("halves", r.halves);
    w.key("late_c_bits");
    if (r.late_c_bits) {
      w.value(*r.late_c_bits);
    } else {
      w.null();
    }
    w.field("late_rounding", r.late_rounding).field("store", r.store);
    w.key("model");
    if (r.model.empty()) {
      w.null();
    } else {
      w.value(r.model);
    }
    w.field("new_model", r.new_model);
    w.field("calls", r.calls);
    w.key("evidence").begin_array();
    for (const std::string& l : r.log) w.value(l);
    w.end_array();
    w.end_object();
    return out.str() + "\n";
  }
  const std::string head = "probe-accumulator: " + kind + " " + what + " (" +
                           std::string(info(o.format).name) + ", " + spec.scaling +
                           " scales, M=" + std::to_string(o.m) + " N=" + std::to_string(o.n) +
                           " K=" + std::to_string(o.k) + ")\n";
  return head + format_probe_result(r);
}

}  // namespace mxgate::verbs
