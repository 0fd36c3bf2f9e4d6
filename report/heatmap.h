// Heatmaps of where a GEMM output differs from the reference, as SVG (axes, title, one rect per
// mismatched cell) and PNG (cells only, as square pixel blocks). The point is the pattern: a
// scale-order or layout bug draws stripes every 32 or 128 columns, or whole tiles, that a person
// recognizes at a glance, where a count or a first-mismatch line does not show it.
//
// A grid cell holds a severity: 0 = equal, otherwise the ULP distance of verdict.h (at least 1,
// so a +0 / -0 mismatch still shows; kNanUlpDistance for NaN vs a number). Outputs larger than
// HeatmapOptions::max_cells per side are max-pooled by a power-of-two factor per axis (so
// 32- and 128-periodic patterns stay periodic); a pooled cell is as bad as its worst element.
// Axis ticks and labels are in output-element coordinates: n (output column), m (row).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "reference/verdict.h"

namespace mxgate::report {

struct HeatmapGrid {
  std::size_t rows = 0;  // cells
  std::size_t cols = 0;
  std::size_t row_step = 1;      // output elements per cell along m (1 unless pooled)
  std::size_t col_step = 1;      // along n
  std::size_t element_rows = 0;  // the output's M
  std::size_t element_cols = 0;  // the output's N
  std::size_t mismatches = 0;    // mismatched output elements (not cells)
  uint64_t max_ulp = 0;          // largest severity
  bool ulp_known = true;         // false for masks and bound verdicts (severity is just 1)
  std::vector<uint64_t> cells;   // rows x cols, row-major

  uint64_t at(std::size_t r, std::size_t c) const { return cells[r * cols + c]; }
};

// From a mask (nonzero = mismatch; severity 1). Throws std::invalid_argument when the mask size
// is not rows * cols or the output is empty.
HeatmapGrid heatmap_from_mask(std::size_t rows, std::size_t cols, std::span<const uint8_t> mask);
// From a kernel's output and the reference, under verdict.h's bit-exact policy (any NaN equals
// any NaN); severity = max(1, ULP distance).
HeatmapGrid heatmap_from_fp32(std::size_t rows, std::size_t cols, std::span<const float> expected,
                              std::span<const float> actual);
HeatmapGrid heatmap_from_bf16(std::size_t rows, std::size_t cols,
                              std::span<const uint16_t> expected, std::span<const uint16_t> actual);
// The violations of a bound verdict, severity 1 each.
HeatmapGrid heatmap_from_bound(const BoundVerdict& verdict);

// Max-pools to at most max_cells per side with power-of-two factors (identity when it fits).
// Throws std::invalid_argument for max_cells == 0.
HeatmapGrid downsample_max(const HeatmapGrid& grid, std::size_t max_cells);

enum class HeatmapColor {
  kLogUlp,    // light (smallest ULP distance in the grid) to dark (largest), on log2 ULP
  kMismatch,  // one colour for every mismatch
};

struct HeatmapOptions {
  std::string title;  // names the check, e.g. "gemm.exact.bpreshuffle (hip) seed 7"
  HeatmapColor color = HeatmapColor::kLogUlp;
  std::size_t max_cells = 256;     // per side, before max-pooling kicks in
  std::size_t min_png_side = 256;  // the PNG's long side has at least this many pixels
};

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};
// Matching cells; no mismatch colour equals it.
inline constexpr Rgb kHeatmapMatchColor{247, 247, 247};
// The colour of a cell of severity `ulp` (> 0) in a grid whose mismatched cells range over
// [lo, hi].
Rgb heatmap_mismatch_color(uint64_t ulp, uint64_t lo, uint64_t hi, HeatmapColor mode);

// One-line summary used as the title line and PNG comment, e.g. "gemm.x: 96 of 4096 elements
// differ (2.34%), max 7 ulp, 64 x 64 (m x n)".
std::string heatmap_summary(const HeatmapGrid& grid, const std::string& title);

// Both writers pool first (downsample_max with options.max_cells).
// SVG: each mismatched cell is one <rect class="m" .../> over a background of the match colour.
void write_heatmap_svg(const HeatmapGrid& grid, const HeatmapOptions& options, std::ostream& out);
// PNG: cell (r, c) is the s x s pixel block at x = c * s, y = r * s, where s is the smallest
// integer scale making the long side >= min_png_side (and the short side >= 16 px where that
// keeps the long side <= 4096). No text is drawn; the title is in a tEXt chunk.
void write_heatmap_png(const HeatmapGrid& grid, const HeatmapOptions& options, std::ostream& out);

// File versions; throw std::runtime_error naming the path when it cannot be written.
void write_heatmap_svg_file(const HeatmapGrid& grid, const HeatmapOptions& options,
                            const std::filesystem::path& path);
void write_heatmap_png_file(const HeatmapGrid& grid, const HeatmapOptions& options,
                            const std::filesystem::path& path);

}  // namespace mxgate::report
