// Covers the implementation options of the CLI as real processes (popen on MXGATE_CLI): `mxgate
// impls --json` lists the built-in and the shipped example implementation with their ops,
// contracts and accumulators; --impl on property / gate / zoo / repro; a broken plugin exits 2
// (missing file, no entry symbol, wrong ABI version, malformed) or 3 (init refuses) naming the
// plugin; in the gate a plugin that does not load is one error check and the run goes on, a
// plugin op that crashes or hangs errors its check (the watchdog names the op), an op declining
// inside its contract fails as a contract mismatch, an op the backend cannot run is unsupported
// (a skip, not a failure); the JSON and JUnit reports name the implementation; regression files
// record it and repro replays on it or on --impl; `probe-accumulator --impl` measures the
// example's GEMM ops (fp32_rn) and names the targets it cannot drive.
// Does not cover: what the properties check on plugin ops (property_plugins.cpp), loading
// details (test_plugins.cpp), device plugins.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

using test_support::TempDir;
using Output = test_support::ShellResult;

std::string test_plugin(const std::string& name) {
  return std::string(MXGATE_TEST_PLUGIN_DIR) + "/lib" + name + ".so";
}

// `mxgate ARGS` (stdout and stderr), MXGATE_FAULTS unset.
Output mxgate(const std::vector<std::string>& args) {
  std::string cmd = "env -u MXGATE_FAULTS " + test_support::shell_quote(MXGATE_CLI);
  for (const std::string& a : args) cmd += " " + test_support::shell_quote(a);
  return test_support::run_shell(cmd + " 2>&1");
}

bool has_line(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, re)) return true;
  }
  return false;
}

// Runs a Python check on a JSON file (Debian's python3: the one with the json module for sure).
Output python(const std::string& script, const std::string& file) {
  return test_support::run_shell("/usr/bin/python3 -c " + test_support::shell_quote(script) + " " +
                                 test_support::shell_quote(file) + " 2>&1");
}

