// Covers report/'s gate reports: the JSON writer (escaping, UTF-8, numbers, misuse), the gate
// report as JSON (parsed back by python3's json module, every field checked) and as JUnit XML
// (validated by xmllint against report/junit.xsd, attribute values read back through XPath). The
// mismatch heatmaps are test_heatmap.cpp.
// Does NOT cover: how `mxgate gate` fills the report (tools/mxgate), or CI systems' own JUnit
// readers beyond our schema.
// Needs /usr/bin/python3 (a bootstrap package); the schema tests skip when xmllint is absent.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reference/verdict.h"
#include "report/gate_report.h"
#include "report/json_writer.h"
#include "report/xml_escape.h"
#include "tests/report_files.h"
#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate::report {
namespace {

using test_support::TempDir;

const std::string kPython = "/usr/bin/python3";
const std::string kSchema = std::string(MXGATE_SOURCE_DIR) + "/report/junit.xsd";

using test_support::shell_quote;

// stdout of a shell command; stderr goes to the test log.
std::string capture(const std::string& command, int* exit_code = nullptr) {
  test_support::ShellResult r = test_support::run_shell(command);
  if (exit_code) *exit_code = r.exit_code;
  return std::move(r.out);
}

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

}  // namespace
}  // namespace mxgate::report
