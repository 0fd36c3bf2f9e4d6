// Tests for the tensor verbs of the mxgate CLI (tools/mxgate/tensor_cli.cpp), run as a subprocess
// on .npy files in a fresh temporary directory: quantize -> dequantize round trips on hand-checked
// blocks (FLOOR, the AITER Triton bump, AITER HIP's zero block, an MX tail block, block FP8 with
// and without UE8M0, float64 input), physical scale layouts, bf16 output, the gemm verb on
// hand-derived MX / block / bf16 problems (scale decode per convention, a K=160 tail block),
// check-gemm in exact mode (pass, a located one-ulp flip, bf16 C) and in bound mode (an fp32
// ordered-accumulation result passes, a planted error fails), the error paths (exit 2, key
// phrase, no output files) and NumPy reading and writing the files.
// Not covered: the quantizer, dequantizer and oracle semantics beyond these hand cases (their own
// tests do that), big inputs, and the help text beyond its presence.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reference/block_quant.h"
#include "reference/dequant.h"
#include "reference/gemm_oracle.h"
#include "reference/mx_quant.h"
#include "reference/npy.h"
#include "reference/quant_conventions.h"
#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

using test_support::TempDir;

using CliResult = test_support::ShellResult;

// Runs `mxgate ARGS` (ARGS already shell-quoted where needed: temp paths have no spaces).
CliResult mxgate(const std::string& args) {
  return test_support::run_shell(std::string(MXGATE_CLI) + " " + args + " 2>&1");
}

