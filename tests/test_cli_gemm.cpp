// Tests for the verbs gemm and check-gemm of the mxgate CLI (tools/mxgate/tensor_cli.cpp), run as a
// subprocess on .npy files in a fresh temporary directory: gemm on hand-derived MX / block / bf16
// problems (scale decode per convention, a K=160 tail block), check-gemm in exact mode (pass, a
// located one-ulp flip, bf16 C) and in bound mode (an fp32 ordered-accumulation result passes, a
// planted error fails), and check-gemm on grouped (MoE) dumps: --offsets (int32 / int64, ends /
// starts, alignment), --masked-counts, --c-before, located (group, row, col), bad grouped input
// (exit 2 naming the file). Their dense error paths are test_cli_tensor_errors.cpp.
// Not covered: the oracle's semantics beyond these hand cases (its own tests do that), big inputs.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "reference/block_quant.h"
#include "reference/dequant.h"
#include "reference/gemm_oracle.h"
#include "reference/mx_quant.h"
#include "reference/npy.h"
#include "reference/quant_conventions.h"
#include "tests/cli_tensors.h"
#include "tests/normal_data.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

using cli_test::bits;
using cli_test::CliResult;
using cli_test::Contains;
using cli_test::mxgate;
using test_support::TempDir;

std::string gemm_inputs(const TempDir& d, const char* scheme) {
  std::string s =
      std::string("--scheme ") + scheme + " --a " + d.file("a.npy") + " --b " + d.file("b.npy");
  if (std::string_view(scheme) != "bf16") {
    s += " --a-scales " + d.file("as.npy") + " --b-scales " + d.file("bs.npy");
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// gemm

// Guards against the MX gemm verb misapplying scales or signs on a problem small enough to do by
// hand, and against bf16 output rounding anything but once, to nearest even.
TEST(CliGemm, Mx1x1x32HandResult) {
  TempDir d;
  std::vector<uint8_t> a(32, 0), b(32, 0);
  a[0] = 0x7e;  // 448
  a[1] = 0xb8;  // -1
  b[0] = 0x38;  // 1
  b[1] = 0x44;  // 3 = 1.5*2^1 -> 0 1000 100
  write_npy(d.file("a.npy"), NpyArray({1, 32}, a));
  write_npy(d.file("b.npy"), NpyArray({1, 32}, b));
  write_npy(d.file("as.npy"), NpyArray({1, 1}, std::vector<uint8_t>{129}));  // 2^2
  write_npy(d.file("bs.npy"), NpyArray({1, 1}, std::vector<uint8_t>{125}));  // 2^-2
  // C = (448*1 + (-1)*3) * 4 * 0.25 = 445 = 1.73828125*2^8 -> 0x43de8000.
  CliResult r = mxgate("gemm " + gemm_inputs(d, "mx") + " --out " + d.file("c.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const NpyArray c = read_npy(d.file("c.npy"));
  ASSERT_EQ(c.dtype, NpyDtype::kFloat32);
  ASSERT_EQ(c.shape, (std::vector<size_t>{1, 1}));
  EXPECT_EQ(bits(c.values<float>()[0]), 0x43de8000u);
  // bf16: 0x43de8000 is a tie between 0x43de (444) and 0x43df (446); even -> 0x43de.
  r = mxgate("gemm " + gemm_inputs(d, "mx") + " --out " + d.file("c.npy") + " --dtype bf16");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(read_npy(d.file("c.npy")), NpyArray({1, 1}, std::vector<uint16_t>{0x43de}));
}

// Guards against --convention being ignored in the MX gemm: scale byte 0x00 is 2^-127 under
// ocp_mx but 0.0 under vllm_e8m0_shift (docs/formats.md §2.2).
TEST(CliGemm, MxScaleDecodeFollowsConvention) {
  TempDir d;
  std::vector<uint8_t> a(32, 0), b(32, 0);
  a[0] = b[0] = 0x38;  // 1 * 1
  write_npy(d.file("a.npy"), NpyArray({1, 32}, a));
  write_npy(d.file("b.npy"), NpyArray({1, 32}, b));
  write_npy(d.file("as.npy"), NpyArray({1, 1}, std::vector<uint8_t>{0x00}));
  write_npy(d.file("bs.npy"), NpyArray({1, 1}, std::vector<uint8_t>{127}));
  CliResult r = mxgate("gemm " + gemm_inputs(d, "mx") + " --out " + d.file("c.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // 2^-127 is the fp32 subnormal 2^22 * 2^-149 -> 0x00400000.
  EXPECT_EQ(bits(read_npy(d.file("c.npy")).values<float>()[0]), 0x00400000u);
  r = mxgate("gemm " + gemm_inputs(d, "mx") + " --out " + d.file("c.npy") +
             " --convention vllm_e8m0_shift");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(bits(read_npy(d.file("c.npy")).values<float>()[0]), 0x00000000u);
}

// Guards against the partial last K block (K = 160 = 128 + 32) being dropped or given the first
// block's scale.
TEST(CliGemm, BlockK160TailBlockCounted) {
  TempDir d;
  std::vector<uint8_t> a(160, 0), b(160, 0);
  a[0] = 0x38;    // 1, group 0
  a[130] = 0x40;  // 2, group 1 (the 32-wide tail)
  b[0] = b[130] = 0x38;
  write_npy(d.file("a.npy"), NpyArray({1, 160}, a));
  write_npy(d.file("b.npy"), NpyArray({1, 160}, b));
  write_npy(d.file("as.npy"), NpyArray({1, 2}, std::vector<float>{0.75f, 3.0f}));
  write_npy(d.file("bs.npy"), NpyArray({1, 2}, std::vector<float>{1.0f, 0.5f}));
  // C = 1*1*0.75*1 + 2*1*3*0.5 = 0.75 + 3 = 3.75 = 1.875*2^1 -> 0x40700000 (0.75 without the tail).
  const CliResult r = mxgate("gemm " + gemm_inputs(d, "block") + " --out " + d.file("c.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(bits(read_npy(d.file("c.npy")).values<float>()[0]), 0x40700000u);
}

// Guards against the bf16 scheme rounding the sum more than once or misreading bf16 bits.
TEST(CliGemm, Bf16SchemeRoundsOnce) {
  TempDir d;
  // a = (1, 1, 1), b = (1, 2^-8, 2^-9) as bf16 bits 0x3f80, 0x3b80, 0x3b00.
  write_npy(d.file("a.npy"), NpyArray({1, 3}, std::vector<uint16_t>{0x3f80, 0x3f80, 0x3f80}));
  write_npy(d.file("b.npy"), NpyArray({1, 3}, std::vector<uint16_t>{0x3f80, 0x3b80, 0x3b00}));
  // Sum 1 + 2^-8 + 2^-9: fp32 mantissa bits 15 and 14 -> 0x3f80c000. In bf16 (ulp 2^-7) that is
  // 0.75 ulp above 1 -> rounds up to 0x3f81 (rounding 1 + 2^-8 first would tie to 0x3f80).
  CliResult r = mxgate("gemm " + gemm_inputs(d, "bf16") + " --out " + d.file("c.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(bits(read_npy(d.file("c.npy")).values<float>()[0]), 0x3f80c000u);
  r = mxgate("gemm " + gemm_inputs(d, "bf16") + " --out " + d.file("c.npy") + " --dtype bf16");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(read_npy(d.file("c.npy")), NpyArray({1, 1}, std::vector<uint16_t>{0x3f81}));
}

// ---------------------------------------------------------------------------------------------
// check-gemm

using test_support::normal_data;

// Random MX operands (3 x 4 x 64, torchao_floor) written as a.npy, as.npy, b.npy, bs.npy.
void write_random_mx(const TempDir& d) {
  const MxPolicy p = require_mx_policy(require_convention("torchao_floor"));
  const MxQuantized a = quantize_mx(normal_data(std::size_t{3} * 64, 1), 3, 64, Format::kE4M3FN, p);
  const MxQuantized b = quantize_mx(normal_data(std::size_t{4} * 64, 2), 4, 64, Format::kE4M3FN, p);
  write_npy(d.file("a.npy"), NpyArray({3, 64}, a.data));
  write_npy(d.file("as.npy"), NpyArray({3, 2}, a.scales));
  write_npy(d.file("b.npy"), NpyArray({4, 64}, b.data));
  write_npy(d.file("bs.npy"), NpyArray({4, 2}, b.scales));
}

// Guards against check-gemm failing the oracle's own output, passing a one-ulp error, or
// reporting a flipped element without its coordinates, bits and ULP distance.
TEST(CliCheckGemm, ExactPassesOracleAndLocatesAFlip) {
  TempDir d;
  write_random_mx(d);
  ASSERT_EQ(mxgate("gemm " + gemm_inputs(d, "mx") + " --out " + d.file("c.npy")).exit_code, 0);
  CliResult r = mxgate("check-gemm " + gemm_inputs(d, "mx") + " --c " + d.file("c.npy"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "fp32 bit-exact: all 12 elements match"));

  std::vector<float> c = read_npy(d.file("c.npy")).values<float>();
  const uint32_t flipped = bits(c[1 * 4 + 2]) ^ 1u;  // one ulp away (element (1,2))
  c[1 * 4 + 2] = std::bit_cast<float>(flipped);
  write_npy(d.file("c.npy"), NpyArray({3, 4}, c));
  r = mxgate("check-gemm " + gemm_inputs(d, "mx") + " --c " + d.file("c.npy") + " --mode exact");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "1 of 12 differ; first (1,2)"));
  char actual_hex[32];
  std::snprintf(actual_hex, sizeof actual_hex, "actual 0x%08x", flipped);
  EXPECT_TRUE(Contains(r.out, actual_hex));
  EXPECT_TRUE(Contains(r.out, "1 ulp"));
  EXPECT_TRUE(Contains(r.out, "FAIL"));
}

// Guards against check-gemm mishandling a bf16 C (uint16 bits): its dtype must be inferred, and a
// contradicting --dtype rejected.
TEST(CliCheckGemm, Bf16OutputInferredFromC) {
  TempDir d;
  write_random_mx(d);
  ASSERT_EQ(mxgate("gemm " + gemm_inputs(d, "mx") + " --out " + d.file("c.npy") + " --dtype bf16")
                .exit_code,
            0);
  CliResult r = mxgate("check-gemm " + gemm_inputs(d, "mx") + " --c " + d.file("c.npy"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "bf16 bit-exact: all 12 elements match"));
  r = mxgate("check-gemm " + gemm_inputs(d, "mx") + " --c " + d.file("c.npy") + " --dtype float32");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Contains(r.out, "does not match --c"));
}

// Guards against bound mode rejecting a legitimate fp32 kernel order (vLLM Triton: per-128 partial
// sums scaled by fl(fl(part*sa)*sb), docs/formats.md §5.5) or accepting a planted error.
TEST(CliCheckGemm, BoundAcceptsOrderedFp32AndRejectsPlantedError) {
  TempDir d;
  const std::size_t m = 4, n = 5, k = 300;  // K = 128 + 128 + 44
  const BlockPolicy p =
      require_block_policy(require_convention("vllm_group_quant"), Format::kE4M3FN, false);
  const BlockQuantized a = quantize_block(normal_data(m * k, 3), m, k, 1, 128, Format::kE4M3FN, p);
  const BlockQuantized b =
      quantize_block(normal_data(n * k, 4), n, k, 128, 128, Format::kE4M3FN, p);
  write_npy(d.file("a.npy"), NpyArray({m, k}, a.data));
  write_npy(d.file("as.npy"), NpyArray({m, 3}, a.scales));
  write_npy(d.file("b.npy"), NpyArray({n, k}, b.data));
  write_npy(d.file("bs.npy"), NpyArray({1, 3}, b.scales));
  const GemmOutput ordered =
      ordered_gemm(block_gemm_problem(a, b), {128, ScaleApplication::kPerPartial});
  std::vector<float> c = ordered.fp32;
  write_npy(d.file("c.npy"), NpyArray({m, n}, c));
  CliResult r = mxgate("check-gemm " + gemm_inputs(d, "block") + " --c " + d.file("c.npy") +
                       " --mode bound --acc-bits 24 --block-k 128");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "bound: all 20 elements within their bound"));

  c[2 * n + 3] += 1.0f;  // |C| is O(10); the bound is O(1e-3)
  write_npy(d.file("c.npy"), NpyArray({m, n}, c));
  r = mxgate("check-gemm " + gemm_inputs(d, "block") + " --c " + d.file("c.npy") + " --mode bound");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "1 of 20 elements outside; worst (2,3)"));
}

// ---------------------------------------------------------------------------------------------
// check-gemm on grouped dumps

// An m-contiguous block-FP8 dump, E = 3 experts, K = 128, N = 1: offsets (ends) {1, 1, 2} over 3
// rows (expert 1 empty, row 2 past the last offset). Every code is 0x38 (1.0); A scales per row
// (2, 1, 1), B scales per expert (1, 5, 4). C row 0 = 128*2*1 = 256 (expert 0), row 1 = 128*1*4
// = 512 (expert 2; expert 1's weights would give 640), row 2 = the poison 0x7fc0dead.
void write_grouped_block(const TempDir& d) {
  write_npy(d.file("a.npy"), NpyArray({3, 128}, std::vector<uint8_t>(3 * 128, 0x38)));
  write_npy(d.file("as.npy"), NpyArray({3, 1}, std::vector<float>{2.0f, 1.0f, 1.0f}));
  write_npy(d.file("b.npy"), NpyArray({3, 1, 128}, std::vector<uint8_t>(3 * 128, 0x38)));
  write_npy(d.file("bs.npy"), NpyArray({3, 1, 1}, std::vector<float>{1.0f, 5.0f, 4.0f}));
  write_npy(d.file("offs.npy"), NpyArray::from<int32_t>({3}, std::vector<int32_t>{1, 1, 2}));
}

float poison() { return std::bit_cast<float>(0x7fc0deadu); }

std::string grouped_check(const TempDir& d, const std::string& extra) {
  return "check-gemm " + gemm_inputs(d, "block") + " --c " + d.file("c.npy") + " --offsets " +
         d.file("offs.npy") + " " + extra;
}

// Guards against a grouped dump judged with the wrong expert per group (an empty group shifting
// the experts after it) or a mismatch reported without its group and row within the group.
TEST(CliCheckGemmGrouped, OffsetsPassAndLocateAWrongExpert) {
  TempDir d;
  write_grouped_block(d);
  write_npy(d.file("c.npy"), NpyArray({3, 1}, std::vector<float>{256.0f, 512.0f, poison()}));
  CliResult r = mxgate(grouped_check(d, ""));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "grouped m_contiguous E=3 (offsets ends, alignment 1, rows 3)"));
  EXPECT_TRUE(Contains(r.out, "fp32 bit-exact: all 2 elements match"));
  EXPECT_TRUE(Contains(r.out, "unwritten rows: 1 rows no group writes, not judged"));
  // Row 1 computed with expert 1's weights: 640.
  write_npy(d.file("c.npy"), NpyArray({3, 1}, std::vector<float>{256.0f, 640.0f, poison()}));
  r = mxgate(grouped_check(d, ""));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "first at group 2 row 0 (global row 1) col 0")) << r.out;
  EXPECT_TRUE(Contains(r.out, "FAIL"));
  // The bound mode locates it the same way.
  r = mxgate(grouped_check(d, "--mode bound"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "worst at group 2 row 0 (global row 1) col 0")) << r.out;
}

