#include "capi/shapes.h"

#include <sstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "properties/shape_catalog.h"
#include "report/json_writer.h"

namespace mxgate::capi {

// corpus/shapes/production_shapes.tsv as configured (capi/CMakeLists.txt generates the bytes).
extern const unsigned char kShapeCatalogBytes[];
extern const std::size_t kShapeCatalogSize;

namespace {

constexpr std::string_view kCompiledIn = "corpus/shapes/production_shapes.tsv (compiled in)";

std::vector<ShapeEntry> load(const std::optional<std::string>& catalog) {
  try {
    if (catalog) return load_shape_catalog(*catalog);
    const std::string_view text(reinterpret_cast<const char*>(kShapeCatalogBytes),
                                kShapeCatalogSize);
    return parse_shape_catalog(text, kCompiledIn);
  } catch (const CatalogError& e) {
    throw std::invalid_argument(e.what());  // bad input, as the CLI's exit code 2
  }
}

}  // namespace

std::string shapes_json(const std::optional<std::string>& model, long long tp, bool flagged,
                        const std::optional<std::string>& catalog) {
  const std::vector<ShapeEntry> all = load(catalog);
  const std::string source = catalog ? *catalog : std::string(kCompiledIn);
  std::ostringstream os;
  report::JsonWriter w(os, 0);
  w.begin_object().field("schema", "mxgate-shapes/1").field("source", source);
  w.field("total", all.size()).key("shapes").begin_array();
  bool model_known = !model;
  for (const ShapeEntry& e : all) {
    if (model && e.model.find(*model) == std::string::npos) continue;
    model_known = true;
    if (tp != 0 && e.tp != static_cast<uint64_t>(tp)) continue;
    if (flagged && !e.flagged) continue;
    w.begin_object().field("model", e.model).field("layer", e.layer);
    w.field("parallel", e.parallel).field("tp", e.tp).field("n", e.n).field("k", e.k);
    w.field("quant", e.quant).field("mode", e.mode).key("n_parts").begin_array();
    for (uint64_t p : e.n_parts) w.value(p);
    w.end_array().field("bmm_batch", e.bmm_batch).field("flagged", e.flagged);
    w.key("flags").begin_array();
    for (const std::string& f : e.flags) w.value(f);
    w.end_array().field("line", e.line).end_object();
  }
  if (!model_known) {
    throw std::invalid_argument("--model '" + *model + "' matches no model in " + source);
  }
  w.end_array().end_object();
  return os.str();
}

}  // namespace mxgate::capi
