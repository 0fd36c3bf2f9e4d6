// AITER's gfx950 MXFP4 layouts beyond the e8m0 scale shuffle (which is scale_layout.h's
// aiter_shuffle: quant_mxfp4.cu fp4_scale_shuffle_id is that closed form, docs/fp4.md §7.2):
// the a16w4 ("guinterleave") scale shuffle with its gate/up variant, and the a16w4 weight shuffle
// of packed E2M1 bytes. Closed forms from ROCm/aiter csrc/kernels/quant_mxfp4.cu @71829a74
// (a16w4_shuffle_scale_id, the kernel's w_base); tests hold them to aiter/ops/shuffle.py's
// view/permute formulations. Both need the kernel's shape asserts: no padding is defined.
#pragma once

#include <cstddef>
#include <utility>

namespace mxgate {

// Scale (r, c) of a rows x cols e8m0 matrix (rows % 32 == 0, cols % 8 == 0). gate_up: rows are
// [gate; up] halves and row r of the up half shares a 32-row band with row r of the gate half.
// Throws std::invalid_argument on a bad shape or coordinate.
std::size_t aiter_a16w4_scale_offset(std::size_t rows, std::size_t cols, std::size_t r,
                                     std::size_t c, bool gate_up);
std::pair<std::size_t, std::size_t> aiter_a16w4_scale_inverse(std::size_t rows, std::size_t cols,
                                                              std::size_t offset, bool gate_up);

// Byte (r, b) of an n x k_bytes packed-E2M1 weight (n % 16 == 0, k_bytes % 64 == 0; gate_up:
// n % 32 == 0). Throws std::invalid_argument on a bad shape or coordinate.
std::size_t aiter_a16w4_weight_offset(std::size_t n, std::size_t k_bytes, std::size_t r,
                                      std::size_t b, bool gate_up);

}  // namespace mxgate
