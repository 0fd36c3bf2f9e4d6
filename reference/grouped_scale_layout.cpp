// Per-group scale layouts (grouped_scale_layout.h): per-group bases and padding; the in-group map
// is the dense one (scale_layout.h: row-major, or the 128x4 swizzle).
#include "reference/grouped_scale_layout.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/blocks.h"
#include "reference/scale_layout.h"

namespace mxgate {

using std::size_t;

namespace {

ScaleLayout dense_of(GroupedScaleLayout layout) {
  return layout == GroupedScaleLayout::kContiguousPerGroup ? ScaleLayout::kRowMajor
                                                           : ScaleLayout::kNvSwizzle128x4;
}

}  // namespace

std::string_view to_string(GroupedScaleLayout layout) {
  return layout == GroupedScaleLayout::kContiguousPerGroup ? "contiguous_per_group"
                                                           : "blocked_128x4_per_group";
}

std::optional<GroupedScaleLayout> parse_grouped_scale_layout(std::string_view name) {
  for (const auto l :
       {GroupedScaleLayout::kContiguousPerGroup, GroupedScaleLayout::kBlocked128x4PerGroup}) {
    if (name == to_string(l)) return l;
  }
  return std::nullopt;
}

std::vector<GroupScaleShape> m_group_scale_shapes(std::span<const GroupRange> ranges,
                                                  size_t scale_cols) {
  std::vector<GroupScaleShape> out;
  for (const GroupRange& r : ranges) out.push_back({r.size(), scale_cols});
  return out;
}

std::vector<GroupScaleShape> k_group_scale_shapes(std::span<const GroupRange> ranges, size_t rows,
                                                  size_t k_block) {
  if (k_block == 0) throw std::invalid_argument("k_group_scale_shapes: k_block is 0");
  std::vector<GroupScaleShape> out;
  for (const GroupRange& r : ranges) out.push_back({rows, ceil_div(r.size(), k_block)});
  return out;
}

size_t group_scale_storage(GroupedScaleLayout layout, GroupScaleShape shape) {
  if (shape.rows == 0 || shape.cols == 0) return 0;  // an empty group stores nothing
  return scale_storage_size(dense_of(layout), shape.rows, shape.cols);
}

std::vector<size_t> group_scale_bases(GroupedScaleLayout layout,
                                      std::span<const GroupScaleShape> shapes) {
  std::vector<size_t> bases(shapes.size() + 1, 0);
  for (size_t g = 0; g < shapes.size(); ++g) {
    bases[g + 1] = bases[g] + group_scale_storage(layout, shapes[g]);
  }
  return bases;
}

std::vector<size_t> blocked_group_row_starts(std::span<const GroupRange> ranges) {
  std::vector<size_t> starts(ranges.size() + 1, 0);
  for (size_t g = 0; g < ranges.size(); ++g) {
    starts[g + 1] = starts[g] + ceil_div(ranges[g].size(), size_t{128}) * 128;
  }
  return starts;
}

size_t grouped_scale_offset(GroupedScaleLayout layout, std::span<const GroupScaleShape> shapes,
                            GroupScaleIndex at) {
  if (at.group >= shapes.size()) {
    throw std::invalid_argument("grouped_scale_offset: group " + std::to_string(at.group) + " of " +
                                std::to_string(shapes.size()));
  }
  const GroupScaleShape s = shapes[at.group];
  if (at.row >= s.rows || at.col >= s.cols) {
    throw std::invalid_argument("grouped_scale_offset: (" + std::to_string(at.row) + ", " +
                                std::to_string(at.col) + ") outside group " +
                                std::to_string(at.group) + "'s " + std::to_string(s.rows) + "x" +
                                std::to_string(s.cols) + " grid");
  }
  const size_t base = group_scale_bases(layout, shapes.first(at.group)).back();
  return base + scale_offset(dense_of(layout), s.rows, s.cols, at.row, at.col);
}

std::optional<GroupScaleIndex> grouped_scale_inverse(GroupedScaleLayout layout,
                                                     std::span<const GroupScaleShape> shapes,
                                                     size_t offset) {
  const std::vector<size_t> bases = group_scale_bases(layout, shapes);
  if (offset >= bases.back()) {
    throw std::invalid_argument("grouped_scale_inverse: offset " + std::to_string(offset) +
                                " >= storage " + std::to_string(bases.back()));
  }
  // The group whose storage holds `offset`: the last g with bases[g] <= offset < bases[g+1].
  const size_t g =
      static_cast<size_t>(std::upper_bound(bases.begin(), bases.end(), offset) - bases.begin()) - 1;
  const GroupScaleShape s = shapes[g];
  const auto rc = scale_inverse(dense_of(layout), s.rows, s.cols, offset - bases[g]);
  if (!rc) return std::nullopt;
  return GroupScaleIndex{g, rc->first, rc->second};
}

std::vector<size_t> grouped_scale_offset_table(GroupedScaleLayout layout,
                                               std::span<const GroupScaleShape> shapes) {
  const std::vector<size_t> bases = group_scale_bases(layout, shapes);
  std::vector<size_t> table;
  for (size_t g = 0; g < shapes.size(); ++g) {
    const GroupScaleShape s = shapes[g];
    if (s.rows == 0 || s.cols == 0) continue;
    for (const size_t o : scale_offset_table(dense_of(layout), s.rows, s.cols)) {
      table.push_back(bases[g] + o);
    }
  }
  return table;
}

}  // namespace mxgate
