// NumPy .npy reader and writer; see npy.h. Format reference: numpy.lib.format (NEP 1).
#include "reference/npy.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <system_error>
#include <utility>

namespace mxgate {

// Elements are copied to and from the little-endian file layout with memcpy.
static_assert(std::endian::native == std::endian::little,
              "mxgate's .npy code assumes a little-endian host");

namespace {

constexpr std::array<uint8_t, 6> kMagic = {0x93, 'N', 'U', 'M', 'P', 'Y'};
// NumPy sizes arrays in npy_intp; the same bound keeps every byte count addressable here.
constexpr size_t kMaxBytes = static_cast<size_t>(PTRDIFF_MAX);
constexpr size_t kArrayAlign = 64;        // numpy.lib.format.ARRAY_ALIGN
constexpr size_t kGrowthAxisDigits = 21;  // numpy.lib.format.GROWTH_AXIS_MAX_DIGITS
constexpr char kSupported[] =
    "supported: '|u1' (uint8), '<u2' (uint16), '<f4' (float32), '<f8' (float64)";

std::string errno_message(int err) { return std::generic_category().message(err); }

// Bytes from a hostile file, made safe to quote in an error message.
std::string printable(std::string_view text, size_t max_chars = 60) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max_chars; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += c == '\\' ? std::string("\\\\") : std::string{'\\', 'x', kHex[c >> 4], kHex[c & 15]};
    }
  }
  if (text.size() > max_chars) {
    out += "...";
  }
  return out;
}

// a * b if it stays within kMaxBytes.
std::optional<size_t> checked_mul(size_t a, size_t b) {
  if (a != 0 && b > kMaxBytes / a) {
    return std::nullopt;
  }
  return a * b;
}

// itemsize times the element count of shape, or nullopt past kMaxBytes. NumPy's rule: a zero
// extent does not excuse an overflowing product of the others.
std::optional<size_t> checked_byte_count(size_t itemsize, std::span<const size_t> shape) {
  size_t nonzero_product = itemsize;
  bool empty = false;
  for (size_t extent : shape) {
    if (extent == 0) {
      empty = true;
      continue;
    }
    const auto product = checked_mul(nonzero_product, extent);
    if (!product) {
      return std::nullopt;
    }
    nonzero_product = *product;
  }
  return empty ? 0 : nonzero_product;
}

size_t byte_count(NpyDtype dtype, std::span<const size_t> shape) {
  const auto bytes = checked_byte_count(npy_dtype_size(dtype), shape);
  if (!bytes) {
    throw NpyError("element count overflow: " + std::string(npy_dtype_name(dtype)) + " " +
                   npy_shape_string(shape) + " would need more than 2^63-1 bytes");
  }
  return *bytes;
}

std::optional<NpyDtype> dtype_from_descr(std::string_view descr) {
  if (descr == "|u1" || descr == "<u1") {
    return NpyDtype::kUint8;
  }
  if (descr == "<u2") {
    return NpyDtype::kUint16;
  }
  if (descr == "<f4") {
    return NpyDtype::kFloat32;
  }
  if (descr == "<f8") {
    return NpyDtype::kFloat64;
  }
  return std::nullopt;
}

struct Header {
  NpyDtype dtype;
  std::vector<size_t> shape;
};

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

uint32_t read_le(std::span<const uint8_t> bytes) {
  uint32_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) {
    value = value << 8 | bytes[i];
  }
  return value;
}

void check_count(size_t expected, size_t got, const std::vector<size_t>& shape) {
  if (expected != got) {
    throw NpyError("shape " + npy_shape_string(shape) + " has " + std::to_string(expected) +
                   " elements but " + std::to_string(got) + " values were given");
  }
}

}  // namespace

std::string_view npy_dtype_name(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::kUint8:
      return "uint8";
    case NpyDtype::kUint16:
      return "uint16";
    case NpyDtype::kFloat32:
      return "float32";
    case NpyDtype::kFloat64:
      return "float64";
  }
  return "invalid dtype";
}

