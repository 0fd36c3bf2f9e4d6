// Tests for the verbs quantize and dequantize of the mxgate CLI (tools/mxgate/tensor_cli.cpp), run
// as a subprocess on .npy files in a fresh temporary directory: quantize -> dequantize round trips
// on hand-checked blocks (FLOOR, the AITER Triton bump, AITER HIP's zero block, an MX tail block,
// block FP8 with and without UE8M0, float64 input), physical scale layouts, bf16 output, and NumPy
// reading and writing the files. The gemm verbs are test_cli_gemm.cpp, the error paths of all
// four test_cli_tensor_errors.cpp.
// Not covered: the quantizer and dequantizer semantics beyond these hand cases (their own tests do
// that), big inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "reference/npy.h"
#include "tests/cli_tensors.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

using cli_test::bits;
using cli_test::block_448;
using cli_test::CliResult;
using cli_test::mxgate;
using cli_test::quantize_args;
using test_support::TempDir;

std::string dequantize_args(const TempDir& d, const char* scheme, const char* convention,
                            const char* extra = "") {
  return std::string("dequantize --scheme ") + scheme + " --format e4m3fn --convention " +
         convention + " --data " + d.file("q.data.npy") + " --scales " + d.file("q.scales.npy") +
         " --out " + d.file("y.npy") + " " + extra;
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
