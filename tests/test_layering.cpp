// Covers the layering of docs/architecture.md §3.1 as the sources state it: every `#include "..."`
// of a layer names only the layers below it (reference/ and common/ nothing but themselves;
// contract/ (contracts and calls as data) only include/ and common/; gpu/kernels/ no reference/,
// except the host side of the device cast sweep, whose .hip still includes none; gpu/ no impl/;
// impl/ (the implementation model) nothing above gpu/ and reference/; probe/ only
// reference/ and common/; verbs/ only reference/, probe/, report/ and common/; capi/ only verbs/,
// reference/ and, for mxgate_api_check, properties/, impl/, gpu/ and report/; properties/ may
// include report/ (which sits on reference/ alone); model/ (the decision model) only common/, and
// nothing below properties/ includes model/; plugins/ and include/ nothing of mxgate but the C
// ABI headers; no layer includes one above it), and the reference library links nothing but the
// standard library's threads (no Eigen: only bench/ uses it).
// Does not cover: what the code does with what it includes, folders the table does not name
// (tests/, bench/, python/).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace mxgate {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = MXGATE_SOURCE_DIR;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Folder (recursive) -> the include roots it must not use. A root is the first path part of an
// include ("reference/x.h" -> "reference"); gpu/kernels is named apart from gpu.
const std::map<std::string, std::set<std::string>>& forbidden() {
  // The top layers, which nothing of the library includes (verbs/ only tools/ and capi/ may, the
  // accumulator probe only verbs/ and tools/).
  static const std::set<std::string> kTop = {"verbs", "capi",  "tools", "fuzz",
                                             "tests", "bench", "probe"};
  auto with_above = [](std::set<std::string> roots) {
    roots.insert(kTop.begin(), kTop.end());
    return roots;
  };
  static const std::map<std::string, std::set<std::string>> rules = {
      {"common", with_above({"contract", "reference", "gpu", "impl", "dispatch", "model",
                             "properties", "report", "plugins"})},
      // contract/ mirrors the C ABI beside it: include/ and common/ only.
      {"contract", with_above({"reference", "gpu", "impl", "dispatch", "model", "properties",
                               "report", "plugins"})},
      {"reference", with_above({"contract", "gpu", "impl", "dispatch", "model", "properties",
                                "report", "plugins"})},
      {"gpu/kernels", with_above({"contract", "reference", "impl", "dispatch", "model",
                                  "properties", "report", "plugins"})},
      // The device cast sweep checks a plugin's op against the reference's run tables: its host
      // side (expected_runs.cpp) builds them from reference/; its .hip includes none of it
      // (kDeviceSourceRoots).
      {"gpu/kernels/cast_sweep",
       with_above({"dispatch", "model", "properties", "report", "plugins"})},
      // gpu/ (the kernel table) declares contracts with contract/; impl/ (the built-in
      // implementation, the harness, plugin loading) sits above gpu/.
      {"gpu", with_above({"impl", "dispatch", "model", "properties", "report", "plugins"})},
      {"impl", with_above({"dispatch", "model", "properties", "report", "plugins"})},
      // dispatch/ and the decision model it is checked against never see each other
      // (docs/dispatch_model.md §1): only properties/ (the glue), fuzz/ and tests/ hold both.
      {"dispatch", with_above({"model", "properties", "report", "plugins"})},
      {"model", with_above({"contract", "reference", "gpu", "impl", "dispatch", "properties",
                            "report", "plugins"})},
      // properties/ renders a run's result with report/'s JSON writer (run_report.h).
      {"properties", with_above({"plugins"})},
      {"report",
       with_above({"contract", "gpu", "impl", "dispatch", "model", "properties", "plugins"})},
      // The accumulator probe (docs/accumulators.md §7) measures through a callable: the
      // reference's models and formats only.
      {"probe",
       {"contract", "gpu", "impl", "dispatch", "model", "properties", "report", "plugins", "verbs",
        "capi", "tools", "fuzz", "tests", "bench"}},
      {"verbs",
       {"contract", "gpu", "impl", "dispatch", "model", "properties", "plugins", "capi", "tools",
        "fuzz", "tests", "bench"}},
      // capi/ has two parts: verb_calls.cpp runs verbs/ for mxgate_api_run; property_check.cpp
      // runs the property suites for mxgate_api_check: properties/, impl/ and the host backend
      // of gpu/, above which nothing of the library sits.
      {"capi", {"dispatch", "model", "plugins", "probe", "tools", "fuzz", "tests", "bench"}},
      {"tools", {"capi", "plugins", "fuzz", "tests", "bench"}},
      // Implementations under test and the public C headers share no code with mxgate: a plugin
      // sees only include/mxgate/plugin.h ("mxgate/plugin.h"), the headers nothing.
      {"plugins", with_above({"common", "contract", "reference", "gpu", "impl", "dispatch", "model",
                              "properties", "report"})},
      {"include", with_above({"common", "contract", "reference", "gpu", "impl", "dispatch", "model",
                              "properties", "report", "plugins"})},
  };
  return rules;
}

// What every device source (.hip) under gpu/kernels/ must not include, whatever its folder: the
// kernels keep their own bit-level codecs (gpu/kernels/bits.h).
const std::set<std::string> kDeviceSourceRoots = {"reference"};

// The rule of the most specific folder containing `rel` (gpu/kernels before gpu).
const std::set<std::string>* rule_for(const std::string& rel) {
  const std::set<std::string>* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& [folder, roots] : forbidden()) {
    if (rel.rfind(folder + "/", 0) == 0 && folder.size() > best_len) {
      best = &roots;
      best_len = folder.size();
    }
  }
  return best;
}

