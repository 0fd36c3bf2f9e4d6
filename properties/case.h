// One test case of a property: its name and a flat list of named fields ("m=2 n=1 k=256
// kernel=gemm_blockscale values=ints seed=7"). The generators build cases (RapidCheck shrinks
// them field by field); the checkers read them; the same text is the counterexample a failure
// prints and the body of a regression file, so a shrunk case replays without its generator.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mxgate::properties {

// A field that is missing or does not parse; the message names the field and the case.
class CaseError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class Case {
 public:
  Case() = default;
  explicit Case(std::string property) : property_(std::move(property)) {}

  const std::string& property() const { return property_; }
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

  Case& set(std::string_view key, std::string_view value);
  Case& set(std::string_view key, uint64_t value);
  bool has(std::string_view key) const;
  const std::string& text(std::string_view key) const;  // throws CaseError when missing
  uint64_t num(std::string_view key) const;             // throws CaseError when not a number
  uint64_t num_or(std::string_view key, uint64_t fallback) const;
  int64_t snum(std::string_view key) const;  // signed integer
  bool flag(std::string_view key) const { return has(key) && num(key) != 0; }

  // "m=2 n=1 k=256 ..." (the property name is not part of it).
  std::string describe() const;
  // Parses describe()'s form; throws CaseError naming the bad token.
  static Case parse(std::string property, std::string_view text);

 private:
  std::string property_;
  std::vector<std::pair<std::string, std::string>> fields_;
};

// Enum fields: looks `key` up and parses it with `parse`, throwing CaseError naming the field.
template <class E, class Parse>
E enum_field(const Case& c, std::string_view key, Parse parse) {
  const std::optional<E> e = parse(c.text(key));
  if (!e) {
    throw CaseError("case field '" + std::string(key) + "' has unknown value '" + c.text(key) +
                    "'");
  }
  return *e;
}

// RapidCheck prints a counterexample through showValue (found by argument-dependent lookup).
void showValue(const Case& c, std::ostream& os);

}  // namespace mxgate::properties
