#include "report/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "report/utf8.h"

namespace mxgate::report {

std::string json_quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  std::size_t pos = 0;
  while (pos < s.size()) {
    const char32_t cp = next_code_point(s, pos);
    switch (cp) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (cp < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
          out += buf;
        } else {
          append_utf8(out, cp);
        }
    }
  }
  out += '"';
  return out;
}

JsonWriter::JsonWriter(std::ostream& out, int indent)
    : out_(out), indent_(indent < 0 ? 0 : indent) {}

void JsonWriter::newline_indent(std::size_t depth) {
  if (indent_ == 0) return;
  out_ << '\n';
  for (std::size_t i = 0; i < depth * static_cast<std::size_t>(indent_); ++i) out_ << ' ';
}

void JsonWriter::before_value(const char* what) {
  if (stack_.empty()) {
    if (done_)
      throw std::logic_error(std::string("JsonWriter: ") + what + " after the top-level value");
    return;
  }
  Level& top = stack_.back();
  if (top.kind == Kind::kObject) {
    if (!top.have_key) {
      throw std::logic_error(std::string("JsonWriter: ") + what +
                             " inside an object needs a key first");
    }
    top.have_key = false;  // key() already wrote the separator and indentation
    return;
  }
  if (!top.empty) out_ << ',';
  top.empty = false;
  newline_indent(stack_.size());
}

JsonWriter& JsonWriter::key(std::string_view k) {
  if (stack_.empty() || stack_.back().kind != Kind::kObject) {
    throw std::logic_error("JsonWriter: key \"" + std::string(k) + "\" outside an object");
  }
  Level& top = stack_.back();
  if (top.have_key) {
    throw std::logic_error("JsonWriter: key \"" + std::string(k) + "\" right after another key");
  }
  if (!top.empty) out_ << ',';
  top.empty = false;
  newline_indent(stack_.size());
  out_ << json_quote(k) << (indent_ ? ": " : ":");
  top.have_key = true;
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value("object");
  out_ << '{';
  stack_.push_back({Kind::kObject});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value("array");
  out_ << '[';
  stack_.push_back({Kind::kArray});
  return *this;
}

void JsonWriter::close(Kind kind, char bracket, const char* name) {
  if (stack_.empty() || stack_.back().kind != kind) {
    throw std::logic_error(std::string("JsonWriter: ") + name + " without a matching begin");
  }
  if (stack_.back().have_key) {
    throw std::logic_error(std::string("JsonWriter: ") + name + " right after a key (no value)");
  }
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline_indent(stack_.size());
  out_ << bracket;
  if (stack_.empty()) done_ = true;
}

JsonWriter& JsonWriter::end_object() {
  close(Kind::kObject, '}', "end_object");
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  close(Kind::kArray, ']', "end_array");
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value("string");
  out_ << json_quote(s);
  if (stack_.empty()) done_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  before_value("bool");
  out_ << (b ? "true" : "false");
  if (stack_.empty()) done_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(double d) {
  before_value("number");
  if (!std::isfinite(d)) {
    out_ << "null";
  } else {
    // Shortest round-trip form; std::to_chars never writes "inf"/"nan" for finite input and its
    // output ("1e+300", "-0", "0.1") is valid JSON number syntax.
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, d);
    out_.write(buf, r.ptr - buf);
  }
  if (stack_.empty()) done_ = true;
  return *this;
}

// Integers go through to_chars, not operator<<, so an imbued locale cannot add digit grouping.
template <class T>
static void write_integer(std::ostream& out, T v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.write(buf, r.ptr - buf);
}

JsonWriter& JsonWriter::integer(int64_t v) {
  before_value("number");
  write_integer(out_, v);
  if (stack_.empty()) done_ = true;
  return *this;
}

JsonWriter& JsonWriter::unsigned_integer(uint64_t v) {
  before_value("number");
  write_integer(out_, v);
  if (stack_.empty()) done_ = true;
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value("null");
  out_ << "null";
  if (stack_.empty()) done_ = true;
  return *this;
}

}  // namespace mxgate::report
