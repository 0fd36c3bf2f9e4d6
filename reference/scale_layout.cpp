// Each layout is a bijection on its padded grid (Rp x Cp); logical (r, c) are the cells with
// r < R and c < C, all other cells are padding. Formulas: docs/layouts.md §8.
#include "reference/scale_layout.h"

#include <array>
#include <limits>

namespace mxgate {
namespace {

constexpr std::array<ScaleLayout, 5> kAllLayouts = {
    ScaleLayout::kRowMajor, ScaleLayout::kColMajor, ScaleLayout::kTmaColMajor,
    ScaleLayout::kNvSwizzle128x4, ScaleLayout::kAiterShuffle};

constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();

std::size_t checked_mul(std::size_t a, std::size_t b) {
  if (a != 0 && b > kMax / a) {
    throw std::invalid_argument("scale layout: size " + std::to_string(a) + " x " +
                                std::to_string(b) + " overflows size_t");
  }
  return a * b;
}

std::size_t round_up(std::size_t x, std::size_t multiple) {
  if (x > kMax - (multiple - 1)) {
    throw std::invalid_argument("scale layout: dimension " + std::to_string(x) +
                                " overflows size_t when padded");
  }
  return (x + multiple - 1) / multiple * multiple;
}

struct Padded {
  std::size_t rows;
  std::size_t cols;
};

Padded padded_dims(ScaleLayout layout, std::size_t rows, std::size_t cols) {
  switch (layout) {
    case ScaleLayout::kRowMajor:
    case ScaleLayout::kColMajor:
      return {rows, cols};
    case ScaleLayout::kTmaColMajor:  // DeepGEMM TMA-aligned As, docs/layouts.md §3.2
      return {round_up(rows, 4), cols};
    case ScaleLayout::kNvSwizzle128x4:  // docs/layouts.md §4
      return {round_up(rows, 128), round_up(cols, 4)};
    case ScaleLayout::kAiterShuffle:  // AITER shuffle_scale pads to (256, 8), docs/layouts.md §1.4
      return {round_up(rows, 256), round_up(cols, 8)};
  }
  throw std::invalid_argument("scale layout: unknown ScaleLayout value");
}

// Offset of padded-grid cell (r, c); the caller guarantees r < p.rows and c < p.cols.
std::size_t padded_offset(ScaleLayout layout, Padded p, std::size_t r, std::size_t c) {
  switch (layout) {
    case ScaleLayout::kRowMajor:
      return r * p.cols + c;
    case ScaleLayout::kColMajor:
    case ScaleLayout::kTmaColMajor:
      return c * p.rows + r;
    case ScaleLayout::kNvSwizzle128x4:
      // docs/layouts.md §4 closed form: 512-element 128x4 tiles, tiles row-major.
      return ((r / 128) * (p.cols / 4) + c / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 +
             c % 4;
    case ScaleLayout::kAiterShuffle:
      // docs/layouts.md §1.4: x = r, y = c, sn = p.cols.
      return (r / 32) * p.cols * 32 + (c / 8) * 256 + (c % 4) * 64 + (r % 16) * 4 +
             ((c % 8) / 4) * 2 + (r % 32) / 16;
  }
  throw std::invalid_argument("scale layout: unknown ScaleLayout value");
}

// Padded-grid cell stored at `off`; the caller guarantees off < p.rows * p.cols.
std::pair<std::size_t, std::size_t> padded_inverse(ScaleLayout layout, Padded p, std::size_t off) {
  switch (layout) {
    case ScaleLayout::kRowMajor:
      return {off / p.cols, off % p.cols};
    case ScaleLayout::kColMajor:
    case ScaleLayout::kTmaColMajor:
      return {off % p.rows, off / p.rows};
    case ScaleLayout::kNvSwizzle128x4: {
      const std::size_t tile = off / 512;
      const std::size_t in = off % 512;  // (r%32)*16 + ((r%128)/32)*4 + c%4
      const std::size_t col_tiles = p.cols / 4;
      return {(tile / col_tiles) * 128 + ((in % 16) / 4) * 32 + in / 16,
              (tile % col_tiles) * 4 + in % 4};
    }
    case ScaleLayout::kAiterShuffle: {
      const std::size_t band = off / (32 * p.cols);  // 32-row band
      const std::size_t w = off % (32 * p.cols);
      const std::size_t q = w % 256;  // (c%4)*64 + (r%16)*4 + ((c%8)/4)*2 + (r%32)/16
      return {band * 32 + (q % 2) * 16 + (q % 64) / 4, (w / 256) * 8 + ((q % 4) / 2) * 4 + q / 64};
    }
  }
  throw std::invalid_argument("scale layout: unknown ScaleLayout value");
}

}  // namespace

std::span<const ScaleLayout> all_scale_layouts() { return kAllLayouts; }

std::optional<ScaleLayout> parse_scale_layout(std::string_view name) {
  for (ScaleLayout layout : kAllLayouts) {
    if (to_string(layout) == name) {
      return layout;
    }
  }
  return std::nullopt;
}

std::string_view to_string(ScaleLayout layout) {
  switch (layout) {
    case ScaleLayout::kRowMajor:
      return "row_major";
    case ScaleLayout::kColMajor:
      return "col_major";
    case ScaleLayout::kTmaColMajor:
      return "tma_col_major";
    case ScaleLayout::kNvSwizzle128x4:
      return "nv_swizzle_128x4";
    case ScaleLayout::kAiterShuffle:
      return "aiter_shuffle";
  }
  throw std::invalid_argument("scale layout: unknown ScaleLayout value");
}

std::size_t scale_storage_size(ScaleLayout layout, std::size_t rows, std::size_t cols) {
  const Padded p = padded_dims(layout, rows, cols);
  return checked_mul(p.rows, p.cols);
}

std::size_t scale_offset(ScaleLayout layout, std::size_t rows, std::size_t cols, std::size_t r,
                         std::size_t c) {
  if (r >= rows || c >= cols) {
    throw std::invalid_argument("scale_offset: (" + std::to_string(r) + ", " + std::to_string(c) +
                                ") is outside the " + std::to_string(rows) + " x " +
                                std::to_string(cols) + " scale matrix");
  }
  scale_storage_size(layout, rows, cols);  // rejects shapes whose storage overflows
  return padded_offset(layout, padded_dims(layout, rows, cols), r, c);
}

std::optional<std::pair<std::size_t, std::size_t>> scale_inverse(ScaleLayout layout,
                                                                 std::size_t rows, std::size_t cols,
                                                                 std::size_t offset) {
  const std::size_t storage = scale_storage_size(layout, rows, cols);
  if (offset >= storage) {
    throw std::invalid_argument("scale_inverse: offset " + std::to_string(offset) +
                                " is outside the " + std::to_string(storage) + "-element " +
                                std::string(to_string(layout)) + " storage");
  }
  const auto [r, c] = padded_inverse(layout, padded_dims(layout, rows, cols), offset);
  if (r >= rows || c >= cols) {
    return std::nullopt;
  }
  return std::pair{r, c};
}

std::vector<std::size_t> scale_offset_table(ScaleLayout layout, std::size_t rows,
                                            std::size_t cols) {
  scale_storage_size(layout, rows, cols);  // rejects overflow; implies rows*cols fits too
  const Padded p = padded_dims(layout, rows, cols);
  std::vector<std::size_t> table(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      table[r * cols + c] = padded_offset(layout, p, r, c);
    }
  }
  return table;
}

}  // namespace mxgate