std::string_view npy_dtype_descr(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::kUint8:
      return "|u1";
    case NpyDtype::kUint16:
      return "<u2";
    case NpyDtype::kFloat32:
      return "<f4";
    case NpyDtype::kFloat64:
      return "<f8";
  }
  throw NpyError("invalid NpyDtype value " + std::to_string(static_cast<int>(dtype)));
}

size_t npy_dtype_size(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::kUint8:
      return 1;
    case NpyDtype::kUint16:
      return 2;
    case NpyDtype::kFloat32:
      return 4;
    case NpyDtype::kFloat64:
      return 8;
  }
  throw NpyError("invalid NpyDtype value " + std::to_string(static_cast<int>(dtype)));
}

NpyDtype npy_dtype_from_descr(std::string_view descr) {
  if (const auto dtype = dtype_from_descr(descr)) {
    return *dtype;
  }
  if (!descr.empty() && descr[0] == '>') {
    throw NpyError("big-endian dtype '" + printable(descr) +
                   "' is not supported; convert with a.astype(a.dtype.newbyteorder('<')) (" +
                   kSupported + ")");
  }
  throw NpyError("unsupported dtype '" + printable(descr) + "' (" + kSupported + ")");
}

size_t npy_element_count(std::span<const size_t> shape) {
  const auto count = checked_byte_count(1, shape);
  if (!count) {
    throw NpyError("element count overflow: shape " + npy_shape_string(shape) +
                   " has more than 2^63-1 elements");
  }
  return *count;
}

std::string npy_shape_string(std::span<const size_t> shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) {
      out += ", ";
    }
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) {
    out += ",";
  }
  return out + ")";
}

template <NpyElement T>
NpyArray NpyArray::from(std::vector<size_t> shape, std::span<const T> values) {
  check_count(npy_element_count(shape), values.size(), shape);
  NpyArray array;
  array.dtype = NpyDtypeOf<T>::value;
  array.shape = std::move(shape);
  array.bytes.resize(values.size_bytes());
  if (!values.empty()) {
    std::memcpy(array.bytes.data(), values.data(), values.size_bytes());
  }
  return array;
}

template NpyArray NpyArray::from<uint8_t>(std::vector<size_t>, std::span<const uint8_t>);
template NpyArray NpyArray::from<uint16_t>(std::vector<size_t>, std::span<const uint16_t>);
template NpyArray NpyArray::from<float>(std::vector<size_t>, std::span<const float>);
template NpyArray NpyArray::from<double>(std::vector<size_t>, std::span<const double>);

NpyArray::NpyArray(std::vector<size_t> shape, const std::vector<uint8_t>& values)
    : NpyArray(from<uint8_t>(std::move(shape), values)) {}
NpyArray::NpyArray(std::vector<size_t> shape, const std::vector<uint16_t>& values)
    : NpyArray(from<uint16_t>(std::move(shape), values)) {}
NpyArray::NpyArray(std::vector<size_t> shape, const std::vector<float>& values)
    : NpyArray(from<float>(std::move(shape), values)) {}
NpyArray::NpyArray(std::vector<size_t> shape, const std::vector<double>& values)
    : NpyArray(from<double>(std::move(shape), values)) {}

NpyArray NpyArray::from_bytes(NpyDtype dtype, std::vector<size_t> shape,
                              std::vector<uint8_t> bytes) {
  NpyArray array;
  array.dtype = dtype;
  array.shape = std::move(shape);
  array.bytes = std::move(bytes);
  array.validate();
  return array;
}

void NpyArray::validate() const {
  const size_t expected = byte_count(dtype, shape);
  if (bytes.size() != expected) {
    throw NpyError("inconsistent NpyArray: " + std::string(npy_dtype_name(dtype)) + " " +
                   npy_shape_string(shape) + " needs " + std::to_string(expected) +
                   " bytes, holds " + std::to_string(bytes.size()));
  }
}

template <NpyElement T>
std::vector<T> NpyArray::values() const {
  if (NpyDtypeOf<T>::value != dtype) {
    throw NpyError("array is " + std::string(npy_dtype_name(dtype)) + ", read as " +
                   std::string(npy_dtype_name(NpyDtypeOf<T>::value)));
  }
  validate();
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) {
    std::memcpy(out.data(), bytes.data(), bytes.size());
  }
  return out;
}

