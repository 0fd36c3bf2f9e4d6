#include "reference/npy_common.h"

#include <system_error>

namespace mxgate::npy_detail {

namespace {

// a * b if it stays within kMaxBytes.
std::optional<size_t> checked_mul(size_t a, size_t b) {
  if (a != 0 && b > kMaxBytes / a) {
    return std::nullopt;
  }
  return a * b;
}

}  // namespace

std::string errno_message(int err) { return std::generic_category().message(err); }

std::string printable(std::string_view text, size_t max_chars) {
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

}  // namespace mxgate::npy_detail
