// Covers the repository's citations (docs/README.md §2): every `docs/<file>.md §N` in a tracked
// file names a docs file and a numbered heading that exist, no tracked file cites notes that are
// not in the repository (research or design notes, the old note names, a bare `<name>.md §N`,
// project notes by name, project issue numbers), and none names an absolute path of a machine.
// The scanner runs on the whole tree and on planted bad lines (each rule must fire on its own
// line and stay quiet on the good ones), the file list comes from git or from a walk that finds
// the same files, and docs/README.md lists every docs file.
// Does not cover: whether public sources (URLs, upstream paths, issue numbers) exist, or a `§N`
// that follows a citation on the next line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/shell.h"

namespace mxgate {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = MXGATE_SOURCE_DIR;

// What docs/ holds: each file's numbered headings, and the files docs/README.md §1 lists.
struct DocIndex {
  std::map<std::string, std::set<std::string>> sections;  // "formats.md" -> {"1", "1.2", ...}
  std::set<std::string> listed;                           // names in the README's table
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// "## 3 Title", "### 3.2 Title": the number a citation uses.
std::set<std::string> numbered_headings(const std::string& text) {
  static const std::regex heading(R"(^#{1,6} (\d+(?:\.\d+)*) )");
  std::set<std::string> out;
  for (const std::string& line : lines_of(text)) {
    std::smatch m;
    if (std::regex_search(line, m, heading)) out.insert(m[1]);
  }
  return out;
}

DocIndex load_docs(const fs::path& root) {
  DocIndex d;
  for (const auto& e : fs::directory_iterator(root / "docs")) {
    if (e.path().extension() == ".md") {
      d.sections[e.path().filename().string()] = numbered_headings(read_file(e.path()));
    }
  }
  static const std::regex row(R"(^\| `([A-Za-z0-9_]+\.md)` \|)");
  for (const std::string& line : lines_of(read_file(root / "docs" / "README.md"))) {
    std::smatch m;
    if (std::regex_search(line, m, row)) d.listed.insert(m[1]);
  }
  return d;
}

struct Problem {
  std::string rule;  // "missing file", "missing section", "note", "machine path"
  std::string what;
};

// The `§N`, `§N.M` numbers that follow a citation at `at` (separated by ", ", "/", "-", " and ").
std::vector<std::string> sections_after(const std::string& line, std::size_t at) {
  static const std::string kSection = "§";
  std::vector<std::string> out;
  while (true) {
    std::size_t i = at;
    while (i < line.size() && i < at + 5 &&
           std::string(" ,;/-").find(line[i]) != std::string::npos) {
      ++i;
    }
    for (const char* word : {"and ", "or "}) {
      if (line.compare(i, std::char_traits<char>::length(word), word) == 0) {
        i += std::char_traits<char>::length(word);
      }
    }
    if (line.compare(i, kSection.size(), kSection) != 0) return out;
    i += kSection.size();
    std::size_t j = i;
    while (j < line.size() &&
           (std::isdigit(static_cast<unsigned char>(line[j])) || line[j] == '.')) {
      ++j;
    }
    std::string number = line.substr(i, j - i);
    while (!number.empty() && number.back() == '.') number.pop_back();
    if (number.empty()) return out;
    out.push_back(number);
    at = j;
  }
}

// Every rule of docs/README.md §2 applied to one line. `markdown`: the file is a .md file (its
// examples may put scratch files in the temp folder); `spells_out_rules`: docs/README.md, which
// names the forbidden forms.
std::vector<Problem> check_line(const DocIndex& docs, const std::string& line, bool markdown,
                                bool spells_out_rules) {
  std::vector<Problem> out;
  static const std::regex doc_ref(R"(\bdocs/([A-Za-z0-9_]+\.md))");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), doc_ref);
       it != std::sregex_iterator(); ++it) {
    const std::string file = (*it)[1];
    const std::vector<std::string> secs =
        sections_after(line, static_cast<std::size_t>(it->position() + it->length()));
    const auto found = docs.sections.find(file);
    if (found == docs.sections.end()) {
      if (!secs.empty() || docs.listed.count(file) == 0) {
        out.push_back({"missing file", "docs/" + file + (secs.empty() ? "" : " §" + secs[0])});
      }
      continue;
    }
    for (const std::string& s : secs) {
      if (found->second.count(s) == 0)
        out.push_back({"missing section", "docs/" + file + " §" + s});
    }
  }
  if (spells_out_rules) return out;
  static const std::vector<std::pair<std::regex, std::string>> notes = {
      {std::regex(R"(\b(research|design)/[A-Za-z0-9_.-]+\.(md|txt)\b)"),
       "a research or design note"},
      {std::regex(R"(\bARCHITECTURE\.md|\bBUG_CLASSE[S]\b)"), "an old note name"},
      {std::regex(R"(\b(origin|shapes|peers)\.md\b|\bdevice_prob[e]\b)"), "a project note"},
      {std::regex(R"(\b[Ii]ssues? \d+)"), "a project issue number"},
  };
  for (const auto& [re, why] : notes) {
    std::smatch m;
    if (std::regex_search(line, m, re)) out.push_back({"note", why + ": " + m.str()});
  }
  // `<name>.md §N` whose path does not start with docs/.
  static const std::regex md_section(R"(([A-Za-z0-9_./-]*[A-Za-z0-9_]+)\.md ?§)");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), md_section);
       it != std::sregex_iterator(); ++it) {
    const std::string path = (*it)[1];
    if (path.rfind("docs/", 0) != 0) out.push_back({"note", "not in docs/: " + it->str()});
  }
  static const std::regex machine(R"((^|[\s"'(=:`])/(work|home|root|Users)/)");
  static const std::regex tmp(R"((^|[\s"'(=:`])/tmp/)");
  std::smatch m;
  if (std::regex_search(line, m, machine)) out.push_back({"machine path", m.str()});
  if (!markdown && std::regex_search(line, m, tmp)) out.push_back({"machine path", m.str()});
  return out;
}

// .gitignore's folder entries ("/build/", "__pycache__/") as folder names.
std::set<std::string> ignored_folders(const fs::path& root) {
  std::set<std::string> out = {".git", "build"};
  for (std::string line : lines_of(read_file(root / ".gitignore"))) {
    if (line.empty() || line[0] == '#' || line.back() != '/') continue;
    line.pop_back();
    if (!line.empty() && line[0] == '/') line.erase(0, 1);
    if (line.find('/') == std::string::npos && line.find('*') == std::string::npos)
      out.insert(line);
  }
  return out;
}

std::vector<std::string> walked_files(const fs::path& root) {
  const std::set<std::string> skip = ignored_folders(root);
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->is_directory() && skip.count(it->path().filename().string()) != 0) {
      it.disable_recursion_pending();
    } else if (it->is_regular_file()) {
      out.push_back(fs::relative(it->path(), root).generic_string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Tracked files plus untracked ones git does not ignore, or nullopt without git.
std::optional<std::vector<std::string>> git_files(const fs::path& root) {
  if (!fs::exists(root / ".git")) return std::nullopt;
  const test_support::ShellResult r =
      test_support::run_shell("git -C " + test_support::shell_quote(root.string()) +
                              " ls-files --cached --others --exclude-standard 2>/dev/null");
  if (r.exit_code != 0) return std::nullopt;
  std::vector<std::string> out;
  for (const std::string& f : lines_of(r.out)) {
    if (!f.empty() && fs::is_regular_file(root / f)) out.push_back(f);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> files_to_scan(const fs::path& root) {
  if (auto g = git_files(root)) return *g;
  return walked_files(root);
}

bool is_text(const std::string& content) { return content.find('\0') == std::string::npos; }

// Guards against a citation of a docs file or section that does not exist, a reference to notes
// outside the repository, or a machine path anywhere in the tree.
TEST(Citations, EveryFileCitesOnlyWhatExists) {
  const DocIndex docs = load_docs(kRoot);
  ASSERT_FALSE(docs.sections.empty());
  const std::vector<std::string> files = files_to_scan(kRoot);
  ASSERT_GT(files.size(), 100u);
  std::size_t scanned = 0;
  for (const std::string& f : files) {
    const std::string content = read_file(kRoot / f);
    if (!is_text(content)) continue;
    ++scanned;
    const bool markdown = fs::path(f).extension() == ".md";
    int n = 0;
    for (const std::string& line : lines_of(content)) {
      ++n;
      for (const Problem& p : check_line(docs, line, markdown, f == "docs/README.md")) {
        ADD_FAILURE() << f << ":" << n << ": " << p.rule << ": " << p.what << "\n  " << line;
      }
    }
  }
  EXPECT_GT(scanned, 100u);
}

// The forbidden forms, assembled at run time so that this file does not contain them itself.
std::string joined(std::initializer_list<const char*> parts) {
  std::string s;
  for (const char* p : parts) s += p;
  return s;
}

struct Planted {
  const char* name;
  std::string line;
  const char* rule;  // the rule that must fire; "" for a good line
  bool markdown = false;
};

// Guards against a scanner that can never fail: each bad line fires exactly its rule, each good
// line none, on a fixed docs index (formats.md with sections 1, 1.2 and 6; later.md listed but
// absent).
TEST(Citations, PlantedLinesFireTheirRule) {
  DocIndex docs;
  docs.sections["formats.md"] = {"1", "1.2", "6"};
  docs.listed = {"formats.md", "later.md"};
  const std::string d = joined({"do", "cs/"});
  const std::string sec = " " + joined({"§"});
  const std::vector<Planted> cases = {
      {"known section", "// " + d + "formats.md" + sec + "1.2", ""},
      {"several sections",
       "// (" + d + "formats.md" + sec + "1," + sec + "1.2 and" + sec + "6 item 4)", ""},
      {"file without section", "// " + d + "formats.md", ""},
      {"listed, not landed", "// " + d + "later.md", ""},
      {"public sources", "// OCP MX v1.0" + sec + "6.3, vLLM PR #56433, triton issue #310", ""},
      {"system path", "cmake /usr/lib/x86_64-linux-gnu/cmake/hip", ""},
      {"tmp in markdown", "mxgate repro " + joined({"/t", "mp/z9.case"}), "", true},
      {"missing section", "// " + d + "formats.md" + sec + "7", "missing section"},
      {"missing second section", "// " + d + "formats.md" + sec + "1," + sec + "2.9",
       "missing section"},
      {"missing file", "// " + d + "nosuch.md" + sec + "1", "missing file"},
      {"unlisted file", "// " + d + "nosuch.md", "missing file"},
      {"section of a file not landed", "// " + d + "later.md" + sec + "1", "missing file"},
      {"research note", "// " + joined({"rese", "arch/formats.md"}), "note"},
      {"design note", "// " + joined({"des", "ign/x.md"}), "note"},
      {"old note name", "// " + joined({"BUG_CL", "ASSES.md"}) + " table", "note"},
      {"old architecture", "// " + joined({"ARCHI", "TECTURE.md"}), "note"},
      {"bare md section", "// formats.md" + sec + "1", "note"},
      {"project note", "// " + joined({"ori", "gin.md"}), "note"},
      {"probe file", "// " + joined({"device", "_probe.txt"}), "note"},
      {"project issue", "// (" + joined({"iss", "ue 6"}) + ")", "note"},
      {"work path", "// " + joined({"/wo", "rk/shared/x"}), "machine path"},
      {"home path", "path = \"" + joined({"/ho", "me/me/x"}) + "\"", "machine path"},
      {"root path", "cd " + joined({"/ro", "ot/x"}), "machine path"},
      {"tmp in code", "std::string p = \"" + joined({"/t", "mp/out"}) + "\";", "machine path"},
  };
  for (const Planted& c : cases) {
    const std::vector<Problem> got = check_line(docs, c.line, c.markdown, false);
    if (std::string(c.rule).empty()) {
      EXPECT_TRUE(got.empty()) << c.name << ": " << c.line << "\n  fired: " << got[0].rule << " "
                               << got[0].what;
    } else {
      ASSERT_EQ(got.size(), 1u) << c.name << ": " << c.line;
      EXPECT_EQ(got[0].rule, c.rule) << c.name << ": " << c.line << " (" << got[0].what << ")";
    }
  }
  // docs/README.md spells the forbidden forms out: only the docs rules apply there.
  EXPECT_TRUE(check_line(docs, "starts with " + joined({"/wo", "rk/"}), true, true).empty());
  EXPECT_EQ(check_line(docs, "// " + d + "formats.md" + sec + "9", true, true).size(), 1u);
}

// Guards against the index of the docs falling behind: docs/README.md §1 lists every docs file.
TEST(Citations, DocsReadmeListsEveryDocsFile) {
  const DocIndex docs = load_docs(kRoot);
  for (const auto& [file, sections] : docs.sections) {
    if (file == "README.md") continue;
    EXPECT_EQ(docs.listed.count(file), 1u) << "docs/" << file << " is not in docs/README.md §1";
    EXPECT_FALSE(sections.empty()) << "docs/" << file << " has no numbered heading";
  }
}

// Guards the fallback for a tree without git: the walk sees every file git tracks.
TEST(Citations, WalkFindsEveryTrackedFile) {
  const auto tracked = git_files(kRoot);
  if (!tracked) GTEST_SKIP() << "no git checkout here: the walk is the only file list";
  const std::vector<std::string> walked = walked_files(kRoot);
  for (const std::string& f : *tracked) {
    EXPECT_TRUE(std::binary_search(walked.begin(), walked.end(), f)) << f;
  }
}

}  // namespace
}  // namespace mxgate
