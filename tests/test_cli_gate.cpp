// Covers `mxgate gate` as a real process (popen on MXGATE_CLI): the JSON report parses and lists
// the checks that ran, the JUnit report validates against report/junit.xsd, property coverage
// comes back from the checks' child processes into properties.coverage, usage errors exit 2,
// demanding a device backend this build or machine lacks exits 3 (and one it has is used), the
// watchdog kills a hung check (MXGATE_GATE_HANG), names it and its last kernel and the run goes
// on, --time-budget 0 skips every check, the summary table is printed, the fuzz targets and the
// decision tables run in the default gate (no fuzz build needed), and --skip STAGE skips one
// stage visibly (an unknown stage is a usage error); the self-test stage passes with each check's
// exact answer, and each fault planted in mxgate's own machinery (MXGATE_MACHINERY_FAULT,
// common/machinery_fault.h) fails it in the check that must catch it.
// Does NOT cover: what the checks themselves verify (their own test files: test_format.cpp,
// property_host.cpp, ...), the report writers' escaping and layout (test_report.cpp,
// test_heatmap.cpp), a fuzz target that finds a bug (tools/mxgate/fuzz_runner.cpp is exercised by
// `mxgate fuzz`), device backends (a CPU build has none).
// Every run is kept fast with --only and --cases 5. MXGATE_FAULTS is unset for each run (the gate
// refuses to run with faults on; test_dispatch_faults.cpp covers that).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_built.h"
#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

using test_support::TempDir;

using Output = test_support::ShellResult;

// Runs a shell command line; returns its exit code and output (stdout and stderr together).
Output shell(const std::string& command) { return test_support::run_shell(command + " 2>&1"); }

// `mxgate gate ARGS` with MXGATE_FAULTS unset and `env` (NAME=VALUE ...) set.
Output gate(const std::vector<std::string>& args, const std::string& env = "") {
  std::string cmd =
      "env -u MXGATE_FAULTS " + env + " " + test_support::shell_quote(MXGATE_CLI) + " gate";
  for (const std::string& a : args) cmd += " " + test_support::shell_quote(a);
  return shell(cmd);
}

// The JSON report at `path`, loaded as `d` by python3, passes the asserts of `script`.
testing::AssertionResult ReportPasses(const std::string& path, const std::string& script) {
  const std::string program = "import json,sys\nd = json.load(open(sys.argv[1]))\n" + script;
  const Output py = shell("python3 -c " + test_support::shell_quote(program) + " " +
                          test_support::shell_quote(path));
  if (py.exit_code == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << py.out;
}

bool has_tool(const std::string& name) {
  return shell("command -v " + name + " >/dev/null").exit_code == 0;
}

// Some line of `text` matches the regex `pattern`; on failure the pattern and the text.
testing::AssertionResult HasLine(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (std::regex_search(line, re)) return testing::AssertionSuccess();
  }
  return testing::AssertionFailure() << "no line matches " << pattern << " in:\n" << text;
}

using Gate = test_support::CliBuilt;

// Guards against a JSON report that does not parse or leaves out a check that ran.
TEST_F(Gate, JsonReportParsesAndListsTheChecks) {
  const TempDir dir;
  const std::string json = dir.file("gate.json");
  const Output r = gate({"--only", "reference.", "--cases", "5", "--report", json});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(ReportPasses(
      json,
      "assert d['schema'] == 'mxgate-gate-report/1', d['schema']\n"
      "names = [c['name'] for c in d['checks']]\n"
      "assert names == ['reference.mx_scale_table', 'reference.gemm_modes_agree',\n"
      "                 'reference.layout_round_trips'], names\n"
      "assert all(c['result'] == 'pass' and c['backend'] == 'host' for c in d['checks'])\n"
      "assert d['totals']['passed'] == 3, d['totals']\n"));
}

