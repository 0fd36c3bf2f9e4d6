// Covers the FP4 / FP6 paths of the `mxgate` CLI run as a real process: encode / decode of
// e2m1 / e2m3 / e3m2, the exit-2 messages for an undefined NaN, a scheme / format mismatch and a
// packed-width mismatch, an NVFP4 quantize -> dequantize -> gemm -> check-gemm round trip on
// .npy files (bytes derived by hand, docs/fp4.md §6), and a mixed E2M3 x E3M2 MXFP6 gemm. Does NOT
// cover: the reference arithmetic itself (test_fp4_*.cpp), the FP8 verbs (test_cli_formats.cpp,
// test_cli_tensors.cpp, test_cli_gemm.cpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference/npy.h"
#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

using test_support::run_shell;
using test_support::shell_quote;
using test_support::ShellResult;
using test_support::TempDir;

ShellResult cli(const std::string& args) {
  return run_shell(shell_quote(MXGATE_CLI) + " " + args + " 2>&1");
}

// Guards against the sub-byte formats being unreachable from the CLI or printed with the wrong
// width: 5 -> tie 4 | 6 -> 0x6 (one hex digit), +NaN -> 0x8 under ml_dtypes; E3M2 0x1f = 28.
TEST(CliFp4, EncodeDecode) {
  const ShellResult e = cli("encode --format e2m1 --convention ml_dtypes 5 nan");
  EXPECT_EQ(e.exit_code, 0) << e.out;
  EXPECT_EQ(e.out, "0x6\n0x8\n");
  const ShellResult d = cli("decode --format e3m2 --convention ocp_mx 0x1f");
  EXPECT_EQ(d.exit_code, 0) << d.out;
  EXPECT_EQ(d.out, "0x1.cp+4 28\n");
}

// Guards against bad FP4 input crashing or passing silently: each exits 2 naming the problem.
TEST(CliFp4, BadInputExits2) {
  const struct {
    const char* args;
    const char* phrase;
  } cases[] = {
      {"encode --format e2m1 --convention ocp_mx nan", "undefined"},
      {"decode --format e2m1 --convention ml_dtypes 0x10", "does not fit a 4-bit format"},
      {"quantize --scheme mxfp6 --format e2m1 --convention ocp_mx --in x.npy --out q",
       "mxfp6 needs --format e2m3 or e3m2"},
      {"quantize --scheme nvfp4 --convention ocp_mx --in x.npy --out q", "no NVFP4 quantizer"},
      {"quantize --scheme mx --format e2m1 --convention triton_nvidia --in x.npy --out q",
       "does not define e2m1"},
  };
  for (const auto& c : cases) {
    const ShellResult r = cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.phrase), std::string::npos) << c.args << "\n" << r.out;
  }
}

// Guards against the NVFP4 files (packed data, E4M3 scales, global scale) not round-tripping
// through the verbs: X = [6, 0 x 15 | 12, 0 x 15], global amax 2688 (ge = 1): block scales 0x38
// (1.0) and 0x40 (2.0), codes 0x7 and 0x7, packed byte 0 = 0x07; dequantized back to 6 and 12;
// gemm X * X^T = 36 + 144 = 180 and check-gemm passes on it.
TEST(CliFp4, Nvfp4RoundTrip) {
  TempDir dir;
  const std::string p = dir.path().string() + "/";
  std::vector<float> x(32, 0.0f);
  x[0] = 6;
  x[16] = 12;
  write_npy(p + "x.npy", NpyArray({1, 32}, x));
  ShellResult r = cli("quantize --scheme nvfp4 --convention te_nvfp4_ref --global-amax 2688 --in " +
                      shell_quote(p + "x.npy") + " --out " + shell_quote(p + "q"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const NpyArray data = read_npy(p + "q.data.npy");
  const NpyArray scales = read_npy(p + "q.scales.npy");
  ASSERT_EQ(data.shape, (std::vector<size_t>{1, 16}));
  EXPECT_EQ(data.values<uint8_t>()[0], 0x07);
  EXPECT_EQ(data.values<uint8_t>()[8], 0x07);
  EXPECT_EQ(scales.values<uint8_t>(), (std::vector<uint8_t>{0x38, 0x40}));
  const std::string q = " --data " + shell_quote(p + "q.data.npy") + " --scales " +
                        shell_quote(p + "q.scales.npy") + " --global " +
                        shell_quote(p + "q.global.npy");
  r = cli("dequantize --scheme nvfp4 --convention te_nvfp4_ref" + q + " --out " +
          shell_quote(p + "y.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(read_npy(p + "y.npy").values<float>(), x);
  const std::string ab = " --a " + shell_quote(p + "q.data.npy") + " --a-scales " +
                         shell_quote(p + "q.scales.npy") + " --b " + shell_quote(p + "q.data.npy") +
                         " --b-scales " + shell_quote(p + "q.scales.npy") + " --a-global " +
                         shell_quote(p + "q.global.npy") + " --b-global " +
                         shell_quote(p + "q.global.npy");
  r = cli("gemm --scheme nvfp4" + ab + " --out " + shell_quote(p + "c.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(read_npy(p + "c.npy").values<float>(), std::vector<float>{180.0f});
  r = cli("check-gemm --scheme nvfp4" + ab + " --c " + shell_quote(p + "c.npy"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = cli("gemm --scheme nvfp4" + ab + " --k 40 --out " + shell_quote(p + "c.npy"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--k 40 needs 20 packed e2m1 columns"), std::string::npos) << r.out;
}

// Guards against mixed MXFP6 operands needing a --format neither uses (--a-format and
// --b-format name both) and against the two formats being swapped: A = [1.0, 2.0, 0 x 30] in E2M3
// (0x08 = 0b0_01_000 = 2^0, 0x10 = 0b0_10_000 = 2^1; bias 1), B = [1.0, 2.0, 0 x 30] in E3M2
// (0x0C = 0b0_011_00 = 2^0, 0x10 = 0b0_100_00 = 2^1; bias 3), scales 127 = 2^0: C = 1 + 4 = 5.
// Read with the formats swapped, B's 0x0C would be 1.5 in E2M3 and C would differ.
TEST(CliFp4, MixedMxfp6GemmTakesBothOperandFormats) {
  TempDir dir;
  const std::string p = dir.path().string() + "/";
  std::vector<uint8_t> a(32, 0), b(32, 0);
  a[0] = 0x08;
  a[1] = 0x10;
  b[0] = 0x0C;
  b[1] = 0x10;
  write_npy(p + "a.npy", NpyArray({1, 32}, a));
  write_npy(p + "b.npy", NpyArray({1, 32}, b));
  write_npy(p + "s.npy", NpyArray({1, 1}, std::vector<uint8_t>{127}));
  const std::string ab = " --a " + shell_quote(p + "a.npy") + " --a-scales " +
                         shell_quote(p + "s.npy") + " --b " + shell_quote(p + "b.npy") +
                         " --b-scales " + shell_quote(p + "s.npy") + " --out " +
                         shell_quote(p + "c.npy");
  ShellResult r = cli("gemm --scheme mxfp6 --a-format e2m3 --b-format e3m2" + ab);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(read_npy(p + "c.npy").values<float>(), std::vector<float>{5.0f});
  r = cli("gemm --scheme mxfp6 --a-format e2m3" + ab);  // B has no format
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("missing required option --format"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace mxgate