template std::vector<uint8_t> NpyArray::values<uint8_t>() const;
template std::vector<uint16_t> NpyArray::values<uint16_t>() const;
template std::vector<float> NpyArray::values<float>() const;
template std::vector<double> NpyArray::values<double>() const;

NpyArray parse_npy(std::span<const uint8_t> file) {
  // Preamble: magic, major and minor version, then a 2-byte (1.0) or 4-byte (2.0, 3.0) header size.
  const size_t magic_seen = std::min(file.size(), kMagic.size());
  if (!std::equal(file.begin(), file.begin() + magic_seen, kMagic.begin())) {
    const std::string_view start(reinterpret_cast<const char*>(file.data()), magic_seen);
    throw NpyError("bad magic: not a .npy file (expected \"\\x93NUMPY\", got \"" +
                   printable(start) + "\")");
  }
  if (file.size() < kMagic.size() + 2) {
    throw NpyError("truncated preamble: file is only " + std::to_string(file.size()) + " bytes");
  }
  const unsigned major = file[6];
  const unsigned minor = file[7];
  if (minor != 0 || major < 1 || major > 3) {
    throw NpyError("unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  const size_t length_size = major == 1 ? 2 : 4;
  const size_t header_start = 8 + length_size;
  if (file.size() < header_start) {
    throw NpyError("truncated preamble: file is only " + std::to_string(file.size()) +
                   " bytes, version " + std::to_string(major) + ".0 needs " +
                   std::to_string(header_start));
  }
  const size_t header_size = read_le(file.subspan(8, length_size));
  const size_t available = file.size() - header_start;
  if (header_size > available) {
    throw NpyError("truncated header: preamble declares " + std::to_string(header_size) +
                   " header bytes, file has " + std::to_string(available));
  }

  const std::string_view header_text(reinterpret_cast<const char*>(file.data()) + header_start,
                                     header_size);
  Header header = HeaderParser(header_text).parse();

  const std::span<const uint8_t> data = file.subspan(header_start + header_size);
  const size_t expected = byte_count(header.dtype, header.shape);
  if (data.size() != expected) {
    throw NpyError("data size mismatch: " + std::string(npy_dtype_name(header.dtype)) + " " +
                   npy_shape_string(header.shape) + " needs " + std::to_string(expected) +
                   " bytes, but " + std::to_string(data.size()) + " bytes follow the header");
  }
  NpyArray array;
  array.dtype = header.dtype;
  array.shape = std::move(header.shape);
  array.bytes.assign(data.begin(), data.end());
  return array;
}

NpyArray read_npy(const std::string& path) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                             &std::fclose);
  if (!file) {
    const int err = errno;
    throw NpyError("cannot open '" + path + "': " + errno_message(err));
  }
  std::vector<uint8_t> contents;
  std::array<uint8_t, 1 << 16> chunk;
  int read_err = 0;
  for (;;) {
    const size_t got = std::fread(chunk.data(), 1, chunk.size(), file.get());
    read_err = errno;
    contents.insert(contents.end(), chunk.begin(), chunk.begin() + got);
    if (got < chunk.size()) {
      break;
    }
  }
  if (std::ferror(file.get())) {
    throw NpyError("cannot read '" + path + "': " + errno_message(read_err));
  }
  try {
    return parse_npy(contents);
  } catch (const NpyError& e) {
    throw NpyError(path + ": " + e.what());
  }
}

