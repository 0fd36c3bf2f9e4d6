// `mxgate plan --model NAME --tp T [--ep E]`: the routed-expert GEMMs of a mixture-of-experts
// model per rank (docs/grouped.md §7.1), from the MoE model table (properties/moe_models.h),
// checked against the shape catalog's moe_w13 / moe_w2 rows where it has them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "properties/moe_models.h"
#include "properties/shape_catalog.h"

namespace mxgate::cli {

// One expert GEMM of one rank.
struct ExpertGemm {
  std::string model;
  std::string layer;  // the catalog's name: moe_w13 (experts gate_up, fused) / moe_w2 (experts
                      // down), with " [EP]" under expert parallelism
  uint64_t n = 0, k = 0;
  std::vector<uint64_t> n_parts;  // w13: gate and up rows per rank
  std::string mode;               // TP | EP
  uint32_t tp = 1, ep = 0;        // ep 0: experts TP-sharded, no expert parallelism
  uint32_t routed_experts = 0, experts_per_rank = 0, shared_experts = 0, top_k = 0;
  uint64_t moe_intermediate = 0, intermediate_per_rank = 0;
  std::string quant;
  std::optional<std::string> family;  // grouped_gemm_block / grouped_gemm_mx; nullopt: not modelled
  std::string skipped;                // why not modelled
  std::optional<std::string> kernel;  // the built-in kernel taken; nullopt: none admits it
  std::string contract;               // "admits" or the first violated clause
  uint32_t offset_align = 0;          // the kernel's group-offset alignment
  std::vector<std::string> hazards;   // "K % 128 = 64 at TP 8: outside the contract (...)"
  std::size_t table_line = 0;
};

// The w13 and w2 GEMMs of `m` at TP tp, and with ep > 0 under expert parallelism of size ep.
// Throws UsageError (naming the table's line) when the sizes do not divide: TP not dividing
// moe_intermediate, EP not dividing the routed experts, EP not a multiple of TP.
std::vector<ExpertGemm> expert_gemms(const MoeModel& m, const std::string& table_path, uint32_t tp,
                                     uint32_t ep);
// Throws UsageError when the catalog's row of the same layer, model, mode and size disagrees with
// `g` (N, K, parts or quant), naming both files and lines.
void check_against_catalog(const ExpertGemm& g, const std::vector<ShapeEntry>& catalog,
                           const std::string& catalog_path, const std::string& table_path);

// The model's summary line (routed, shared, top-k, per-rank experts and intermediate).
std::string expert_summary(const MoeModel& m, const std::string& table_path, uint32_t tp,
                           uint32_t ep, bool shared_catalogued);
// One GEMM as a text line / as a JSON object ("model", "layer", "n", "k" first, as the dense
// layers' objects).
std::string expert_text(const ExpertGemm& g);
std::string expert_json(const ExpertGemm& g);

std::string json_escape(const std::string& s);

}  // namespace mxgate::cli
