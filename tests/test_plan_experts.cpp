// Covers `mxgate plan --model NAME --tp T [--ep E]`'s routed-expert GEMMs (docs/grouped.md §7.1),
// run as a process: per rank N x K, experts per rank, grouped family, built-in kernel and its
// contract verdict, top-k, the weight-block hazards of a TP shard, MXFP4 experts listed as not
// modelled, and bad input (EP not dividing the experts or not a multiple of TP, --ep on a dense
// model, a malformed MoE table, a table that disagrees with the catalog) exiting 2 with the problem
// named. Expected values are arithmetic on the config facts written beside them.
// Does not cover: the dense layers of the same plan (test_dispatch.cpp,
// test_decision_dispatch.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

test_support::ShellResult run_plan(const std::string& args) {
  return test_support::run_shell(std::string(MXGATE_CLI) + " plan --platform gfx950 " + args +
                                 " 2>&1");
}

std::string s(uint64_t v) { return std::to_string(v); }

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A plan that shards the experts wrongly (I not divided by TP, or divided under EP) or loses the
// expert count tells the user of another GEMM than the one that runs. DeepSeek-V3
// (config_671B.json): 256 routed experts, top-8, 1 shared, moe_intermediate_size I = 2048, hidden H
// = 7168.
TEST(PlanExperts, DeepSeekV3AtTp8AndEp8) {
  const uint64_t e = 256, i = 2048, h = 7168;
  test_support::ShellResult r = run_plan("--model DeepSeek-V3/R1 --tp 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // TP 8: every expert on every rank, I / 8 = 256: w13 N = 2 x 256 = 512 (gate, up 256 each).
  EXPECT_NE(r.out.find("{\"model\": \"DeepSeek-V3/R1\", \"layer\": \"moe_w13 (experts gate_up, "
                       "fused)\", \"n\": " +
                       s(2 * i / 8) + ", \"k\": " + s(h) + ", \"n_parts\": [" + s(i / 8) + ", " +
                       s(i / 8) +
                       "], \"quant\": \"FP8-B128\", "
                       "\"grouped_family\": \"grouped_gemm_block\", \"kernel\": "
                       "\"grouped_gemm_blockscale_contiguous\", \"contract\": \"admits\", "
                       "\"offset_align\": 1, \"mode\": \"TP\", \"tp\": 8, \"ep\": 0, "
                       "\"routed_experts\": " +
                       s(e) + ", \"experts_per_rank\": " + s(e) +
                       ", \"shared_experts\": 1, \"top_k\": 8, \"moe_intermediate\": " + s(i) +
                       ", \"intermediate_per_rank\": " + s(i / 8) + ", \"hazards\": []"),
            std::string::npos)
      << r.out;
  // w2: N = H, K = I / 8 = 256.
  EXPECT_NE(r.out.find("\"layer\": \"moe_w2 (experts down)\", \"n\": " + s(h) +
                       ", \"k\": " + s(i / 8) + ", \"n_parts\": []"),
            std::string::npos)
      << r.out;
  // The catalog's [EP] rows (EP 8) are not TP-8 linear layers: no linear kernel for them.
  EXPECT_EQ(r.out.find("[EP]\", \"n\": 4096, \"k\": 7168, \"linear_kernel\""), std::string::npos);
  // EP 8 = TP 8 x DP 1: 256 / 8 = 32 experts per rank, the full I: 4096 x 7168 and 7168 x 2048.
  r = run_plan("--model DeepSeek-V3/R1 --tp 8 --ep 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"layer\": \"moe_w13 (experts gate_up, fused) [EP]\", \"n\": " + s(2 * i) +
                       ", \"k\": " + s(h) + ", \"n_parts\": [" + s(i) + ", " + s(i) + "]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("\"layer\": \"moe_w2 (experts down) [EP]\", \"n\": " + s(h) + ", \"k\": " + s(i)),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"mode\": \"EP\", \"tp\": 8, \"ep\": 8, \"routed_experts\": 256, "
                       "\"experts_per_rank\": " +
                       s(e / 8)),
            std::string::npos)
      << r.out;
  // The shared expert stays a dense TP-8 layer: shared_expert_down_proj K = 2048 / 8 = 256.
  EXPECT_NE(r.out.find("\"layer\": \"shared_expert_down_proj\", \"n\": 7168, \"k\": 256, "
                       "\"linear_kernel\""),
            std::string::npos)
      << r.out;
  // The text form says the same in words.
  r = run_plan("--model DeepSeek-V3/R1 --tp 8 --ep 8");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("DeepSeek-V3/R1: 256 routed experts (top-8), 1 shared (dense: its "
                       "shared_expert_* layers above, at TP 8); EP 8 = TP 8 x DP 1: 32 experts per "
                       "rank, the full moe_intermediate 2048"),
            std::string::npos)
      << r.out;
}

