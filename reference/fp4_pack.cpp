#include "reference/fp4_pack.h"

#include <stdexcept>
#include <string>

namespace mxgate {

std::string_view name(NibbleOrder order) {
  switch (order) {
    case NibbleOrder::kLowFirst:
      return "low_first";
    case NibbleOrder::kHighFirst:
      return "high_first";
  }
  return "?";
}

std::optional<NibbleOrder> parse_nibble_order(std::string_view text) {
  for (NibbleOrder o : {NibbleOrder::kLowFirst, NibbleOrder::kHighFirst}) {
    if (name(o) == text) return o;
  }
  return std::nullopt;
}

std::size_t packed_fp4_cols(std::size_t cols) { return cols / 2 + cols % 2; }

std::vector<uint8_t> pack_fp4(std::span<const uint8_t> codes, std::size_t rows, std::size_t cols,
                              NibbleOrder order, uint8_t pad) {
  if (rows != 0 && codes.size() / rows != cols) {
    throw std::invalid_argument("pack_fp4: " + std::to_string(codes.size()) +
                                " codes, shape needs " + std::to_string(rows) + " x " +
                                std::to_string(cols));
  }
  if (codes.size() != rows * cols) {
    throw std::invalid_argument("pack_fp4: " + std::to_string(codes.size()) +
                                " codes, shape needs " + std::to_string(rows * cols));
  }
  if (pad > 0xF) throw std::invalid_argument("pack_fp4: padding nibble above 0xF");
  const std::size_t bytes = packed_fp4_cols(cols);
  const unsigned even_shift = order == NibbleOrder::kLowFirst ? 0 : 4;
  std::vector<uint8_t> out(rows * bytes, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols + cols % 2; ++c) {
      const uint8_t code = c < cols ? codes[r * cols + c] : pad;
      if (code > 0xF) {
        throw std::invalid_argument("pack_fp4: code " + std::to_string(code) + " at (" +
                                    std::to_string(r) + ", " + std::to_string(c) +
                                    ") does not fit 4 bits");
      }
      const unsigned shift = (c % 2 == 0) ? even_shift : 4 - even_shift;
      out[r * bytes + c / 2] |= static_cast<uint8_t>(code << shift);
    }
  }
  return out;
}

std::vector<uint8_t> unpack_fp4(std::span<const uint8_t> packed, std::size_t rows, std::size_t cols,
                                NibbleOrder order) {
  const std::size_t bytes = packed_fp4_cols(cols);
  if (packed.size() != rows * bytes) {
    throw std::invalid_argument("unpack_fp4: " + std::to_string(packed.size()) + " bytes, a " +
                                std::to_string(rows) + " x " + std::to_string(cols) +
                                " E2M1 matrix needs " + std::to_string(rows * bytes));
  }
  const unsigned even_shift = order == NibbleOrder::kLowFirst ? 0 : 4;
  std::vector<uint8_t> out(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      const unsigned shift = (c % 2 == 0) ? even_shift : 4 - even_shift;
      out[r * cols + c] = static_cast<uint8_t>((packed[r * bytes + c / 2] >> shift) & 0xF);
    }
  }
  return out;
}

}  // namespace mxgate
