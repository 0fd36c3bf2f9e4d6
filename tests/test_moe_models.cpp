// Covers the MoE model table (corpus/shapes/moe_models.tsv, properties/moe_models.h): the strict
// loader (every problem a CatalogError naming file, line and field), the table's config facts
// against the figures written here from each model's config.json and against the routing table of
// the grouped generators (properties/grouped_cases.cpp), and the table against the shape catalog:
// every catalogued MoE model has a row, and every moe_w13 / moe_w2 row of the catalog is the
// arithmetic of its row (w13 N = 2 I / TP, w2 K = I / TP; [EP] rows the full I).
// Does not cover: `mxgate plan`'s use of it (test_plan_experts.cpp).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "properties/grouped_cases.h"
#include "properties/moe_models.h"
#include "properties/shape_catalog.h"

namespace mxgate {
namespace {

const char* kHeader =
    "model\trouted_experts\tshared_experts\ttop_k\tmoe_intermediate\thidden\texpert_quant\tkeys\t"
    "source\n";
const char* kKeys =
    "n_routed_experts,n_shared_experts,num_experts_per_tok,moe_intermediate_size,"
    "hidden_size";

std::string row(const std::string& model, const std::string& numbers) {
  return model + "\t" + numbers + "\tFP8-B128\t" + kKeys + "\tsome/config.json\n";
}

// A row must come back field by field, with its line (comments and the header counted).
TEST(MoeModels, ParsesRowsWithTheirLines) {
  const std::vector<MoeModel> t = parse_moe_models(
      std::string("# comment\n") + kHeader + row("A", "256\t1\t8\t2048\t7168"), "t.tsv");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].model, "A");
  EXPECT_EQ(t[0].routed_experts, 256u);
  EXPECT_EQ(t[0].shared_experts, 1u);
  EXPECT_EQ(t[0].top_k, 8u);
  EXPECT_EQ(t[0].moe_intermediate, 2048u);
  EXPECT_EQ(t[0].hidden, 7168u);
  EXPECT_EQ(t[0].expert_quant, "FP8-B128");
  EXPECT_EQ(t[0].line, 3u);
}

