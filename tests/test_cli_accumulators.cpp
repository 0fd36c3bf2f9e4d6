// Tests for the accumulator verbs of the mxgate CLI (tools/mxgate/accumulator_cli.cpp) and
// check-gemm's --accumulator (tools/mxgate/tensor_cli.cpp), run as a subprocess on .npy files in
// a fresh temporary directory: `accumulators` lists every model with its parameters and sources
// (text and JSON); check-gemm --accumulator sm90_fp8_mma accepts a simulated Hopper FP8 GEMM that
// today's default bound rejects, and still rejects a swapped-scale kernel; exact mode reports
// whether the operands are exact in the named accumulator; `probe-accumulator --simulate` prints
// the measured parameters (text and JSON), a registry model by name with its status, a new one
// as a spec; `--backend hip` without an AMD GPU exits 3; bad input exits 2 naming the problem;
// help exists.
// Not covered: the model semantics, bound, exact mode and probe themselves (their own tests).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reference/accumulator.h"
#include "reference/accumulator_exact.h"
#include "reference/accumulator_simulation.h"
#include "reference/block_quant.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/fp_encode.h"
#include "reference/npy.h"
#include "reference/quant_conventions.h"
#include "tests/normal_data.h"
#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

using test_support::TempDir;
using CliResult = test_support::ShellResult;

CliResult mxgate(const std::string& args) {
  return test_support::run_shell(std::string(MXGATE_CLI) + " " + args + " 2>&1");
}

testing::AssertionResult Contains(const std::string& text, std::string_view phrase) {
  if (text.find(phrase) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "\"" << text << "\" lacks \"" << phrase << "\"";
}

using test_support::normal_data;

std::string block_inputs(const TempDir& d) {
  return "--scheme block --a " + d.file("a.npy") + " --a-scales " + d.file("as.npy") + " --b " +
         d.file("b.npy") + " --b-scales " + d.file("bs.npy");
}

// Writes block FP8 operands (A 1x128, B 128x128 fp32 scales) of quantized N(0, 1) data and
// returns their decoded problem.
GemmProblem write_block_operands(const TempDir& d, std::size_t m, std::size_t n, std::size_t k,
                                 uint64_t seed) {
  const BlockPolicy p = *block_policy(*find_convention("vllm_group_quant"), Format::kE4M3FN, false);
  const BlockQuantized a =
      quantize_block(normal_data(m * k, seed), m, k, 1, 128, Format::kE4M3FN, p);
  const BlockQuantized b =
      quantize_block(normal_data(n * k, seed + 1), n, k, 128, 128, Format::kE4M3FN, p);
  write_npy(d.file("a.npy"), NpyArray({m, k}, a.data));
  write_npy(d.file("as.npy"), NpyArray({m, a.scale_cols()}, a.scales));
  write_npy(d.file("b.npy"), NpyArray({n, k}, b.data));
  write_npy(d.file("bs.npy"), NpyArray({b.scale_rows(), b.scale_cols()}, b.scales));
  return block_gemm_problem(a, b);
}

// Guards against a model missing from the listing, or listed without its parameters or sources.
TEST(CliAccumulators, ListsModelsWithParametersAndSources) {
  const CliResult r = mxgate("accumulators");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const AccumulatorModel& m : all_accumulators()) {
    EXPECT_TRUE(Contains(r.out, m.name + " (" + std::string(to_string(m.kind)) + ")"));
    EXPECT_TRUE(Contains(r.out, "  source: " + m.source));
  }
  EXPECT_TRUE(Contains(r.out, "precision_bits       14"));
  EXPECT_TRUE(Contains(r.out, "chunk_k              128"));
  const CliResult j = mxgate("accumulators --json");
  ASSERT_EQ(j.exit_code, 0) << j.out;
  EXPECT_TRUE(Contains(j.out, "\"name\": \"sm90_fp8_mma\""));
  EXPECT_TRUE(Contains(j.out, "\"kind\": \"aligned_chunks\""));
  EXPECT_TRUE(Contains(j.out, "\"precision_bits\": \"14\""));
  EXPECT_TRUE(Contains(j.out, "\"unit_roundoff_bits\": \"24\""));
  EXPECT_TRUE(Contains(j.out, "\"status\": \"published, not measured here\""));
  EXPECT_TRUE(Contains(r.out, "  status: measured on H200"));
  EXPECT_EQ(mxgate("accumulators extra").exit_code, 2);
}

