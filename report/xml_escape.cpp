#include "report/xml_escape.h"

#include <cstdio>

#include "report/utf8.h"

namespace mxgate::report {
namespace {

std::string escape(std::string_view s, bool attribute) {
  std::string out;
  out.reserve(s.size() + 16);
  std::size_t pos = 0;
  while (pos < s.size()) {
    const char32_t cp = next_code_point(s, pos);
    switch (cp) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;  // also keeps "]]>" out of content
      case '"':
        out += attribute ? "&quot;" : "\"";
        continue;
      case '\'':
        out += attribute ? "&apos;" : "'";
        continue;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        continue;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        continue;
      case '\r':
        out += attribute ? "&#13;" : "\r";
        continue;
      default:
        break;
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
