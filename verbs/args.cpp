#include "verbs/args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace mxgate::verbs {

Args::Args(const std::vector<std::string>& argv, const std::set<std::string>& options,
           const std::set<std::string>& flags) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      positionals_.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (options.count(name) && !values_.count(name) && i + 1 < argv.size()) {
      value = argv[++i];  // `--name value`
    }
    add(name, value, options, flags);
  }
}

Args::Args(const std::vector<Named>& named, const std::set<std::string>& options,
           const std::set<std::string>& flags) {
  for (const Named& n : named) add(n.first, n.second, options, flags);
}

void Args::add(const std::string& name, const std::optional<std::string>& value,
               const std::set<std::string>& options, const std::set<std::string>& flags) {
  if (flags.count(name)) {
    if (value) throw UsageError("--" + name + " takes no value");
    flags_.insert(name);
  } else if (options.count(name)) {
    if (values_.count(name)) throw UsageError("--" + name + " given twice");
    if (!value) throw UsageError("--" + name + " needs a value");
    values_[name] = *value;
  } else {
    throw UsageError("unknown option --" + name);
  }
}

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Args::require(const std::string& name) const {
  auto v = get(name);
  if (!v) throw UsageError("missing required option --" + name);
  return *v;
}

long long Args::integer(const std::string& name, long long fallback, long long lo,
                        long long hi) const {
  auto v = get(name);
  if (!v) return fallback;
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v->c_str(), &end, 0);
  if (v->empty() || *end != '\0' || errno == ERANGE) {
    throw UsageError("--" + name + ": '" + *v + "' is not an integer");
  }
  if (x < lo || x > hi) {
    throw UsageError("--" + name + ": " + *v + " is outside [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  }
  return x;
}

float parse_value(const std::string& text) {
  std::string t;
  for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool neg = !t.empty() && t[0] == '-';
  const std::string body = (!t.empty() && (t[0] == '-' || t[0] == '+')) ? t.substr(1) : t;
  if (body == "inf" || body == "infinity") {
    return neg ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  if (body == "nan") {
    return neg ? -std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::quiet_NaN();
  }
  if (body.empty() || !(std::isdigit(static_cast<unsigned char>(body[0])) || body[0] == '.')) {
    throw UsageError("'" + text +
                     "' is not a number (use decimal, hex-float like 0x1.cp+8, inf, "
                     "-inf or nan)");
  }
  errno = 0;
  char* end = nullptr;
  // strtof rounds the decimal or hex text once, to nearest fp32 (overflow gives +-inf).
  const float v = std::strtof(text.c_str(), &end);
  if (*end != '\0') throw UsageError("'" + text + "' is not a number: trailing '" + end + "'");
  return v;
}

uint32_t parse_code(const std::string& text, int bits) {
  if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) {
    throw UsageError("'" + text + "' is not a hex code (expected 0xHH)");
  }
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str() + 2, &end, 16);
  if (*end != '\0' || errno == ERANGE || !std::isxdigit(static_cast<unsigned char>(text[2]))) {
    throw UsageError("'" + text + "' is not a hex code (expected 0xHH)");
  }
  check_code_fits(v, bits, text);
  return static_cast<uint32_t>(v);
}

void check_code_fits(uint64_t code, int bits, const std::string& shown) {
  if (bits < 64 && (code >> bits) != 0) {
    throw UsageError("code " + shown + " does not fit a " + std::to_string(bits) + "-bit format");
  }
}

}  // namespace mxgate::verbs
