#include "properties/case.h"

#include <charconv>
#include <ostream>

namespace mxgate::properties {

Case& Case::set(std::string_view key, std::string_view value) {
  for (auto& [k, v] : fields_) {
    if (k == key) {
      v = value;
      return *this;
    }
  }
  fields_.emplace_back(std::string(key), std::string(value));
  return *this;
}

Case& Case::set(std::string_view key, uint64_t value) { return set(key, std::to_string(value)); }

bool Case::has(std::string_view key) const {
  for (const auto& [k, v] : fields_) {
    if (k == key) return true;
  }
  return false;
}

const std::string& Case::text(std::string_view key) const {
  for (const auto& [k, v] : fields_) {
    if (k == key) return v;
  }
  throw CaseError("case of property '" + property_ + "' has no field '" + std::string(key) + "'");
}

uint64_t Case::num(std::string_view key) const {
  const std::string& v = text(key);
  uint64_t out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty()) {
    throw CaseError("case field '" + std::string(key) + "' is not a non-negative integer: '" + v +
                    "'");
  }
  return out;
}

uint64_t Case::num_or(std::string_view key, uint64_t fallback) const {
  return has(key) ? num(key) : fallback;
}

int64_t Case::snum(std::string_view key) const {
  const std::string& v = text(key);
  int64_t out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty()) {
    throw CaseError("case field '" + std::string(key) + "' is not an integer: '" + v + "'");
  }
  return out;
}

std::string Case::describe() const {
  std::string out;
  for (const auto& [k, v] : fields_) {
    if (!out.empty()) out += ' ';
    out.append(k).append("=").append(v);
  }
  return out;
}

Case Case::parse(std::string property, std::string_view text) {
  Case c(std::move(property));
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= text.size()) break;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
    const std::string_view tok = text.substr(i, j - i);
    const std::size_t eq = tok.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == tok.size()) {
      throw CaseError("case token '" + std::string(tok) + "' is not key=value");
    }
    if (c.has(tok.substr(0, eq))) {
      throw CaseError("case field '" + std::string(tok.substr(0, eq)) + "' appears twice");
    }
    c.set(tok.substr(0, eq), tok.substr(eq + 1));
    i = j;
  }
  return c;
}

void showValue(const Case& c, std::ostream& os) { os << c.property() << ": " << c.describe(); }

}  // namespace mxgate::properties
