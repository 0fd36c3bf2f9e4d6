// Physical layouts of per-group block-scale matrices (docs/grouped.md §4; grouped_gemm.h holds the
// logical grids): group g owns a logical rows_g x cols_g grid, and the groups' storage follows one
// another in group order.
//   kContiguousPerGroup:  group g's grid row-major at base_g; base_{g+1} = base_g + rows_g*cols_g.
//   kBlocked128x4PerGroup: group g's grid in the NVIDIA 128x4 block swizzle (scale_layout.h
//                         kNvSwizzle128x4, docs/layouts.md §4) with ITS OWN rows padded to
//                         128 and cols to 4: base_{g+1} = base_g + align128(rows_g) *
//                         align4(cols_g) (torchao's per-group blocked layout; a zero-row group
//                         takes no storage). The bug of TransformerEngine PR #2924 is the swizzle
//                         of the concatenated grid, unpadded per group: a different map whenever
//                         a group's rows are not a multiple of 128.
// The in-group map is the dense layout's (a group is a dense grid); only the per-group bases and
// the padding between groups are this file's.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reference/grouped_gemm.h"

namespace mxgate {

enum class GroupedScaleLayout {
  kContiguousPerGroup,    // "contiguous_per_group"
  kBlocked128x4PerGroup,  // "blocked_128x4_per_group"
};

std::string_view to_string(GroupedScaleLayout layout);
std::optional<GroupedScaleLayout> parse_grouped_scale_layout(std::string_view name);

// The logical scale grid of one group.
struct GroupScaleShape {
  std::size_t rows = 0;
  std::size_t cols = 0;
  bool operator==(const GroupScaleShape&) const = default;
};

// m-grouped activation scales (1 x a_k blocks): group g's grid is (its rows) x ceil(K / a_k).
std::vector<GroupScaleShape> m_group_scale_shapes(std::span<const GroupRange> ranges,
                                                  std::size_t scale_cols);
// k-grouped scales (blocks along K restart per group): group g's grid is rows x ceil(K_g /
// k_block).
std::vector<GroupScaleShape> k_group_scale_shapes(std::span<const GroupRange> ranges,
                                                  std::size_t rows, std::size_t k_block);

// Storage of one group's grid (padding included).
std::size_t group_scale_storage(GroupedScaleLayout layout, GroupScaleShape shape);
// The scale offsets per group, derived from the group shapes: E + 1 entries, entry g the first
// storage element of group g, entry E the total storage.
std::vector<std::size_t> group_scale_bases(GroupedScaleLayout layout,
                                           std::span<const GroupScaleShape> shapes);
// kBlocked128x4PerGroup for m-grouped scales: the first row of each group in the row-padded
// scale tensor (torchao's per-group start offsets): E + 1 entries, start_0 = 0, start_{g+1} =
// start_g + align128(rows_g). Derived from the group ranges (i.e. from the group offsets).
std::vector<std::size_t> blocked_group_row_starts(std::span<const GroupRange> ranges);

struct GroupScaleIndex {
  std::size_t group = 0;
  std::size_t row = 0;
  std::size_t col = 0;
  bool operator==(const GroupScaleIndex&) const = default;
};

// Storage offset of scale (r, c) of group g; std::invalid_argument when out of range.
std::size_t grouped_scale_offset(GroupedScaleLayout layout, std::span<const GroupScaleShape> shapes,
                                 GroupScaleIndex at);
// The (group, row, col) stored at `offset`, or std::nullopt for a padding slot;
// std::invalid_argument when offset >= the total storage.
std::optional<GroupScaleIndex> grouped_scale_inverse(GroupedScaleLayout layout,
                                                     std::span<const GroupScaleShape> shapes,
                                                     std::size_t offset);
// table[i] = the storage offset of the i-th logical scale, groups in order, each row-major.
std::vector<std::size_t> grouped_scale_offset_table(GroupedScaleLayout layout,
                                                    std::span<const GroupScaleShape> shapes);

// Lays the concatenated logical grids (group order, each row-major) out; padding gets `pad`.
template <class T>
std::vector<T> pack_grouped_scales(GroupedScaleLayout layout,
                                   std::span<const GroupScaleShape> shapes,
                                   std::span<const T> logical, T pad) {
  const std::vector<std::size_t> table = grouped_scale_offset_table(layout, shapes);
  if (logical.size() != table.size()) {
    throw std::invalid_argument("pack_grouped_scales: logical buffer has " +
                                std::to_string(logical.size()) + " scales, the groups have " +
                                std::to_string(table.size()));
  }
  std::vector<T> stored(group_scale_bases(layout, shapes).back(), pad);
  for (std::size_t i = 0; i < table.size(); ++i) stored[table[i]] = logical[i];
  return stored;
}

template <class T>
std::vector<T> unpack_grouped_scales(GroupedScaleLayout layout,
                                     std::span<const GroupScaleShape> shapes,
                                     std::span<const T> stored) {
  const std::size_t storage = group_scale_bases(layout, shapes).back();
  if (stored.size() != storage) {
    throw std::invalid_argument("unpack_grouped_scales: stored buffer has " +
                                std::to_string(stored.size()) + " elements, layout " +
                                std::string(to_string(layout)) + " needs " +
                                std::to_string(storage));
  }
  const std::vector<std::size_t> table = grouped_scale_offset_table(layout, shapes);
  std::vector<T> logical(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) logical[i] = stored[table[i]];
  return logical;
}

}  // namespace mxgate
