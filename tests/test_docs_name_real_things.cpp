// Covers what README.md and docs/*.md name in code spans: every repository path (`gpu/kernel.h`,
// `tests/`) exists, every qualified C++ name of ours (`impl::Contract`, `reference::encode`) is
// declared in its namespace's folder, and the README's list of built-in kernels is the kernel
// table (the list `mxgate impls` prints for builtin).
// Does not cover: names outside code spans, unqualified names, what a named thing is said to do,
// the facts that test_docs_match_code.cpp checks (bug classes, conventions, invariants).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/kernel.h"

namespace mxgate {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = MXGATE_SOURCE_DIR;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// README.md and every docs/*.md, with their repository-relative names.
std::vector<std::pair<std::string, std::string>> documents() {
  std::vector<std::pair<std::string, std::string>> out{
      {"README.md", read_text(kRoot / "README.md")}};
  for (const auto& e : fs::directory_iterator(kRoot / "docs"))
    if (e.path().extension() == ".md")
      out.emplace_back("docs/" + e.path().filename().string(), read_text(e.path()));
  return out;
}

std::vector<std::string> code_spans(const std::string& text) {
  std::vector<std::string> out;
  static const std::regex span("`([^`\n]+)`");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), span); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  return out;
}

// The top-level folders of the repository: a span whose first segment is one of them is a path.
std::set<std::string> top_folders() {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(kRoot))
    if (e.is_directory() && e.path().filename().string()[0] != '.')
      out.insert(e.path().filename().string());
  return out;
}

// Paths other projects' docs cite that begin like one of our folders: each is that project's.
const std::vector<std::string> kOtherProjects = {
    "python/triton/",          // triton-lang/triton
    "python/triton_kernels/",  // triton-lang/triton
    "tests/cpp/",              // NVIDIA/TransformerEngine
    "include/ck_tile/",        // ROCm/composable_kernel
    "common/math.cuh",         // deepseek-ai/DeepGEMM
    "docs/reference/",         // ROCm/hipBLASLt
};

// A built program's path (`bench/bench_x`, `tools/mxgate/mxgate`): its folder's CMakeLists.txt
// names it.
bool is_built_program(const std::string& span) {
  const fs::path p = kRoot / span;
  const fs::path lists = p.parent_path() / "CMakeLists.txt";
  return fs::exists(lists) && read_text(lists).find(p.filename().string()) != std::string::npos;
}

// Guards against a doc naming a file that moved or never existed (docs/architecture.md once
// cited gpu/contract.h after it was gone): every span shaped like `folder/name` whose folder is
// one of the repository's must exist (a path of the Python package may omit its `python/`, a
// header of the ABI its `include/`). Placeholders (`gpu/kernels/NAME.hip`), build outputs
// (`build/...`, `*.so`) and other projects' paths are not ours to check.
TEST(DocsNameRealThings, EveryPathExists) {
  const std::set<std::string> folders = top_folders();
  static const std::regex path_shape(R"(^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/?$)");
  static const std::regex placeholder("NAME|NN|PROPERTY|IMPL|TARGET|SPEC|MODEL|FILE");
  int checked = 0;
  for (const auto& [doc, text] : documents()) {
    for (std::string span : code_spans(text)) {
      span = span.substr(0, span.find(':'));  // `file.cpp:123`, `file.h::name`
      if (span.find('/') == std::string::npos || !std::regex_match(span, path_shape)) continue;
      const std::string first = span.substr(0, span.find('/'));
      if (!folders.count(first) && first != "mxgate") continue;  // torch/..., e4m3fn/...
      if (first == "build" || span.ends_with(".so") || std::regex_search(span, placeholder))
        continue;
      if (std::any_of(kOtherProjects.begin(), kOtherProjects.end(),
                      [&](const std::string& o) { return span.starts_with(o); }))
        continue;
      ++checked;
      const bool found = fs::exists(kRoot / span) || fs::exists(kRoot / "python" / span) ||
                         fs::exists(kRoot / "include" / span) || is_built_program(span);
      EXPECT_TRUE(found) << doc << " names `" << span << "`, which is not in the repository";
    }
  }
  EXPECT_GT(checked, 100) << "the scan found too few paths to be scanning the docs";
}

// The folder that holds a namespace's code (mxgate::X lives in X/), or "" for another library's.
std::string folder_of(const std::string& ns) {
  static const std::set<std::string> ours = {"reference", "impl",       "gpu",      "dispatch",
                                             "model",     "properties", "verbs",    "report",
                                             "probe",     "capi",       "contract", "common"};
  return ours.count(ns) ? ns : "";
}

// Whether a folder's sources declare `name`: a type (struct, class, enum, using) when it starts
// with a capital, otherwise a function or variable.
bool declared_in(const std::string& folder, const std::string& name) {
  const fs::path dir = kRoot / folder;
  if (!fs::exists(dir)) return false;
  const bool type = std::isupper(static_cast<unsigned char>(name[0]));
  const std::regex decl(type ? "(struct|class|enum|enum class|using)\\s+(\\w+::)*" + name + "\\b"
                             : "\\b" + name + "\\s*(\\(|=|\\{|;)");
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext != ".h" && ext != ".cpp" && ext != ".hip" && ext != ".cu") continue;
    const std::string text = read_text(e.path());
    if (std::regex_search(text, decl)) return true;
  }
  return false;
}

// Guards against docs citing types or functions that were renamed or never existed
// (`gpu::Contract`, `AccumOrder`): a span `ns::Name` (optionally `mxgate::`-prefixed, with
// `::member` or `(...)` after) for one of our namespaces must name something declared in ns/.
TEST(DocsNameRealThings, EveryQualifiedNameIsDeclared) {
  static const std::regex qualified(
      R"(^(?:mxgate::)?([a-z_]+)::([A-Za-z_][A-Za-z0-9_]*)(?:::[A-Za-z_][A-Za-z0-9_]*)*(?:\(.*\))?$)");
  int checked = 0;
  for (const auto& [doc, text] : documents()) {
    for (const std::string& span : code_spans(text)) {
      std::smatch m;
      if (!std::regex_match(span, m, qualified)) continue;
      const std::string folder = folder_of(m[1]);
      if (folder.empty()) continue;  // std::, torch::, ...
      ++checked;
      EXPECT_TRUE(declared_in(folder, m[2])) << doc << " names `" << span << "`: no declaration of "
                                             << m[2] << " in " << folder << "/";
    }
  }
  EXPECT_GT(checked, 10) << "the scan found too few qualified names to be scanning the docs";
}

// Guards against a built-in kernel added to the table but missing from the README's list (the
// README once missed quantize_act1x128_ue8m0 and gemm_blockscale_ue8m0), or listed but gone.
TEST(DocsNameRealThings, ReadmeKernelListIsTheKernelTable) {
  const std::string readme = read_text(kRoot / "README.md");
  const auto begin = readme.find("Built-in kernels:");
  ASSERT_NE(begin, std::string::npos) << "README.md has no 'Built-in kernels:' list";
  const auto end = readme.find("its contract.", begin);
  ASSERT_NE(end, std::string::npos) << "README.md's kernel list has no end ('its contract.')";
  std::set<std::string> listed;
  for (const std::string& span : code_spans(readme.substr(begin, end - begin)))
    if (span != "mxgate impls") listed.insert(span);
  std::set<std::string> table;
  for (const gpu::KernelDef& k : gpu::all_kernels())
    if (k.family) table.insert(std::string(k.name));  // the harness's test kernels are no op
  EXPECT_EQ(listed, table);
}

}  // namespace
}  // namespace mxgate
