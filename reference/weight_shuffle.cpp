// Within each stripe of 16 rows, the 16 x (K/KP) matrix of 16-byte K-packs is transposed;
// stripes stay in place (docs/layouts.md §1.1).
#include "reference/weight_shuffle.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/blocks.h"

namespace mxgate {
namespace {

constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();

std::size_t checked_mul(std::size_t a, std::size_t b, const char* what) {
  if (a != 0 && b > kMax / a) {
    throw std::invalid_argument(std::string(what) + ": size " + std::to_string(a) + " x " +
                                std::to_string(b) + " overflows size_t");
  }
  return a * b;
}

// Bytes of an n x k matrix of elem_size-byte elements, overflow-checked.
std::size_t matrix_bytes(std::size_t n, std::size_t k, std::size_t elem_size, const char* what) {
  return checked_mul(checked_mul(n, k, what), elem_size, what);
}

void check_buffer(std::size_t actual, std::size_t expected, const char* what) {
  if (actual != expected) {
    throw std::invalid_argument(std::string(what) + ": buffer has " + std::to_string(actual) +
                                " bytes, expected " + std::to_string(expected));
  }
}

// Shuffled element offset; the caller has validated the shape and row < n, col < k.
std::size_t offset_unchecked(std::size_t k, std::size_t elem_size, std::size_t row,
                             std::size_t col) {
  const std::size_t kp = kShufflePackBytes / elem_size;
  const std::size_t n0 = row / kShuffleBlockN, n1 = row % kShuffleBlockN;
  const std::size_t c = col / kp, k2 = col % kp;
  return n0 * kShuffleBlockN * k + c * kShuffleBlockN * kp + n1 * kp + k2;
}

// Moves whole 16-byte K-packs between the row-major and shuffled buffers.
std::vector<std::uint8_t> permute_packs(std::span<const std::uint8_t> src, std::size_t n,
                                        std::size_t k, std::size_t elem_size, bool forward,
                                        const char* what) {
  check_shuffle_weight_shape(n, k, elem_size);
  check_buffer(src.size(), matrix_bytes(n, k, elem_size, what), what);
  std::vector<std::uint8_t> dst(src.size());
  const std::size_t kp = kShufflePackBytes / elem_size;
  for (std::size_t row = 0; row < n; ++row) {
    for (std::size_t col = 0; col < k; col += kp) {
      const std::size_t plain = (row * k + col) * elem_size;
      const std::size_t shuffled = offset_unchecked(k, elem_size, row, col) * elem_size;
      const std::size_t from = forward ? plain : shuffled;
      const std::size_t to = forward ? shuffled : plain;
      std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(from), kShufflePackBytes,
                  dst.begin() + static_cast<std::ptrdiff_t>(to));
    }
  }
  return dst;
}

}  // namespace

void check_shuffle_weight_shape(std::size_t n, std::size_t k, std::size_t elem_size) {
  if (elem_size != 1 && elem_size != 2) {
    throw std::invalid_argument("shuffle_weight: element size " + std::to_string(elem_size) +
                                " is not supported (1 = fp8, 2 = bf16)");
  }
  if (n % kShuffleBlockN != 0) {
    throw std::invalid_argument("shuffle_weight: N = " + std::to_string(n) +
                                " is not a multiple of 16");
  }
  if (k % kShuffleBlockK != 0) {
    throw std::invalid_argument("shuffle_weight: K = " + std::to_string(k) +
                                " is not a multiple of 32");
  }
  matrix_bytes(n, k, elem_size, "shuffle_weight");
}

std::size_t shuffle_weight_offset(std::size_t n, std::size_t k, std::size_t elem_size,
                                  std::size_t row, std::size_t col) {
  check_shuffle_weight_shape(n, k, elem_size);
  if (row >= n || col >= k) {
    throw std::invalid_argument("shuffle_weight_offset: (" + std::to_string(row) + ", " +
                                std::to_string(col) + ") is outside the " + std::to_string(n) +
                                " x " + std::to_string(k) + " weight");
  }
  return offset_unchecked(k, elem_size, row, col);
}