// Guards against a JUnit report that CI systems reject (it must validate against our schema).
TEST_F(Gate, JunitReportValidatesAgainstTheSchema) {
  if (!has_tool("xmllint"))
    GTEST_SKIP() << "xmllint is not installed (apt-get install libxml2-utils)";
  const TempDir dir;
  const std::string xml = dir.file("gate.xml");
  const Output r = gate({"--only", "reference.", "--cases", "5", "--junit", xml});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Output lint =
      shell("xmllint --noout --schema " +
            test_support::shell_quote(std::string(MXGATE_SOURCE_DIR) + "/report/junit.xsd") + " " +
            test_support::shell_quote(xml));
  EXPECT_EQ(lint.exit_code, 0) << lint.out;
  std::ifstream in(xml);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("name=\"reference.layout_round_trips\""), std::string::npos) << ss.str();
}

// Guards against coverage tags lost on their way back from the property checks' child
// processes: properties.coverage would then report nothing, or a coverage map of zeros.
TEST_F(Gate, CoverageComesBackFromThePropertyChecks) {
  const TempDir dir;
  const std::string json = dir.file("gate.json");
  const Output r = gate({"--only", "propert", "--cases", "5", "--report", json});
  // With 5 cases per property some required class may be missed: pass and fail are both fine.
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out;
  EXPECT_TRUE(HasLine(r.out, R"(^\[\d+/\d+\] properties\.coverage \(host\) \.\.\. )"));
  // The tag list may wrap over several lines.
  EXPECT_TRUE(HasLine(r.out, R"(^    tags: [^ ])"));
  EXPECT_TRUE(HasLine(r.out, R"(^ .*m>1: [1-9])"));
  EXPECT_TRUE(ReportPasses(
      json,
      "props = [c for c in d['checks'] if c['name'].startswith('property.')\n"
      "         and c['result'] != 'skip']  # a device-only property is a skip on the host\n"
      "assert len(props) >= 10 and all(c['cases'] == 5 for c in props), props\n"
      "cov = [c for c in d['checks'] if c['name'] == 'properties.coverage'][0]\n"
      "assert cov['result'] in ('pass', 'fail'), cov\n"
      "assert cov['coverage'] and all(v > 0 for v in cov['coverage'].values()), cov\n"
      "assert sum(cov['coverage'].get(t, 0) for t in ('m=1', 'm>1')) >= 5, cov\n"));
}

