// Named options of the mxgate verbs: `--name value`, `--name=value`, flags, positionals. The CLI
// parses them from argv; the C API (capi/) builds them from name / value pairs, so both reach the
// same validation and the same error texts. Every problem is a UsageError (CLI exit code 2, C API
// MXGATE_ERROR_INPUT).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace mxgate::verbs {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  // One option as the C API passes it: a name without "--", and a value (none for a flag).
  using Named = std::pair<std::string, std::optional<std::string>>;

  // `options` take a value, `flags` do not. Unknown options are errors.
  Args(const std::vector<std::string>& argv, const std::set<std::string>& options,
       const std::set<std::string>& flags = {});
  // The same checks (unknown option, given twice, a flag with a value, an option without one)
  // and messages for named pairs; there are no positionals.
  Args(const std::vector<Named>& named, const std::set<std::string>& options,
       const std::set<std::string>& flags = {});
  std::optional<std::string> get(const std::string& name) const;
  std::string require(const std::string& name) const;
  bool flag(const std::string& name) const { return flags_.count(name) != 0; }
  const std::vector<std::string>& positionals() const { return positionals_; }
  // Integer option with range check; `fallback` when absent.
  long long integer(const std::string& name, long long fallback, long long lo, long long hi) const;

 private:
  void add(const std::string& name, const std::optional<std::string>& value,
           const std::set<std::string>& options, const std::set<std::string>& flags);

  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
  std::vector<std::string> positionals_;
};

// "0x1.cp+8", "448", "-inf", "nan" -> fp32 (decimal is rounded to nearest fp32 once).
float parse_value(const std::string& text);
// "0x7e" -> 0x7e; must fit `bits`.
uint32_t parse_code(const std::string& text, int bits);
// Throws "code SHOWN does not fit a BITS-bit format" unless `code` fits `bits` (parse_code's
// check, shared with the array form of decode).
void check_code_fits(uint64_t code, int bits, const std::string& shown);

}  // namespace mxgate::verbs
