// Internals the .npy reader, writer and array code share (npy.h is the API): the format's
// constants, byte counts checked against NumPy's size limit, and quoting of hostile bytes.
// Format reference: numpy.lib.format (NEP 1).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "reference/npy.h"

// Elements are copied to and from the little-endian file layout with memcpy.
static_assert(std::endian::native == std::endian::little,
              "mxgate's .npy code assumes a little-endian host");

namespace mxgate::npy_detail {

inline constexpr std::array<uint8_t, 6> kMagic = {0x93, 'N', 'U', 'M', 'P', 'Y'};
// NumPy sizes arrays in npy_intp; the same bound keeps every byte count addressable here.
inline constexpr size_t kMaxBytes = static_cast<size_t>(PTRDIFF_MAX);
inline constexpr char kSupported[] =
    "supported: '|u1' (uint8), '<u2' (uint16), '<f4' (float32), '<f8' (float64), '<i4' (int32), "
    "'<i8' (int64)";

std::string errno_message(int err);

// Bytes from a hostile file, made safe to quote in an error message.
std::string printable(std::string_view text, size_t max_chars = 60);

// itemsize times the element count of shape, or nullopt past kMaxBytes. NumPy's rule: a zero
// extent does not excuse an overflowing product of the others.
std::optional<size_t> checked_byte_count(size_t itemsize, std::span<const size_t> shape);

// The bytes of a dtype x shape array; NpyError when they would pass kMaxBytes.
size_t byte_count(NpyDtype dtype, std::span<const size_t> shape);

}  // namespace mxgate::npy_detail
