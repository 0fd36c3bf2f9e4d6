// XML 1.0 text for the JUnit report and the SVG heatmap.
//
// XML 1.0 forbids most control characters even as character references (only tab, LF and CR are
// allowed), so a check detail carrying such a byte would make the whole report unparseable. They
// are replaced by the visible text "\xHH"; bytes that are not valid UTF-8 become U+FFFD, as do
// the non-characters U+FFFE and U+FFFF.
#pragma once

#include <string>
#include <string_view>

namespace mxgate::report {

// Element content: escapes & < > and the rules above; keeps tab, LF, CR as they are.
std::string xml_escape_text(std::string_view s);
// Attribute value (for "..." quoting): also escapes " and ', and writes tab, LF and CR as
// character references so that attribute-value normalization does not turn them into spaces.
std::string xml_escape_attr(std::string_view s);

}  // namespace mxgate::report
