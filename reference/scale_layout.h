// Physical layouts of a logical (R rows x C cols) block-scale matrix: where scale (r, c) lives in
// the buffer a kernel dereferences, how much storage (padding included) the layout needs, and
// the inverse map. Formulas: docs/layouts.md §1.4 (AITER e8m0 shuffle), §2.1 and §3.1
// (row-/column-major and TMA-aligned As), §4 (NVIDIA 128x4 swizzle).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mxgate {

enum class ScaleLayout {
  kRowMajor,        // "row_major": r*C + c
  kColMajor,        // "col_major": strides (1, R), i.e. c*R + r
  kTmaColMajor,     // "tma_col_major": strides (1, align4(R)), padding rows up to align4(R)
  kNvSwizzle128x4,  // "nv_swizzle_128x4": cuBLAS/torchao 128x4 tiles, rows->128, cols->4
  kAiterShuffle,    // "aiter_shuffle": AITER shuffle_scale, rows->256, cols->8
};

// Every layout, in declaration order (for sweeps and CLI help).
std::span<const ScaleLayout> all_scale_layouts();

// CLI name <-> enum. Unknown names give std::nullopt.
std::optional<ScaleLayout> parse_scale_layout(std::string_view name);
std::string_view to_string(ScaleLayout layout);

// Number of elements the layout occupies for an R x C logical matrix, padding included.
// Throws std::invalid_argument if the size does not fit in size_t.
std::size_t scale_storage_size(ScaleLayout layout, std::size_t rows, std::size_t cols);

// Storage offset (in elements) of logical scale (r, c). Throws std::invalid_argument if
// r >= rows or c >= cols.
std::size_t scale_offset(ScaleLayout layout, std::size_t rows, std::size_t cols, std::size_t r,
                         std::size_t c);

// Logical (r, c) stored at `offset`, or std::nullopt if that slot is padding.
// Throws std::invalid_argument if offset >= scale_storage_size(layout, rows, cols).
std::optional<std::pair<std::size_t, std::size_t>> scale_inverse(ScaleLayout layout,
                                                                 std::size_t rows, std::size_t cols,
                                                                 std::size_t offset);

// table[r*cols + c] == scale_offset(layout, rows, cols, r, c); validates once, so pack/unpack
// do not re-check every element.
std::vector<std::size_t> scale_offset_table(ScaleLayout layout, std::size_t rows, std::size_t cols);

// Lays out a row-major logical matrix; every padding slot gets `pad` (padding contents are
// observable by kernels, docs/layouts.md §1.4, so the caller chooses them).
template <class T>
std::vector<T> pack_scales(ScaleLayout layout, std::size_t rows, std::size_t cols,
                           std::span<const T> logical_row_major, T pad) {
  const std::vector<std::size_t> table = scale_offset_table(layout, rows, cols);
  if (logical_row_major.size() != table.size()) {
    throw std::invalid_argument("pack_scales: logical buffer has " +
                                std::to_string(logical_row_major.size()) + " elements, expected " +
                                std::to_string(table.size()) + " (rows*cols)");
  }
  std::vector<T> stored(scale_storage_size(layout, rows, cols), pad);
  for (std::size_t i = 0; i < table.size(); ++i) {
    stored[table[i]] = logical_row_major[i];
  }
  return stored;
}

// Inverse of pack_scales: gathers the logical row-major matrix, ignoring padding slots.
template <class T>
std::vector<T> unpack_scales(ScaleLayout layout, std::size_t rows, std::size_t cols,
                             std::span<const T> stored) {
  const std::size_t storage = scale_storage_size(layout, rows, cols);
  if (stored.size() != storage) {
    throw std::invalid_argument(
        "unpack_scales: stored buffer has " + std::to_string(stored.size()) + " elements, layout " +
        std::string(to_string(layout)) + " needs " + std::to_string(storage));
  }
  const std::vector<std::size_t> table = scale_offset_table(layout, rows, cols);
  std::vector<T> logical(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    logical[i] = stored[table[i]];
  }
  return logical;
}

}  // namespace mxgate
