// `mxgate shapes`: lists the production shape catalog, filtered.
#include <cstdio>
#include <string>

#include "properties/shape_catalog.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/verbs.h"

namespace mxgate::cli {

int cmd_shapes(const Argv& argv) {
  const Args a(argv, {"model", "tp", "catalog"}, {"flagged"});
  if (!a.positionals().empty()) {
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  }
  const std::string path = a.get("catalog").value_or(default_shape_catalog_path());
  std::vector<ShapeEntry> all;
  try {
    all = load_shape_catalog(path);
  } catch (const CatalogError& e) {
    throw UsageError(e.what());
  }
  const std::string model = a.get("model").value_or("");
  const long long tp = a.integer("tp", 0, 1, 1024);
  std::vector<const ShapeEntry*> rows;
  bool model_known = model.empty();
  for (const ShapeEntry& e : all) {
    if (!model.empty() && e.model.find(model) == std::string::npos) continue;
    model_known = true;
    if (tp && e.tp != static_cast<uint32_t>(tp)) continue;
    if (a.flag("flagged") && !e.flagged) continue;
    rows.push_back(&e);
  }
  if (!model_known) throw UsageError("--model '" + model + "' matches no model in " + path);
  std::printf("%-28s %-44s %-10s %3s %7s %7s %-17s %-4s %s\n", "model", "layer", "parallel", "tp",
              "N", "K", "quant", "mode", "flags");
  for (const ShapeEntry* row : rows) {
    const ShapeEntry& e = *row;
    std::string flags;
    for (const std::string& f : e.flags) flags += (flags.empty() ? "" : ",") + f;
    if (!e.n_parts.empty()) {
      std::string parts;
      for (uint64_t p : e.n_parts) parts += (parts.empty() ? "" : "+") + std::to_string(p);
      flags += (flags.empty() ? "" : " ") + std::string("parts=") + parts;
    }
    if (e.bmm_batch) flags += (flags.empty() ? "" : " ") + ("bmm=" + std::to_string(*e.bmm_batch));
    std::printf("%-28.28s %-44.44s %-10s %3u %7llu %7llu %-17s %-4s %s\n", e.model.c_str(),
                e.layer.c_str(), e.parallel.c_str(), e.tp, static_cast<unsigned long long>(e.n),
                static_cast<unsigned long long>(e.k), e.quant.c_str(), e.mode.c_str(),
                flags.c_str());
  }
  std::printf("%zu of %zu shapes\n", rows.size(), all.size());
  return 0;
}

}  // namespace mxgate::cli
