#include "properties/regression.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "impl/harness.h"
#include "impl/registry.h"

namespace mxgate::properties {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

Regression parse_regression(std::string_view text, std::string_view source) {
  Regression r;
  std::optional<std::string> property, case_text;
  dispatch::Faults detects;
  std::size_t line_no = 0;
  auto fail = [&](const std::string& why) {
    return RegressionError(std::string(source) + ":" + std::to_string(line_no) + ": " + why);
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = trim(text.substr(pos, end - pos));
    ++line_no;
    pos = end + 1;
    if (line.empty()) {
      if (end == text.size()) break;
      continue;
    }
    if (line.front() == '#') {
      if (!r.comment.empty()) r.comment += '\n';
      r.comment += std::string(trim(line.substr(1)));
      continue;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) throw fail("expected 'key: value'");
    const std::string_view key = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (key == "property") {
      if (property) throw fail("second 'property' line");
      if (find_property(value) == nullptr) {
        throw fail("unknown property '" + std::string(value) + "'");
      }
      property = std::string(value);
    } else if (key == "impl") {
      if (value.empty()) throw fail("empty 'impl' line");
      r.impl = std::string(value);
    } else if (key == "seed") {
      const std::string v(value);
      char* e = nullptr;
      errno = 0;
      r.seed = std::strtoull(v.c_str(), &e, 10);
      if (v.empty() || *e != '\0' || v.front() < '0' || v.front() > '9' || errno == ERANGE) {
        throw fail("seed is not a 64-bit unsigned number");
      }
    } else if (key == "tactic") {
      const std::string v(value);
      char* e = nullptr;
      errno = 0;
      const unsigned long long t = std::strtoull(v.c_str(), &e, 10);
      if (v.empty() || *e != '\0' || v.front() < '0' || v.front() > '9' || errno == ERANGE ||
          t > 0xFFFFFFFFull) {
        throw fail("tactic is not a 32-bit unsigned number");
      }
      if (r.tactic) throw fail("second 'tactic' line");
      r.tactic = static_cast<uint32_t>(t);
    } else if (key == "case") {
      if (case_text) throw fail("second 'case' line");
      case_text = std::string(value);
    } else if (key == "detects") {
      try {
        detects.enable(dispatch::parse_faults(value));
      } catch (const std::invalid_argument& e) {
        throw fail(e.what());
      }
    } else {
      throw fail("unknown key '" + std::string(key) + "'");
    }
    if (end == text.size()) break;
  }
  r.detects = detects.list();  // one canonical order and no repeats, whatever the lines said
  if (!property) throw RegressionError(std::string(source) + ": no 'property' line");
  if (!case_text) throw RegressionError(std::string(source) + ": no 'case' line");
  try {
    r.c = Case::parse(*property, *case_text);
  } catch (const CaseError& e) {
    throw RegressionError(std::string(source) + ": " + e.what());
  }
  return r;
}

Regression load_regression(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RegressionError(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_regression(ss.str(), path);
}

std::string format_regression(const Regression& r) {
  std::string out;
  std::istringstream comment(r.comment);
  for (std::string line; std::getline(comment, line);) out += "# " + line + "\n";
  out += "property: " + r.c.property() + "\n";
  out += "impl: " + r.impl + "\n";
  out += "seed: " + std::to_string(r.seed) + "\n";
  if (r.tactic) out += "tactic: " + std::to_string(*r.tactic) + "\n";
  out += "case: " + r.c.describe() + "\n";
  if (!r.detects.empty()) {
    out += "detects: ";
    for (std::size_t i = 0; i < r.detects.size(); ++i) {
      out += (i ? "," : "") + std::string(dispatch::to_string(r.detects[i]));
    }
    out += "\n";
  }
  return out;
}

void save_regression(const Regression& r, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw RegressionError(path + ": cannot write");
    out << format_regression(r);
    if (!out.flush()) throw RegressionError(path + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw RegressionError(path + ": cannot rename the temporary file into place");
  }
}

ReplayOutcome replay(const Regression& r, gpu::Backend& be, const impl::Implementation* impl) {
  const Property& p = *find_property(r.c.property());
  if (impl == nullptr) {
    const std::vector<const impl::Implementation*> named = impl::resolve(r.impl);
    if (named.size() != 1) {
      throw impl::PluginError(impl::PluginError::Kind::kInput,
                              "impl '" + r.impl + "' names " + std::to_string(named.size()) +
                                  " implementations; a regression replays on one");
    }
    impl = named.front();
  }
  std::optional<impl::Implementation> view;
  if (r.tactic) {
    try {
      view = impl::tactic_view(*impl, *r.tactic);
    } catch (const std::out_of_range& e) {
      throw impl::PluginError(impl::PluginError::Kind::kInput, e.what());
    }
    impl = &*view;
  }
  ReplayOutcome out;
  try {
    out.clean = check_case(p, Context{&be, {}, nullptr, impl}, r.c);
  } catch (const impl::Unsupported& e) {
    out.unsupported = e.what();
    out.summary =
        std::string("unsupported on ") + impl->name + impl->tactic_label() + ": " + e.what();
    return out;
  }
  out.ok = !out.clean.has_value();
  out.summary = out.clean ? "FAIL without faults: " + out.clean->what : "pass without faults";
  for (dispatch::Fault f : r.detects) {
    const bool caught = check_case(p, Context{&be, {f}, nullptr, impl}, r.c).has_value();
    out.detected.emplace_back(f, caught);
    out.ok = out.ok && caught;
    out.summary += std::string("\n") + (caught ? "fails" : "PASSES (not detected)") + " with " +
                   std::string(dispatch::to_string(f));
  }
  return out;
}

std::string default_regression_dir() {
  return std::string(MXGATE_SOURCE_DIR) + "/corpus/regressions";
}

std::vector<std::string> list_regressions(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".case") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace mxgate::properties
