// UTF-8 decoding for the report writers: JSON and XML must both pass valid UTF-8 through and
// must not emit a malformed byte sequence (python's json and xmllint reject the whole file).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mxgate::report {

// Stands in for a byte that does not start a well-formed UTF-8 sequence.
inline constexpr char32_t kReplacementChar = 0xFFFD;

// Decodes the code point at `pos` and advances `pos` past it. A malformed, overlong, truncated
// or surrogate sequence consumes one byte and yields kReplacementChar. Requires pos < s.size().
char32_t next_code_point(std::string_view s, std::size_t& pos);

// Appends the UTF-8 encoding of a code point (<= 0x10FFFF, not a surrogate).
void append_utf8(std::string& out, char32_t cp);

}  // namespace mxgate::report
