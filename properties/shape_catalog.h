// The production GEMM shape catalog (corpus/shapes/production_shapes.tsv): per-rank N x K of the
// linear layers of 16 models under tensor / expert parallelism, with their alignment hazards.
// Parsed strictly: every problem is a CatalogError naming the file, line and field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "properties/tsv_table.h"  // CatalogError

namespace mxgate {

struct ShapeEntry {
  std::string model;
  std::string layer;
  std::string parallel;  // column | row | replicated
  uint32_t tp = 1;
  uint64_t n = 0;
  uint64_t k = 0;
  std::string quant;  // FP8-B128, FP8-B128(ue8m0), MXFP8-B32(ue8m0), MXFP4, BF16, FP8-CT*, FP8-PC*
  std::string mode;   // TP | EP
  std::vector<uint64_t> n_parts;      // merged-layer parts (empty: not merged)
  std::optional<uint32_t> bmm_batch;  // local BMM groups
  bool flagged = false;
  std::vector<std::string> flags;  // K%128!=0, N%128!=0, N_part%128!=0, K%32!=0(MX block), ...
  std::size_t line = 0;            // 1-based line in the file

  bool is_mx() const { return quant.rfind("MXFP", 0) == 0; }
  bool is_block128() const { return quant.rfind("FP8-B128", 0) == 0; }
};

std::vector<ShapeEntry> parse_shape_catalog(std::string_view text, std::string_view source);
std::vector<ShapeEntry> load_shape_catalog(const std::string& path);
// corpus/shapes/production_shapes.tsv of this source tree.
std::string default_shape_catalog_path();

}  // namespace mxgate
