// Covers the `mxgate` CLI verbs on single values, run as a real process (popen on MXGATE_CLI):
// `encode` reproduces every measured device row of measured_bytes (one call per row, inputs as
// hex-floats) and prints 2 / 4 hex digits for 8 / 16-bit formats; `decode` reproduces the
// measured e8m0 decode rows and the exp2 0x00 line; decimal input is rounded to fp32 once; the
// README examples; usage errors exit 2 with a message naming the problem and print nothing on
// stdout; --help exits 0; `gate --only measured` passes with a summary line.
// Does NOT cover: the encoders themselves (test_fp_encode.cpp, test_e8m0.cpp), the
// conventions table text, the other gate checks, the tensor verbs.
// MXGATE_CLI must have been built (the `mxgate` target); a missing binary fails every test
// with a message saying so.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "reference/convention.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/measured_bytes.h"
#include "tests/cli_built.h"
#include "tests/hex.h"
#include "tests/measured_rows.h"
#include "tests/shell.h"

namespace mxgate {
namespace {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  std::string command;
};

using test_support::shell_quote;

// Runs MXGATE_CLI with `args`; stdout through the pipe, stderr through a temporary file.
CliResult run_cli(const std::vector<std::string>& args) {
  CliResult r;
  std::string err_path = ::testing::TempDir() + "mxgate_cli_stderr_XXXXXX";
  const int fd = mkstemp(err_path.data());
  if (fd < 0) {
    ADD_FAILURE() << "mkstemp failed";
    return r;
  }
  close(fd);
  r.command = shell_quote(MXGATE_CLI);
  for (const std::string& a : args) r.command += " " + shell_quote(a);
  FILE* p = popen((r.command + " 2>" + shell_quote(err_path)).c_str(), "r");
  if (!p) {
    ADD_FAILURE() << "popen failed: " << r.command;
    return r;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_path);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  std::remove(err_path.c_str());
  return r;
}

using Cli = test_support::CliBuilt;

// How the CLI reads an fp32 exactly: hex-float for finite values, inf / -inf / nan by name.
std::string arg_of(float x) {
  if (std::isnan(x)) return std::signbit(x) ? "-nan" : "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return test_support::hexfloat(x);
}

std::string code_line(uint32_t code, int digits) { return test_support::hex(code, digits) + "\n"; }

// `mxgate VERB --format FORMAT --convention CONVENTION VALUES...` exits 0, prints exactly `want`
// on stdout and nothing on stderr.
testing::AssertionResult Prints(const std::string& verb, const std::string& format,
                                const std::string& convention,
                                const std::vector<std::string>& values, const std::string& want) {
  std::vector<std::string> args = {verb, "--format", format, "--convention", convention};
  args.insert(args.end(), values.begin(), values.end());
  const CliResult r = run_cli(args);
  if (r.exit_code == 0 && r.out == want && r.err.empty()) return testing::AssertionSuccess();
  return testing::AssertionFailure() << r.command << ": exit " << r.exit_code << ", stdout \""
                                     << r.out << "\" (want \"" << want << "\"), stderr " << r.err;
}

// A measured encode row as CLI values (its inputs as exact text) and the lines `encode` must print
// (its bytes).
std::pair<std::vector<std::string>, std::string> encode_lines(std::span<const float> inputs,
                                                              std::span<const uint8_t> bytes) {
  std::vector<std::string> values;
  std::string want;
  for (size_t i = 0; i < inputs.size(); ++i) {
    values.push_back(arg_of(inputs[i]));
    want += code_line(bytes[i], 2);
  }
  return {values, want};
}

// ---- Measured rows through `mxgate encode` / `mxgate decode` ----

class CliMeasuredEncode : public Cli, public ::testing::WithParamInterface<size_t> {};

// Guards against the CLI path (argument parsing, hex-float reading, printing) changing bytes
// the library gets right: one call per device row must print exactly the measured bytes.
TEST_P(CliMeasuredEncode, PrintsMeasuredBytes) {
  const MeasuredEncode& m = measured_encodes()[GetParam()];
  const auto [values, want] = encode_lines(m.inputs, m.bytes);
  EXPECT_TRUE(
      Prints("encode", std::string(info(m.format).name), std::string(m.convention), values, want))
      << m.source;
}

INSTANTIATE_TEST_SUITE_P(Rows, CliMeasuredEncode,
                         ::testing::Range<size_t>(0, measured_encodes().size()),
                         test_support::encode_row_name);

// The first convention that uses `rule` as its e8m0 encoder, if any.
const Convention* convention_with(E8m0Encode rule) {
  for (const Convention& c : all_conventions()) {
    if (c.e8m0 && *c.e8m0 == rule) return &c;
  }
  return nullptr;
}

std::vector<size_t> reachable_e8m0_rows() {
  std::vector<size_t> rows;
  for (size_t i = 0; i < measured_e8m0_encodes().size(); ++i) {
    if (convention_with(measured_e8m0_encodes()[i].rule)) rows.push_back(i);
  }
  return rows;
}

class CliMeasuredE8m0 : public Cli, public ::testing::WithParamInterface<size_t> {};

// Guards against the e8m0 path of `encode` diverging from the measured rule rows (through a
// convention that uses the rule).
TEST_P(CliMeasuredE8m0, PrintsMeasuredBytes) {
  const MeasuredE8m0& m = measured_e8m0_encodes()[GetParam()];
  const Convention* c = convention_with(m.rule);
  ASSERT_NE(c, nullptr);
  const auto [values, want] = encode_lines(m.inputs, m.bytes);
  EXPECT_TRUE(Prints("encode", "e8m0", std::string(c->name), values, want)) << m.source;
}

INSTANTIATE_TEST_SUITE_P(Rows, CliMeasuredE8m0, ::testing::ValuesIn(reachable_e8m0_rows()),
                         test_support::e8m0_row_name);

// Guards against a measured e8m0 row silently left out of the CLI test above: only CUDA's
// RoundZero+SATFINITE (floor_sat) has no convention, so no `mxgate encode` call reaches it.
TEST(CliMeasuredE8m0Coverage, OnlyFloorSatIsUnreachable) {
  for (const MeasuredE8m0& m : measured_e8m0_encodes()) {
    if (!convention_with(m.rule)) {
      EXPECT_EQ(m.rule, E8m0Encode::kFloorSat) << m.source;
    }
  }
}

class CliMeasuredDecode : public Cli, public ::testing::WithParamInterface<size_t> {};

// Guards against `decode` printing another value than the convention's e8m0 rule measured on
// the device; the line format is "%a %.9g".
TEST_P(CliMeasuredDecode, PrintsMeasuredValues) {
  const MeasuredE8m0Decode& m = measured_e8m0_decodes()[GetParam()];
  std::vector<std::string> args = {"decode", "--format", "e8m0", "--convention",
                                   std::string(m.convention)};
  for (uint8_t b : m.bytes) args.push_back(code_line(b, 2).substr(0, 4));
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.command << "\n" << r.err;
  std::istringstream lines(r.out);
  std::string line;
  for (size_t i = 0; i < m.bytes.size(); ++i) {
    ASSERT_TRUE(std::getline(lines, line)) << "missing line " << i << " of " << r.command;
    const float want = float_of(m.fp32_bits[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(line == "nan nan" || line == "-nan -nan") << m.source << ": " << line;
    } else {
      char b[96];
      std::snprintf(b, sizeof b, "%a %.9g", static_cast<double>(want), static_cast<double>(want));
      EXPECT_EQ(line, b) << m.source << " byte " << int(m.bytes[i]);
    }
  }
  EXPECT_FALSE(std::getline(lines, line)) << "extra output: " << line;
}

INSTANTIATE_TEST_SUITE_P(Rows, CliMeasuredDecode,
                         ::testing::Range<size_t>(0, measured_e8m0_decodes().size()),
                         test_support::decode_row_name);

// ---- Pointed checks ----

// Guards against the vLLM exp2 decode of byte 0 printing 2^-127 or 0: measured
// torch.exp2(0 - 127) on CUDA = 0x1.fffff8p-128 (docs/conventions.md §3.5), %.9g 5.87747035e-39.
TEST_F(Cli, DecodeExp2CudaZeroByte) {
  EXPECT_TRUE(
      Prints("decode", "e8m0", "vllm_mxfp8_exp2", {"0x00"}, "0x1.fffff8p-128 5.87747035e-39\n"));
}

// Guards against the documented examples of README.md drifting from the tool.
TEST_F(Cli, ReadmeExamples) {
  EXPECT_TRUE(
      Prints("encode", "e4m3fn", "torch_2_11", {"464", "470", "inf"}, "0x7e\n0x7f\n0x7f\n"));
  EXPECT_TRUE(Prints("decode", "e8m0", "vllm_e8m0_shift", {"0x00", "0xff"}, "0x0p+0 0\ninf inf\n"));
}

// Guards against 16-bit codes printed with two digits (0x3f80 must not read as 0x80): bf16 1.0
// = 0x3F80, fp16 1.0 = 0x3C00, fp16 65520 -> Inf 0x7C00, bf16 NaN 0x7FC0, fp16 2^-24 = 0x0001.
TEST_F(Cli, SixteenBitFormatsPrintFourDigits) {
  // 0x1.03p+0 = 0x3F818000: the bf16 tie 0x3F81 (odd) / 0x3F82 -> RNE 0x3F82.
  EXPECT_TRUE(Prints("encode", "bf16", "torch_2_11", {"1", "nan", "0x1.03p+0"},
                     "0x3f80\n0x7fc0\n0x3f82\n"));
  EXPECT_TRUE(
      Prints("encode", "fp16", "deepgemm", {"1", "65520", "0x1p-24"}, "0x3c00\n0x7c00\n0x0001\n"));
  EXPECT_TRUE(Prints("decode", "fp16", "torch_2_11", {"0x3c00", "0x7bff"},
                     "0x1p+0 1\n0x1.ffcp+15 65504\n"));
}

// Guards against decimal input parsed to double and compared there (or rounded twice): the
// text is rounded once to the nearest fp32. 464.00001 is nearest to fp32 464 (spacing 2^-15 =
// 3.05e-5) -> 0x7e; 464.00002 is nearest to 464 + 2^-15 > 464 -> overflow -> 0x7f (torch).
TEST_F(Cli, DecimalInputIsRoundedToFp32First) {
  EXPECT_TRUE(Prints("encode", "e4m3fn", "torch_2_11", {"464.00001", "464.00002", "-0", "1e-10"},
                     "0x7e\n0x7f\n0x80\n0x00\n"));
}

struct BadCall {
  std::vector<std::string> args;
  std::vector<std::string> message_words;  // each must appear in stderr
};

// Guards against bad input crashing, exiting 0/1, printing partial output, or reporting a
// vague error: each call exits 2, prints nothing on stdout, and names the problem on stderr.
TEST_F(Cli, BadInputExits2AndNamesTheProblem) {
  const BadCall calls[] = {
      {{"encode", "--format", "e4m3", "--convention", "torch_2_11", "1"},
       {"unknown format", "e4m3"}},
      {{"encode", "--format", "fp32", "--convention", "torch_2_11", "1"},
       {"unknown format", "fp32"}},
      {{"encode", "--format", "e4m3fn", "--convention", "torch", "1"},
       {"unknown convention", "torch"}},
      {{"encode", "--format", "e4m3fn", "--convention", "torch_2_11", "1", "1.5x"}, {"1.5x"}},
      {{"decode", "--format", "e4m3fn", "--convention", "torch_2_11", "0x100"},
       {"0x100", "does not fit"}},
      {{"decode", "--format", "e4m3fn", "--convention", "torch_2_11", "0x7e", "7e"},
       {"7e", "hex code"}},
      {{"encode", "--convention", "torch_2_11", "1"}, {"missing", "--format"}},
      {{"encode", "--format", "e4m3fn", "1"}, {"missing", "--convention"}},
      {{"encode", "--format", "e4m3fn", "--convention", "torch_2_11"}, {"no VALUE"}},
      {{"encode", "--format", "e5m2", "--convention", "deepgemm", "1"}, {"deepgemm", "e5m2"}},
      {{"decode", "--format", "e5m2", "--convention", "deepgemm", "0x3c"}, {"deepgemm", "e5m2"}},
      {{"encode", "--format", "e8m0", "--convention", "triton_nvidia", "1"},
       {"triton_nvidia", "e8m0"}},
      {{"encode", "--format", "e4m3fn", "--convention", "torch_2_11", "--bogus", "1"}, {"--bogus"}},
      {{"frobnicate"}, {"frobnicate"}},
      {{"gate", "--only", "no_check_has_this_name"}, {"no_check_has_this_name"}},
  };
  for (const BadCall& c : calls) {
    const CliResult r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.command << "\n" << r.err;
    EXPECT_EQ(r.out, "") << r.command;
    for (const std::string& w : c.message_words) {
      EXPECT_NE(r.err.find(w), std::string::npos)
          << r.command << "\nstderr: " << r.err << "\nlacks: " << w;
    }
  }
}

// Guards against --help being treated as an error or an unknown option.
TEST_F(Cli, HelpExitsZero) {
  CliResult r = run_cli({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("usage: mxgate"), std::string::npos) << r.out;
  for (const char* verb : {"encode", "decode", "gate", "conventions"}) {
    r = run_cli({verb, "--help"});
    EXPECT_EQ(r.exit_code, 0) << verb;
    EXPECT_NE(r.out.find(std::string("usage: mxgate ") + verb), std::string::npos) << r.out;
  }
  r = run_cli({});
  EXPECT_EQ(r.exit_code, 2) << "no verb is a usage error";
}

// Guards against the gate's measured-bytes check failing or its summary line changing shape.
TEST_F(Cli, GateOnlyMeasuredPasses) {
  const CliResult r = run_cli({"gate", "--only", "measured"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"((^|\n)([0-9]+) passed, 0 failed\n)")))
      << r.out;
  EXPECT_GE(std::stoi(m[2].str()), 1);
}

}  // namespace
}  // namespace mxgate
