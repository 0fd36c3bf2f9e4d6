#include "report/xml_escape.h"

#include <cstdio>

#include "report/utf8.h"

namespace mxgate::report {
namespace {

// What XML replaces everywhere (">" also keeps "]]>" out of content), and what only an attribute
// value needs replaced: its quotes, and the whitespace attribute normalization would fold.
struct Entity {
  char32_t c;
  const char* text;
  bool attribute_only;
};
constexpr Entity kEntities[] = {
    {'&', "&amp;", false},  {'<', "&lt;", false}, {'>', "&gt;", false},  {'"', "&quot;", true},
    {'\'', "&apos;", true}, {'\t', "&#9;", true}, {'\n', "&#10;", true}, {'\r', "&#13;", true},
};

const Entity* entity(char32_t cp) {
  for (const Entity& e : kEntities) {
    if (e.c == cp) return &e;
  }
  return nullptr;
}

std::string escape(std::string_view s, bool attribute) {
  std::string out;
  out.reserve(s.size() + 16);
  std::size_t pos = 0;
  while (pos < s.size()) {
    const char32_t cp = next_code_point(s, pos);
    if (const Entity* e = entity(cp)) {
      if (attribute || !e->attribute_only) {
        out += e->text;
      } else {
        out += static_cast<char>(cp);
      }
      continue;
    }
    if (cp < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
      out += buf;
    } else if (cp == 0xFFFE || cp == 0xFFFF) {
      append_utf8(out, kReplacementChar);
    } else {
      append_utf8(out, cp);
    }
  }
  return out;
}

}  // namespace

std::string xml_escape_text(std::string_view s) { return escape(s, false); }
std::string xml_escape_attr(std::string_view s) { return escape(s, true); }

}  // namespace mxgate::report