// Guards against a main job that passes without running the fuzzers or the decision tables (the
// fresh clone once printed `fuzz.smoke ... skip (no fuzz build)` and exited 0): every fuzz
// target of fuzz/ is a check of the default gate, linked into the CLI, that replays its seeds and
// mutates them; decisions.tables replays the model's tables.
TEST_F(Gate, FuzzTargetsAndDecisionTablesRunWithoutAFuzzBuild) {
  const Output r = gate({"--only", "fuzz.", "--fuzz-seconds", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const char* t : {"fuzz_npy", "fuzz_shape_catalog", "fuzz_codecs", "fuzz_negotiation",
                        "fuzz_dispatch", "fuzz_regression"}) {
    EXPECT_TRUE(HasLine(r.out, R"(^\[\d+/6\] fuzz\.)" + std::string(t) +
                                   R"( \(host\) \.\.\. pass \([1-9]\d* cases)"))
        << t;
  }
  const Output d = gate({"--only", "decisions."});
  EXPECT_EQ(d.exit_code, 0) << d.out;
  EXPECT_TRUE(HasLine(d.out, R"(^\[1/1\] decisions\.tables \(host\) \.\.\. pass \([1-9])"));
}

// The interpreter the numpy adapters' check runs with: /usr/bin/python3 (the README's, which has
// numpy) where present, so the check runs rather than skips; "" to let the gate find one.
std::string numpy_python_env() {
  return shell("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1").exit_code == 0
             ? "MXGATE_PYTHON=/usr/bin/python3"
             : "";
}

// Guards against a self-test whose checks pass without their exact answers: the stage runs in
// the default gate; each faithful twin passes and each plant gives the answer written beside it
// in tools/mxgate/gate_selftest*.cpp (restated here from the definitions: the ties-away cast over
// [1, 2) differs at 1 + 1/16, 5/16, 9/16, 13/16 for e4m3fn, 1 + 1/8, 5/8 for e5m2; tile4x4 skips
// row 4 of M = 5; 1.0f at elements -1 and 64 of 64 fp32 damages bytes -4..-1 and 256..259).
TEST_F(Gate, SelfTestPassesWithEveryExactAnswer) {
  const TempDir dir;
  const std::string json = dir.file("gate.json");
  const Output r = gate({"--only", "selftest.", "--report", json}, numpy_python_env());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  // A passing check's detail (its answers) is in the report, not on the terminal.
  std::ifstream in(json);
  std::stringstream report;
  report << in.rdbuf();
  for (const char* c :
       {"example_plugin", "plugin_tactics", "cast_sweep", "accumulators", "guard_bands"}) {
    EXPECT_TRUE(HasLine(
        r.out, R"(^\[\d+/6\] selftest\.)" + std::string(c) + R"( \(host\) \.\.\. pass \([1-9])"))
        << c << "\n"
        << r.out;
  }
  // numpy: a pass where /usr/bin/python3 has numpy, else a skip that says no interpreter can.
  EXPECT_TRUE(HasLine(r.out, R"(^\[\d+/6\] selftest\.numpy_adapters \(host\) \.\.\. )"
                             R"((pass \([1-9]|skip \(no interpreter can import numpy))"))
      << r.out;
  for (const char* answer :
       {"example (faithful twin) gemm.exact op=gemm_mx m=5 n=3 k=160 layout=row_major "
        "out=fp32 seed=1: pass",
        "example_tactics gemm.exact op=gemm_mx m=5 n=3 k=160 layout=row_major out=fp32 "
        "seed=1: tactic 0 pass; tactic 1 pass; tactic 2 pass",
        "example_faulty_tactic gemm.exact op=gemm_mx m=5 n=3 k=160 layout=row_major out=fp32 "
        "seed=1: tactic 0 pass; tactic 1 pass; tactic 2 fail at (4, 0)",
        "example -> e4m3fn over [0x3f800000, 0x40000000) in 4 chunks: 0 inputs differ",
        "example_faulty_cast_ties_away -> e4m3fn over [0x3f800000, 0x40000000) in 4 chunks: "
        "4 inputs differ, first 0x3f880000, last 0x3fe80000",
        "example_faulty_cast_ties_away -> e5m2 over [0x3f800000, 0x40000000) in 4 chunks: "
        "2 inputs differ, first 0x3f900000, last 0x3fd00000",
        "example_faulty_cast_ties_away -> e8m0 over [0x3f800000, 0x40000000) in 4 chunks: "
        "0 inputs differ",
        "sm90_fp8_mma simulated kernel, gemm.ordered_bound 20 cases: pass",
        "sm90_fp8_mma bound tightness: own inside; one product off outside at (0, 0); own "
        "inside; one promotion late outside at (0, 0)",
        "fp32_rn bound tightness: own inside; one product off outside at (0, 0)",
        "sm90_fp8_mma simulated, the probe names: sm90_fp8_mma",
        "exact writer (faithful twin): pass, 0 elements poisoned",
        "fault_skip_element (skip 17): poisoned elements: 17",
        "fault_write_past_end: 4 guard byte(s) damaged; first: buffer 'selftest_victim' guard "
        "damaged at byte offset 256 (past its end) (expected 0xa5, found 0x00)",
        "writes at element -1 and 64: damaged offsets: -4..-1, 256..259"}) {
    EXPECT_NE(report.str().find(answer), std::string::npos) << answer << "\n" << report.str();
  }
  EXPECT_EQ(report.str().find("WRONG ANSWER"), std::string::npos) << report.str();
  EXPECT_EQ(r.out.find("PLANTED FAULT PASSED"), std::string::npos) << r.out;
}

// Guards against a detector or call path gone blind that the self-test does not see: each fault
// of common/machinery_fault.h, planted alone (MXGATE_MACHINERY_FAULT), fails `mxgate gate` (exit
// 1) in the self-test check named beside it, which the run names loudly; an unknown fault name is
// a usage error (exit 2) naming it.
TEST_F(Gate, SelfTestCatchesEachMachineryFault) {
  const struct {
    const char* fault;
    const char* check;
    const char* answer;  // a line the failing check prints
  } kCases[] = {
      {"plugin_swaps_m_n", "selftest.example_plugin",
       "example (faithful twin) gemm.exact op=gemm_mx m=5 n=3 k=160 layout=row_major out=fp32 "
       "seed=1: WRONG ANSWER: expected \"pass\", got \"fail: example/gemm_mx returned an error: "
       "a is 5x160"},
      {"plugin_tactic_zero", "selftest.plugin_tactics",
       "got \"tactic 0 pass; tactic 1 pass; tactic 2 pass\""},
      {"sweep_first_chunk_only", "selftest.cast_sweep",
       "got \"1 inputs differ, first 0x3f880000, last 0x3f880000\""},
      {"adapter_drops_odd_row", "selftest.numpy_adapters",
       "numpy (faithful twin) gemm.exact op=gemm_mx m=5 n=3 k=160 layout=row_major out=fp32 "
       "seed=1: WRONG ANSWER: expected \"pass\", got \"fail at (4, 0)\""},
      {"back_guard_unchecked", "selftest.guard_bands", "got \"-4..-1\""},
      {"probe_search_short", "selftest.accumulators",
       "sm90_fp8_mma simulated, the probe names: WRONG ANSWER"},
      {"sm90_bound_chunk_256", "selftest.accumulators",
       "one promotion late outside at (0, 0)\", got \"own inside; one product off outside at "
       "(0, 0); own inside; one promotion late inside\""},
  };
  const std::string python = numpy_python_env();
  for (const auto& c : kCases) {
    if (std::string(c.check) == "selftest.numpy_adapters" && python.empty()) {
      ADD_FAILURE() << "no /usr/bin/python3 with numpy: " << c.fault << " cannot be planted";
      continue;
    }
    const Output r =
        gate({"--only", c.check}, python + " MXGATE_MACHINERY_FAULT=" + std::string(c.fault));
    EXPECT_EQ(r.exit_code, 1) << c.fault << "\n" << r.out;
    EXPECT_TRUE(HasLine(r.out, "WARNING: MXGATE_MACHINERY_FAULT=" + std::string(c.fault))) << r.out;
    EXPECT_TRUE(HasLine(r.out, R"(^\[1/1\] )" + std::string(c.check) + R"( \(host\) \.\.\. FAIL)"))
        << c.fault << "\n"
        << r.out;
    EXPECT_NE(r.out.find(c.answer), std::string::npos) << c.fault << "\n" << r.out;
  }
  const Output bad = gate({"--only", "selftest.guard_bands"}, "MXGATE_MACHINERY_FAULT=no_such");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("unknown MXGATE_MACHINERY_FAULT 'no_such'"), std::string::npos) << bad.out;
}

