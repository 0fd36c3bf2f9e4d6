// Command-line parsing for the mxgate verbs: `--name value`, `--name=value`, flags, positionals.
// Every problem becomes a UsageError, which main() reports with exit code 2.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace mxgate::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  // `options` take a value, `flags` do not. Unknown options are errors.
  Args(const std::vector<std::string>& argv, const std::set<std::string>& options,
       const std::set<std::string>& flags = {});
  std::optional<std::string> get(const std::string& name) const;
  std::string require(const std::string& name) const;
  bool flag(const std::string& name) const { return flags_.count(name) != 0; }
  const std::vector<std::string>& positionals() const { return positionals_; }
  // Integer option with range check; `fallback` when absent.
  long long integer(const std::string& name, long long fallback, long long lo, long long hi) const;

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
  std::vector<std::string> positionals_;
};

// "0x1.cp+8", "448", "-inf", "nan" -> fp32 (decimal is rounded to nearest fp32 once).
float parse_value(const std::string& text);
// "0x7e" -> 0x7e; must fit `bits`.
uint32_t parse_code(const std::string& text, int bits);

}  // namespace mxgate::cli