// Guards against the false failures of docs/nvidia.md §4.2 (a correct Hopper FP8 GEMM outside the
// fp32 bound) remaining with --accumulator sm90_fp8_mma, and against that bound accepting a wrong
// kernel.
// C is the bit-faithful simulation of the model on these operands.
TEST(CliCheckGemm, Sm90AccumulatorAcceptsTheSimulatedHopperGemm) {
  TempDir d;
  const std::size_t m = 16, n = 128, k = 2048;
  GemmProblem p = write_block_operands(d, m, n, k, 12);
  const AccumulatorModel& sm90 = *find_accumulator("sm90_fp8_mma");
  write_npy(d.file("c.npy"), NpyArray({m, n}, simulate_gemm(p, sm90, OutputFormat::kFp32).fp32));
  const std::string c = " --c " + d.file("c.npy");
  CliResult r = mxgate("check-gemm " + block_inputs(d) + c + " --mode bound");
  EXPECT_EQ(r.exit_code, 1) << r.out;  // today's default: fp32 round-to-nearest everywhere
  EXPECT_TRUE(Contains(r.out, "bound mode (acc-bits 24, block-k 128)"));
  EXPECT_TRUE(Contains(r.out, "elements outside"));
  r = mxgate("check-gemm " + block_inputs(d) + c + " --mode bound --accumulator sm90_fp8_mma");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "bound mode (accumulator sm90_fp8_mma)"));
  EXPECT_TRUE(Contains(r.out, "bound: all 2048 elements within their bound"));
  // The kernel that reads A's scales of K blocks 0 and 1 swapped.
  for (std::size_t i = 0; i < m; ++i) std::swap(p.a_scale[i * 16], p.a_scale[i * 16 + 1]);
  write_npy(d.file("c.npy"), NpyArray({m, n}, simulate_gemm(p, sm90, OutputFormat::kFp32).fp32));
  r = mxgate("check-gemm " + block_inputs(d) + c + " --mode bound --accumulator sm90_fp8_mma");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "elements outside; worst ("));
  EXPECT_TRUE(Contains(r.out, "FAIL"));
}

// Guards against exact mode staying silent about operands on which a correct kernel with the
// named accumulator need not be bit-exact, or flagging operands on which it must be.
TEST(CliCheckGemm, ExactModeSaysWhetherOperandsAreExactInTheAccumulator) {
  TempDir d;
  write_block_operands(d, 4, 128, 256, 5);
  ASSERT_EQ(mxgate("gemm " + block_inputs(d) + " --out " + d.file("c.npy")).exit_code, 0);
  CliResult r = mxgate("check-gemm " + block_inputs(d) + " --c " + d.file("c.npy") +
                       " --accumulator sm90_fp8_mma");
  EXPECT_EQ(r.exit_code, 0) << r.out;  // the verdict is the exact comparison
  EXPECT_TRUE(Contains(r.out, "operands exact in accumulator sm90_fp8_mma: no ("));
  // Exact-mode operands of the model, as E4M3 codes with power-of-two fp32 scales.
  const GemmProblem g = make_exact_mode_operands(4, 128, 256, kDeepSeekBlocks, true, 3,
                                                 *find_accumulator("sm90_fp8_mma"))
                            .problem;
  std::vector<uint8_t> a, b;
  for (float x : g.a) a.push_back(static_cast<uint8_t>(encode(Format::kE4M3FN, x, {})));
  for (float x : g.b) b.push_back(static_cast<uint8_t>(encode(Format::kE4M3FN, x, {})));
  write_npy(d.file("a.npy"), NpyArray({4, 256}, a));
  write_npy(d.file("as.npy"), NpyArray({4, 2}, g.a_scale));
  write_npy(d.file("b.npy"), NpyArray({128, 256}, b));
  write_npy(d.file("bs.npy"), NpyArray({1, 2}, g.b_scale));
  ASSERT_EQ(mxgate("gemm " + block_inputs(d) + " --out " + d.file("c.npy")).exit_code, 0);
  r = mxgate("check-gemm " + block_inputs(d) + " --c " + d.file("c.npy") +
             " --accumulator sm90_fp8_mma");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "operands exact in accumulator sm90_fp8_mma: yes"));
}