// Guards against a stage dropped silently: --skip STAGE lists every check of the stage as a
// skip naming the option, and the summary counts them.
TEST_F(Gate, SkipListsTheSkippedStage) {
  const Output r = gate({"--only", "fuzz.", "--skip", "fuzz"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(HasLine(r.out, R"(^\[1/6\] fuzz\.fuzz_npy \(host\) \.\.\. skip \(--skip fuzz\)$)"));
  EXPECT_TRUE(HasLine(r.out, R"(^0 errors, 6 skipped$)"));
}

// Guards against bad usage running the gate (or exiting 1, which CI reads as a failed check).
TEST_F(Gate, BadOptionsExit2) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--no-such-option"},
                                             {"--backend", "gpu"},
                                             {"--check-timeout", "0"},
                                             {"--time-budget", "soon"},
                                             {"--report", "/no/such/folder/gate.json"},
                                             {"--only", "reference.", "stray"},
                                             {"--skip", "fuzzing"},
                                             {"--fuzz-seconds", "-1"}}) {
    const Output r = gate(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << "\n" << r.out;
    EXPECT_EQ(r.out.find("[1/"), std::string::npos) << "a check ran:\n" << r.out;
  }
}

// Whether this host has an NVIDIA GPU, asked of the driver's tool, not of mxgate.
bool host_has_nvidia_gpu() {
  return shell("nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]'").exit_code == 0;
}

