// Covers the agreement of the CLI's help with the README and with the parser, on the built tool
// (MXGATE_CLI): the README's CLI table has exactly one row per verb of `mxgate --help`, its first
// cell is that verb's usage line as `mxgate VERB --help` prints it, and every option a usage line
// names is one the verb's parser accepts. The verb table is tools/mxgate/main.cpp; adding a verb
// there without its README row (or the reverse) fails here, with the row to paste.
// Does not cover: the prose of each verb's help, options a parser accepts that its usage line
// omits (a parser's option set is not observable from outside).
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_built.h"
#include "tests/shell.h"

namespace mxgate {
namespace {

test_support::ShellResult mxgate(const std::string& args) {
  return test_support::run_shell("env -u MXGATE_FAULTS " + test_support::shell_quote(MXGATE_CLI) +
                                 " " + args + " 2>&1");
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string verb_of(const std::string& usage) { return usage.substr(0, usage.find(' ')); }

// Verb -> usage line (without "mxgate "), from the verb list of `mxgate --help`.
std::map<std::string, std::string> help_verbs() {
  const test_support::ShellResult r = mxgate("--help");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::map<std::string, std::string> out;
  bool in_list = false;
  for (const std::string& line : lines_of(r.out)) {
    if (line == "verbs:") {
      in_list = true;
    } else if (in_list && line.rfind("  ", 0) == 0) {
      const std::string usage = line.substr(2);
      EXPECT_TRUE(out.emplace(verb_of(usage), usage).second) << "verb listed twice: " << usage;
    } else if (in_list) {
      break;
    }
  }
  return out;
}

// Verb -> usage line of each row of the README's CLI table ("| `mxgate USAGE` | ... |", with
// `\|` for a literal bar).
std::map<std::string, std::vector<std::string>> readme_rows() {
  std::ifstream in(std::string(MXGATE_SOURCE_DIR) + "/README.md");
  std::map<std::string, std::vector<std::string>> out;
  bool in_section = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## CLI reference";
    if (!in_section || line.rfind("| `mxgate ", 0) != 0) continue;
    const std::size_t end = line.find("` |");
    EXPECT_NE(end, std::string::npos) << line;
    std::string usage =
        line.substr(std::string("| `mxgate ").size(), end - std::string("| `mxgate ").size());
    for (std::size_t at; (at = usage.find("\\|")) != std::string::npos;) usage.replace(at, 2, "|");
    out[verb_of(usage)].push_back(usage);
  }
  return out;
}

std::string readme_row(const std::string& usage) {
  std::string escaped;
  for (char c : usage) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
  return "| `mxgate " + escaped + "` | ... |";
}

using CliHelp = test_support::CliBuilt;

// Guards against a README that documents a verb the tool does not have, misses one it has, or
// shows options the help does not (or the reverse): the two must be the same usage line.
TEST_F(CliHelp, ReadmeRowPerVerbIsItsUsageLine) {
  const std::map<std::string, std::string> help = help_verbs();
  ASSERT_GE(help.size(), 13u);
  const std::map<std::string, std::vector<std::string>> readme = readme_rows();
  for (const auto& [verb, usage] : help) {
    const auto it = readme.find(verb);
    if (it == readme.end()) {
      ADD_FAILURE() << "README.md has no CLI row for `" << verb << "`; add\n" << readme_row(usage);
      continue;
    }
    ASSERT_EQ(it->second.size(), 1u)
        << "README.md has " << it->second.size() << " rows for " << verb;
    EXPECT_EQ(it->second[0], usage) << "README.md row of `" << verb << "` differs; it must be\n"
                                    << readme_row(usage);
  }
  for (const auto& [verb, rows] : readme) {
    EXPECT_EQ(help.count(verb), 1u) << "README.md documents `" << verb << "`, the tool has none";
  }
}

// Guards against `mxgate VERB --help` showing another usage line than the verb list.
TEST_F(CliHelp, VerbHelpStartsWithItsUsageLine) {
  for (const auto& [verb, usage] : help_verbs()) {
    const test_support::ShellResult r = mxgate(verb + " --help");
    EXPECT_EQ(r.exit_code, 0) << verb << "\n" << r.out;
    EXPECT_EQ(lines_of(r.out).at(0), "usage: mxgate " + usage) << verb;
  }
}

// Guards against help that names an option the verb rejects as unknown. Each option is passed
// as --NAME=1 followed by an unknown option, so the parser stops (exit 2) before any work: an
// accepted --NAME gets past it (or, for a flag, is refused for taking a value).
TEST_F(CliHelp, EveryOptionOfAUsageLineIsAccepted) {
  static const std::regex option(R"(--[a-z][a-z0-9-]*)");
  std::size_t probed = 0;
  for (const auto& [verb, usage] : help_verbs()) {
    std::set<std::string> options;
    for (auto it = std::sregex_iterator(usage.begin(), usage.end(), option);
         it != std::sregex_iterator(); ++it) {
      options.insert(it->str());
    }
    for (const std::string& opt : options) {
      const test_support::ShellResult r = mxgate(verb + " " + opt + "=1 --zz-not-an-option");
      ++probed;
      EXPECT_EQ(r.exit_code, 2) << verb << " " << opt << "\n" << r.out;
      EXPECT_EQ(r.out.find("unknown option " + opt + "\n"), std::string::npos)
          << verb << " rejects " << opt << ", which its usage line names:\n"
          << r.out;
      const bool reached_next =
          r.out.find("unknown option --zz-not-an-option") != std::string::npos;
      const bool is_flag = r.out.find(opt + " takes no value") != std::string::npos;
      EXPECT_TRUE(reached_next || is_flag) << verb << " " << opt << "\n" << r.out;
    }
  }
  EXPECT_GT(probed, 40u);
}

}  // namespace
}  // namespace mxgate
