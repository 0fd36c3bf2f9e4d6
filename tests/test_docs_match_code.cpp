// Covers the places where docs/ and code state the same facts as two copies: the bug-class table
// of docs/bug_classes.md §2 against the zoo (one row per fault, its id, its name, the zoo's
// minimal-case words and the property that catches it), the convention sections of
// docs/conventions.md §2 against reference/convention.cpp (each convention's source cites its
// own section), and the invariant sections of docs/invariants.md §2 (I1-I9).
// Does not cover: the prose of the docs, citations in general (test_citations.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dispatch/faults.h"
#include "properties/zoo.h"
#include "reference/convention.h"

namespace mxgate {
namespace {

std::vector<std::string> doc_lines(const std::string& name) {
  std::ifstream in(std::string(MXGATE_SOURCE_DIR) + "/docs/" + name);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  const auto e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The cells of a Markdown table row "| a | b |" (no escaped bars in these tables).
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::stringstream ss(row.substr(1));
  for (std::string cell; std::getline(ss, cell, '|');) out.push_back(trim(cell));
  return out;
}

// Guards against the bug-class table and the zoo drifting apart: a fault without its row, a row
// naming another fault, or a minimal case in the docs that the zoo's predicate does not check.
TEST(DocsMatchCode, BugClassTableIsTheZoo) {
  std::map<std::string, std::vector<std::string>> rows;  // "Z3" -> cells
  for (const std::string& line : doc_lines("bug_classes.md")) {
    if (line.rfind("| Z", 0) != 0) continue;
    const std::vector<std::string> c = cells(line);
    ASSERT_EQ(c.size(), 7u) << line;
    EXPECT_TRUE(rows.emplace(c[0], c).second) << "two rows for " << c[0];
  }
  ASSERT_EQ(rows.size(), dispatch::all_faults().size());
  for (dispatch::Fault f : dispatch::all_faults()) {
    const std::string id = "Z" + std::to_string(dispatch::fault_number(f));  // "z31_..." is Z31
    const auto it = rows.find(id);
    ASSERT_NE(it, rows.end()) << id << " has no row in docs/bug_classes.md §2";
    const std::vector<std::string>& c = it->second;
    const properties::ZooClass& z = properties::zoo_class(f);
    EXPECT_EQ(c[1], dispatch::to_string(f)) << id;
    EXPECT_EQ(c[5], z.minimal) << id << ": the docs' minimal case is not the zoo's";
    EXPECT_EQ(c[6].substr(0, z.property.size()), z.property) << id << ": caught by";
  }
}

// Guards against a convention whose source points at another convention's section, or at a
// section that does not describe it.
TEST(DocsMatchCode, EveryConventionCitesItsOwnSection) {
  std::map<std::string, std::string> headings;  // "2.7" -> "torch_2_11"
  static const std::regex heading(R"(^### (2\.\d+) (\S+)$)");
  for (const std::string& line : doc_lines("conventions.md")) {
    std::smatch m;
    if (std::regex_match(line, m, heading)) headings[m[1]] = m[2];
  }
  EXPECT_EQ(headings.size(), all_conventions().size());
  static const std::regex cite(R"(docs/conventions\.md §(2\.\d+)$)");
  std::set<std::string> used;
  for (const Convention& c : all_conventions()) {
    const std::string source(c.source);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(source, m, cite)) << c.name << ": " << source;
    EXPECT_EQ(headings[m[1]], c.name) << c.name << " cites §" << m[1];
    EXPECT_TRUE(used.insert(m[1]).second) << "§" << m[1] << " cited twice";
  }
}

// Guards against an invariant id used in failure messages ("I3: ...") that docs/invariants.md
// does not define.
TEST(DocsMatchCode, InvariantsI1ToI9AreDefined) {
  std::set<std::string> defined;
  static const std::regex heading(R"(^### 2\.(\d) I(\d): )");
  for (const std::string& line : doc_lines("invariants.md")) {
    std::smatch m;
    if (std::regex_search(line, m, heading)) {
      EXPECT_EQ(m[1], m[2]) << line;
      defined.insert(m[2]);
    }
  }
  for (const char* id : {"1", "2", "3", "4", "5", "6", "7", "8", "9"}) {
    EXPECT_EQ(defined.count(id), 1u) << "I" << id << " has no section in docs/invariants.md §2";
  }
}

}  // namespace
}  // namespace mxgate
