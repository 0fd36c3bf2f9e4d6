// 2D MX quantization: one E8M0 scale per 32 x 32 tile, from the amax over the whole tile
// (TransformerEngine MXFP8BlockScaling(enable_2d_quantization=True) for weights,
// docs/layouts.md §9). The scale rule, the NaN policy of the amax and the element cast are an
// MxPolicy (reference/mx_quant.h, a convention's mx_policy), so the only new decision is the
// tile: the scale of element (r, c) is the byte of tile (r / 32, c / 32).
//
// Because the tile is square, quantizing W and W^T gives transposed codes and a transposed scale
// grid (a rowwise and a columnwise copy of a weight share their bytes): tests/test_mx_quant_2d.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/blocks.h"
#include "reference/format.h"
#include "reference/mx_quant.h"

namespace mxgate {

// The tile edge of 2D MX scaling (TE's MXFP8 2D recipe: SCALE_DIM_Y = SCALE_DIM_X = 32).
inline constexpr std::size_t kMx2dTile = kMxBlock;

// Row-major (rows x cols) codes and the logical scale grid, ceil(rows/32) x ceil(cols/32) e8m0
// bytes row-major: scale (i, j) covers rows [32 i, 32 i + 32) and cols [32 j, 32 j + 32).
struct Mx2dQuantized {
  std::size_t rows = 0;
  std::size_t cols = 0;
  Format element = Format::kE4M3FN;
  std::vector<uint8_t> data;    // rows x cols codes
  std::vector<uint8_t> scales;  // scale_rows() x scale_cols()
  std::size_t scale_rows() const { return ceil_div(rows, kMx2dTile); }
  std::size_t scale_cols() const { return ceil_div(cols, kMx2dTile); }
};

// Policy edges as in quantize_mx: a partial tile (rows or cols not a multiple of 32) is padded
// with policy.pad_value, which counts in the amax; amax_nan decides whether a NaN in the tile
// makes the whole tile NaN or is skipped; the payload is requantized with the tile's final scale.
// Throws std::invalid_argument for a non-MX element format or a size mismatch.
Mx2dQuantized quantize_mx_2d(std::span<const float> x, std::size_t rows, std::size_t cols,
                             Format element, const MxPolicy& policy);

// TE stores the 2D scales in its 1D scale tensors (every row of a tile repeats the tile's byte):
// the rowwise grid rows x ceil(cols/32) and the columnwise grid ceil(rows/32) x cols, so a 1x32
// GEMM path consumes them unchanged. These expand the logical grid into those two forms.
std::vector<uint8_t> rowwise_scales_of_2d(const Mx2dQuantized& q);
std::vector<uint8_t> colwise_scales_of_2d(const Mx2dQuantized& q);

}  // namespace mxgate