std::pair<std::size_t, std::size_t> shuffle_weight_inverse(std::size_t n, std::size_t k,
                                                           std::size_t elem_size,
                                                           std::size_t offset) {
  check_shuffle_weight_shape(n, k, elem_size);
  if (offset >= n * k) {
    throw std::invalid_argument("shuffle_weight_inverse: offset " + std::to_string(offset) +
                                " is outside the " + std::to_string(n * k) + "-element weight");
  }
  const std::size_t kp = kShufflePackBytes / elem_size;
  const std::size_t stripe = kShuffleBlockN * k;
  const std::size_t n0 = offset / stripe, w = offset % stripe;  // w = c*BN*KP + n1*KP + k2
  const std::size_t c = w / (kShuffleBlockN * kp);
  const std::size_t n1 = (w / kp) % kShuffleBlockN, k2 = w % kp;
  return {n0 * kShuffleBlockN + n1, c * kp + k2};
}

std::vector<std::uint8_t> shuffle_weight(std::span<const std::uint8_t> weight, std::size_t n,
                                         std::size_t k, std::size_t elem_size) {
  return permute_packs(weight, n, k, elem_size, /*forward=*/true, "shuffle_weight");
}

std::vector<std::uint8_t> unshuffle_weight(std::span<const std::uint8_t> shuffled, std::size_t n,
                                           std::size_t k, std::size_t elem_size) {
  return permute_packs(shuffled, n, k, elem_size, /*forward=*/false, "unshuffle_weight");
}

std::size_t padded_k(std::size_t k, std::size_t alignment) {
  if (alignment == 0) {
    throw std::invalid_argument("padded_k: alignment must be positive");
  }
  if (k > kMax - (alignment - 1)) {
    throw std::invalid_argument("padded_k: K = " + std::to_string(k) +
                                " overflows size_t when padded");
  }
  return ceil_div(k, alignment) * alignment;
}

std::vector<std::uint8_t> pad_k(std::span<const std::uint8_t> weight, std::size_t n, std::size_t k,
                                std::size_t elem_size, std::size_t alignment,
                                std::span<const std::uint8_t> pad_element) {
  if (elem_size == 0) {
    throw std::invalid_argument("pad_k: element size must be positive");
  }
  if (pad_element.size() != elem_size) {
    throw std::invalid_argument("pad_k: pad element has " + std::to_string(pad_element.size()) +
                                " bytes, element size is " + std::to_string(elem_size));
  }
  check_buffer(weight.size(), matrix_bytes(n, k, elem_size, "pad_k"), "pad_k");
  const std::size_t kp = padded_k(k, alignment);
  std::vector<std::uint8_t> out(matrix_bytes(n, kp, elem_size, "pad_k"));
  const std::size_t row_in = k * elem_size, row_out = kp * elem_size;
  for (std::size_t row = 0; row < n; ++row) {
    auto dst = out.begin() + static_cast<std::ptrdiff_t>(row * row_out);
    dst = std::copy_n(weight.begin() + static_cast<std::ptrdiff_t>(row * row_in), row_in, dst);
    for (std::size_t col = k; col < kp; ++col) {
      dst = std::copy(pad_element.begin(), pad_element.end(), dst);
    }
  }
  return out;
}

std::vector<std::uint8_t> strip_k(std::span<const std::uint8_t> padded, std::size_t n,
                                  std::size_t kp, std::size_t k, std::size_t elem_size) {
  if (elem_size == 0) {
    throw std::invalid_argument("strip_k: element size must be positive");
  }
  if (k > kp) {
    throw std::invalid_argument("strip_k: K = " + std::to_string(k) +
                                " exceeds padded K = " + std::to_string(kp));
  }
  check_buffer(padded.size(), matrix_bytes(n, kp, elem_size, "strip_k"), "strip_k");
  const std::size_t row_in = kp * elem_size, row_out = k * elem_size;
  std::vector<std::uint8_t> out(n * row_out);
  for (std::size_t row = 0; row < n; ++row) {
    std::copy_n(padded.begin() + static_cast<std::ptrdiff_t>(row * row_in), row_out,
                out.begin() + static_cast<std::ptrdiff_t>(row * row_out));
  }
  return out;
}

}  // namespace mxgate
