// AITER `shuffle_weight(x, layout=(16,16))` (the B-preshuffle weight layout) and K padding of
// row-major N x K weights. Closed form and its properties: docs/layouts.md §1.
// Buffers are raw bytes; `elem_size` is the element width in bytes (1 = fp8, 2 = bf16).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace mxgate {

// layout = (16, 16): BN = 16 rows per stripe, BK = 2*16 = 32 only enters the K % 32 check.
inline constexpr std::size_t kShuffleBlockN = 16;
inline constexpr std::size_t kShuffleBlockK = 32;
// One K-pack is 16 bytes: KP = 16 / elem_size elements.
inline constexpr std::size_t kShufflePackBytes = 16;

// Throws std::invalid_argument unless elem_size is 1 or 2, n % 16 == 0 and k % 32 == 0
// (the asserts of AITER shuffle_weight).
void check_shuffle_weight_shape(std::size_t n, std::size_t k, std::size_t elem_size);

// Element offset of weight (row, col) after the shuffle:
//   n0*BN*K + c*BN*KP + n1*KP + k2, with row = 16*n0 + n1, col = KP*c + k2 (docs/layouts.md §1.1).
// Throws std::invalid_argument on a bad shape or row >= n or col >= k.
std::size_t shuffle_weight_offset(std::size_t n, std::size_t k, std::size_t elem_size,
                                  std::size_t row, std::size_t col);

// (row, col) whose element lands at shuffled element offset `offset` (< n*k).
std::pair<std::size_t, std::size_t> shuffle_weight_inverse(std::size_t n, std::size_t k,
                                                           std::size_t elem_size,
                                                           std::size_t offset);

// Applies the shuffle to a row-major n x k weight of n*k*elem_size bytes.
std::vector<std::uint8_t> shuffle_weight(std::span<const std::uint8_t> weight, std::size_t n,
                                         std::size_t k, std::size_t elem_size);

// Inverse of shuffle_weight: returns the row-major n x k weight.
std::vector<std::uint8_t> unshuffle_weight(std::span<const std::uint8_t> shuffled, std::size_t n,
                                           std::size_t k, std::size_t elem_size);

// Smallest multiple of `alignment` that is >= k. Throws std::invalid_argument if alignment == 0
// or the result overflows.
std::size_t padded_k(std::size_t k, std::size_t alignment);

// Copies a row-major n x k matrix into n x padded_k(k, alignment), filling the new columns
// with `pad_element` (exactly elem_size bytes, the element's in-memory bytes).
std::vector<std::uint8_t> pad_k(std::span<const std::uint8_t> weight, std::size_t n, std::size_t k,
                                std::size_t elem_size, std::size_t alignment,
                                std::span<const std::uint8_t> pad_element);

// Inverse of pad_k: keeps the first k of kp columns of a row-major n x kp matrix.
std::vector<std::uint8_t> strip_k(std::span<const std::uint8_t> padded, std::size_t n,
                                  std::size_t kp, std::size_t k, std::size_t elem_size);

}  // namespace mxgate
