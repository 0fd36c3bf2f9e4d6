// Covers report/: the JSON writer (escaping, UTF-8, numbers, misuse), the gate report as JSON
// (parsed back by python3's json module, every field checked) and as JUnit XML (validated by
// xmllint against report/junit.xsd, attribute values read back through XPath), and the mismatch
// heatmaps: grids from fp32 / bf16 / masks / bound verdicts, max-pooling, the PNG (decoded here:
// signature, IHDR, CRC-32 of every chunk computed independently, IDAT inflated with zlib, pixels
// of a known stripe pattern) and the SVG (one highlighted rect per mismatched cell, labels).
// Does NOT cover: how `mxgate gate` fills the report (tools/mxgate), whether a heatmap looks good
// to a person, or CI systems' own JUnit readers beyond our schema.
// Needs /usr/bin/python3 (a bootstrap package); the schema tests skip when xmllint is absent.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <zlib.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reference/verdict.h"
#include "report/gate_report.h"
#include "report/heatmap.h"
#include "report/json_writer.h"
#include "report/png.h"
#include "report/xml_escape.h"
#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate::report {
namespace {

using test_support::TempDir;

const std::string kPython = "/usr/bin/python3";
const std::string kSchema = std::string(MXGATE_SOURCE_DIR) + "/report/junit.xsd";

using test_support::shell_quote;

// Exit status of a shell command (-1 when it did not exit normally).
int run(const std::string& command) {
  const int rc = std::system(command.c_str());
  return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// stdout of a shell command; stderr goes to the test log.
std::string capture(const std::string& command, int* exit_code = nullptr) {
  test_support::ShellResult r = test_support::run_shell(command);
  if (exit_code) *exit_code = r.exit_code;
  return std::move(r.out);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

bool have_xmllint() { return run("command -v xmllint >/dev/null 2>&1") == 0; }

std::string hex_of(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string h;
  for (unsigned char c : bytes) {
    h += digits[c >> 4];
    h += digits[c & 15];
  }
  return h;
}

// A report with one check of each outcome and every optional field filled somewhere.
GateReport sample_report() {
  GateReport r;
  r.run.tool_version = "mxgate test (abc123)";
  r.run.seed = 42;
  r.run.cases = 1000;
  r.run.backend = "host";
  r.run.time_budget_seconds = 120;
  r.run.start_time = std::chrono::system_clock::from_time_t(1700000000);  // 2023-11-14T22:13:20Z

  // A helper rather than designated initializers: GCC warns about the members left out.
  const auto check = [](std::string name, std::string backend, uint64_t cases, CheckOutcome result,
                        double seconds, std::string detail) {
    CheckReport c;
    c.name = std::move(name);
    c.backend = std::move(backend);
    c.cases = cases;
    c.result = result;
    c.seconds = seconds;
    c.detail = std::move(detail);
    return c;
  };
  CheckReport pass =
      check("formats.measured_bytes", "host", 512, CheckOutcome::kPass, 0.25, "512 rows agree");
  pass.coverage = std::map<std::string, uint64_t>{{"k_mod_128!=0", 41}, {"m==1", 7}};

  CheckReport fail = check("gemm.exact.bpreshuffle", "host", 17, CheckOutcome::kFail, 1.5,
                           "fp32 bit-exact: 96 of 4096 differ; first (0,32)");
  fail.repro = "mxgate gate --only gemm.exact.bpreshuffle --seed 42";
  fail.counterexample = "M=1 N=64 K=160\nscale order \"row\" <tab>\there";
  fail.located = LocatedElement{.row = 0,
                                .col = 32,
                                .expected_bits = 0x3f800000,
                                .actual_bits = 0x3f800001,
                                .bit_width = 32,
                                .ulp_distance = 1};
  fail.heatmap_path = "heatmaps/gemm.exact.bpreshuffle.svg";

  CheckReport skip = check("gpu.dispatch", "hip", 0, CheckOutcome::kSkip, 0, "no GPU");
  CheckReport error = check("conventions.table", "host", 3, CheckOutcome::kError, 0.001,
                            "check threw: bad_alloc & <oops>");
  error.located = LocatedElement{.row = 2,
                                 .col = 3,
                                 .expected_bits = 0x3f80,
                                 .actual_bits = 0x7fc0,
                                 .bit_width = 16,
                                 .ulp_distance = kNanUlpDistance};
  r.checks = {pass, fail, skip, error};
  return r;
}

// ---------------------------------------------------------------------------------------------
// JSON writer

// Guards against a detail or counterexample with quotes, backslashes or control characters
// producing a report that no JSON reader accepts.
TEST(JsonWriter, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_quote("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(json_quote(std::string("\x01\x1f\x7f", 3)), "\"\\u0001\\u001f\x7f\"");
  EXPECT_EQ(json_quote(std::string("nul\0byte", 8)), "\"nul\\u0000byte\"");
  EXPECT_EQ(json_quote("/"), "\"/\"");  // solidus needs no escape
}

// Guards against mangling non-ASCII names (passed through as UTF-8) and against emitting bytes
// that are not UTF-8, which make python's json.load fail on the whole file.
TEST(JsonWriter, PassesUtf8ThroughAndReplacesInvalidBytes) {
  EXPECT_EQ(json_quote("\xc3\xa9\xe2\x80\x94\xf0\x9f\x94\xa5"),
            "\"\xc3\xa9\xe2\x80\x94\xf0\x9f\x94\xa5\"");
  // Lone continuation byte, truncated sequence, overlong '/', encoded surrogate.
  EXPECT_EQ(json_quote("a\x80z"), "\"a\xef\xbf\xbdz\"");
  EXPECT_EQ(json_quote("\xe2\x80"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
  EXPECT_EQ(json_quote("\xc0\xaf"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
  EXPECT_EQ(json_quote("\xed\xa0\x80"), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
}

// Guards against writing inf/nan (not JSON) and against doubles that lose digits on the way.
TEST(JsonWriter, NumbersRoundTripAndNonFiniteIsNull) {
  std::ostringstream s;
  JsonWriter w(s, 0);
  w.begin_array()
      .value(0.1)
      .value(1e300)
      .value(-0.0)
      .value(2.0)
      .value(std::numeric_limits<double>::infinity())
      .value(std::numeric_limits<double>::quiet_NaN())
      .value(std::numeric_limits<uint64_t>::max())
      .value(std::numeric_limits<int64_t>::min())
      .value(true)
      .null()
      .end_array();
  EXPECT_TRUE(w.complete());
  EXPECT_EQ(s.str(),
            "[0.1,1e+300,-0,2,null,null,18446744073709551615,-9223372036854775808,true,null]");
}

// Guards against silently writing malformed JSON when the gate code misuses the writer.
TEST(JsonWriter, MisuseThrowsNamingTheMistake) {
  std::ostringstream s;
  JsonWriter w(s);
  w.begin_object();
  EXPECT_THROW(w.value(1), std::logic_error);  // no key
  w.key("a");
  EXPECT_THROW(w.key("b"), std::logic_error);      // key after key
  EXPECT_THROW(w.end_object(), std::logic_error);  // dangling key
  w.value(1);
  EXPECT_THROW(w.end_array(), std::logic_error);  // wrong container
  w.end_object();
  EXPECT_THROW(w.value(2), std::logic_error);  // second top-level value
  JsonWriter arr(s);
  arr.begin_array();
  try {
    arr.key("x");
    FAIL() << "key in an array did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("outside an object"), std::string::npos) << e.what();
  }
}

// Guards against escaping that python's json module reads back differently from what was
// written (every control character, quotes, backslash, UTF-8), byte for byte.
TEST(JsonWriter, StringsRoundTripThroughPython) {
  TempDir d;
  std::string tricky = "q\"uote\\back/slash\nnew\rline\ttab \xc3\xa9 \xf0\x9f\x94\xa5 end";
  for (int c = 0; c < 0x20; ++c) tricky += static_cast<char>(c);
  tricky += '\x7f';
  {
    std::ofstream f(d.file("s.json"));
    JsonWriter w(f);
    w.begin_object().field("tricky", tricky).field("key \"with\" quotes\n", 7).end_object();
  }
  const std::string script =
      "import json,sys; d=json.load(open(sys.argv[1],encoding='utf-8'));"
      "sys.stdout.write(d['tricky'].encode('utf-8').hex()+' '+str(d['key \"with\" quotes\\n']))";
  int rc = -1;
  const std::string out =
      capture(kPython + " -c " + shell_quote(script) + " " + shell_quote(d.file("s.json")), &rc);
  ASSERT_EQ(rc, 0) << "python3 could not parse:\n" << read_file(d.file("s.json"));
  EXPECT_EQ(out, hex_of(tricky) + " 7");
}

// ---------------------------------------------------------------------------------------------
// Gate report: JSON

// Guards against a JSON report that does not parse or that loses or renames a field the
// dashboards read (results, located element bits, coverage, totals).
TEST(GateReportJson, ParsesWithPythonAndEveryFieldRoundTrips) {
  TempDir d;
  const GateReport report = sample_report();
  write_json_report_file(report, d.file("gate.json"));
  ASSERT_EQ(run(kPython + " -c 'import json,sys; json.load(open(sys.argv[1]))' " +
                shell_quote(d.file("gate.json"))),
            0)
      << read_file(d.file("gate.json"));
  write_text(d.file("check.py"), R"PY(
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
def eq(got, want, what):
    if got != want:
        sys.exit(f"{what}: got {got!r}, want {want!r}")
eq(d["schema"], "mxgate-gate-report/1", "schema")
run = d["run"]
eq(run["tool_version"], "mxgate test (abc123)", "tool_version")
eq(run["seed"], 42, "seed"); eq(run["cases"], 1000, "cases"); eq(run["backend"], "host", "backend")
eq(run["time_budget_s"], 120, "time_budget_s"); eq(run["start_time"], "2023-11-14T22:13:20Z", "start")
c = d["checks"]
eq([x["result"] for x in c], ["pass", "fail", "skip", "error"], "results")
eq([x["name"] for x in c][1], "gemm.exact.bpreshuffle", "name")
eq(c[0]["coverage"], {"k_mod_128!=0": 41, "m==1": 7}, "coverage")
eq(c[0]["located"], None, "absent located"); eq(c[0]["counterexample"], None, "absent cex")
eq(c[0]["heatmap"], None, "absent heatmap"); eq(c[0]["seconds"], 0.25, "seconds")
eq(c[1]["counterexample"], 'M=1 N=64 K=160\nscale order "row" <tab>\there', "counterexample")
eq(c[1]["located"], {"row": 0, "col": 32, "expected_bits": "0x3f800000",
                     "actual_bits": "0x3f800001", "ulp_distance": 1}, "located")
eq(c[1]["repro"], "mxgate gate --only gemm.exact.bpreshuffle --seed 42", "repro")
eq(c[1]["heatmap"], "heatmaps/gemm.exact.bpreshuffle.svg", "heatmap")
eq(c[2]["backend"], "hip", "backend"); eq(c[2]["coverage"], None, "absent coverage")
eq(c[3]["located"]["expected_bits"], "0x3f80", "bf16 bits")
eq(c[3]["located"]["ulp_distance"], 2**64 - 1, "nan ulp")
eq(c[3]["detail"], "check threw: bad_alloc & <oops>", "detail")
eq(d["totals"], {"checks": 4, "passed": 1, "failed": 1, "skipped": 1, "errors": 1,
                 "seconds": 0.25 + 1.5 + 0.001}, "totals")
)PY");
  EXPECT_EQ(
      run(kPython + " " + shell_quote(d.file("check.py")) + " " + shell_quote(d.file("gate.json"))),
      0)
      << read_file(d.file("gate.json"));
}

// Guards against totals that disagree with the per-check results they summarize.
TEST(GateReportJson, TotalsAreDerivedFromTheChecks) {
  GateReport r = sample_report();
  GateTotals t = r.totals();
  EXPECT_EQ(t.checks, 4u);
  EXPECT_EQ(t.passed, 1u);
  EXPECT_EQ(t.failed, 1u);
  EXPECT_EQ(t.skipped, 1u);
  EXPECT_EQ(t.errors, 1u);
  r.checks[0].result = CheckOutcome::kFail;
  t = r.totals();
  EXPECT_EQ(t.passed, 0u);
  EXPECT_EQ(t.failed, 2u);
}

// Guards against a report silently not written (or a crash) when its path is unusable.
TEST(GateReportJson, UnwritablePathThrowsNamingThePath) {
  TempDir d;
  const std::string bad = d.file("no/such/dir/gate.json");
  try {
    write_json_report_file(sample_report(), bad);
    FAIL() << "no exception for " << bad;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_junit_xml_file(sample_report(), d.path()), std::runtime_error);  // a dir
}

// ---------------------------------------------------------------------------------------------
// Gate report: JUnit XML

// Guards against a JUnit file that CI readers reject: it must validate against our schema.
TEST(JunitXml, ValidatesAgainstTheSchema) {
  if (!have_xmllint()) GTEST_SKIP() << "xmllint not installed (apt-get install libxml2-utils)";
  TempDir d;
  write_junit_xml_file(sample_report(), d.file("junit.xml"));
  EXPECT_EQ(run("xmllint --noout --schema " + shell_quote(kSchema) + " " +
                shell_quote(d.file("junit.xml"))),
            0)
      << read_file(d.file("junit.xml"));
  // A run with no checks is still a valid report.
  GateReport empty;
  empty.run.backend = "host";
  write_junit_xml_file(empty, d.file("empty.xml"));
  EXPECT_EQ(run("xmllint --noout --schema " + shell_quote(kSchema) + " " +
                shell_quote(d.file("empty.xml"))),
            0)
      << read_file(d.file("empty.xml"));
}

// Guards against a schema so loose that the validation above proves nothing.
TEST(JunitXml, SchemaRejectsMalformedReports) {
  if (!have_xmllint()) GTEST_SKIP() << "xmllint not installed (apt-get install libxml2-utils)";
  TempDir d;
  const std::string head = "<?xml version=\"1.0\"?>\n<testsuites>";
  const std::vector<std::string> bad = {
      head + "<testsuite tests=\"1\"><testcase name=\"a\"/></testsuite></testsuites>",  // no name
      head + "<testsuite name=\"s\" tests=\"-1\"/></testsuites>",
      head + "<testsuite name=\"s\" tests=\"1\" time=\"fast\"/></testsuites>",
      head + "<testsuite name=\"s\" tests=\"1\"><testcase/></testsuite></testsuites>",
      head + "<testsuite name=\"s\" tests=\"1\"><testcase name=\"a\"><skipped/><failure/>" +
          "</testcase></testsuite></testsuites>",
      head + "<testsuite name=\"s\" tests=\"1\"><testcase name=\"a\"><bogus/></testcase>" +
          "</testsuite></testsuites>",
  };
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const std::string f = d.file("bad" + std::to_string(i) + ".xml");
    write_text(f, bad[i]);
    EXPECT_NE(run("xmllint --noout --schema " + shell_quote(kSchema) + " " + shell_quote(f) +
                  " 2>/dev/null"),
              0)
        << "schema accepted: " << bad[i];
  }
}

// Guards against counts or per-check elements that disagree with the outcomes (a failed check
// shown green in CI), and against losing the repro command from the failure body.
TEST(JunitXml, CountsAndElementsFollowTheOutcomes) {
  std::ostringstream s;
  write_junit_xml(sample_report(), s);
  const std::string x = s.str();
  EXPECT_NE(x.find("<testsuite name=\"mxgate gate\" tests=\"4\" failures=\"1\" errors=\"1\" "
                   "skipped=\"1\" time=\"1.751\" timestamp=\"2023-11-14T22:13:20\">"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<property name=\"seed\" value=\"42\"/>"), std::string::npos) << x;
  EXPECT_NE(x.find("<property name=\"backend\" value=\"host\"/>"), std::string::npos) << x;
  EXPECT_NE(x.find("<testcase classname=\"mxgate.host\" name=\"gemm.exact.bpreshuffle\" "
                   "time=\"1.500\">"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<failure message=\"fp32 bit-exact: 96 of 4096 differ; first (0,32)\" "
                   "type=\"mxgate.check_failed\">"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("reproduce: mxgate gate --only gemm.exact.bpreshuffle --seed 42"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("element (0,32): expected 0x3f800000, actual 0x3f800001, 1 ulp"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<skipped message=\"no GPU\"/>"), std::string::npos) << x;
  EXPECT_NE(x.find("<error message=\"check threw: bad_alloc &amp; &lt;oops&gt;\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<system-out>coverage k_mod_128!=0: 41\n"), std::string::npos) << x;
}

// Guards against control characters XML 1.0 forbids (ESC from a colored log, NUL) making the
// whole file unparseable, and against attribute values that change on the way through a parser.
TEST(JunitXml, ForbiddenCharactersAreReplacedAndAttributesRoundTrip) {
  EXPECT_EQ(xml_escape_text(std::string("a\x1b[31mred\0z", 11)), "a\\x1b[31mred\\x00z");
  EXPECT_EQ(xml_escape_text("\t\n\r<&>\"'"), "\t\n\r&lt;&amp;&gt;\"'");
  EXPECT_EQ(xml_escape_attr("\t\n\r<&>\"'"), "&#9;&#10;&#13;&lt;&amp;&gt;&quot;&apos;");
  EXPECT_EQ(xml_escape_text("\xef\xbf\xbe ok \xff"), "\xef\xbf\xbd ok \xef\xbf\xbd");
  if (!have_xmllint()) GTEST_SKIP() << "xmllint not installed (apt-get install libxml2-utils)";
  TempDir d;
  GateReport r = sample_report();
  const std::string detail = "first \"bad\" <elem> & 'x'\n\tsecond line";
  r.checks[1].detail = detail + std::string("\x01\x1b", 2);
  r.checks[1].counterexample = std::string("raw \x02 byte and \xc3\xa9");
  write_junit_xml_file(r, d.file("junit.xml"));
  const std::string file = shell_quote(d.file("junit.xml"));
  ASSERT_EQ(run("xmllint --noout --schema " + shell_quote(kSchema) + " " + file), 0)
      << read_file(d.file("junit.xml"));
  int rc = -1;
  const std::string got = capture(
      "xmllint --xpath 'string(//testcase[@name=\"gemm.exact.bpreshuffle\"]/failure/@message)' " +
          file,
      &rc);
  ASSERT_EQ(rc, 0);
  // xmllint ends its output with a newline of its own.
  EXPECT_EQ(got, detail + "\\x01\\x1b\n");
}

// ---------------------------------------------------------------------------------------------
// Heatmap grids

// Guards against a grid that disagrees with verdict.h's policy: NaN equals NaN, +0 vs -0 is a
// mismatch (and must show), severity is the ULP distance.
TEST(Heatmap, Fp32GridFollowsTheVerdictPolicy) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> e{1.0f, 0.0f, nan, 2.0f, 5.0f, 1.0f};
  std::vector<float> a{1.0f, -0.0f, -nan, std::bit_cast<float>(0x40000007u), nan, 1.0f};
  const HeatmapGrid g = heatmap_from_fp32(2, 3, e, a);
  EXPECT_EQ(g.mismatches, 3u);
  EXPECT_EQ(g.at(0, 0), 0u);
  EXPECT_EQ(g.at(0, 1), 1u);  // signed zero: 0 ulp, shown as 1
  EXPECT_EQ(g.at(0, 2), 0u);  // NaN == NaN
  EXPECT_EQ(g.at(1, 0), 7u);
  EXPECT_EQ(g.at(1, 1), kNanUlpDistance);
  EXPECT_EQ(g.max_ulp, kNanUlpDistance);
  EXPECT_TRUE(g.ulp_known);
  const std::vector<uint16_t> be{0x3f80, 0x4000}, ba{0x3f81, 0x4000};
  const HeatmapGrid b = heatmap_from_bf16(1, 2, be, ba);
  EXPECT_EQ(b.mismatches, 1u);
  EXPECT_EQ(b.at(0, 0), 1u);
}

// Guards against sizes that do not match the declared shape being read out of bounds.
TEST(Heatmap, BadSizesThrow) {
  std::vector<uint8_t> mask(11);
  EXPECT_THROW(heatmap_from_mask(3, 4, mask), std::invalid_argument);
  EXPECT_THROW(heatmap_from_mask(0, 4, {}), std::invalid_argument);
  std::vector<float> e(12), a(11);
  EXPECT_THROW(heatmap_from_fp32(3, 4, e, a), std::invalid_argument);
  BoundVerdict v;
  v.rows = 2;
  v.cols = 2;
  v.violations.push_back({.row = 2, .col = 0});
  EXPECT_THROW(heatmap_from_bound(v), std::invalid_argument);
  EXPECT_THROW(downsample_max(heatmap_from_mask(1, 1, std::vector<uint8_t>{1}), 0),
               std::invalid_argument);
}

// Guards against pooling that blurs a 32-column stripe pattern (non-power-of-two factors) or
// drops isolated mismatches (averaging instead of max).
TEST(Heatmap, MaxPoolingKeepsStripesPeriodicAndSingleMismatches) {
  const std::size_t rows = 600, cols = 1024;
  std::vector<uint8_t> mask(rows * cols, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; c += 32) mask[r * cols + c] = 1;
  }
  mask[599 * cols + 1023] = 1;  // a lone corner element
  const HeatmapGrid g = downsample_max(heatmap_from_mask(rows, cols, mask), 256);
  EXPECT_EQ(g.row_step, 4u);  // 600 -> 300 -> 150 rows: factor 4, not 3
  EXPECT_EQ(g.col_step, 4u);
  ASSERT_EQ(g.rows, 150u);
  ASSERT_EQ(g.cols, 256u);
  EXPECT_EQ(g.mismatches, rows * cols / 32 + 1);  // element count survives pooling
  for (std::size_t r = 0; r < g.rows; ++r) {
    for (std::size_t c = 0; c < g.cols; ++c) {
      const bool want = c % 8 == 0 || (r == 149 && c == 255);
      ASSERT_EQ(g.at(r, c) != 0, want) << "cell (" << r << "," << c << ")";
    }
  }
  const HeatmapGrid same = downsample_max(heatmap_from_mask(rows, cols, mask), 1024);
  EXPECT_EQ(same.cols, cols);
  EXPECT_EQ(same.col_step, 1u);
}

// Guards against colours that cannot be told apart from matching cells, or a scale that runs
// the wrong way (more ULP must be darker).
TEST(Heatmap, ColoursAreDistinctFromMatchAndDarkenWithUlp) {
  const Rgb light = heatmap_mismatch_color(1, 1, 1 << 20, HeatmapColor::kLogUlp);
  const Rgb dark = heatmap_mismatch_color(1 << 20, 1, 1 << 20, HeatmapColor::kLogUlp);
  const Rgb mid = heatmap_mismatch_color(1 << 10, 1, 1 << 20, HeatmapColor::kLogUlp);
  const auto luma = [](Rgb c) { return 299 * c.r + 587 * c.g + 114 * c.b; };
  EXPECT_GT(luma(light), luma(mid));
  EXPECT_GT(luma(mid), luma(dark));
  for (uint64_t u : {uint64_t{1}, uint64_t{1000}, kNanUlpDistance}) {
    for (HeatmapColor m : {HeatmapColor::kLogUlp, HeatmapColor::kMismatch}) {
      EXPECT_NE(heatmap_mismatch_color(u, 1, kNanUlpDistance, m), kHeatmapMatchColor);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// PNG

// Bitwise CRC-32 (ISO-HDLC, as PNG specifies), written here so the check does not trust zlib's
// crc32 that the encoder used.
uint32_t crc32_reference(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char b : bytes) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint32_t be32(const std::string& s, std::size_t at) {
  return (uint32_t{static_cast<unsigned char>(s[at])} << 24) |
         (uint32_t{static_cast<unsigned char>(s[at + 1])} << 16) |
         (uint32_t{static_cast<unsigned char>(s[at + 2])} << 8) |
         uint32_t{static_cast<unsigned char>(s[at + 3])};
}

struct DecodedPng {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;  // filter bytes removed
  std::vector<std::string> chunk_types;
  std::vector<std::string> texts;  // "keyword=value"
  Rgb at(std::size_t x, std::size_t y) const {
    const uint8_t* p = &rgb[3 * (y * width + x)];
    return {p[0], p[1], p[2]};
  }
};

// Decodes what write_png writes (8-bit RGB, filter 0); ADD_FAILUREs on any structural error.
DecodedPng decode_png(const std::string& png) {
  DecodedPng d;
  if (png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) {
    ADD_FAILURE() << "bad PNG signature";
    return d;
  }
  std::string idat;
  std::size_t at = 8;
  while (at + 12 <= png.size()) {
    const uint32_t len = be32(png, at);
    if (at + 12 + len > png.size()) {
      ADD_FAILURE() << "chunk overruns the file at " << at;
      return d;
    }
    const std::string type = png.substr(at + 4, 4);
    const std::string data = png.substr(at + 8, len);
    EXPECT_EQ(be32(png, at + 8 + len), crc32_reference(type + data)) << "CRC of " << type;
    d.chunk_types.push_back(type);
    if (type == "IHDR") {
      EXPECT_EQ(len, 13u);
      d.width = be32(data, 0);
      d.height = be32(data, 4);
      EXPECT_EQ(data.substr(8), std::string("\x08\x02\x00\x00\x00", 5)) << "8-bit RGB expected";
    } else if (type == "IDAT") {
      idat += data;
    } else if (type == "tEXt") {
      const std::size_t nul = data.find('\0');
      d.texts.push_back(data.substr(0, nul) + "=" + data.substr(nul + 1));
    }
    at += 12 + len;
  }
  EXPECT_EQ(at, png.size()) << "trailing bytes";
  if (d.chunk_types.empty() || d.chunk_types.front() != "IHDR" || d.chunk_types.back() != "IEND") {
    ADD_FAILURE() << "PNG must start with IHDR and end with IEND";
    return d;
  }
  const std::size_t stride = std::size_t{d.width} * 3 + 1;
  std::vector<Bytef> raw(stride * d.height);
  uLongf raw_size = raw.size();
  const int rc =
      uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size());
  if (rc != Z_OK || raw_size != raw.size()) {
    ADD_FAILURE() << "IDAT does not inflate to height * (1 + 3 * width) bytes (zlib " << rc << ")";
    return d;
  }
  for (std::size_t y = 0; y < d.height; ++y) {
    EXPECT_EQ(raw[y * stride], 0) << "filter type of row " << y;
    d.rgb.insert(d.rgb.end(), raw.begin() + static_cast<std::ptrdiff_t>(y * stride + 1),
                 raw.begin() + static_cast<std::ptrdiff_t>((y + 1) * stride));
  }
  return d;
}

// Guards against a PNG that viewers reject (bad CRC, wrong IHDR, bad zlib stream) or that draws
// a stripe pattern in the wrong place: a mismatch every 32 columns must colour exactly pixel
// columns 0, 32, 64, ... of a 256-cell-wide output.
TEST(HeatmapPng, DecodesToTheStripePattern) {
  const std::size_t rows = 64, cols = 256;
  std::vector<uint8_t> mask(rows * cols, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; c += 32) mask[r * cols + c] = 1;
  }
  std::ostringstream s;
  write_heatmap_png(heatmap_from_mask(rows, cols, mask), {.title = "stripes"}, s);
  const DecodedPng png = decode_png(s.str());
  ASSERT_EQ(png.width, 256u);  // long side already 256: scale 1
  ASSERT_EQ(png.height, 64u);
  ASSERT_EQ(png.rgb.size(), 256u * 64 * 3);
  for (std::size_t y = 0; y < png.height; ++y) {
    for (std::size_t x = 0; x < png.width; ++x) {
      ASSERT_EQ(png.at(x, y) != kHeatmapMatchColor, x % 32 == 0)
          << "pixel (" << x << "," << y << ")";
    }
  }
  ASSERT_FALSE(png.texts.empty());
  EXPECT_EQ(png.texts[0], "Title=stripes");
}

// Guards against small outputs drawn at one pixel per element (invisible) or with cells not
// aligned to whole pixel blocks.
TEST(HeatmapPng, SmallOutputsAreScaledToWholePixelBlocks) {
  // 4 x 8: scale 32 -> 256 x 128; mismatch at (1, 5) with 9 ulp and (3, 0) with 1 ulp.
  std::vector<float> e(32, 1.0f), a = e;
  a[1 * 8 + 5] = std::bit_cast<float>(0x3f800009u);
  a[3 * 8 + 0] = std::bit_cast<float>(0x3f800001u);
  std::ostringstream s;
  write_heatmap_png(heatmap_from_fp32(4, 8, e, a), {}, s);
  const DecodedPng png = decode_png(s.str());
  ASSERT_EQ(png.width, 256u);
  ASSERT_EQ(png.height, 128u);
  const Rgb dark = heatmap_mismatch_color(9, 1, 9, HeatmapColor::kLogUlp);
  const Rgb light = heatmap_mismatch_color(1, 1, 9, HeatmapColor::kLogUlp);
  for (std::size_t y = 0; y < png.height; ++y) {
    for (std::size_t x = 0; x < png.width; ++x) {
      const std::size_t r = y / 32, c = x / 32;
      const Rgb want = r == 1 && c == 5 ? dark : r == 3 && c == 0 ? light : kHeatmapMatchColor;
      ASSERT_EQ(png.at(x, y), want) << "pixel (" << x << "," << y << ")";
    }
  }
  // A one-row output still gets a visible height.
  std::ostringstream line;
  write_heatmap_png(heatmap_from_mask(1, 256, std::vector<uint8_t>(256, 1)), {}, line);
  EXPECT_GE(decode_png(line.str()).height, 16u);
}

// Guards against a heatmap file silently not written when its path is unusable.
TEST(HeatmapPng, UnwritablePathThrowsNamingThePath) {
  TempDir d;
  const HeatmapGrid g = heatmap_from_mask(1, 1, std::vector<uint8_t>{1});
  const std::string bad = d.file("missing/heat.png");
  try {
    write_heatmap_png_file(g, {}, bad);
    FAIL() << "no exception for " << bad;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_heatmap_svg_file(g, {}, d.file("missing/heat.svg")), std::runtime_error);
  write_heatmap_png_file(g, {}, d.file("heat.png"));
  EXPECT_EQ(decode_png(read_file(d.file("heat.png"))).width, 256u);
}

// ---------------------------------------------------------------------------------------------
// SVG

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// Guards against an SVG that highlights the wrong number of cells, or that lacks the labels a
// person needs to read it (title with counts, axis names).
TEST(HeatmapSvg, OneHighlightedRectPerMismatchedCell) {
  const std::size_t rows = 64, cols = 256;
  std::vector<uint8_t> mask(rows * cols, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; c += 32) mask[r * cols + c] = 1;  // 8 per row
  }
  for (std::size_t c = 0; c < 16; ++c) mask[5 * cols + 128 + c] = 1;  // a 1 x 16 run
  const HeatmapGrid g = heatmap_from_mask(rows, cols, mask);
  std::ostringstream s;
  write_heatmap_svg(g, {.title = "gemm.exact <host> & more"}, s);
  const std::string svg = s.str();
  EXPECT_EQ(count(svg, "<rect class=\"m\""), rows * 8 + 15);  // (5, 128) is already a stripe
  EXPECT_NE(svg.find("n (output column)"), std::string::npos);
  EXPECT_NE(svg.find("m (row)"), std::string::npos);
  EXPECT_NE(svg.find("gemm.exact &lt;host&gt; &amp; more: 527 of 16384 elements differ"),
            std::string::npos)
      << svg.substr(0, 600);
  EXPECT_NE(svg.find(">128</text>"), std::string::npos) << "a tick at n = 128";
  if (!have_xmllint()) GTEST_SKIP() << "xmllint not installed: SVG well-formedness not checked";
  TempDir d;
  write_text(d.file("h.svg"), svg);
  EXPECT_EQ(run("xmllint --noout " + shell_quote(d.file("h.svg"))), 0);
}

// Guards against an SVG with a rect per element for big outputs (hundreds of MB): a 2048 x 2048
// output is drawn as at most 256 x 256 cells, labelled as pooled.
TEST(HeatmapSvg, LargeOutputsArePooled) {
  const std::size_t n = 2048;
  std::vector<uint8_t> mask(n * n, 0);
  for (std::size_t r = 0; r < n; r += 128) {
    for (std::size_t c = 0; c < n; ++c) mask[r * n + c] = 1;  // a row every 128: 16 rows
  }
  std::ostringstream s;
  write_heatmap_svg(heatmap_from_mask(n, n, mask), {.title = "big"}, s);
  const std::string svg = s.str();
  EXPECT_EQ(count(svg, "<rect class=\"m\""), 16u * 256);
  EXPECT_NE(svg.find("each cell is 8 x 8 elements, max-pooled"), std::string::npos);
  EXPECT_LT(svg.size(), 2u << 20);
}

}  // namespace
}  // namespace mxgate::report
