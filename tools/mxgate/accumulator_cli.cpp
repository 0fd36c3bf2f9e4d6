// Verbs on accumulator models (docs/accumulators.md): `accumulators` lists the registry,
// `probe-accumulator` measures an implementation's accumulator (for now a simulated model).
#include <cstdio>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "probe/accumulator_probe.h"
#include "reference/accumulator.h"
#include "report/json_writer.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/verbs.h"

namespace mxgate::cli {
namespace {

using report::JsonWriter;

void no_positionals(const Args& a) {
  if (!a.positionals().empty()) {
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  }
}

// --simulate / --accumulator: a model spec, NAME or NAME:param=value,...
AccumulatorModel model_spec(const std::string& option, const std::string& spec) {
  try {
    return parse_accumulator_spec(spec);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--" + option + ": " + e.what());
  }
}

}  // namespace

int cmd_accumulators(const Argv& argv) {
  const Args a(argv, {}, {"json"});
  no_positionals(a);
  if (a.flag("json")) {
    std::ostringstream out;
    JsonWriter w(out);
    w.begin_array();
    for (const AccumulatorModel& m : all_accumulators()) {
      w.begin_object();
      w.field("name", m.name).field("kind", to_string(m.kind));
      w.key("parameters").begin_object();
      for (const AccumulatorParameter& p : accumulator_parameters(m)) {
        w.field(p.name, p.value);
      }
      w.end_object();
      w.field("description", m.description).field("source", m.source);
      w.end_object();
    }
    w.end_array();
    std::printf("%s\n", out.str().c_str());
    return 0;
  }
  for (const AccumulatorModel& m : all_accumulators()) {
    std::printf("%s (%s)\n  %s\n", m.name.c_str(), std::string(to_string(m.kind)).c_str(),
                m.description.c_str());
    for (const AccumulatorParameter& p : accumulator_parameters(m)) {
      std::printf("  %-20s %-8s %s\n", p.name.c_str(), p.value.c_str(), p.meaning.c_str());
    }
    std::printf("  source: %s\n\n", m.source.c_str());
  }
  return 0;
}

int cmd_probe_accumulator(const Argv& argv) {
  const Args a(argv, {"simulate", "scaling", "m", "n", "k", "format"}, {"json"});
  no_positionals(a);
  const AccumulatorModel model = model_spec("simulate", a.require("simulate"));
  ProbeOptions o;
  const std::string scaling = a.get("scaling").value_or("per-tensor");
  if (scaling == "per-tensor") {
    o.scaling = ProbeScaling::kPerTensor;
  } else if (scaling == "block") {
    o.scaling = ProbeScaling::kBlock;
  } else {
    throw UsageError("--scaling: '" + scaling + "' is not a scaling (per-tensor, block)");
  }
  o.m = static_cast<std::size_t>(a.integer("m", 16, 1, 1 << 16));
  o.n = static_cast<std::size_t>(a.integer("n", 16, 1, 1 << 16));
  o.k = static_cast<std::size_t>(a.integer("k", 1024, 256, 1 << 20));
  if (o.scaling == ProbeScaling::kBlock && o.k % 128 != 0) {
    throw UsageError("--k: block scaling needs a multiple of 128, got " + std::to_string(o.k));
  }
  if (const auto f = a.get("format")) {
    const std::optional<Format> parsed = parse_format(*f);
    if (!parsed || info(*parsed).bits != 8 || *parsed == Format::kE8M0) {
      throw UsageError("--format: '" + *f +
                       "' is not an FP8 element format (formats: e4m3fn e5m2 e4m3fnuz e5m2fnuz)");
    }
    o.format = *parsed;
  }
  ProbeResult r;
  try {
    r = probe_accumulator(simulated_fp8_gemm(model), o);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());  // e.g. a chunk crossing the block scales
  }
  if (a.flag("json")) {
    std::ostringstream out;
    JsonWriter w(out);
    w.begin_object();
    w.field("implementation", "simulate:" + model.name);
    w.field("scaling", scaling).field("k", o.k);
    w.field("precision_bits", r.precision_bits);
    w.field("precision_at_output_limit", r.precision_at_output_limit);
    w.field("rounding", r.rounding);
    w.field("chunk_k", r.chunk_k).field("chunk_verified", r.chunk_verified);
    w.field("group_size", r.group_size);
    w.field("normalize_group_sum", r.normalize_group_sum);
    w.key("model");
    if (r.model.empty()) {
      w.null();
    } else {
      w.value(r.model);
    }
    w.field("calls", r.calls);
    w.key("evidence").begin_array();
    for (const std::string& l : r.log) w.value(l);
    w.end_array();
    w.end_object();
    std::printf("%s\n", out.str().c_str());
    return 0;
  }
  std::printf("probe-accumulator: simulate %s (%s, %s scales, M=%zu N=%zu K=%zu)\n",
              model.name.c_str(), std::string(info(o.format).name).c_str(), scaling.c_str(), o.m,
              o.n, o.k);
  std::printf("%s", format_probe_result(r).c_str());
  return 0;
}

}  // namespace mxgate::cli
