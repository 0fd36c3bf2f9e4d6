// Covers reference/accumulator (the registry of named accumulator models, parameter overrides,
// the manual --acc-bits form) and reference/accumulator_simulation (the bit-faithful simulation
// of the aligned-chunk accumulator) on hand-derived cases and on every probe of the H200
// measurement (docs/nvidia.md §4.1), alignment
// to the largest term with truncation and with rounding, kept and renormalised carries, the
// running partial re-aligned by a later group, the fp32 subnormal floor, chunk boundaries and a K
// tail, promotion with scales, and thread-count independence.
// Does not cover: the bound (test_accumulator_bounds), exact-mode operands
// (test_accumulator_exact), the probe (test_accumulator_probe), the CLI (test_cli_accumulators).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/accumulator.h"
#include "reference/accumulator_simulation.h"
#include "reference/gemm_oracle.h"

namespace mxgate {
namespace {

testing::AssertionResult ThrowsWith(const std::function<void()>& f, const std::string& phrase) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).find(phrase) != std::string::npos) {
      return testing::AssertionSuccess();
    }
    return testing::AssertionFailure()
           << "message \"" << e.what() << "\" lacks \"" << phrase << "\"";
  }
  return testing::AssertionFailure() << "no std::invalid_argument";
}

const AccumulatorModel& sm90() { return *find_accumulator("sm90_fp8_mma"); }

// C[0][0] of a 1 x 1 x K problem whose products a_k * b_k are `terms` (a = term, b = 1), no
// scales, in the model's simulation.
float simulate_terms(const std::vector<std::pair<size_t, double>>& terms, size_t k,
                     const AccumulatorModel& model) {
  GemmProblem p = make_gemm_problem(1, 1, k, BlockSizes{1, k, 1, k}, false);
  for (const auto& [at, value] : terms) {
    p.a[at] = static_cast<float>(value);
    p.b[at] = 1.0f;
  }
  return simulate_gemm(p, model, OutputFormat::kFp32).fp32[0];
}

// ---- The registry

// Guards against a model missing from the registry or an unnamed / unsourced row.
TEST(AccumulatorRegistry, ListsTheNamedModelsWithDescriptionAndSource) {
  EXPECT_EQ(accumulator_names(),
            "fp32_rn sm90_fp8_mma sm90_fp8_mma_nopromo cdna3_fp8_mfma sm100_f8f6f4 sm100_mxf4nvf4");
  for (const AccumulatorModel& m : all_accumulators()) {
    EXPECT_EQ(find_accumulator(m.name), &m);
    EXPECT_FALSE(m.description.empty()) << m.name;
    EXPECT_FALSE(m.status.empty()) << m.name;
    EXPECT_NE(m.source.find("docs/accumulators.md §"), std::string::npos) << m.name;
    EXPECT_NO_THROW(validate_accumulator(m)) << m.name;
  }
  EXPECT_EQ(find_accumulator("sm90"), nullptr);
  EXPECT_EQ(find_accumulator(""), nullptr);
}

// Guards against the table rows drifting from the numbers and sources of docs/accumulators.md
// §4 (sm90_fp8_mma) and §2 (fp32_rn, today's AccumModel defaults).
TEST(AccumulatorRegistry, RowsHoldTheDocumentedParameters) {
  const AccumulatorModel& f = *find_accumulator("fp32_rn");
  EXPECT_EQ(f.kind, AccumulatorKind::kFloat);
  EXPECT_EQ(f.fp.unit_roundoff, 0x1p-24);   // binary32 RN
  EXPECT_EQ(f.fp.underflow_eta, 0x1p-150);  // half the smallest subnormal
  EXPECT_EQ(f.fp.overflow_threshold, 0x1.ffffffp127);
  EXPECT_EQ(f.fp.block_k, 128u);
  EXPECT_EQ(f.fp.product_roundings, 1);
  EXPECT_EQ(f.fp.partial_roundings, 2);
  const AccumulatorModel& s = sm90();
  EXPECT_EQ(s.kind, AccumulatorKind::kAlignedChunks);
  EXPECT_EQ(s.chunks.chunk_k, 128u);       // promotion every 128 k (docs/nvidia.md §4.1)
  EXPECT_EQ(s.chunks.group_size, 32u);     // wgmma k = 32 for 8-bit inputs (§4)
  EXPECT_EQ(s.chunks.precision_bits, 14);  // measured on the H200 (docs/nvidia.md §4.1)
  EXPECT_EQ(s.chunks.rounding, AlignRounding::kTruncate);  // measured (docs/nvidia.md §4.1)
  EXPECT_TRUE(s.chunks.normalize_group_sum);  // measured on the H200 (docs/accumulators.md §4.4)
  EXPECT_EQ(s.chunks.partial_roundings, 2);
  EXPECT_EQ(s.status,
            "measured on H200 (cuBLASLt; precision, rounding, chunk_k, group, normalisation)");
}