// A TP shard of 128x128 weight blocks whose per-rank I is not a multiple of 128 cuts a block in
// two (vLLM refuses such a shard at load): the plan must say so at that TP and not at another.
// Qwen3-235B-A22B (config.json): moe_intermediate_size 1536, hidden 4096, 128 experts, top-8.
// TP 8: I / 8 = 192, 192 % 128 = 64; TP 4: 1536 / 4 = 384 = 3 x 128, no hazard.
TEST(PlanExperts, FlagsTheBlockATpShardCuts) {
  test_support::ShellResult r = run_plan("--model Qwen3-235B --tp 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"layer\": \"moe_w2 (experts down)\", \"n\": 4096, \"k\": " + s(1536 / 8)),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"hazards\": [\"K % 128 = " + s((1536 / 8) % 128) +
                       " at TP 8: outside the contract of 128x128 weight blocks"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"hazards\": [\"N part % 128 = 64 at TP 8: outside the contract"),
            std::string::npos)
      << r.out;
  // The built-in kernel itself takes any K (its own scale grid): the verdict is kept apart.
  EXPECT_NE(r.out.find("\"kernel\": \"grouped_gemm_blockscale_contiguous\", \"contract\": "
                       "\"admits\""),
            std::string::npos);
  r = run_plan("--model Qwen3-235B --tp 4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"k\": " + s(1536 / 4)), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("% 128 ="), std::string::npos) << r.out;
  // Under EP the full I = 1536 = 12 x 128 is kept: no hazard at EP 8 either.
  r = run_plan("--model Qwen3-235B --tp 8 --ep 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("% 128 ="), std::string::npos) << r.out;
}

// MXFP4 experts have no grouped family: listed as not modelled, never given a kernel, with the
// 1x32 scale-block hazard still computed. gpt-oss-120b (config.json): intermediate_size 2880,
// hidden 2880, 128 experts, experts_per_token 4; TP 8: 2880 / 8 = 360 = 11 x 32 + 8.
TEST(PlanExperts, Mxfp4ExpertsAreListedAsNotModelled) {
  const test_support::ShellResult r = run_plan("--model gpt-oss --tp 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"layer\": \"moe_w2 (experts down)\", \"n\": 2880, \"k\": 360, "
                       "\"n_parts\": [], \"quant\": \"MXFP4\", \"grouped_family\": null, "
                       "\"kernel\": null, \"skipped\": \"no grouped family models MXFP4 weights "
                       "yet\""),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"top_k\": 4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"K % 32 = " + s(360 % 32) +
                       " at TP 8: outside the contract of 1x32 MX "
                       "scale blocks"),
            std::string::npos)
      << r.out;
}

// MXFP8 experts take grouped_gemm_mx, whose built-in kernel needs K % 32 == 0: a shard off it has
// no kernel, and the plan must name the violated clause rather than pick one. A toy model in a
// catalog and table of the test's own: 8 experts, top-2, I = 288, H = 256. TP 1: w2 K = 288 =
// 9 x 32, admitted (offsets % 32); TP 2: K = 144, 144 % 32 = 16.
TEST(PlanExperts, MxExpertsAndTheirContract) {
  const test_support::TempDir dir;
  write(dir.file("cat.tsv"),
        "model\tlayer\tparallel\ttp\tn\tk\tquant\tmode\tn_parts\tbmm_batch\tflagged\tflags\n"
        "Toy-MX\to_proj\trow\t1\t256\t256\tMXFP8-B32(ue8m0)\tTP\t-\t-\t0\t-\n"
        "Toy-MX\to_proj\trow\t2\t256\t128\tMXFP8-B32(ue8m0)\tTP\t-\t-\t0\t-\n");
  write(dir.file("moe.tsv"),
        "model\trouted_experts\tshared_experts\ttop_k\tmoe_intermediate\thidden\texpert_quant\t"
        "keys\tsource\n"
        "Toy-MX\t8\t0\t2\t288\t256\tMXFP8-B32(ue8m0)\ta,-,b,c,d\tthe test\n");
  const std::string files =
      " --catalog " + dir.file("cat.tsv") + " --moe-models " + dir.file("moe.tsv") + " --json";
  test_support::ShellResult r = run_plan("--model Toy-MX --tp 1" + files);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(
      r.out.find("\"layer\": \"moe_w2 (experts down)\", \"n\": 256, \"k\": 288, \"n_parts\": "
                 "[], \"quant\": \"MXFP8-B32(ue8m0)\", \"grouped_family\": \"grouped_gemm_mx\", "
                 "\"kernel\": \"grouped_gemm_mx_contiguous\", \"contract\": \"admits\", "
                 "\"offset_align\": 32"),
      std::string::npos)
      << r.out;
  r = run_plan("--model Toy-MX --tp 2" + files);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"k\": 144, \"n_parts\": [], \"quant\": \"MXFP8-B32(ue8m0)\", "
                       "\"grouped_family\": \"grouped_gemm_mx\", \"kernel\": null, \"contract\": "
                       "\"grouped_gemm_mx_contiguous: K % 32 == 0 violated (K = 144)\""),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("K % 32 = 16 at TP 2: outside the contract of 1x32 MX scale blocks"),
            std::string::npos)
      << r.out;
}