// Guards against bad accumulator options being ignored or crashing: each exits 2 naming it.
TEST(CliCheckGemm, BadAccumulatorOptionsExit2) {
  TempDir d;
  write_block_operands(d, 2, 128, 128, 1);
  write_npy(d.file("c.npy"), NpyArray({2, 128}, std::vector<float>(256, 0.0f)));
  const std::string base = "check-gemm " + block_inputs(d) + " --c " + d.file("c.npy");
  CliResult r = mxgate(base + " --mode bound --accumulator sm100_fp4");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Contains(r.out, "--accumulator: unknown accumulator 'sm100_fp4' (accumulators: " +
                                  accumulator_names() + ")"));
  r = mxgate(base + " --mode bound --accumulator sm90_fp8_mma --acc-bits 23");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Contains(r.out, "--acc-bits and --accumulator both choose the accumulator model"));
  r = mxgate(base + " --mode bound --accumulator sm90_fp8_mma:group_size=0");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Contains(r.out, "group_size"));
  // An MX GEMM has 32-wide scale blocks: no chunk of 128 k lies under one scale.
  write_npy(d.file("a.npy"), NpyArray({2, 128}, std::vector<uint8_t>(256, 0x38)));
  write_npy(d.file("as.npy"), NpyArray({2, 4}, std::vector<uint8_t>(8, 127)));
  write_npy(d.file("b.npy"), NpyArray({3, 128}, std::vector<uint8_t>(384, 0x38)));
  write_npy(d.file("bs.npy"), NpyArray({3, 4}, std::vector<uint8_t>(12, 127)));
  write_npy(d.file("c.npy"), NpyArray({2, 3}, std::vector<float>(6, 128.0f)));
  r = mxgate("check-gemm --scheme mx --a " + d.file("a.npy") + " --a-scales " + d.file("as.npy") +
             " --b " + d.file("b.npy") + " --b-scales " + d.file("bs.npy") + " --c " +
             d.file("c.npy") + " --mode bound --accumulator sm90_fp8_mma");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Contains(r.out, "crosses an A scale block"));
}