// Guards against the published rows drifting from their sources (docs/accumulators.md §4.1-4.3)
// or claiming a measurement that was not made here.
TEST(AccumulatorRegistry, PublishedRowsHoldTheirSourcesNumbers) {
  const AlignedChunkParams& nopromo = find_accumulator("sm90_fp8_mma_nopromo")->chunks;
  EXPECT_EQ(nopromo.chunk_k, 0u);  // Triton: max_num_imprecise_acc_default = 2**30
  EXPECT_EQ(nopromo.precision_bits, 14);
  EXPECT_EQ(nopromo.group_size, 32u);
  const AccumulatorModel& cdna3 = *find_accumulator("cdna3_fp8_mfma");
  EXPECT_EQ(cdna3.status, "published, not measured here");
  EXPECT_EQ(cdna3.chunks.group_size, 16u);     // 16 products per step
  EXPECT_EQ(cdna3.chunks.precision_bits, 25);  // F = 24 fraction bits
  EXPECT_TRUE(cdna3.chunks.halves);            // odd / even halves of 8
  EXPECT_EQ(cdna3.chunks.late_c_bits, 32);     // F2 = 31 fraction bits
  EXPECT_EQ(cdna3.chunks.late_rounding, AlignRounding::kRoundDown);
  EXPECT_EQ(cdna3.chunks.store, StoreRounding::kNearestEven);
  EXPECT_EQ(cdna3.chunks.chunk_k, 0u);
  const AccumulatorModel& f8 = *find_accumulator("sm100_f8f6f4");
  EXPECT_EQ(f8.status, "published, not measured here");
  EXPECT_EQ(f8.chunks.group_size, 32u);     // K = 32 per instruction
  EXPECT_EQ(f8.chunks.precision_bits, 26);  // 25 fraction bits
  EXPECT_EQ(f8.chunks.rounding, AlignRounding::kTruncate);
  EXPECT_EQ(f8.chunks.store, StoreRounding::kTruncate);
  EXPECT_EQ(f8.chunks.late_c_bits, 0);
  const AccumulatorModel& f4 = *find_accumulator("sm100_mxf4nvf4");
  EXPECT_EQ(f4.status, "published, not measured here");
  EXPECT_EQ(f4.chunks.sub_sum, 16u);
  EXPECT_EQ(f4.chunks.group_size, 64u);
  EXPECT_EQ(f4.chunks.precision_bits, 36);  // 35 fraction bits
}

