// `mxgate impls [--json] [--impl SPEC...]`: every implementation mxgate can test -- the built-in
// one, every shipped plugin of this build (libmxgate_NAME.so in the plugin folders) and those
// --impl names -- with each op's family, memory, contract and accumulator model. Plugins are
// loaded without calling their init() (listing needs no device).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "impl/accumulator.h"
#include "impl/builtin.h"
#include "impl/plugin.h"
#include "impl/registry.h"
#include "report/json_writer.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/impl_select.h"
#include "tools/mxgate/verbs.h"

namespace mxgate::cli {
namespace {

using impl::Contract;
using impl::Implementation;
using impl::Op;

std::string blocks(uint32_t rows, uint32_t cols) {
  const auto one = [](uint32_t b) { return b == 0 ? std::string("all") : std::to_string(b); };
  return one(rows) + "x" + one(cols);
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::string accumulator(const Op& op) {
  return impl::is_gemm(op.family) ? impl::declared_accumulator(op) : "";
}

void print_op(const Op& op) {
  const Contract& c = op.contract;
  std::printf("  %-28s %-14s memory %-8s", op.name.c_str(),
              std::string(impl::to_string(op.family)).c_str(),
              std::string(impl::to_string(op.memory)).c_str());
  if (!accumulator(op).empty()) std::printf(" accumulator %s", accumulator(op).c_str());
  if (const auto problem = impl::accumulator_problem(op)) {
    std::printf("\n      contract error: %s", problem->c_str());
  }
  std::printf("\n      %s; %s; %s\n", impl::describe_dim('M', c.m).c_str(),
              impl::describe_dim('N', c.n).c_str(), impl::describe_dim('K', c.k).c_str());
  std::printf("      a %s", impl::describe_dtypes(c.a_dtypes).c_str());
  if (c.b_dtypes) std::printf(", b %s", impl::describe_dtypes(c.b_dtypes).c_str());
  std::printf(", out %s", impl::describe_dtypes(c.out_dtypes).c_str());
  if (c.b_layouts) std::printf(", b layouts %s", impl::describe_layouts(c.b_layouts).c_str());
  std::printf("\n");
  if (c.scale_dtype != impl::Dtype::kNone) {
    std::printf("      scales %s: a %s %s", std::string(impl::to_string(c.scale_dtype)).c_str(),
                blocks(c.a_block_rows, c.a_block_cols).c_str(),
                impl::describe_layouts(c.a_scale_layouts).c_str());
    if (c.a_scale_ld_align > 1) std::printf(" ld %% %u", c.a_scale_ld_align);
    if (c.b_scale_layouts) {
      std::printf(", b %s %s", blocks(c.b_block_rows, c.b_block_cols).c_str(),
                  impl::describe_layouts(c.b_scale_layouts).c_str());
      if (c.b_scale_ld_align > 1) std::printf(" ld %% %u", c.b_scale_ld_align);
    }
    if (c.packed_scales) std::printf(", packed only (no views)");
    std::printf("\n");
  }
  if (c.global_dtypes != 0) {
    std::printf("      global scales %s (1 x 1)\n", impl::describe_dtypes(c.global_dtypes).c_str());
  }
  if (!c.conventions.empty()) {
    std::printf("      convention %s", joined(c.conventions).c_str());
    if (!c.element_convention.empty()) {
      std::printf(" (elements %s)", c.element_convention.c_str());
    }
    std::printf("\n");
  }
  if (c.order) {
    const std::string partial = c.order->block_k == 0
                                    ? std::string("one partial over K")
                                    : "partials of " + std::to_string(c.order->block_k) + " k";
    std::printf("      declared order: %s, scales per %s, %d + %d roundings%s\n", partial.c_str(),
                c.order->per_partial ? "partial" : "product", c.order->product_roundings,
                c.order->partial_roundings, c.n_offset ? "; takes n_offset" : "");
  } else if (c.simulated_order) {
    std::printf("      declared order: the simulation of its accumulator, bit for bit%s\n",
                c.n_offset ? "; takes n_offset" : "");
  }
  if (!c.notes.empty()) std::printf("      %s\n", c.notes.c_str());
  if (!op.tactics.empty()) {
    std::printf("      %zu tactics:\n", op.tactics.size());
    for (std::size_t t = 0; t < op.tactics.size(); ++t) {
      const impl::Tactic& x = op.tactics[t];
      std::printf("        %zu %s%s%s%s%s\n", t, x.name.c_str(),
                  x.accumulator.empty() ? "" : " accumulator ", x.accumulator.c_str(),
                  x.notes.empty() ? "" : ": ", x.notes.c_str());
    }
  }
}

void json_dim(report::JsonWriter& w, std::string_view name, const impl::Dim& d) {
  w.key(name).begin_object().field("align", d.align).field("min", d.min).field("max", d.max);
  w.end_object();
}

void json_list(report::JsonWriter& w, std::string_view name, const std::vector<std::string>& v) {
  w.key(name).begin_array();
  for (const std::string& s : v) w.value(s);
  w.end_array();
}

std::vector<std::string> dtype_names(impl::DtypeMask m) {
  std::vector<std::string> out;
  for (impl::Dtype d : impl::dtypes_in(m)) out.emplace_back(impl::to_string(d));
  return out;
}

std::vector<std::string> layout_names(impl::LayoutMask m) {
  std::vector<std::string> out;
  for (impl::Layout l : impl::layouts_in(m)) out.emplace_back(impl::to_string(l));
  return out;
}

void json_op(report::JsonWriter& w, const Op& op) {
  const Contract& c = op.contract;
  w.begin_object().field("name", op.name).field("family", impl::to_string(op.family));
  w.field("memory", impl::to_string(op.memory));
  const std::string acc = accumulator(op);
  w.field("accumulator", acc.empty() ? std::optional<std::string>() : acc);
  w.field("accumulator_error", impl::accumulator_problem(op));
  w.key("contract").begin_object();
  json_dim(w, "m", c.m);
  json_dim(w, "n", c.n);
  json_dim(w, "k", c.k);
  json_list(w, "a_dtypes", dtype_names(c.a_dtypes));
  json_list(w, "b_dtypes", dtype_names(c.b_dtypes));
  json_list(w, "out_dtypes", dtype_names(c.out_dtypes));
  json_list(w, "a_scale_layouts", layout_names(c.a_scale_layouts));
  json_list(w, "b_scale_layouts", layout_names(c.b_scale_layouts));
  json_list(w, "b_layouts", layout_names(c.b_layouts));
  w.field("scale_dtype", impl::to_string(c.scale_dtype));
  w.key("a_block").begin_array().value(c.a_block_rows).value(c.a_block_cols).end_array();
  w.key("b_block").begin_array().value(c.b_block_rows).value(c.b_block_cols).end_array();
  w.field("a_scale_ld_align", c.a_scale_ld_align).field("b_scale_ld_align", c.b_scale_ld_align);
  w.field("packed_scales", c.packed_scales);
  json_list(w, "conventions", c.conventions);
  w.field("element_convention",
          c.element_convention.empty() ? std::optional<std::string>() : c.element_convention);
  w.key("declared_order");
  if (c.order) {
    w.begin_object().field("block_k", c.order->block_k).field("per_partial", c.order->per_partial);
    w.field("product_roundings", c.order->product_roundings);
    w.field("partial_roundings", c.order->partial_roundings).end_object();
  } else {
    w.null();
  }
  w.field("n_offset", c.n_offset).field("notes", c.notes);
  json_list(w, "global_dtypes", dtype_names(c.global_dtypes));
  w.end_object();
  // Its tactics (docs/plugins.md §3.6): one entry per kernel, accumulator null = the op's.
  w.key("tactics").begin_array();
  for (std::size_t t = 0; t < op.tactic_count(); ++t) {
    const impl::Tactic none;
    const impl::Tactic& x = op.tactics.empty() ? none : op.tactics[t];
    w.begin_object().field("index", static_cast<uint64_t>(t));
    w.field("name", op.tactics.empty() ? std::string("0") : x.name);
    w.field("accumulator", x.accumulator.empty() ? std::optional<std::string>() : x.accumulator);
    w.field("notes", x.notes).end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace

int cmd_impls(const Argv& argv) {
  const Args a(argv, {"impl"}, {"json"});
  if (!a.positionals().empty()) {
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  }
  std::vector<const Implementation*> impls = {&impl::builtin()};
  std::vector<std::pair<std::string, std::string>> errors;  // plugin, message
  const auto add = [&impls](const std::vector<const Implementation*>& more) {
    for (const Implementation* i : more) {
      if (std::find(impls.begin(), impls.end(), i) == impls.end()) impls.push_back(i);
    }
  };
  for (const std::string& name : impl::shipped_plugin_names()) {
    try {
      add(impl::resolve(name + ":all", false));
    } catch (const impl::PluginError& e) {
      errors.emplace_back(name, e.what());
    }
  }
  if (const auto extra = a.get("impl")) add(impls_option(extra, false));
  if (a.flag("json")) {
    report::JsonWriter w(std::cout);
    w.begin_object().field("schema", "mxgate-impls/1").key("implementations").begin_array();
    for (const Implementation* i : impls) {
      w.begin_object().field("name", i->name).field("spec", i->spec).field("origin", i->origin);
      w.field("description", i->description).field("planted_fault", i->planted_fault);
      w.key("ops").begin_array();
      for (const Op& op : i->ops) json_op(w, op);
      w.end_array().end_object();
    }
    w.end_array().key("errors").begin_array();
    for (const auto& [plugin, message] : errors) {
      w.begin_object().field("plugin", plugin).field("message", message).end_object();
    }
    w.end_array().end_object();
    std::cout << "\n";
  } else {
    for (const Implementation* i : impls) {
      std::printf("%s (--impl %s; %s): %s\n", i->name.c_str(), i->spec.c_str(), i->origin.c_str(),
                  i->description.c_str());
      for (const Op& op : i->ops) print_op(op);
      std::printf("\n");
    }
    std::printf("accumulator models (mxgate accumulators): %s\n", accumulator_names().c_str());
    for (const auto& [plugin, message] : errors) {
      std::fprintf(stderr, "mxgate impls: %s\n", message.c_str());
    }
  }
  return errors.empty() ? 0 : 2;
}

}  // namespace mxgate::cli