// Guards against int64 starts read as ends, and a write into a row past the last offset passing
// when the buffer before the kernel is given.
TEST(CliCheckGemmGrouped, StartsInt64AndRowsPastTheLastOffset) {
  TempDir d;
  write_grouped_block(d);
  // starts {0, 1, 1}: groups [0,1), [1,1), [1,3): expert 2 now owns rows 1 and 2.
  write_npy(d.file("starts.npy"), NpyArray::from<int64_t>({3}, std::vector<int64_t>{0, 1, 1}));
  write_npy(d.file("c.npy"), NpyArray({3, 1}, std::vector<float>{256.0f, 512.0f, 512.0f}));
  CliResult r = mxgate("check-gemm " + gemm_inputs(d, "block") + " --c " + d.file("c.npy") +
                       " --offsets " + d.file("starts.npy") + " --offsets-kind starts");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "all 3 elements match")) << r.out;
  // Ends {1, 1, 2} with C's row 2 written (0) although it was poison before the kernel.
  write_npy(d.file("c0.npy"), NpyArray({3, 1}, std::vector<float>(3, poison())));
  write_npy(d.file("c.npy"), NpyArray({3, 1}, std::vector<float>{256.0f, 512.0f, 0.0f}));
  r = mxgate(grouped_check(d, "--c-before " + d.file("c0.npy")));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "first row 2 (in no group) col 0 before 0x7fc0dead")) << r.out;
}