// Guards against overrides that are silently ignored, and against a spec that does not round
// trip through the listed parameters.
TEST(AccumulatorSpec, OverridesApplyAndRoundTrip) {
  const AccumulatorModel m = parse_accumulator_spec(
      "sm90_fp8_mma:precision_bits=12,group_size=16,chunk_k=64,rounding=nearest_even,"
      "normalize_group_sum=1,partial_roundings=1");
  EXPECT_EQ(m.name,
            "sm90_fp8_mma:precision_bits=12,group_size=16,chunk_k=64,rounding=nearest_even,"
            "normalize_group_sum=1,partial_roundings=1");
  EXPECT_EQ(m.chunks.precision_bits, 12);
  EXPECT_EQ(m.chunks.group_size, 16u);
  EXPECT_EQ(m.chunks.chunk_k, 64u);
  EXPECT_EQ(m.chunks.rounding, AlignRounding::kNearestEven);
  EXPECT_TRUE(m.chunks.normalize_group_sum);
  EXPECT_EQ(m.chunks.partial_roundings, 1);
  for (const AccumulatorModel& base : {m, *find_accumulator("fp32_rn")}) {
    std::string spec = "sm90_fp8_mma";
    if (base.kind == AccumulatorKind::kFloat) spec = "fp32_rn";
    char sep = ':';
    for (const AccumulatorParameter& p : accumulator_parameters(base)) {
      spec += sep + p.name + "=" + p.value;
      sep = ',';
    }
    const AccumulatorModel back = parse_accumulator_spec(spec);
    EXPECT_EQ(accumulator_parameters(back).size(), accumulator_parameters(base).size());
    for (size_t i = 0; i < accumulator_parameters(base).size(); ++i) {
      EXPECT_EQ(accumulator_parameters(back)[i].value, accumulator_parameters(base)[i].value)
          << spec;
    }
  }
  const AccumulatorModel f = parse_accumulator_spec("fp32_rn:unit_roundoff_bits=23,block_k=0");
  EXPECT_EQ(f.fp.unit_roundoff, 0x1p-23);
  EXPECT_EQ(f.fp.underflow_eta, 0x1p-149);  // 2^-126 * 2^-23: the whole subnormal spacing
  EXPECT_EQ(f.fp.block_k, 0u);
}

// Guards against a bad spec reaching the bound or simulation instead of a message naming it.
TEST(AccumulatorSpec, BadSpecsNameTheProblem) {
  EXPECT_TRUE(ThrowsWith(
      [] { parse_accumulator_spec("sm100"); },
      "unknown accumulator 'sm100' (accumulators: fp32_rn sm90_fp8_mma sm90_fp8_mma_nopromo "
      "cdna3_fp8_mfma sm100_f8f6f4 sm100_mxf4nvf4)"));
  EXPECT_TRUE(ThrowsWith([] { parse_accumulator_spec("sm90_fp8_mma:bits=3"); },
                         "unknown parameter 'bits' (parameters: chunk_k group_size"));
  EXPECT_TRUE(ThrowsWith([] { parse_accumulator_spec("fp32_rn:chunk_k=3"); },
                         "unknown parameter 'chunk_k' (parameters: unit_roundoff_bits"));
  EXPECT_TRUE(ThrowsWith([] { parse_accumulator_spec("sm90_fp8_mma:precision_bits=41"); },
                         "not an integer in [2, 40]"));
  EXPECT_TRUE(ThrowsWith([] { parse_accumulator_spec("sm90_fp8_mma:precision_bits=30"); },
                         "precision_bits must be in [2, 24] with store=exact"));
  EXPECT_TRUE(ThrowsWith([] { parse_accumulator_spec("sm90_fp8_mma:rounding=up"); },
                         "not a rounding (truncate, nearest_even, round_down)"));
  EXPECT_TRUE(ThrowsWith([] { parse_accumulator_spec("sm90_fp8_mma:halves=1"); },
                         "halves needs an even group_size, sub_sum=1 and a late C"));
  EXPECT_TRUE(ThrowsWith([] { parse_accumulator_spec("sm90_fp8_mma:sub_sum=3"); },
                         "sub_sum must divide group_size"));
  EXPECT_TRUE(ThrowsWith([] { parse_accumulator_spec("sm90_fp8_mma:late_c_bits=20"); },
                         "halves and a late C need a store rounding to fp32"));
  EXPECT_TRUE(
      ThrowsWith([] { parse_accumulator_spec("sm90_fp8_mma:group_size"); }, "is not param=value"));
  EXPECT_TRUE(
      ThrowsWith([] { parse_accumulator_spec("sm90_fp8_mma:chunk_k=64,"); }, "trailing ','"));
  // 19 + ceil(log2(33)) = 25 > 24: a group sum would not be an fp32 value.
  EXPECT_TRUE(ThrowsWith([] { parse_accumulator_spec("sm90_fp8_mma:precision_bits=19"); },
                         "ceil(log2(group_size + 1)) = 25 > 24"));
}