// Guards against a layer reaching up (a reference file including a kernel, a kernel including
// the reference it is checked against): the independence the verdicts rely on.
TEST(Layering, NoLayerIncludesALayerAboveIt) {
  static const std::regex include(R"(^\s*#\s*include\s*"([^"/]+)/([^"]*)\")");
  std::size_t checked = 0;
  for (const auto& e : fs::recursive_directory_iterator(kRoot)) {
    const std::string rel = fs::relative(e.path(), kRoot).generic_string();
    if (rel.rfind("build", 0) == 0 || rel.rfind(".git", 0) == 0 || !e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    if (ext != ".h" && ext != ".cpp" && ext != ".hip" && ext != ".cu") continue;
    const std::set<std::string>* rule = rule_for(rel);
    if (rule == nullptr) continue;
    const bool device_source = ext == ".hip" && rel.rfind("gpu/kernels/", 0) == 0;
    ++checked;
    std::istringstream in(read_file(e.path()));
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      std::string root = m[1];
      if (root == "gpu" && std::string(m[2]).rfind("kernels/", 0) == 0) root = "gpu/kernels";
      EXPECT_TRUE(rule->count(m[1]) == 0 && rule->count(root) == 0)
          << rel << ":" << n << " includes " << m[1] << "/" << m[2];
      EXPECT_FALSE(device_source && kDeviceSourceRoots.count(m[1]) != 0)
          << rel << ":" << n << " (device code) includes " << m[1] << "/" << m[2];
    }
  }
  EXPECT_GT(checked, 100u);
}

// Guards against the decision model losing its independence (docs/dispatch_model.md §1): a
// model that included dispatch/ (or gpu/, reference/) could copy the logic it checks, and a
// dispatch/ that included model/ could ask the oracle for its answers. The rules say so, and
// every source of model/ is held to them.
TEST(Layering, DecisionModelAndDispatchNeverIncludeEachOther) {
  const std::set<std::string>* model_rule = rule_for("model/decision_model.cpp");
  ASSERT_NE(model_rule, nullptr);
  for (const char* root : {"dispatch", "gpu", "reference", "properties"}) {
    EXPECT_EQ(model_rule->count(root), 1u) << "model/ may include " << root << "/";
  }
  EXPECT_EQ(model_rule->count("common"), 0u) << "model/ reads the block sizes of common/blocks.h";
  for (const char* folder : {"dispatch/layer.cpp", "gpu/backend.h", "reference/format.h"}) {
    const std::set<std::string>* rule = rule_for(folder);
    ASSERT_NE(rule, nullptr) << folder;
    EXPECT_EQ(rule->count("model"), 1u) << folder << " may include model/";
  }
  static const std::regex include(R"(^\s*#\s*include\s*"([^"/]+)/)");
  std::size_t sources = 0;
  for (const auto& e : fs::directory_iterator(kRoot / "model")) {
    const std::string ext = e.path().extension().string();
    if (ext != ".h" && ext != ".cpp") continue;
    ++sources;
    std::istringstream in(read_file(e.path()));
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      EXPECT_TRUE(m[1] == "model" || m[1] == "common")
          << "model/" << e.path().filename().string() << " includes " << m[1] << "/";
    }
  }
  EXPECT_GE(sources, 5u);
}

// Guards against the upward arrow coming back (gpu/kernel.h once included impl/contract.h while
// impl/ includes gpu/): gpu/ may not include impl/, contract/ sits below both, and no layer
// contract/ sits on (common/, reference/, include/) includes it.
TEST(Layering, ContractSitsBelowGpuAndImpl) {
  const std::set<std::string>* gpu = rule_for("gpu/kernel.h");
  const std::set<std::string>* contract = rule_for("contract/contract.h");
  const std::set<std::string>* impl = rule_for("impl/harness.h");
  ASSERT_NE(gpu, nullptr);
  ASSERT_NE(contract, nullptr);
  ASSERT_NE(impl, nullptr);
  EXPECT_EQ(gpu->count("impl"), 1u) << "gpu/ may include impl/";
  EXPECT_EQ(gpu->count("contract"), 0u) << "gpu/ may not include contract/";
  EXPECT_EQ(impl->count("contract"), 0u) << "impl/ may not include contract/";
  for (const char* root : {"gpu", "impl", "reference", "properties"}) {
    EXPECT_EQ(contract->count(root), 1u) << "contract/ may include " << root << "/";
  }
  for (const char* below : {"common/blocks.h", "reference/format.h", "include/mxgate/api.h",
                            "gpu/kernels/bits.h", "model/decision_model.cpp"}) {
    const std::set<std::string>* rule = rule_for(below);
    ASSERT_NE(rule, nullptr) << below;
    EXPECT_EQ(rule->count("contract"), 1u) << below << " may include contract/";
  }
}

// Guards against the reference growing a dependency (its CMake file once claimed Eigen): the
// library links only Threads, and no reference source includes a third-party header.
TEST(Layering, ReferenceLinksNothingButThreads) {
  const std::string cmake = read_file(kRoot / "reference" / "CMakeLists.txt");
  static const std::regex link(R"(target_link_libraries\(mxgate_reference ([^)]*)\))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(cmake, m, link)) << cmake;
  EXPECT_EQ(std::string(m[1]), "PUBLIC Threads::Threads");
  EXPECT_EQ(cmake.find("find_package"), std::string::npos) << cmake;
  static const std::regex third_party(R"(#\s*include\s*<(Eigen|benchmark|gtest|rapidcheck)[/>.])");
  for (const auto& e : fs::directory_iterator(kRoot / "reference")) {
    const std::string text = read_file(e.path());
    EXPECT_FALSE(std::regex_search(text, third_party)) << e.path().filename();
  }
}

}  // namespace
}  // namespace mxgate