// Guards against a masked dump reading or judging rows past an expert's count, and a write into
// a masked row going unseen (DeepGEMM#268). MX: E = 2, max_m = 2, counts {1, 0}, K = 32, N = 1;
// codes 0x38 (1.0), scale bytes 127 (2^0) but A's expert 0 row 0 has 128 (2^1): C = 32*2 = 64.
TEST(CliCheckGemmGrouped, MaskedCountsAndPoison) {
  TempDir d;
  write_npy(d.file("a.npy"), NpyArray({2, 2, 32}, std::vector<uint8_t>(2 * 2 * 32, 0x38)));
  write_npy(d.file("as.npy"), NpyArray({2, 2, 1}, std::vector<uint8_t>{128, 127, 127, 127}));
  write_npy(d.file("b.npy"), NpyArray({2, 1, 32}, std::vector<uint8_t>(2 * 32, 0x38)));
  write_npy(d.file("bs.npy"), NpyArray({2, 1, 1}, std::vector<uint8_t>{127, 127}));
  write_npy(d.file("counts.npy"), NpyArray::from<int64_t>({2}, std::vector<int64_t>{1, 0}));
  const float p = poison();
  write_npy(d.file("c0.npy"), NpyArray({2, 2, 1}, std::vector<float>(4, p)));
  write_npy(d.file("c.npy"), NpyArray({2, 2, 1}, std::vector<float>{64.0f, p, p, p}));
  const std::string base = "check-gemm " + gemm_inputs(d, "mx") + " --c " + d.file("c.npy") +
                           " --masked-counts " + d.file("counts.npy") + " --c-before " +
                           d.file("c0.npy");
  CliResult r = mxgate(base);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "all 1 elements match")) << r.out;
  EXPECT_TRUE(Contains(r.out, "unwritten rows: all 3 rows kept their contents")) << r.out;
  write_npy(d.file("c.npy"), NpyArray({2, 2, 1}, std::vector<float>{64.0f, p, 0.0f, p}));
  r = mxgate(base);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "masked row 0 of group 1 (global row 2) col 0")) << r.out;
}

