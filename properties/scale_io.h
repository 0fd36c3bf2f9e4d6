// A logical rows x cols scale grid stored in an ABI layout (impl::Layout) and read back: the
// reference's layout code (reference/scale_layout.h) plus the leading-dimension padding a
// contract's ld alignment asks for (row-major rows / column-major columns rounded up, the extra
// slots holding `pad`). Shared by the GEMM operands and the quantizer / dequantizer properties.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "impl/contract.h"
#include "reference/scale_layout.h"

namespace mxgate::properties {

inline ScaleLayout reference_layout(impl::Layout l) {
  switch (l) {
    case impl::Layout::kRowMajor:
      return ScaleLayout::kRowMajor;
    case impl::Layout::kColMajor:
      return ScaleLayout::kColMajor;
    case impl::Layout::kTmaColMajor:
      return ScaleLayout::kTmaColMajor;
    case impl::Layout::kNvSwizzle128x4:
      return ScaleLayout::kNvSwizzle128x4;
    case impl::Layout::kAiterShuffle16x16:
      break;
  }
  throw std::invalid_argument("aiter_shuffle_16x16 is a weight layout, not a scale layout");
}

template <class T>
struct StoredScales {
  std::vector<T> values;  // the storage, padding included
  uint64_t ld = 0;        // the tensor's leading dimension (0: the layout has none)
};

// The storage geometry of a grid in `layout`: (lines, line length, ld) for row- / column-major.
inline bool strided(impl::Layout l) {
  return l == impl::Layout::kRowMajor || l == impl::Layout::kColMajor;
}
inline std::size_t round_up(std::size_t x, uint32_t align) {
  return align <= 1 ? x : (x + align - 1) / align * align;
}

// `extra`: slots added to each row (column) of a strided layout before the ld alignment, so the
// grid is a view into a wider tensor (a padded or sliced scale tensor: its ld says so).
template <class T>
StoredScales<T> store_scales(impl::Layout layout, std::size_t rows, std::size_t cols,
                             const std::vector<T>& logical, uint32_t ld_align, T pad,
                             std::size_t extra = 0) {
  StoredScales<T> out;
  const std::vector<T> packed =
      pack_scales<T>(reference_layout(layout), rows, cols, std::span<const T>(logical), pad);
  if (strided(layout)) {
    const bool row = layout == impl::Layout::kRowMajor;
    const std::size_t lines = row ? rows : cols, len = row ? cols : rows;
    out.ld = round_up(len + extra, ld_align);
    out.values.assign(lines * out.ld, pad);
    for (std::size_t i = 0; i < lines; ++i) {
      std::copy(packed.begin() + static_cast<std::ptrdiff_t>(i * len),
                packed.begin() + static_cast<std::ptrdiff_t>((i + 1) * len),
                out.values.begin() + static_cast<std::ptrdiff_t>(i * out.ld));
    }
    return out;
  }
  out.values = packed;
  out.ld = layout == impl::Layout::kTmaColMajor ? (rows + 3) / 4 * 4 : 0;
  return out;
}

// Elements the storage of a grid in `layout` occupies (what an output buffer needs).
inline std::size_t stored_size(impl::Layout layout, std::size_t rows, std::size_t cols,
                               uint32_t ld_align, uint64_t* ld = nullptr) {
  if (strided(layout)) {
    const bool row = layout == impl::Layout::kRowMajor;
    const std::size_t len = round_up(row ? cols : rows, ld_align);
    if (ld != nullptr) *ld = len;
    return (row ? rows : cols) * len;
  }
  if (ld != nullptr) *ld = layout == impl::Layout::kTmaColMajor ? (rows + 3) / 4 * 4 : 0;
  return scale_storage_size(reference_layout(layout), rows, cols);
}

// The logical grid out of its storage (the inverse of store_scales; padding is ignored).
template <class T>
std::vector<T> load_scales(impl::Layout layout, std::size_t rows, std::size_t cols,
                           const std::vector<T>& stored, uint32_t ld_align) {
  if (!strided(layout)) {
    return unpack_scales<T>(reference_layout(layout), rows, cols, std::span<const T>(stored));
  }
  const bool row = layout == impl::Layout::kRowMajor;
  const std::size_t lines = row ? rows : cols, len = row ? cols : rows;
  const std::size_t ld = round_up(len, ld_align);
  if (stored.size() != lines * ld) throw std::invalid_argument("load_scales: storage size");
  std::vector<T> packed(lines * len);
  for (std::size_t i = 0; i < lines; ++i) {
    std::copy(stored.begin() + static_cast<std::ptrdiff_t>(i * ld),
              stored.begin() + static_cast<std::ptrdiff_t>(i * ld + len),
              packed.begin() + static_cast<std::ptrdiff_t>(i * len));
  }
  return unpack_scales<T>(reference_layout(layout), rows, cols, std::span<const T>(packed));
}

}  // namespace mxgate::properties
