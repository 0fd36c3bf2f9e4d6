// A small streaming JSON writer (RFC 8259) for gate reports: objects, arrays, strings, integers,
// doubles and bools, written as they come, pretty-printed with a fixed indent.
//
// Strings: quote, backslash and every control character below 0x20 are escaped; valid UTF-8
// passes through unchanged; a byte that is not valid UTF-8 becomes U+FFFD (so the output is
// always valid UTF-8). Doubles: shortest text that reads back to the same double; NaN and +-Inf
// (which JSON cannot express) are written as null.
//
// Misuse (a value in an object without a key, a key outside an object, closing the wrong
// container, a second top-level value) throws std::logic_error naming the mistake.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace mxgate::report {

// `s` as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);

class JsonWriter {
 public:
  // indent: spaces per nesting level; 0 writes everything on one line.
  explicit JsonWriter(std::ostream& out, int indent = 2);

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // The key of the next member; only inside an object.
  JsonWriter& key(std::string_view k);

  JsonWriter& value(std::string_view s);
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b);
  JsonWriter& value(double d);
  template <std::integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, char>) JsonWriter& value(T v) {
    if constexpr (std::signed_integral<T>) {
      return integer(static_cast<int64_t>(v));
    } else {
      return unsigned_integer(static_cast<uint64_t>(v));
    }
  }
  JsonWriter& null();
  // The value, or null when absent.
  template <class T>
  JsonWriter& value(const std::optional<T>& v) {
    return v ? value(*v) : null();
  }

  // key(k).value(v) in one call.
  template <class T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  // True once one complete top-level value has been written.
  bool complete() const { return done_; }

 private:
  enum class Kind { kObject, kArray };
  struct Level {
    Kind kind;
    bool empty = true;
    bool have_key = false;
  };
  JsonWriter& integer(int64_t v);
  JsonWriter& unsigned_integer(uint64_t v);
  // Separator / indentation / key bookkeeping before any value.
  void before_value(const char* what);
  void newline_indent(std::size_t depth);
  void close(Kind kind, char bracket, const char* name);

  std::ostream& out_;
  int indent_;
  std::vector<Level> stack_;
  bool done_ = false;
};

}  // namespace mxgate::report