// Guards against probe-accumulator printing other parameters than it measured on the simulation,
// or its JSON lacking them.
TEST(CliProbeAccumulator, PrintsTheSimulatedParameters) {
  CliResult r = mxgate("probe-accumulator --simulate sm90_fp8_mma");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "probe-accumulator: simulate sm90_fp8_mma (e4m3fn, per-tensor"));
  EXPECT_TRUE(Contains(r.out, "precision_bits       14\n"));
  EXPECT_TRUE(Contains(r.out, "rounding             truncate\n"));
  EXPECT_TRUE(Contains(r.out, "chunk_k              128 (verified at the next chunk)\n"));
  EXPECT_TRUE(Contains(r.out, "group_size           32\n"));
  EXPECT_TRUE(Contains(r.out, "normalize_group_sum  1 (renormalised)\n"));
  EXPECT_TRUE(Contains(r.out, "model                sm90_fp8_mma\n"));
  EXPECT_TRUE(Contains(r.out, "model_status         registry: measured on H200"));
  r = mxgate("probe-accumulator --simulate sm90_fp8_mma:normalize_group_sum=0");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "normalize_group_sum  0 (carry bits kept)\n"));
  EXPECT_TRUE(Contains(r.out, "model_status         new: no registry model has these measured"));
  r = mxgate("probe-accumulator --simulate cdna3_fp8_mfma");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "halves               1 (odd / even k fused apart)\n"));
  EXPECT_TRUE(Contains(r.out, "late_c_bits          32 (late C)\n"));
  EXPECT_TRUE(Contains(r.out, "late_rounding        round_down\n"));
  EXPECT_TRUE(Contains(r.out, "store                nearest_even\n"));
  EXPECT_TRUE(Contains(r.out, "model                cdna3_fp8_mfma\n"));
  EXPECT_TRUE(Contains(r.out, "model_status         registry: published, not measured here\n"));
  r = mxgate("probe-accumulator --simulate cdna3_fp8_mfma:late_rounding=truncate");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out,
                       "model                sm90_fp8_mma:chunk_k=0,group_size=16,"
                       "precision_bits=25,"));
  EXPECT_TRUE(Contains(r.out, "model_status         new: no registry model has these measured"));
  r = mxgate(
      "probe-accumulator --simulate sm90_fp8_mma:precision_bits=12,chunk_k=64,group_size=16 "
      "--scaling block --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"precision_bits\": 12"));
  EXPECT_TRUE(Contains(r.out, "\"chunk_k\": 64"));
  EXPECT_TRUE(Contains(r.out, "\"group_size\": 16"));
  EXPECT_TRUE(Contains(r.out, "\"rounding\": \"truncate\""));
  r = mxgate("probe-accumulator --simulate fp32_rn");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "precision_bits       >= 24"));
  EXPECT_TRUE(Contains(r.out, "model                fp32_rn\n"));
}

// Guards against `probe-accumulator --backend hip` on a machine without an AMD GPU (this build
// has no hip backend) measuring something else or failing silently: exit 3, as every verb with
// an unavailable backend, with a message naming the backend and the simulation to run instead.
TEST(CliProbeAccumulator, HipBackendUnavailableExits3) {
  const CliResult r = mxgate("probe-accumulator --impl example --backend hip");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_TRUE(
      Contains(r.out, "probe-accumulator --backend hip: backend 'hip' is not in this build"));
  EXPECT_TRUE(Contains(r.out, "--simulate cdna3_fp8_mfma"));
}

// Guards against bad probe options crashing or being ignored: each exits 2 naming the problem.
TEST(CliProbeAccumulator, BadOptionsExit2) {
  struct Bad {
    std::string args;
    std::string phrase;
  };
  const std::vector<Bad> cases = {
      {"probe-accumulator", "missing required option --simulate"},
      {"probe-accumulator --simulate nope", "unknown accumulator 'nope'"},
      {"probe-accumulator --simulate sm90_fp8_mma --scaling row", "'row' is not a scaling"},
      {"probe-accumulator --simulate sm90_fp8_mma --scaling block --k 300",
       "block scaling needs a multiple of 128"},
      {"probe-accumulator --simulate sm90_fp8_mma:chunk_k=256 --scaling block",
       "crosses an A scale block"},
      {"probe-accumulator --simulate sm90_fp8_mma --format e8m0", "not an FP8 element format"},
  };
  for (const Bad& c : cases) {
    const CliResult r = mxgate(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_TRUE(Contains(r.out, c.phrase)) << c.args;
  }
}

// Guards against the new verbs missing from `mxgate --help` or lacking per-verb help.
TEST(CliAccumulators, VerbsHaveHelp) {
  for (const char* verb : {"accumulators", "probe-accumulator"}) {
    const CliResult r = mxgate(std::string(verb) + " --help");
    EXPECT_EQ(r.exit_code, 0) << verb;
    EXPECT_TRUE(Contains(r.out, std::string("usage: mxgate ") + verb));
    EXPECT_TRUE(Contains(mxgate("--help").out, std::string("  ") + verb));
  }
  EXPECT_TRUE(Contains(mxgate("check-gemm --help").out, "--accumulator NAME"));
}

}  // namespace
}  // namespace mxgate