// Guards against `mxgate impls` hiding an implementation or an op's contract from the person
// who is about to gate it.
TEST(ImplsCli, ListsBuiltinAndTheExampleWithContracts) {
  const TempDir dir;
  const Output r = mxgate({"impls", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ofstream(dir.file("impls.json")) << r.out;
  const Output py = python(
      "import json,sys\n"
      "d = json.load(open(sys.argv[1]))\n"
      "assert d['schema'] == 'mxgate-impls/1' and d['errors'] == [], d['errors']\n"
      "impls = {i['name']: i for i in d['implementations']}\n"
      "b = {o['name']: o for o in impls['builtin']['ops']}\n"
      "g = b['gemm_blockscale']\n"
      "assert g['family'] == 'gemm_block' and g['memory'] == 'backend', g\n"
      "assert g['accumulator'] == 'fp32_rn', g\n"
      "assert g['contract']['declared_order']['block_k'] == 128, g\n"
      "assert g['contract']['b_block'] == [128, 128], g\n"
      "assert b['gemm_mx_dot_scaled']['contract']['k']['align'] == 128\n"
      "assert b['upcast_e8m0']['accumulator'] is None\n"
      "e = {o['name']: o for o in impls['example']['ops']}\n"
      "c = e['cast_satfinite']\n"
      "assert c['memory'] == 'host' and c['contract']['conventions'] == ['cuda_satfinite'], c\n"
      "assert c['contract']['out_dtypes'] == ['e4m3fn', 'e5m2', 'e8m0'], c\n"
      "assert e['gemm_block_deepseek']['contract']['b_scale_ld_align'] == 4\n"
      "assert e['gemm_mx']['accumulator_error'] is None, e['gemm_mx']\n"
      "assert e['quantize_1x128']['family'] == 'quantize_block', e['quantize_1x128']\n"
      "assert not impls['example']['planted_fault']\n"
      "assert impls['example_faulty_upcast_shift']['planted_fault']\n",
      dir.file("impls.json"));
  EXPECT_EQ(py.exit_code, 0) << py.out;
  const Output text = mxgate({"impls"});
  EXPECT_TRUE(has_line(text.out, R"(^example \(--impl example; )")) << text.out;
  EXPECT_TRUE(has_line(text.out, R"(^  gemm_block_rowwise +gemm_block +memory host)")) << text.out;
}

// Guards against a bad plugin crashing mxgate or running as something else: every failure mode
// exits 2 (input) or 3 (environment) with a message naming the plugin.
TEST(ImplsCli, BadPluginsExit2Or3NamingThePlugin) {
  struct Bad {
    std::string spec;
    int exit_code;
    std::string message;
  };
  const Bad bad[] = {
      {"/no/such/libplugin.so", 2, "/no/such/libplugin.so': cannot load"},
      {test_plugin("no_entry"), 2, "symbol 'mxgate_plugin_v1' not found"},
      {test_plugin("bad_abi"), 2, "ABI version 99"},
      {test_plugin("bad_family"), 2, "family 42"},
      {test_plugin("init_refuses"), 3, "init() refused: no CUDA device (test plugin)"},
      {"example:no_such_impl", 2, "has no implementation 'no_such_impl'"},
  };
  for (const Bad& b : bad) {
    for (const char* verb : {"property", "zoo"}) {
      std::vector<std::string> args = {verb};
      if (std::string(verb) == "property") args.push_back("all");
      args.insert(args.end(), {"--impl", b.spec, "--cases", "1"});
      const Output r = mxgate(args);
      EXPECT_EQ(r.exit_code, b.exit_code) << verb << " " << b.spec << "\n" << r.out;
      EXPECT_NE(r.out.find(b.message), std::string::npos) << r.out;
    }
  }
}

// Guards against reports that cannot say which implementation a check gated.
TEST(ImplsCli, GateOnTheExampleNamesItInTheReports) {
  const TempDir dir;
  const Output r = mxgate({"gate", "--impl", "example", "--only", "[example]", "--cases", "5",
                           "--report", dir.file("g.json"), "--junit", dir.file("g.xml")});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(has_line(r.out, R"(impl builtin,example)")) << r.out;
  EXPECT_TRUE(has_line(r.out, R"(^property\.gemm\.exact\[example\] +host +example +5 +pass)"))
      << r.out;
  const Output py = python(
      "import json,sys\n"
      "d = json.load(open(sys.argv[1]))\n"
      "assert d['run']['impls'] == ['builtin', 'example'], d['run']\n"
      "assert len(d['checks']) == 20, [c['name'] for c in d['checks']]\n"
      "assert all(c['impl'] == 'example' for c in d['checks'])\n"
      "# No example op takes an absent B scale, and a 2^31-element case is device only: those\n"
      "# two are visible skips, as are the FP4 and 2D properties (no E2M1 op and no 32x32 "
      "quantizer\n"
      "# in the example, listed with the reason); every other property passes.\n"
      "skips = {'property.gemm.default_scale[example]', "
      "'property.dequantize.large_offsets[example]'}\n"
      "no_op = lambda n: '_fp4.' in n or 'quantize_2d' in n\n"
      "fp4 = [c for c in d['checks'] if no_op(c['name'])]\n"
      "ran = [c for c in d['checks'] if not no_op(c['name']) and c['name'] not in skips]\n"
      "assert all(c['result'] == 'pass' and c['unsupported'] == 0 for c in ran), ran\n"
      "assert all(c['result'] == 'skip' for c in d['checks'] if c['name'] in skips), d['checks']\n"
      "assert len(fp4) == 6 and all(c['result'] == 'skip' for c in fp4), fp4\n"
      "assert all('cannot build its inputs' in c['detail'] for c in fp4), fp4\n",
      dir.file("g.json"));
  EXPECT_EQ(py.exit_code, 0) << py.out;
  std::ifstream xml(dir.file("g.xml"));
  const std::string junit((std::istreambuf_iterator<char>(xml)), std::istreambuf_iterator<char>());
  EXPECT_NE(
      junit.find("classname=\"mxgate.example.host\" name=\"property.cast.bit_exact[example]\""),
      std::string::npos)
      << junit;
  EXPECT_NE(junit.find("<property name=\"impls\" value=\"builtin,example\"/>"), std::string::npos);
}

// Guards against a bad plugin losing the rest of the run: its load is one error check, every
// other check still runs and reports.
TEST(ImplsCli, GateGoesOnPastAPluginThatDoesNotLoad) {
  const Output r = mxgate({"gate", "--impl", test_plugin("bad_abi") + ",example", "--only",
                           "upcast_e8m0.bit_exact", "--cases", "5"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has_line(r.out, R"(^\[\d+/\d+\] impl\.load\[.*libbad_abi\.so\] .* ERROR)")) << r.out;
  EXPECT_TRUE(has_line(r.out, R"(ABI version 99)")) << r.out;
  EXPECT_TRUE(has_line(r.out, R"(^property\.upcast_e8m0\.bit_exact\[example\] .* pass)")) << r.out;
  EXPECT_TRUE(has_line(r.out, R"(^property\.upcast_e8m0\.bit_exact +host +builtin .* pass)"))
      << r.out;
}

// Guards against a plugin op that crashes or hangs taking the gate down or going unnamed: each
// errors its own check (signal / watchdog, naming the op) and the next check still runs.
TEST(ImplsCli, GateSurvivesACrashingAndAHangingPluginOp) {
  const std::string p = test_plugin("misbehaving");
  const Output r = mxgate({"gate", "--impl", p + ":crashes," + p + ":hangs," + p + ":narrow",
                           "--only", "[", "--cases", "5", "--check-timeout", "3"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has_line(r.out, R"(crashed: signal 11 .*last kernel launched: crashes/upcast)"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, R"(watchdog: .*\[hangs\] gave no result after 3 s, killed; last )"
                              R"(kernel launched: hangs/upcast)"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, R"(^property\.upcast_e8m0\.bit_exact\[narrow\] .* pass)")) << r.out;
}

// Guards against the two non-numeric verdicts being confused with each other or with a pass: an
// op declining a case inside its own contract fails (contract_mismatch), an op the backend
// cannot run is unsupported (skipped, listed, exit 0 on its own).
TEST(ImplsCli, ContractMismatchFailsUnsupportedSkips) {
  const TempDir dir;
  const std::string p = test_plugin("misbehaving");
  const Output r = mxgate({"gate", "--impl", p + ":declines," + p + ":device", "--only", "[",
                           "--cases", "50", "--report", dir.file("g.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has_line(r.out, R"(contract_mismatch: contract mismatch: declines/upcast declined)"))
      << r.out;
  const Output py = python(
      "import json,sys\n"
      "c = {x['impl']: x for x in json.load(open(sys.argv[1]))['checks']\n"
      "     if x['name'].startswith('property.upcast_e8m0.bit_exact')}\n"
      "d = c['declines']\n"
      "assert d['result'] == 'fail' and d['verdict'] == 'contract_mismatch', d\n"
      "assert d['counterexample'] == 'op=upcast count=8 scales=extreme seed=0', d\n"
      "v = c['device']\n"
      "assert v['result'] == 'skip' and v['verdict'] == 'skip' and v['cases'] == 0, v\n"
      "assert 'needs cuda memory' in v['detail'], v\n",
      dir.file("g.json"));
  EXPECT_EQ(py.exit_code, 0) << py.out;
  const Output alone = mxgate({"gate", "--impl", p + ":device", "--only", "[", "--cases", "5"});
  EXPECT_EQ(alone.exit_code, 0) << alone.out;
}

// Guards against a regression file that replays on another implementation than the one that
// failed: --save records it, repro replays on it, and --impl replays on another.
TEST(ImplsCli, RegressionFilesRecordTheImplementation) {
  const TempDir dir;
  const std::string file = dir.file("upcast.case");
  const Output found = mxgate({"property", "upcast_e8m0.bit_exact", "--impl",
                               "example:example_faulty_upcast_shift", "--save", file});
  EXPECT_EQ(found.exit_code, 1) << found.out;
  EXPECT_TRUE(has_line(found.out, R"(reproduce: mxgate property upcast_e8m0\.bit_exact --impl )"
                                  R"(example:example_faulty_upcast_shift --backend host)"))
      << found.out;
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\nimpl: example:example_faulty_upcast_shift\n"), std::string::npos) << text;
  const Output still = mxgate({"repro", file});
  EXPECT_EQ(still.exit_code, 1) << still.out;  // the planted fault is still there
  EXPECT_TRUE(has_line(still.out, R"(\[example:example_faulty_upcast_shift\] on host: FAIL)"))
      << still.out;
  const Output fixed = mxgate({"repro", file, "--impl", "example"});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out;
}

// Guards against `zoo --impl` calling a planted fault detected when it is not, or a correct
// implementation fine when a property fails on it.
TEST(ImplsCli, ZooOverImplementations) {
  const TempDir dir;
  const Output r = mxgate(
      {"zoo", "--impl", "example,example:example_faulty_cast_ties_away", "--seeds", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ofstream(dir.file("zoo.json")) << r.out;
  const Output py = python(
      "import json,sys\n"
      "z = {i['impl']: i for i in json.load(open(sys.argv[1]))['implementations']}\n"
      "assert not z['example']['planted'] and not z['example']['detected'], z['example']\n"
      "f = z['example_faulty_cast_ties_away']\n"
      "assert f['planted'] and f['detected'] and f['caught_by'] == 'cast.bit_exact', f\n",
      dir.file("zoo.json"));
  EXPECT_EQ(py.exit_code, 0) << py.out;
  EXPECT_EQ(mxgate({"zoo", "--impl", "example", "--fault", "z9_drop_trailing_k_block"}).exit_code,
            2);
}

// Guards against `probe-accumulator --impl` measuring something other than the op it names, or
// turning an op it cannot drive into a measurement. The example's GEMMs add fp32 products in
// increasing k with fp32 round-to-nearest-even (plugins/example/example.c): the probe reports 24
// bits (the fp32 output's limit), nearest_even, no promotion chunk, model fp32_rn, on the op it
// picks (the per-tensor gemm_block for per-tensor scaling, the 1x128 / 128x128 one for block
// scaling) and on the one SPEC:OP names. Bad targets exit 2 naming the problem.
TEST(ImplsCli, ProbeAccumulatorOnAnImplementation) {
  const TempDir dir;
  for (const auto& [spec, scaling, op] :
       {std::tuple{"example", "per-tensor", "example:gemm_block_tensor"},
        std::tuple{"example", "block", "example:gemm_block_deepseek"},
        std::tuple{"example:gemm_mx", "per-tensor", "example:gemm_mx"}}) {
    SCOPED_TRACE(spec);
    const Output r = mxgate({"probe-accumulator", "--impl", spec, "--scaling", scaling, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    std::ofstream(dir.file("probe.json")) << r.out;
    const Output py = python(
        "import json,sys\n"
        "p = json.load(open(sys.argv[1]))\n"
        "assert p['implementation'] == 'impl:" +
            std::string(op) +
            "', p['implementation']\n"
            "assert p['precision_bits'] == 24 and p['precision_at_output_limit'], p\n"
            "assert p['rounding'] == 'nearest_even' and p['chunk_k'] == 0, p\n"
            "assert p['model'] == 'fp32_rn', p\n",
        dir.file("probe.json"));
    EXPECT_EQ(py.exit_code, 0) << py.out;
  }
  const Output text = mxgate({"probe-accumulator", "--impl", "example"});
  EXPECT_TRUE(has_line(text.out, R"(^probe-accumulator: impl example:gemm_block_tensor \(e4m3fn)"))
      << text.out;
  EXPECT_TRUE(has_line(text.out, R"(^  model +fp32_rn$)")) << text.out;
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--impl", "example:nope"}, "implementation example has no op 'nope'"},
           {{"--impl", "example:cast_satfinite"}, "is a cast op, not an FP8 GEMM"},
           {{"--impl", "example:all"}, "names 10 implementations; name one"},
           {{"--impl", "example", "--format", "e5m2"}, "A element type e5m2 not in {e4m3fn}"},
           {{"--impl", "example", "--simulate", "fp32_rn"}, "exclude each other"},
           {{"--simulate", "fp32_rn", "--backend", "host"}, "--backend is for --impl"},
           {{"--impl", test_plugin("bad_abi")}, "bad_abi"}}) {
    std::vector<std::string> all = {"probe-accumulator"};
    all.insert(all.end(), args.begin(), args.end());
    const Output r = mxgate(all);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << r.out;
  }
}

// Guards against --help drifting from the implementation options the verbs accept.
TEST(ImplsCli, HelpNamesTheImplOptions) {
  for (const char* verb : {"gate", "property", "zoo", "repro", "impls", "probe-accumulator"}) {
    const Output r = mxgate({verb, "--help"});
    ASSERT_EQ(r.exit_code, 0) << verb;
    EXPECT_NE(r.out.find("--impl"), std::string::npos) << verb << "\n" << r.out;
  }
}

}  // namespace
}  // namespace mxgate
