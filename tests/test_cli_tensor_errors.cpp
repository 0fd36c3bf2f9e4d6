// Tests for the error paths of the tensor verbs of the mxgate CLI (tools/mxgate/tensor_cli.cpp:
// quantize, dequantize, gemm, check-gemm), run as a subprocess in a fresh temporary directory:
// each bad input exits 2 with a message naming the problem and the option, and writes no output
// file; every verb has its help.
// Not covered: what the verbs compute (test_cli_tensors.cpp, test_cli_gemm.cpp), the help text
// beyond its presence.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "reference/npy.h"
#include "tests/cli_tensors.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

using cli_test::block_448;
using cli_test::CliResult;
using cli_test::Contains;
using cli_test::mxgate;
using test_support::TempDir;

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

}  // namespace
}  // namespace mxgate