// A malformed table must be refused naming the file, the line and the field, never half-read.
TEST(MoeModels, BadInputNamesFileLineAndField) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"model\trouted\n", "t.tsv:1: header must be"},
      {std::string(kHeader) + "A\t256\t1\n", "t.tsv:2: expected 9 tab-separated fields, found 3"},
      {std::string(kHeader) + row("A", "256\t1\t300\t2048\t7168"),
       "t.tsv:2: top_k 300 exceeds routed_experts 256"},
      {std::string(kHeader) + row("A", "25x\t1\t8\t2048\t7168"),
       "t.tsv:2: routed_experts '25x' is not a non-negative integer"},
      {std::string(kHeader) + row("A", "256\t1\t8\t0\t7168"),
       "t.tsv:2: moe_intermediate 0 is outside [1, "},
      {std::string(kHeader) + row("A", "256\t1\t8\t2048\t7168") + row("A", "8\t0\t2\t64\t64"),
       "t.tsv:3: model 'A' is listed twice (first on line 2)"},
      {std::string(kHeader) + "A\t8\t0\t2\t64\t64\tMXFP4\tnum_experts\tsrc\n",
       "t.tsv:2: keys 'num_experts' must name 5 config.json keys"},
      {"# only a comment\n", "t.tsv: no header line"},
  };
  for (const auto& [text, needle] : bad) {
    try {
      (void)parse_moe_models(text, "t.tsv");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const CatalogError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

// A table fact that drifts from its model's config.json (a typo in E, top-k or I) would move every
// planned expert GEMM. The figures, from the config copies each row's source names:
//   DeepSeek-V3/R1 (config_671B.json): n_routed_experts 256, n_shared_experts 1,
//     num_experts_per_tok 8, moe_intermediate_size 2048, hidden_size 7168;
//   Kimi-K2: 384, 1, 8, 2048, 7168; Qwen3-235B-A22B: num_experts 128, no shared, 8, 1536, 4096;
//   Qwen3-30B-A3B: 128, 0, 8, 768, 2048; gpt-oss-120b: num_local_experts 128, experts_per_token 4,
//   intermediate_size 2880, hidden_size 2880; DeepSeek-V4-Flash: 256, 1, 6, 2048, 4096;
//   GLM-5: 256, 1, 8, 2048, 6144; Qwen3-Next-80B-A3B: 512, 1, 10, 512, 2048.
TEST(MoeModels, TableHoldsTheConfigFacts) {
  const std::vector<MoeModel> t = load_moe_models(default_moe_models_path());
  struct Want {
    const char* model;
    uint32_t e, shared, top_k;
    uint64_t i, h;
    const char* quant;
  };
  for (const Want& w : std::vector<Want>{
           {"DeepSeek-V3/R1", 256, 1, 8, 2048, 7168, "FP8-B128"},
           {"Kimi-K2", 384, 1, 8, 2048, 7168, "FP8-B128"},
           {"Qwen3-235B-A22B-FP8", 128, 0, 8, 1536, 4096, "FP8-B128"},
           {"Qwen3-30B-A3B-FP8", 128, 0, 8, 768, 2048, "FP8-B128"},
           {"gpt-oss-120b", 128, 0, 4, 2880, 2880, "MXFP4"},
           {"DeepSeek-V4-Flash", 256, 1, 6, 2048, 4096, "MXFP4"},
           {"GLM-5 (glm_moe_dsa)", 256, 1, 8, 2048, 6144, "FP8-B128"},
           {"Qwen3-Next-80B-A3B-FP8", 512, 1, 10, 512, 2048, "FP8-B128"},
       }) {
    const MoeModel* m = find_moe_model(t, w.model);
    ASSERT_NE(m, nullptr) << w.model;
    EXPECT_EQ(m->routed_experts, w.e) << w.model;
    EXPECT_EQ(m->shared_experts, w.shared) << w.model;
    EXPECT_EQ(m->top_k, w.top_k) << w.model;
    EXPECT_EQ(m->moe_intermediate, w.i) << w.model;
    EXPECT_EQ(m->hidden, w.h) << w.model;
    EXPECT_EQ(m->expert_quant, w.quant) << w.model;
    EXPECT_FALSE(m->source.empty()) << w.model;
  }
}

// The grouped generators' routing table (properties/grouped_cases.cpp) and this table are two
// copies of the same config facts: they must agree on E and top-k.
TEST(MoeModels, AgreesWithTheGroupedGeneratorsRouting) {
  const std::vector<MoeModel> t = load_moe_models(default_moe_models_path());
  const std::vector<std::pair<std::string, std::string>> same = {
      {"deepseek_v3", "DeepSeek-V3/R1"},
      {"kimi_k2", "Kimi-K2"},
      {"qwen3_moe", "Qwen3-235B-A22B-FP8"},
      {"gpt_oss", "gpt-oss-120b"}};
  ASSERT_EQ(same.size(), properties::moe_routings().size());
  for (const auto& [routing, model] : same) {
    const properties::MoeRouting* r = properties::find_moe_routing(routing);
    const MoeModel* m = find_moe_model(t, model);
    ASSERT_NE(r, nullptr) << routing;
    ASSERT_NE(m, nullptr) << model;
    EXPECT_EQ(r->experts, m->routed_experts) << model;
    EXPECT_EQ(r->top_k, m->top_k) << model;
  }
}

// A catalogued MoE model without a row could not be planned, and a row whose I or H disagrees
// with the catalog's expert shapes would plan other GEMMs than the catalog lists.
TEST(MoeModels, CoversTheCatalogAndMatchesItsExpertRows) {
  const std::vector<MoeModel> t = load_moe_models(default_moe_models_path());
  const std::vector<ShapeEntry> catalog = load_shape_catalog(default_shape_catalog_path());
  std::set<std::string> catalogued;
  std::size_t checked = 0;
  for (const ShapeEntry& e : catalog) {
    catalogued.insert(e.model);
    if (!is_expert_gemm(e)) continue;
    const MoeModel* m = find_moe_model(t, e.model);
    ASSERT_NE(m, nullptr) << e.model << " (catalog line " << e.line << ") has no table row";
    const bool ep = e.mode == "EP";
    EXPECT_EQ(ep, e.layer.find("[EP]") != std::string::npos) << e.line;
    const uint64_t i = ep ? m->moe_intermediate : m->moe_intermediate / e.tp;  // per rank
    EXPECT_EQ(e.quant, m->expert_quant) << e.model << " line " << e.line;
    if (e.layer.rfind("moe_w13", 0) == 0) {  // gate || up rows, K = hidden
      EXPECT_EQ(e.n, 2 * i) << e.model << " line " << e.line;
      EXPECT_EQ(e.k, m->hidden) << e.model << " line " << e.line;
      EXPECT_EQ(e.n_parts, (std::vector<uint64_t>{i, i})) << e.model << " line " << e.line;
    } else {  // down: N = hidden, K = I per rank
      EXPECT_EQ(e.n, m->hidden) << e.model << " line " << e.line;
      EXPECT_EQ(e.k, i) << e.model << " line " << e.line;
    }
    ++checked;
  }
  // 13 catalogued MoE models with expert rows, 5 TP sizes and 2 EP sizes, w13 and w2 each.
  EXPECT_EQ(checked, 13u * 7u * 2u);
  for (const MoeModel& m : t) {
    EXPECT_EQ(catalogued.count(m.model), 1u) << m.model << " is not a catalogued model";
  }
}

}  // namespace
}  // namespace mxgate