std::vector<uint8_t> serialize_npy(const NpyArray& array) {
  array.validate();
  // Same text, key order and padding as numpy.lib.format._write_array_header, including the spare
  // spaces it leaves so the first extent can grow in place.
  std::string dict = "{'descr': '" + std::string(npy_dtype_descr(array.dtype)) +
                     "', 'fortran_order': False, 'shape': " + npy_shape_string(array.shape) + ", }";
  if (!array.shape.empty()) {
    const size_t digits = std::to_string(array.shape[0]).size();
    if (digits < kGrowthAxisDigits) {
      dict.append(kGrowthAxisDigits - digits, ' ');
    }
  }
  // Version 1.0 unless its 2-byte header size cannot hold the header.
  const size_t text_size = dict.size() + 1;  // with the final '\n'
  uint8_t major = 1;
  size_t length_size = 2;
  size_t padding = kArrayAlign - (kMagic.size() + 2 + length_size + text_size) % kArrayAlign;
  if (text_size + padding > 0xffff) {
    major = 2;
    length_size = 4;
    padding = kArrayAlign - (kMagic.size() + 2 + length_size + text_size) % kArrayAlign;
    if (text_size + padding > 0xffffffff) {
      throw NpyError("header too large for .npy version 2.0");
    }
  }
  const size_t header_size = text_size + padding;

  std::vector<uint8_t> out(kMagic.begin(), kMagic.end());
  out.reserve(kMagic.size() + 2 + length_size + header_size + array.bytes.size());
  out.push_back(major);
  out.push_back(0);
  for (size_t i = 0; i < length_size; ++i) {
    out.push_back(static_cast<uint8_t>(header_size >> 8 * i));
  }
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), padding, ' ');
  out.push_back('\n');
  out.insert(out.end(), array.bytes.begin(), array.bytes.end());
  return out;
}

void write_npy(const std::string& path, const NpyArray& array) {
  const std::vector<uint8_t> contents = serialize_npy(array);  // may throw: nothing touched yet

  // A fresh name per attempt (pid + counter), created exclusively so no other file is clobbered;
  // mode 0666 lets the umask decide, as for any newly created file.
  static std::atomic<unsigned> counter{0};
  const std::string temp_prefix = path + ".tmp." + std::to_string(::getpid()) + ".";
  std::string temp;
  int fd = -1;
  for (int attempt = 0;; ++attempt) {
    temp = temp_prefix + std::to_string(counter++);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST || attempt >= 100) {
      break;
    }
  }
  if (fd < 0) {
    const int err = errno;
    throw NpyError("cannot write '" + path + "': cannot create temporary file '" + temp +
                   "': " + errno_message(err));
  }
  const auto abandon = [&](const std::string& step, int err) {
    if (fd >= 0) {
      ::close(fd);
    }
    ::unlink(temp.c_str());
    throw NpyError("cannot write '" + path + "': " + step + " failed: " + errno_message(err));
  };

  for (size_t done = 0; done < contents.size();) {
    const ssize_t wrote = ::write(fd, contents.data() + done, contents.size() - done);
    if (wrote < 0) {
      const int err = errno;  // read before building the message can clobber it
      if (err == EINTR) {
        continue;
      }
      abandon("write to '" + temp + "'", err);
    }
    done += static_cast<size_t>(wrote);
  }
  // Data must be on disk before the rename makes it the file, or a crash could leave it empty.
  if (::fsync(fd) != 0) {
    const int err = errno;
    abandon("fsync of '" + temp + "'", err);
  }
  const int closed = ::close(fd);
  const int close_err = errno;
  fd = -1;
  if (closed != 0) {
    abandon("close of '" + temp + "'", close_err);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    abandon("rename of '" + temp + "' to it", err);
  }
}

void check_npy(const NpyArray& array, std::string_view role, NpyDtype dtype,
               std::initializer_list<NpyDim> shape) {
  bool ok = array.dtype == dtype && array.shape.size() == shape.size();
  std::string expected = "(";
  size_t i = 0;
  for (const NpyDim& dim : shape) {
    if (i > 0) {
      expected += ", ";
    }
    if (dim.name.empty()) {
      expected += dim.extent ? std::to_string(*dim.extent) : "?";
    } else {
      expected += dim.name;
      if (dim.extent) {
        expected += '=';
        expected += std::to_string(*dim.extent);
      }
    }
    if (ok && dim.extent && array.shape[i] != *dim.extent) {
      ok = false;
    }
    ++i;
  }
  expected += shape.size() == 1 ? ",)" : ")";
  if (!ok) {
    throw NpyError(std::string(role) + ": expected " + std::string(npy_dtype_name(dtype)) + " " +
                   expected + ", got " + std::string(npy_dtype_name(array.dtype)) + " " +
                   npy_shape_string(array.shape));
  }
}

}  // namespace mxgate