// Guards against check-gemm's manual form changing meaning (the former AccumModel setup).
TEST(AccumulatorSpec, ManualFloatFormMatchesTheFormerCheckGemmModel) {
  const AccumulatorModel m = manual_float_accumulator(23, 64);
  EXPECT_EQ(m.kind, AccumulatorKind::kFloat);
  EXPECT_EQ(m.fp.unit_roundoff, 0x1p-23);
  EXPECT_EQ(m.fp.underflow_eta, 0x1p-149);
  EXPECT_EQ(m.fp.overflow_threshold, 0x1.fffffep127);  // (2 - 2^-23) * 2^127
  EXPECT_EQ(m.fp.block_k, 64u);
  EXPECT_EQ(m.fp.product_roundings, 1);
  EXPECT_EQ(m.fp.partial_roundings, 2);
}

// ---- The simulation

// Guards against a simulation that disagrees with the H200: every probe of docs/nvidia.md §4.1
// (cuBLASLt tensor_e4m3_e4m3_f32 and block_e4m3_e4m3_f32, a 4 x 8 x 1024 product whose only
// nonzero terms are 256 * 256 = 2^16 and small products at chosen k, scales 1), with the C[0][0]
// the H200 returned. Next to 2^16 the unit of 14 kept bits is 2^(16-14+1) = 2^3.
TEST(AccumulatorSimulation, ReproducesTheH200Probes) {
  constexpr size_t kK = 1024;
  const double big = 65536.0;
  struct Probe {
    const char* what;
    std::vector<std::pair<size_t, double>> terms;
    double h200;  // C[0][0] on the H200 (docs/nvidia.md §4.1)
  };
  std::vector<Probe> probes = {
      // Precision: 2^e at k = 1 is kept whole for e >= 3, lost whole for e <= 2.
      {"2^16 + 2^3 at k=1", {{0, big}, {1, 8.0}}, big + 8},
      {"2^16 + 2^15 at k=1", {{0, big}, {1, 32768.0}}, big + 32768},
      {"2^16 + 2^2 at k=1", {{0, big}, {1, 4.0}}, big},
      {"2^16 + 2^-18 at k=1", {{0, big}, {1, 0x1p-18}}, big},
      // Dropped bits: truncated toward zero, per product: 10, 12, 14 -> 8; -2, -6 -> 0; -10 -> -8.
      {"2^16 + 1.25 * 2^3", {{0, big}, {1, 10.0}}, big + 8},
      {"2^16 + 1.5 * 2^3", {{0, big}, {1, 12.0}}, big + 8},
      {"2^16 + 1.75 * 2^3", {{0, big}, {1, 14.0}}, big + 8},
      {"2^16 - 0.25 * 2^3", {{0, big}, {1, -2.0}}, big},
      {"2^16 - 0.75 * 2^3", {{0, big}, {1, -6.0}}, big},
      {"2^16 - 1.25 * 2^3", {{0, big}, {1, -10.0}}, big - 8},
      // Promotion: 2^-2 after 2^16 is lost inside the chunk [0, 128) and kept from k = 128 on by
      // the fp32 RN sum of the chunks: 65536 + 0.25 = 65536.25 is an fp32 value (19 bits).
      {"2^-2 at k=1", {{0, big}, {1, 0.25}}, big},
      {"2^-2 at k=127", {{0, big}, {127, 0.25}}, big},
      {"2^-2 at k=128", {{0, big}, {128, 0.25}}, big + 0.25},
      {"2^-2 at k=129", {{0, big}, {129, 0.25}}, big + 0.25},
      {"2^-2 at k=512", {{0, big}, {512, 0.25}}, big + 0.25},
      // Chunks are [128 j, 128 (j + 1)): aligned to multiples of 128, not to the large product.
      {"2^16 at k=127, 2^-2 at k=128", {{127, big}, {128, 0.25}}, big + 0.25},
      {"2^16 at k=130, 2^-2 at k=250", {{130, big}, {250, 0.25}}, big},
  };
  // Many small products: each is aligned to 2^16 and truncated before it is added, so none
  // survives although their exact sum (8, 16) would be kept.
  Probe group32{"32 x 2^-2 at k=32..63", {{0, big}}, big};
  for (size_t k = 32; k < 64; ++k) group32.terms.push_back({k, 0.25});
  Probe group64{"64 x 2^-2 at k=1..64", {{0, big}}, big};
  for (size_t k = 1; k <= 64; ++k) group64.terms.push_back({k, 0.25});
  probes.push_back(group32);
  probes.push_back(group64);
  for (const Probe& p : probes) {
    EXPECT_EQ(simulate_terms(p.terms, kK, sm90()), static_cast<float>(p.h200)) << p.what;
  }
  // fp32_rn keeps a lone 2^-2 anywhere: the model the H200 is not.
  EXPECT_EQ(simulate_terms({{0, big}, {1, 0.25}}, kK, *find_accumulator("fp32_rn")), big + 0.25);
}