// Guards against bad grouped input crashing or being judged: each is exit 2 naming the file.
TEST(CliCheckGemmGrouped, BadGroupedInputIsExit2NamingTheFile) {
  TempDir d;
  write_grouped_block(d);
  write_npy(d.file("c.npy"), NpyArray({3, 1}, std::vector<float>{256.0f, 512.0f, 0.0f}));
  struct Case {
    std::string extra;
    std::string message;
  };
  write_npy(d.file("f32.npy"), NpyArray({3}, std::vector<float>{1, 1, 2}));
  write_npy(d.file("e2.npy"), NpyArray::from<int32_t>({2}, std::vector<int32_t>{1, 2}));
  write_npy(d.file("down.npy"), NpyArray::from<int32_t>({3}, std::vector<int32_t>{2, 1, 2}));
  const std::string offs = " --offsets " + d.file("offs.npy");
  const std::string base = "check-gemm " + gemm_inputs(d, "block") + " --c " + d.file("c.npy");
  const Case cases[] = {
      {" --offsets " + d.file("f32.npy"),
       "--offsets: expected int32 or int64 (E,) with E >= 1, "
       "got float32 (3,)"},
      {" --offsets " + d.file("missing.npy"), "--offsets: cannot open '" + d.file("missing.npy")},
      {" --offsets " + d.file("e2.npy"), "--b: expected (E, N, K) with E=2"},
      {" --offsets " + d.file("down.npy"),
       "--offsets: offsets[1] = 1 is below offsets[0] = 2 (offsets must be non-decreasing)"},
      {offs + " --offsets-alignment 128",
       "--offsets: offsets[0] = 1 is not a multiple of the declared alignment 128"},
      {offs + " --offsets-kind middles", "--offsets-kind: unknown kind 'middles'"},
      {offs + " --masked-counts " + d.file("offs.npy"), "--offsets and --masked-counts: give one"},
      {" --offsets-kind starts", "--offsets-kind applies to --offsets only"},
      {" --c-before " + d.file("c.npy"), "--c-before applies to grouped dumps"},
  };
  for (const Case& c : cases) {
    const CliResult r = mxgate(base + c.extra);
    EXPECT_EQ(r.exit_code, 2) << c.extra << "\n" << r.out;
    EXPECT_TRUE(Contains(r.out, c.message)) << c.extra << "\n" << r.out;
  }
}

}  // namespace
}  // namespace mxgate