testing::AssertionResult Contains(const std::string& text, std::string_view phrase) {
  if (text.find(phrase) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "\"" << text << "\" lacks \"" << phrase << "\"";
}

uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

// One 32-block row: 448, 1, -2, 0.5, then zeros.
std::vector<float> block_448() {
  std::vector<float> x(32, 0.0f);
  x[0] = 448.0f;
  x[1] = 1.0f;
  x[2] = -2.0f;
  x[3] = 0.5f;
  return x;
}

std::string quantize_args(const TempDir& d, const char* scheme, const char* convention,
                          const char* extra = "") {
  return std::string("quantize --scheme ") + scheme + " --format e4m3fn --convention " +
         convention + " --in " + d.file("x.npy") + " --out " + d.file("q") + " " + extra;
}

std::string dequantize_args(const TempDir& d, const char* scheme, const char* convention,
                            const char* extra = "") {
  return std::string("dequantize --scheme ") + scheme + " --format e4m3fn --convention " +
         convention + " --data " + d.file("q.data.npy") + " --scales " + d.file("q.scales.npy") +
         " --out " + d.file("y.npy") + " " + extra;
}

std::string gemm_inputs(const TempDir& d, const char* scheme) {
  std::string s =
      std::string("--scheme ") + scheme + " --a " + d.file("a.npy") + " --b " + d.file("b.npy");
  if (std::string_view(scheme) != "bf16") {
    s += " --a-scales " + d.file("as.npy") + " --b-scales " + d.file("bs.npy");
  }
  return s;
}

std::vector<uint8_t> codes(const std::string& path) { return read_npy(path).values<uint8_t>(); }

// ---------------------------------------------------------------------------------------------
// quantize -> dequantize

// Guards against the FLOOR rule (torchao_floor) picking a scale other than 2^0 for amax 448, or
// the data / scales files having the wrong dtype or shape.
TEST(CliQuantize, TorchaoFloorAmax448KeepsElements) {
  TempDir d;
  write_npy(d.file("x.npy"), NpyArray({1, 32}, block_448()));
  // FLOOR: floor(log2 448) - emax(e4m3fn) = 8 - 8 = 0 -> byte 127 (2^0); elements unchanged:
  // 448 = 1.75*2^8 -> 0 1111 110 = 0x7e, 1 -> 0 0111 000 = 0x38, -2 -> 1 1000 000 = 0xc0,
  // 0.5 -> 0 0110 000 = 0x30, 0 -> 0x00.
  const CliResult r = mxgate(quantize_args(d, "mx", "torchao_floor"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const NpyArray data = read_npy(d.file("q.data.npy"));
  const NpyArray scales = read_npy(d.file("q.scales.npy"));
  EXPECT_EQ(data.dtype, NpyDtype::kUint8);
  EXPECT_EQ(data.shape, (std::vector<size_t>{1, 32}));
  std::vector<uint8_t> want(32, 0x00);
  want[0] = 0x7e;
  want[1] = 0x38;
  want[2] = 0xc0;
  want[3] = 0x30;
  EXPECT_EQ(data.values<uint8_t>(), want);
  EXPECT_EQ(scales, NpyArray({1, 1}, std::vector<uint8_t>{127}));

  const CliResult back = mxgate(dequantize_args(d, "mx", "torchao_floor"));
  ASSERT_EQ(back.exit_code, 0) << back.out;
  EXPECT_EQ(read_npy(d.file("y.npy")), NpyArray({1, 32}, block_448()));
}

// Guards against the AITER Triton 0x200000 bump being treated as RCEIL/FLOOR at amax 448
// (docs/formats.md §3.6, §3.7: the one significand, 1.75, where it differs from RCEIL).
TEST(CliQuantize, AiterTritonBumpsAmax448) {
  TempDir d;
  write_npy(d.file("x.npy"), NpyArray({1, 32}, block_448()));
  // bits(448) = 0x43e00000, + 0x200000 = 0x44000000 = 2^9 -> 9 - 8 = 1 -> byte 128 (2^1).
  // Elements halve: 224 = 1.75*2^7 -> 0 1110 110 = 0x76 (0x77 would be 240), 0.5 -> 0x30,
  // -1 -> 1 0111 000 = 0xb8, 0.25 -> 0 0101 000 = 0x28.
  const CliResult r = mxgate(quantize_args(d, "mx", "aiter_triton"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<uint8_t> want(32, 0x00);
  want[0] = 0x76;
  want[1] = 0x30;
  want[2] = 0xb8;
  want[3] = 0x28;
  EXPECT_EQ(codes(d.file("q.data.npy")), want);
  EXPECT_EQ(codes(d.file("q.scales.npy")), std::vector<uint8_t>{128});
  // aiter_triton decodes e8m0 the OCP way: 128 -> 2, so every element comes back exactly.
  const CliResult back = mxgate(dequantize_args(d, "mx", "aiter_triton"));
  ASSERT_EQ(back.exit_code, 0) << back.out;
  EXPECT_EQ(read_npy(d.file("y.npy")), NpyArray({1, 32}, block_448()));
}

// Guards against AITER HIP's 1e-10 amax seed being dropped: a zero block must get byte 85, not 0.
TEST(CliQuantize, AiterHipZeroBlockGetsByte85) {
  TempDir d;
  write_npy(d.file("x.npy"), NpyArray({1, 32}, std::vector<float>(32, 0.0f)));
  // amax = max(0, 1e-10) = 1e-10; RCEIL: 1e-10 * fl32(1/448) = 2.23e-13, log2 = -42.03,
  // ceil -> -42 -> byte 127 - 42 = 85 (docs/formats.md §3.7 table). Elements 0 * 2^42 -> 0x00.
  const CliResult r = mxgate(quantize_args(d, "mx", "aiter_hip"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(codes(d.file("q.data.npy")), std::vector<uint8_t>(32, 0x00));
  EXPECT_EQ(codes(d.file("q.scales.npy")), std::vector<uint8_t>{85});
  // aiter_hip decodes by shift: 85 << 23 = 2^-42; 0 * 2^-42 = +0.
  const CliResult back = mxgate(dequantize_args(d, "mx", "aiter_hip"));
  ASSERT_EQ(back.exit_code, 0) << back.out;
  EXPECT_EQ(read_npy(d.file("y.npy")), NpyArray({1, 32}, std::vector<float>(32, 0.0f)));
}

// Guards against a short last block (K = 40, not a multiple of 32) losing its scale column.
TEST(CliQuantize, MxTailBlockHasItsOwnScale) {
  TempDir d;
  std::vector<float> x(40, 0.0f);
  x[0] = 1.0f;
  x[35] = 3.0f;
  write_npy(d.file("x.npy"), NpyArray({1, 40}, x));
  // Block 0: amax 1 -> 0 - 8 -> byte 119 (2^-8); 1 * 2^8 = 256 = 2^8 -> 0 1111 000 = 0x78.
  // Block 1 (k 32..39, zero-padded): amax 3 -> floor log2 = 1 -> 1 - 8 -> byte 120 (2^-7);
  // 3 * 2^7 = 384 = 1.5*2^8 -> 0 1111 100 = 0x7c.
  const CliResult r = mxgate(quantize_args(d, "mx", "ocp_mx"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<uint8_t> want(40, 0x00);
  want[0] = 0x78;
  want[35] = 0x7c;
  EXPECT_EQ(codes(d.file("q.data.npy")), want);
  EXPECT_EQ(read_npy(d.file("q.scales.npy")), NpyArray({1, 2}, std::vector<uint8_t>{119, 120}));
  const CliResult back = mxgate(dequantize_args(d, "mx", "ocp_mx"));
  ASSERT_EQ(back.exit_code, 0) << back.out;
  EXPECT_EQ(read_npy(d.file("y.npy")), NpyArray({1, 40}, x));
}

// Guards against float64 input being truncated (or rejected) instead of rounded to nearest fp32.
TEST(CliQuantize, Float64InputIsRoundedToNearestFp32) {
  TempDir d;
  std::vector<double> x(32, 0.0);
  x[0] = 512.0 - std::ldexp(1.0, -40);
  write_npy(d.file("x.npy"), NpyArray({1, 32}, x));
  // 512 - 2^-40 rounds to fp32 512 = 2^9 -> FLOOR 9 - 8 -> byte 128, element 256 -> 0x78.
  // Truncation would give 511.99997 -> floor log2 = 8 -> byte 127.
  const CliResult r = mxgate(quantize_args(d, "mx", "ocp_mx"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(codes(d.file("q.scales.npy")), std::vector<uint8_t>{128});
  EXPECT_EQ(codes(d.file("q.data.npy"))[0], 0x78);
}

// Distinct scale per block: x[r, 32g] = 2^(3r + g) -> FLOOR byte 127 + 3r + g - 8 = 119 + 3r + g.
void write_scale_grid(const TempDir& d) {
  std::vector<float> x(std::size_t{3} * 96, 0.0f);
  for (int r = 0; r < 3; ++r) {
    for (int g = 0; g < 3; ++g) x[r * 96 + 32 * g] = std::ldexp(1.0f, 3 * r + g);
  }
  write_npy(d.file("x.npy"), NpyArray({3, 96}, x));
}

// Guards against --scale-layout col_major writing anything but the transpose of the logical
// scales (AITER bpreshuffle's x_scale, docs/layouts.md §2.1), or keeping a 2-D shape.
TEST(CliQuantize, ColMajorScalesAreTheTranspose) {
  TempDir d;
  write_scale_grid(d);
  ASSERT_EQ(mxgate(quantize_args(d, "mx", "ocp_mx")).exit_code, 0);
  const NpyArray logical = read_npy(d.file("q.scales.npy"));
  ASSERT_EQ(logical,
            NpyArray({3, 3}, std::vector<uint8_t>{119, 120, 121, 122, 123, 124, 125, 126, 127}));
  const CliResult r = mxgate(quantize_args(d, "mx", "ocp_mx", "--scale-layout col_major"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<uint8_t> l = logical.values<uint8_t>();
  std::vector<uint8_t> transpose;
  for (int c = 0; c < 3; ++c) {
    for (int row = 0; row < 3; ++row) transpose.push_back(l[row * 3 + c]);
  }
  EXPECT_EQ(read_npy(d.file("q.scales.npy")), NpyArray({9}, transpose));
}

// Guards against layout padding being left uninitialised or filled with 1.0 (0x7f) instead of 0
// (docs/layouts.md §1.4: kernels read padding).
TEST(CliQuantize, TmaColMajorPaddingIsZero) {
  TempDir d;
  write_scale_grid(d);
  const CliResult r = mxgate(quantize_args(d, "mx", "ocp_mx", "--scale-layout tma_col_major"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // Strides (1, align4(3) = 4): column c at offsets 4c .. 4c+2, offset 4c+3 is padding.
  EXPECT_EQ(
      read_npy(d.file("q.scales.npy")),
      NpyArray({12}, std::vector<uint8_t>{119, 122, 125, 0, 120, 123, 126, 0, 121, 124, 127, 0}));
}

// Guards against act1x128 with --ue8m0 ignoring DeepGEMM's power-of-two scales, the reciprocal
// multiply, or the partial last group.
TEST(CliQuantize, Act1x128DeepGemmUe8m0) {
  TempDir d;
  std::vector<float> x(130, 0.0f);
  x[0] = 3.0f;
  x[129] = -0.5f;
  write_npy(d.file("x.npy"), NpyArray({1, 130}, x));
  // Group 0: sf = 3/448 = 1.714*2^-8 -> ceil_to_ue8m0 -> 2^-7; 3 * 128 = 384 -> 0x7c.
  // Group 1 (k 128..129): sf = 0.5/448 = 1.143*2^-10 -> 2^-9; -0.5 * 512 = -256 -> 1 1111 000 =
  // 0xf8.
  const CliResult r = mxgate(quantize_args(d, "act1x128", "deepgemm", "--ue8m0"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<uint8_t> want(130, 0x00);
  want[0] = 0x7c;
  want[129] = 0xf8;
  EXPECT_EQ(codes(d.file("q.data.npy")), want);
  EXPECT_EQ(read_npy(d.file("q.scales.npy")),
            NpyArray({1, 2}, std::vector<float>{0x1p-7f, 0x1p-9f}));
  const CliResult back = mxgate(dequantize_args(d, "act1x128", "deepgemm"));
  ASSERT_EQ(back.exit_code, 0) << back.out;
  EXPECT_EQ(read_npy(d.file("y.npy")), NpyArray({1, 130}, x));
}

// Guards against w128x128 scales having the wrong grid shape (ceil(M/128), ceil(K/128)) or the
// wrong block assignment for rows past 128.
TEST(CliQuantize, W128x128VllmScaleGrid) {
  TempDir d;
  std::vector<float> x(std::size_t{130} * 4, 0.0f);
  x[0] = 448.0f;          // block (0, 0): scale 448 / 448 = 1
  x[129 * 4 + 3] = 1.5f;  // block (1, 0): scale fl32(1.5 / 448), not a power of two
  write_npy(d.file("x.npy"), NpyArray({130, 4}, x));
  const CliResult r = mxgate(quantize_args(d, "w128x128", "vllm_group_quant"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const float s1 = 1.5f / 448.0f;
  EXPECT_EQ(read_npy(d.file("q.scales.npy")), NpyArray({2, 1}, std::vector<float>{1.0f, s1}));
  // 1.5 / s1 is 448 within an fp32 ulp, clamped to <= 448: code 0x7e; likewise 448 / 1.
  const std::vector<uint8_t> q = codes(d.file("q.data.npy"));
  EXPECT_EQ(q[0], 0x7e);
  EXPECT_EQ(q[129 * 4 + 3], 0x7e);
  const CliResult back = mxgate(dequantize_args(d, "w128x128", "vllm_group_quant"));
  ASSERT_EQ(back.exit_code, 0) << back.out;
  const std::vector<float> y = read_npy(d.file("y.npy")).values<float>();
  EXPECT_EQ(y[0], 448.0f);
  EXPECT_EQ(y[129 * 4 + 3], 448.0f * s1);  // one fp32 multiply, as dequant.h defines it
}

// Guards against bf16 dequantization rounding twice or truncating, and against mx scale bytes
// decoding by one fixed rule instead of the convention's.
TEST(CliDequantize, Bf16OutputAndConventionDecode) {
  TempDir d;
  // Block: code 0x38 (1.0) with fp32 scale 0.1f = 0x3dcccccd; bf16 RNE: low half 0xcccd > 0x8000
  // rounds up -> 0x3dcd.
  write_npy(d.file("q.data.npy"), NpyArray({1, 1}, std::vector<uint8_t>{0x38}));
  write_npy(d.file("q.scales.npy"), NpyArray({1, 1}, std::vector<float>{0.1f}));
  CliResult r = mxgate(dequantize_args(d, "act1x128", "vllm_group_quant", "--dtype bf16"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(read_npy(d.file("y.npy")), NpyArray({1, 1}, std::vector<uint16_t>{0x3dcd}));

  // MX: code 0x38 with scale byte 0x00. OCP decode: 2^-127 -> bf16 subnormal 0x0040;
  // vllm_e8m0_shift decodes 0x00 << 23 = +0.0 -> 0x0000.
  write_npy(d.file("q.scales.npy"), NpyArray({1, 1}, std::vector<uint8_t>{0x00}));
  r = mxgate(dequantize_args(d, "mx", "ocp_mx", "--dtype bf16"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(read_npy(d.file("y.npy")), NpyArray({1, 1}, std::vector<uint16_t>{0x0040}));
  r = mxgate(dequantize_args(d, "mx", "vllm_e8m0_shift", "--dtype bf16"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(read_npy(d.file("y.npy")), NpyArray({1, 1}, std::vector<uint16_t>{0x0000}));
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

std::vector<float> normal_data(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

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
// Error paths: exit 2, a message naming the problem and the option, no output written.

struct BadCase {
  const char* what;
  std::string args;
  const char* phrase;
};

// Guards against bad input crashing, exiting 0/1, leaving output files, or giving a message that
// does not name the option at fault.
TEST(CliErrors, EachBadInputExits2WithTheKeyPhrase) {
  TempDir d;
  write_npy(d.file("x.npy"), NpyArray({1, 32}, block_448()));
  write_npy(d.file("x16.npy"), NpyArray({1, 2}, std::vector<uint16_t>{0x3f80, 0}));
  write_npy(d.file("a.npy"), NpyArray({2, 64}, std::vector<uint8_t>(128, 0x38)));
  write_npy(d.file("as.npy"), NpyArray({2, 2}, std::vector<uint8_t>(4, 127)));
  write_npy(d.file("b.npy"), NpyArray({3, 64}, std::vector<uint8_t>(192, 0x38)));
  write_npy(d.file("bs.npy"), NpyArray({3, 2}, std::vector<uint8_t>(6, 127)));
  write_npy(d.file("b32.npy"), NpyArray({3, 32}, std::vector<uint8_t>(96, 0x38)));
  write_npy(d.file("asf.npy"), NpyArray({2, 1}, std::vector<float>(2, 1.0f)));
  write_npy(d.file("bsf.npy"), NpyArray({1, 1}, std::vector<float>(1, 1.0f)));
  write_npy(d.file("as3.npy"), NpyArray({2, 3}, std::vector<uint8_t>(6, 127)));
  write_npy(d.file("af.npy"), NpyArray({3}, std::vector<float>{1, 2, 3}));
  write_npy(d.file("c_wrong.npy"), NpyArray({3, 2}, std::vector<float>(6, 0.0f)));
  std::ofstream(d.file("junk.npy")) << "not a npy file";
  const std::size_t inputs = d.entries();

  const std::string q = "quantize --scheme mx --format e4m3fn --in " + d.file("x.npy");
  const std::string out = " --out " + d.file("out");
  const std::string mx = " --a " + d.file("a.npy") + " --a-scales " + d.file("as.npy");
  const std::string bmx = " --b " + d.file("b.npy") + " --b-scales " + d.file("bs.npy");
  const std::string gemm = "gemm --scheme mx" + mx + bmx + " --out " + d.file("c.npy");
  const std::string block = " --a " + d.file("a.npy") + " --a-scales " + d.file("asf.npy") +
                            " --b " + d.file("b.npy") + " --b-scales " + d.file("bsf.npy");
  const std::vector<BadCase> cases = {
      {"missing option",
       "quantize --scheme mx --format e4m3fn --convention ocp_mx --in " + d.file("x.npy"),
       "missing required option --out"},
      {"bad convention", q + " --convention nope" + out, "unknown convention 'nope'"},
      {"convention without MX quantizer", q + " --convention triton_nvidia" + out,
       "'triton_nvidia' has no MX quantizer (conventions with one: ocp_mx"},
      {"unknown layout", q + " --convention ocp_mx --scale-layout diagonal" + out,
       "--scale-layout: unknown scale layout 'diagonal'"},
      {"ue8m0 with mx", q + " --convention ocp_mx --ue8m0" + out, "--ue8m0 applies to"},
      {"unknown scheme",
       "quantize --scheme mx9 --format e4m3fn --convention ocp_mx --in " + d.file("x.npy") + out,
       "--scheme: unknown scheme 'mx9'"},
      {"non-FP8 format",
       "quantize --scheme mx --format bf16 --convention ocp_mx --in " + d.file("x.npy") + out,
       "--format: 'bf16' is not an FP8 element format"},
      {"format the convention lacks",
       "quantize --scheme mx --format e4m3fnuz --convention "
       "ocp_mx --in " +
           d.file("x.npy") + out,
       "does not define e4m3fnuz"},
      {"uint16 input",
       "quantize --scheme mx --format e4m3fn --convention ocp_mx --in " + d.file("x16.npy") + out,
       "--in: expected float32 or float64 (M, K), got uint16 (1, 2)"},
      {"missing input file",
       "quantize --scheme mx --format e4m3fn --convention ocp_mx --in " + d.file("none.npy") + out,
       "--in: cannot open"},
      {"missing output dir", q + " --convention ocp_mx --out " + d.file("nodir/out"),
       "does not exist"},
      {"wrong dtype",
       "gemm --scheme mx --a " + d.file("af.npy") + " --a-scales " + d.file("as.npy") + bmx +
           " --out " + d.file("c.npy"),
       "--a: expected uint8 (M, K), got float32 (3,)"},
      {"K mismatch",
       "gemm --scheme mx" + mx + " --b " + d.file("b32.npy") + " --b-scales " + d.file("bs.npy") +
           " --out " + d.file("c.npy"),
       "--b: K mismatch"},
      {"scale shape mismatch",
       "gemm --scheme mx --a " + d.file("a.npy") + " --a-scales " + d.file("as3.npy") + bmx +
           " --out " + d.file("c.npy"),
       "--a-scales: expected uint8 (M=2, ceil(K/32)=2), got uint8 (2, 3)"},
      {"block scales given as e8m0 bytes",
       "gemm --scheme block" + mx + bmx + " --out " + d.file("c.npy"),
       "--a-scales: expected float32 (M=2, ceil(K/128)=1), got uint8 (2, 2)"},
      {"malformed file",
       "gemm --scheme mx --a " + d.file("junk.npy") + " --a-scales " + d.file("as.npy") + bmx +
           " --out " + d.file("c.npy"),
       "--a: "},
      {"bf16 with scales", "gemm --scheme bf16" + mx + bmx + " --out " + d.file("c.npy"),
       "--a-scales is not used by --scheme bf16"},
      {"block with convention",
       "gemm --scheme block" + block + " --out " + d.file("c.npy") + " --convention ocp_mx",
       "--convention is not used by --scheme block"},
      {"bad dtype", gemm + " --dtype fp16", "--dtype: 'fp16' is not an output dtype"},
      {"C shape", "check-gemm --scheme mx" + mx + bmx + " --c " + d.file("c_wrong.npy"),
       "--c: expected float32 (M=2, N=3), got float32 (3, 2)"},
      {"bound option in exact mode",
       "check-gemm --scheme mx" + mx + bmx + " --c " + d.file("c_wrong.npy") + " --block-k 32",
       "--block-k applies to --mode bound only"},
      {"bad mode",
       "check-gemm --scheme mx" + mx + bmx + " --c " + d.file("c_wrong.npy") + " --mode close",
       "--mode: unknown mode 'close'"},
      {"acc-bits range",
       "check-gemm --scheme mx" + mx + bmx + " --c " + d.file("c_wrong.npy") +
           " --mode bound --acc-bits 53",
       "--acc-bits: 53 is outside [8, 24]"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    const CliResult r = mxgate(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_TRUE(Contains(r.out, c.phrase));
    EXPECT_FALSE(Contains(r.out, "error:")) << "an NpyError escaped unwrapped";
  }
  // Including the "malformed file" case: no partial outputs anywhere.
  EXPECT_EQ(d.entries(), inputs);
}

// Guards against the new verbs missing from `mxgate --help` or lacking per-verb help.
TEST(CliErrors, VerbsHaveHelp) {
  for (const char* verb : {"quantize", "dequantize", "gemm", "check-gemm"}) {
    const CliResult r = mxgate(std::string(verb) + " --help");
    EXPECT_EQ(r.exit_code, 0) << verb;
    EXPECT_TRUE(Contains(r.out, std::string("usage: mxgate ") + verb));
    EXPECT_TRUE(Contains(mxgate("--help").out, std::string("  ") + verb + " --scheme"));
  }
}

// ---------------------------------------------------------------------------------------------
// NumPy

bool numpy_available() {
  return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

// Guards against the verbs' files not round-tripping through real NumPy: np.save input, np.load
// output with the documented dtypes and shapes.
TEST(CliNumpy, QuantizeFromNumpyAndBack) {
  if (!numpy_available()) GTEST_SKIP() << "/usr/bin/python3 with numpy not available";
  TempDir d;
  const std::string script = d.file("make.py");
  std::ofstream(script) << "import sys, numpy as np\n"
                           "d = sys.argv[1]\n"
                           "x = np.zeros((3, 40), np.float32)\n"
                           "x[0, 0] = 448; x[1, 33] = -3\n"
                           "np.save(d + '/x.npy', x)\n";
  ASSERT_EQ(std::system(("/usr/bin/python3 " + script + " " + d.path().string()).c_str()), 0);
  const CliResult r = mxgate(quantize_args(d, "mx", "ocp_mx"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ofstream(d.file("check.py"))
      << "import sys, numpy as np\n"
         "d = sys.argv[1]\n"
         "q = np.load(d + '/q.data.npy'); s = np.load(d + '/q.scales.npy')\n"
         "assert q.dtype == np.uint8 and q.shape == (3, 40), (q.dtype, q.shape)\n"
         "assert s.dtype == np.uint8 and s.shape == (3, 2), (s.dtype, s.shape)\n"
         // 448 -> byte 127, code 0x7e; -3 -> byte 120 (2^-7), -384 -> 0xfc (see MxTailBlock).
         "assert q[0, 0] == 0x7e and s[0, 0] == 127, (q[0, 0], s[0, 0])\n"
         "assert q[1, 33] == 0xfc and s[1, 1] == 120, (q[1, 33], s[1, 1])\n"
         "assert int(q.sum()) == 0x7e + 0xfc\n";
  EXPECT_EQ(
      std::system(("/usr/bin/python3 " + d.file("check.py") + " " + d.path().string()).c_str()), 0);
}

}  // namespace
}  // namespace mxgate
