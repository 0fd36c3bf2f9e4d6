// The MoE model table (corpus/shapes/moe_models.tsv): per mixture-of-experts model of the shape
// catalog, its routed experts, shared experts, top-k, moe_intermediate_size and hidden size as
// its config.json gives them, the quant code of its routed experts and the config copy read.
// Parsed strictly: every problem is a CatalogError naming the file, line and field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "properties/shape_catalog.h"

namespace mxgate {

struct MoeModel {
  std::string model;  // as production_shapes.tsv names it
  uint32_t routed_experts = 0;
  uint32_t shared_experts = 0;  // 0: none
  uint32_t top_k = 0;           // <= routed_experts
  uint64_t moe_intermediate = 0;
  uint64_t hidden = 0;
  std::string expert_quant;  // a quant code of the catalog (FP8-B128, MXFP4, FP8-CT*, ...)
  std::string keys;          // the config.json keys of the five numbers
  std::string source;        // the config copy read
  std::size_t line = 0;      // 1-based line in the file
};

std::vector<MoeModel> parse_moe_models(std::string_view text, std::string_view source);
std::vector<MoeModel> load_moe_models(const std::string& path);
// corpus/shapes/moe_models.tsv of this source tree.
std::string default_moe_models_path();
// The row of `model` (exact name); nullptr when the table has none.
const MoeModel* find_moe_model(const std::vector<MoeModel>& table, std::string_view model);
// A catalog row that is a routed-expert GEMM (layer moe_w13 ... / moe_w2 ..., TP or [EP]).
bool is_expert_gemm(const ShapeEntry& e);

}  // namespace mxgate