// Guards against `--backend cuda` silently falling back to the host models when this build or
// machine has no CUDA device: that must be an environment error (exit 3), not a green gate. What
// the run must do is decided from the build (CMake's MXGATE_CUDA) and the host (nvidia-smi)
// before it starts: a build with CUDA on a host with a GPU must run every check on cuda.
TEST_F(Gate, DemandedDeviceBackendMissingExits3) {
  const std::string build_backend = MXGATE_TOOL_DEVICE_BACKEND;
  const Output r = gate({"--backend", "cuda", "--only", "reference.", "--cases", "5"});
  if (build_backend == "cuda" && host_has_nvidia_gpu()) {
    // reference.* checks are host-only; the backend is still created and must be the device.
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find(", backend cuda,"), std::string::npos) << r.out;
    return;
  }
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("environment error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(build_backend == "cuda" ? "no GPU is present" : "is not in this build"),
            std::string::npos)
      << r.out;
}

// Guards against a hung kernel hanging the whole gate: the watchdog must kill the check, name
// it with the last kernel launched, fail the run, and go on with the next check.
TEST_F(Gate, WatchdogKillsAHungCheckAndTheRunGoesOn) {
  const Output r = gate({"--only", "reference.", "--cases", "5", "--check-timeout", "1"},
                        "MXGATE_GATE_HANG=reference.mx_scale_table");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(HasLine(r.out, R"(^(?=.*reference\.mx_scale_table)(?=.*watchdog)(?=.*test_hang))"));
  EXPECT_TRUE(HasLine(r.out, R"(^\[2/3\] reference\.gemm_modes_agree \(host\) \.\.\. pass)"));
  EXPECT_TRUE(HasLine(r.out, R"(^reference\.mx_scale_table +host +- +0 ERROR )"));
  EXPECT_TRUE(HasLine(r.out, R"(^reference\.layout_round_trips +host +- +\d+ pass )"));
}

// Guards against a time budget that is ignored: with none left, no check may start.
TEST_F(Gate, ZeroTimeBudgetSkipsEveryCheck) {
  const Output r = gate({"--only", "reference.", "--time-budget", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const char* name : {"mx_scale_table", "gemm_modes_agree", "layout_round_trips"}) {
    EXPECT_TRUE(HasLine(r.out, std::string(R"(^\[\d/3\] reference\.)") + name +
                                   R"( \(host\) \.\.\. skip \(time budget\)$)"))
        << name;
  }
  EXPECT_TRUE(HasLine(r.out, R"(^0 errors, 3 skipped$)"));
}

// Guards against the summary table people read at the end losing its header or a row.
TEST_F(Gate, PrintsTheSummaryTable) {
  const Output r = gate({"--only", "reference.", "--cases", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(HasLine(r.out, R"(^check +backend +impl +cases +result +time$)"));
  for (const char* name : {"mx_scale_table", "gemm_modes_agree", "layout_round_trips"}) {
    EXPECT_TRUE(HasLine(
        r.out, std::string(R"(^reference\.)") + name + R"( +host +- +\d+ pass +\d+\.\d\ds$)"))
        << name;
  }
  EXPECT_TRUE(HasLine(r.out, R"(^3 passed, 0 failed$)"));
}

// Guards against `mxgate gate --help` drifting from the options the gate accepts.
TEST_F(Gate, HelpNamesEveryOption) {
  const Output r = shell(test_support::shell_quote(MXGATE_CLI) + " gate --help");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* opt : {"--only", "--seed", "--cases", "--backend", "--impl", "--time-budget",
                          "--check-timeout", "--report", "--junit", "MXGATE_GATE_HANG"}) {
    EXPECT_NE(r.out.find(opt), std::string::npos) << opt << "\n" << r.out;
  }
}

}  // namespace
}  // namespace mxgate