// Guards against aligning to the first term instead of the largest, or rounding instead of
// truncating (and the reverse for nearest_even).
TEST(AccumulatorSimulation, GroupAlignsToTheLargestTerm) {
  AlignedChunkParams p = sm90().chunks;  // p = 14: next to 2^16 the unit is 2^(16-14+1) = 2^3
  const double small = 12;               // 2^3 + 2^2: 1.5 units
  double terms[] = {small, 65536.0};     // the small term comes first in the group
  EXPECT_EQ(aligned_group_sum(0.0f, terms, 2, p), 65544.0f);  // 1 unit kept, 0.5 truncated
  double neg[] = {-small, -65536.0};
  EXPECT_EQ(aligned_group_sum(0.0f, neg, 2, p), -65544.0f);  // toward zero
  p.rounding = AlignRounding::kNearestEven;
  EXPECT_EQ(aligned_group_sum(0.0f, terms, 2, p), 65552.0f);  // 1.5 units: tie to even 2
  double tie_down[] = {4, 65536.0};                           // 0.5 units: tie to even 0
  EXPECT_EQ(aligned_group_sum(0.0f, tie_down, 2, p), 65536.0f);
  // The running partial is a term like the others: s = 12 then a group with 2^16.
  p.rounding = AlignRounding::kTruncate;
  double big[] = {65536.0};
  EXPECT_EQ(aligned_group_sum(12.0f, big, 1, p), 65544.0f);
}

// Guards against losing the carry bits of a group sum when the model keeps them, or keeping
// them when it renormalises; and against a later group that does not re-align the partial.
TEST(AccumulatorSimulation, CarryBitsAndRealignment) {
  AlignedChunkParams p = sm90().chunks;
  p.normalize_group_sum = false;             // Fasi et al.'s adder keeps the carry bits
  double terms[] = {65536.0, 65536.0, 8.0};  // exact sum 2^17 + 2^3: 15 significant bits
  EXPECT_EQ(aligned_group_sum(0.0f, terms, 3, p), 131080.0f);
  // The next group (zero products) aligns the partial to its own 14 bits: unit 2^4, 2^3 lost.
  double zeros[] = {0.0, 0.0};
  EXPECT_EQ(aligned_group_sum(131080.0f, zeros, 2, p), 131072.0f);
  p.normalize_group_sum = true;  // rounded to 14 bits of 2^17 at once (measured on the H200)
  EXPECT_EQ(aligned_group_sum(0.0f, terms, 3, p), 131072.0f);
  // In a whole GEMM, with the triple in the last group of the chunk (k = 96..98) the carry
  // survives promotion when kept; in the first group (k = 0..2) the three later groups truncate
  // it. The measured row renormalises, so the carry never survives.
  const AccumulatorModel carry = parse_accumulator_spec("sm90_fp8_mma:normalize_group_sum=0");
  EXPECT_EQ(simulate_terms({{96, 65536.0}, {97, 65536.0}, {98, 8.0}}, 128, carry), 131080.0f);
  EXPECT_EQ(simulate_terms({{0, 65536.0}, {1, 65536.0}, {2, 8.0}}, 128, carry), 131072.0f);
  EXPECT_EQ(simulate_terms({{96, 65536.0}, {97, 65536.0}, {98, 8.0}}, 128, sm90()), 131072.0f);
}

// Guards against a unit finer than the fp32 register that holds the partial.
TEST(AccumulatorSimulation, UnitNeverBelowTheSmallestSubnormal) {
  const AlignedChunkParams p = sm90().chunks;
  // Largest term 2^-140: 2^(-140-13) would be the unit, fp32 stops at 2^-149, so 3 * 2^-149 is
  // kept whole and 2^-150 (half the smallest subnormal) is truncated.
  double terms[] = {0x1p-140, 3 * 0x1p-149, 0x1p-150};
  EXPECT_EQ(aligned_group_sum(0.0f, terms, 3, p), 0x1p-140f + 3 * 0x1p-149f);
}