// Sizes that cannot be deployed, a dense model with --ep, a malformed table and a table that
// disagrees with the catalog must each exit 2 naming the problem, printing no plan.
TEST(PlanExperts, BadInputExits2) {
  const test_support::TempDir dir;
  write(dir.file("bad.tsv"),
        "model\trouted_experts\tshared_experts\ttop_k\tmoe_intermediate\thidden\texpert_quant\t"
        "keys\tsource\n"
        "DeepSeek-V3/R1\t8\t1\t9\t2048\t7168\tFP8-B128\ta,b,c,d,e\tsrc\n");
  // DeepSeek-V3/R1 with I = 1024 instead of 2048: w13 at TP 8 would be 256 x 7168, the catalog
  // has 512 x 7168.
  write(dir.file("drift.tsv"),
        "model\trouted_experts\tshared_experts\ttop_k\tmoe_intermediate\thidden\texpert_quant\t"
        "keys\tsource\n"
        "DeepSeek-V3/R1\t256\t1\t8\t1024\t7168\tFP8-B128\ta,b,c,d,e\tsrc\n");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--model NoSuchModel --tp 8 --ep 8", "--model 'NoSuchModel' matches no catalogued model"},
      // 24 = TP 8 x DP 3, but 256 % 24 = 16.
      {"--model DeepSeek-V3/R1 --tp 8 --ep 24",
       "--ep 24 does not divide the 256 routed experts of"},
      // GLM-4.5 has 160 routed experts: 160 % 64 = 32.
      {"--model GLM-4.5/4.6 --tp 8 --ep 64", "--ep 64 does not divide the 160 routed experts"},
      {"--model DeepSeek-V3/R1 --tp 8 --ep 4", "--ep 4 is not a multiple of --tp 8"},
      {"--model Llama-3.1-70B --tp 8 --ep 8", "'Llama-3.1-70B' has no routed experts"},
      {"--scheme mxfp8 --n 16 --k 64 --ep 8", "--ep, --catalog and --moe-models go with --model"},
      {"--model DeepSeek-V3/R1 --tp 8 --moe-models " + dir.file("bad.tsv"),
       dir.file("bad.tsv") + ":2: top_k 9 exceeds routed_experts 8"},
      {"--model DeepSeek-V3/R1 --tp 8 --moe-models " + dir.file("missing.tsv"),
       "cannot open the MoE model table"},
      {"--model DeepSeek-V3/R1 --tp 8 --moe-models " + dir.file("drift.tsv"),
       "moe_w13 (experts gate_up, fused) of DeepSeek-V3/R1 is 512 x 7168 FP8-B128 at TP 8, but " +
           dir.file("drift.tsv") + ":2 gives 256 x 7168 FP8-B128"},
  };
  for (const auto& [args, needle] : bad) {
    const test_support::ShellResult r = run_plan(args);
    EXPECT_EQ(r.exit_code, 2) << args << " -> " << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << " -> " << r.out;
    EXPECT_EQ(r.out.find("linear_kernel"), std::string::npos) << args << " printed a plan";
    EXPECT_EQ(r.out.find("PreshuffledBlockScaledFp8"), std::string::npos) << args;
  }
}

}  // namespace
}  // namespace mxgate
