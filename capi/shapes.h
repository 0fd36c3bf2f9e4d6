// The `shapes` verb of mxgate_api_run (include/mxgate/api.h): the production GEMM shape catalog
// (properties/shape_catalog.h) as JSON, filtered as `mxgate shapes` filters it. The library
// carries the catalog compiled in (capi/CMakeLists.txt), so an installed copy needs no source
// tree; `catalog` reads another file instead. The Python package's mxgate.shapes() and the
// production-shape strategy of mxgate.strategies read it (docs/python.md §16).
#pragma once

#include <optional>
#include <string>

namespace mxgate::capi {

// JSON (schema mxgate-shapes/1): {"schema", "source", "total", "shapes": [{"model", "layer",
// "parallel", "tp", "n", "k", "quant", "mode", "n_parts", "bmm_batch", "flagged", "flags",
// "line"}]}. model: a substring of the model name (std::invalid_argument when it matches no
// model, as the CLI's usage error); tp 0: any TP size; flagged: only rows with an alignment
// hazard. A catalog file that does not parse is std::invalid_argument naming file and line.
std::string shapes_json(const std::optional<std::string>& model, long long tp, bool flagged,
                        const std::optional<std::string>& catalog);

}  // namespace mxgate::capi