// Guards against chunks that do not start at k = 0 every chunk_k, and a K tail chunk that is not
// promoted.
TEST(AccumulatorSimulation, ChunkBoundariesAndTail) {
  // K = 130: chunks [0, 128) and [128, 130).
  EXPECT_EQ(simulate_terms({{127, 65536.0}, {128, 0.25}}, 130, sm90()), 65536.25f);
  EXPECT_EQ(simulate_terms({{128, 65536.0}, {129, 0.25}}, 130, sm90()), 65536.0f);
  const AccumulatorModel whole = parse_accumulator_spec("sm90_fp8_mma:chunk_k=0");
  EXPECT_EQ(simulate_terms({{0, 65536.0}, {129, 0.25}}, 130, whole), 65536.0f);
}

// Guards against scales applied inside the chunk (they would change what is truncated) or not at
// promotion, and against the partial_roundings=1 (fma) form reading the wrong scale.
TEST(AccumulatorSimulation, PromotionAppliesTheChunkScales) {
  // K = 256 in 1x128 / 128x128 blocks: chunk 0 has sa = 2, sb = 3; chunk 1 sa = 0.5, sb = 1.
  GemmProblem p = make_gemm_problem(1, 1, 256, kDeepSeekBlocks, true);
  p.a[0] = 256;
  p.b[0] = 256;  // 2^16 in chunk 0
  p.a[1] = 1;
  p.b[1] = 4;  // 2^2: lost next to 2^16 (unit 2^3), before any scale
  p.a[128] = 3;
  p.b[128] = 1;  // 3 in chunk 1
  p.a_scale = {2.0f, 0.5f};
  p.b_scale = {3.0f, 1.0f};
  // (2^16 * 2) * 3 + (3 * 0.5) * 1 = 393216 + 1.5 (exact in fp32).
  EXPECT_EQ(simulate_gemm(p, sm90(), OutputFormat::kFp32).fp32[0], 393217.5f);
  const AccumulatorModel fma = parse_accumulator_spec("sm90_fp8_mma:partial_roundings=1");
  EXPECT_EQ(simulate_gemm(p, fma, OutputFormat::kFp32).fp32[0], 393217.5f);
  // bf16 output: RNE of 393217.5 to 8 bits: 393216 (= 1.5 * 2^18).
  EXPECT_EQ(simulate_gemm(p, sm90(), OutputFormat::kBf16).bf16[0], 0x48C0);
}

// Guards against simulating a kernel the model does not describe (a chunk under two scales) or a
// float model that has no simulation.
TEST(AccumulatorSimulation, RejectsWhatItDoesNotModel) {
  const GemmProblem mx = make_gemm_problem(1, 1, 64, kMxfp8Blocks, true);
  EXPECT_TRUE(ThrowsWith([&] { simulate_gemm(mx, sm90(), OutputFormat::kFp32); },
                         "chunk [0, 64) crosses an A scale block"));
  const GemmProblem p = make_gemm_problem(1, 1, 64, kDeepSeekBlocks, true);
  EXPECT_TRUE(ThrowsWith(
      [&] {
        simulate_gemm(p, parse_accumulator_spec("fp32_rn:unit_roundoff_bits=23"),
                      OutputFormat::kFp32);
      },
      "only fp32 round-to-nearest"));
}

// Guards against a simulation whose result depends on how many threads ran it.
TEST(AccumulatorSimulation, IndependentOfTheThreadCount) {
  GemmProblem p = make_gemm_problem(9, 13, 300, kDeepSeekBlocks, true);
  std::mt19937_64 rng(5);
  std::normal_distribution<float> d(0, 30);
  for (float& x : p.a) x = std::round(d(rng));
  for (float& x : p.b) x = std::round(d(rng)) / 8;
  for (float& s : p.a_scale) s = 0.01f + static_cast<float>(rng() % 100) / 1000;
  for (float& s : p.b_scale) s = 0.02f + static_cast<float>(rng() % 100) / 1000;
  const GemmOutput one = simulate_gemm(p, sm90(), OutputFormat::kFp32, 1);
  for (unsigned t : {2u, 3u, 8u}) {
    EXPECT_EQ(simulate_gemm(p, sm90(), OutputFormat::kFp32, t).fp32, one.fp32) << t;
  }
}

