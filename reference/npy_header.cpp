#include "reference/npy_header.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "reference/npy_common.h"

namespace mxgate::npy_detail {

namespace {

// Parser for the header: the subset of Python literal syntax a .npy header dict uses, no more, so
// that a hostile header cannot make it recurse or allocate much. Every index is bounds-checked.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  Header parse() {
    skip_space();
    if (!consume('{')) {
      throw NpyError("header is not a dict: expected '{', got \"" + printable(text_.substr(pos_)) +
                     "\"");
    }
    skip_space();
    if (!consume('}')) {
      for (;;) {
        parse_entry();
        skip_space();
        if (consume('}')) {
          break;
        }
        if (!consume(',')) {
          fail("expected ',' or '}' after a value");
        }
        skip_space();
        if (consume('}')) {
          break;  // trailing comma
        }
      }
    }
    skip_space();
    if (pos_ != text_.size()) {
      fail("unexpected text after the closing '}'");
    }

    for (const auto& [key, present] : {std::pair{"descr", descr_.has_value()},
                                       std::pair{"fortran_order", fortran_order_.has_value()},
                                       std::pair{"shape", shape_.has_value()}}) {
      if (!present) {
        throw NpyError(std::string("header is missing key '") + key + "'");
      }
    }
    if (*fortran_order_) {
      throw NpyError("Fortran order is not supported; use np.ascontiguousarray before np.save");
    }
    const NpyDtype dtype = dtype_or_throw(*descr_);
    byte_count(dtype, *shape_);  // throws if the size overflows
    return {dtype, std::move(*shape_)};
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    const size_t from = pos_ > 20 ? pos_ - 20 : 0;
    throw NpyError("malformed header: " + what + " at header offset " + std::to_string(pos_) +
                   ", near \"" + printable(text_.substr(from, 50)) + "\"");
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  bool consume(char c) {
    if (at_end() || text_[pos_] != c) {
      return false;
    }
    ++pos_;
    return true;
  }
  // Python's insignificant whitespace inside brackets, plus the '\n' and padding after the dict.
  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r' ||
                         peek() == '\f')) {
      ++pos_;
    }
  }
  static bool is_ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  std::string_view identifier() {
    const size_t start = pos_;
    while (!at_end() && is_ident_char(peek())) {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }

  // A Python string literal in single or double quotes (u prefix allowed, as Python 2 wrote it).
  std::string parse_string(const char* what) {
    if ((peek() == 'u' || peek() == 'U') && pos_ + 1 < text_.size() &&
        (text_[pos_ + 1] == '\'' || text_[pos_ + 1] == '"')) {
      ++pos_;
    }
    const char quote = peek();
    if (quote != '\'' && quote != '"') {
      fail(std::string("expected ") + what);
    }
    ++pos_;
    std::string value;
    for (;;) {
      if (at_end() || peek() == '\n') {
        fail("unterminated string");
      }
      const char c = text_[pos_++];
      if (c == quote) {
        return value;
      }
      if (c == '\\') {
        if (at_end() || (peek() != '\\' && peek() != '\'' && peek() != '"')) {
          fail("unsupported escape sequence in string");
        }
        value += text_[pos_++];
      } else {
        value += c;
      }
    }
  }

  void parse_entry() {
    const size_t key_pos = pos_;
    const std::string key = parse_string("a string key");
    const auto reject_duplicate = [&](bool seen) {
      if (seen) {
        pos_ = key_pos;
        fail("duplicate key '" + printable(key) + "'");
      }
    };
    skip_space();
    if (!consume(':')) {
      fail("expected ':' after key '" + printable(key) + "'");
    }
    skip_space();
    if (key == "descr") {
      reject_duplicate(descr_.has_value());
      if (peek() == '[') {
        fail("structured dtypes (a list as 'descr') are not supported; " + std::string(kSupported));
      }
      descr_ = parse_string("a dtype string as the value of 'descr'");
    } else if (key == "fortran_order") {
      reject_duplicate(fortran_order_.has_value());
      const std::string_view word = identifier();
      if (word != "True" && word != "False") {
        fail("'fortran_order' must be True or False");
      }
      fortran_order_ = word == "True";
    } else if (key == "shape") {
      reject_duplicate(shape_.has_value());
      shape_ = parse_shape();
    } else {
      pos_ = key_pos;
      fail("unexpected key '" + printable(key) +
           "' (a .npy header has exactly 'descr', 'fortran_order' and 'shape')");
    }
  }

  // A tuple of integers: (), (3,), (3, 4), (3, 4,). Python 2 wrote longs as 3L.
  std::vector<size_t> parse_shape() {
    if (!consume('(')) {
      fail("'shape' must be a tuple of integers, like (3, 4) or (3,)");
    }
    std::vector<size_t> shape;
    skip_space();
    if (consume(')')) {
      return shape;
    }
    for (;;) {
      shape.push_back(parse_extent());
      skip_space();
      if (consume(')')) {
        if (shape.size() == 1) {
          fail("'shape' is a parenthesized int, not a tuple; write (N,)");
        }
        return shape;
      }
      if (!consume(',')) {
        fail("expected ',' or ')' in 'shape'");
      }
      skip_space();
      if (consume(')')) {
        return shape;
      }
    }
  }

  size_t parse_extent() {
    bool negative = false;
    if (peek() == '-' || peek() == '+') {
      negative = peek() == '-';
      ++pos_;
      skip_space();
    }
    const size_t start = pos_;
    uint64_t value = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      const auto digit = static_cast<uint64_t>(peek() - '0');
      if (value > (static_cast<uint64_t>(INT64_MAX) - digit) / 10) {
        pos_ = start;
        fail("shape entry is too large (more than 2^63-1)");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) {
      fail("shape entries must be non-negative integers");
    }
    if (peek() == 'L') {
      ++pos_;
    }
    if (peek() == '.' || is_ident_char(peek())) {
      fail("shape entries must be integers");
    }
    if (negative && value != 0) {
      pos_ = start - 1;
      fail("shape entries must be non-negative, got -" + std::to_string(value));
    }
    return static_cast<size_t>(value);
  }

  static NpyDtype dtype_or_throw(const std::string& descr) { return npy_dtype_from_descr(descr); }

  std::string_view text_;
  size_t pos_ = 0;
  std::optional<std::string> descr_;
  std::optional<bool> fortran_order_;
  std::optional<std::vector<size_t>> shape_;
};

}  // namespace

Header parse_header(std::string_view text) { return HeaderParser(text).parse(); }

}  // namespace mxgate::npy_detail