// Guards against a structured adder step that differs from docs/accumulators.md §3.1, each value
// derived by hand: round-down moves a negative term away from zero; odd/even halves keep what a
// flat group truncates; a late C keeps a small product next to a large partial; the fp32 store
// rounds (to nearest even, or toward zero); exact sub-sums cancel before any alignment.
TEST(AccumulatorSimulation, StructuredAdderStepsByHand) {
  AlignedChunkParams flat;
  flat.precision_bits = 4;  // unit 2^(3-4+1) = 1 next to 8
  flat.group_size = 4;
  const double neg[] = {8.0, -0.75};
  EXPECT_EQ(aligned_group_sum(0.0f, neg, 2, flat), 8.0f);  // truncate: -0.75 -> 0
  AlignedChunkParams down = flat;
  down.rounding = AlignRounding::kRoundDown;
  EXPECT_EQ(aligned_group_sum(0.0f, neg, 2, down), 7.0f);  // floor(-0.75) = -1
  // +8 (k=0), 0.5 (k=1), -8 (k=2), 0.5 (k=3): flat, each 0.5 is half a unit, truncated: 0.
  const double four[] = {8.0, 0.5, -8.0, 0.5};
  AlignedChunkParams late = flat;
  late.store = StoreRounding::kNearestEven;
  late.late_c_bits = 8;
  EXPECT_EQ(aligned_group_sum(0.0f, four, 4, late), 0.0f);
  // Halves: the odd half 0.5 + 0.5 = 1 is exact on its own grid, then one whole unit next to 8.
  AlignedChunkParams halves = late;
  halves.halves = true;
  EXPECT_EQ(aligned_group_sum(0.0f, four, 4, halves), 1.0f);
  // Late C: the partial 8 and a lone product 0.25 (the product sum keeps 8 bits relative to 8:
  // unit 2^-4), stored in fp32: 8.25. Early C truncates 0.25 next to 8: 8.
  const double small[] = {0.25};
  EXPECT_EQ(aligned_group_sum(8.0f, small, 1, late), 8.25f);
  EXPECT_EQ(aligned_group_sum(8.0f, small, 1, flat), 8.0f);
  // Round-down late C drops a partial more than p bits below the top (MMA-Sim's earlier code):
  // -2^-2 next to the product 8 (p = 4) becomes 0, not floor(-0.25) = -1.
  AlignedChunkParams late_down = late;
  late_down.late_rounding = AlignRounding::kRoundDown;
  const double eight[] = {8.0};
  EXPECT_EQ(aligned_group_sum(-0.25f, eight, 1, late_down), 8.0f);
  EXPECT_EQ(aligned_group_sum(-0.5f, eight, 1, late_down), 7.0f);  // 2^-1: kept, floor -> -1
  // The fp32 store: 2^24 + 1 + 2^-1 (p = 26) rounds to nearest even 2^24 + 2, toward zero 2^24.
  AlignedChunkParams wide;
  wide.precision_bits = 26;
  wide.group_size = 4;
  wide.store = StoreRounding::kNearestEven;
  const double big[] = {0x1p24, 1.0, 0.5};
  EXPECT_EQ(aligned_group_sum(0.0f, big, 3, wide), 0x1p24f + 2.0f);
  wide.store = StoreRounding::kTruncate;
  EXPECT_EQ(aligned_group_sum(0.0f, big, 3, wide), 0x1p24f);
  // Sub-sums: +8 and -8 in one run of 2 cancel exactly, leaving 2^-10 whole next to them.
  AlignedChunkParams runs = flat;
  runs.sub_sum = 2;
  const double cancel[] = {8.0, -8.0, 0x1p-10, 0.0};
  EXPECT_EQ(aligned_group_sum(0.0f, cancel, 4, runs), 0x1p-10f);
  EXPECT_EQ(aligned_group_sum(0.0f, cancel, 4, flat), 0.0f);
}

}  // namespace
}  // namespace mxgate
