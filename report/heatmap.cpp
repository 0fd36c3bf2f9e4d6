#include "report/heatmap.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/blocks.h"
#include "report/file_output.h"
#include "report/png.h"
#include "report/xml_escape.h"

namespace mxgate::report {
namespace {

HeatmapGrid empty_grid(std::size_t rows, std::size_t cols, std::size_t size, const char* what) {
  if (rows == 0 || cols == 0) {
    throw std::invalid_argument(std::string(what) + ": empty output (" + std::to_string(rows) +
                                " x " + std::to_string(cols) + ")");
  }
  if (rows > std::numeric_limits<std::size_t>::max() / cols || size != rows * cols) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(size) +
                                " elements given for a " + std::to_string(rows) + " x " +
                                std::to_string(cols) + " output");
  }
  HeatmapGrid g;
  g.rows = g.element_rows = rows;
  g.cols = g.element_cols = cols;
  g.cells.assign(rows * cols, 0);
  return g;
}

void mark(HeatmapGrid& g, std::size_t i, uint64_t severity) {
  severity = std::max<uint64_t>(severity, 1);
  if (g.cells[i] == 0) ++g.mismatches;
  g.cells[i] = std::max(g.cells[i], severity);
  g.max_ulp = std::max(g.max_ulp, severity);
}

// Range of the nonzero cells, for the colour scale.
std::pair<uint64_t, uint64_t> severity_range(const HeatmapGrid& g) {
  uint64_t lo = std::numeric_limits<uint64_t>::max(), hi = 0;
  for (uint64_t v : g.cells) {
    if (v == 0) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return {lo, hi};
}

std::string severity_text(uint64_t v, bool ulp_known) {
  if (!ulp_known) return "mismatch";
  if (v == kNanUlpDistance) return "NaN vs number";
  return std::to_string(v) + " ulp";
}

std::string legend(const HeatmapGrid& g, HeatmapColor mode) {
  std::string s;
  const auto [lo, hi] = severity_range(g);
  if (mode == HeatmapColor::kLogUlp && g.ulp_known && hi > 0) {
    s = "colour: log2 ULP distance, lightest " + severity_text(lo, true) + ", darkest " +
        severity_text(hi, true);
  } else {
    s = "colour: mismatch";
  }
  if (g.row_step > 1 || g.col_step > 1) {
    s += "; each cell is " + std::to_string(g.row_step) + " x " + std::to_string(g.col_step) +
         " elements, max-pooled";
  }
  return s;
}

// Tick spacing in elements: a power of two (GEMM tiles are), a multiple of the cell step, and at
// most about 8 intervals across the axis.
std::size_t tick_step(std::size_t elements, std::size_t cell_step) {
  std::size_t step = std::max<std::size_t>(cell_step, 1);
  while (elements / step > 8) step *= 2;
  return step;
}

std::string hex_colour(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

}  // namespace

HeatmapGrid heatmap_from_mask(std::size_t rows, std::size_t cols, std::span<const uint8_t> mask) {
  HeatmapGrid g = empty_grid(rows, cols, mask.size(), "heatmap_from_mask");
  g.ulp_known = false;
  for (std::size_t i = 0; i < mask.size(); ++i) {
    if (mask[i]) mark(g, i, 1);
  }
  return g;
}

HeatmapGrid heatmap_from_fp32(std::size_t rows, std::size_t cols, std::span<const float> expected,
                              std::span<const float> actual) {
  HeatmapGrid g = empty_grid(rows, cols, expected.size(), "heatmap_from_fp32 (expected)");
  empty_grid(rows, cols, actual.size(), "heatmap_from_fp32 (actual)");
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto e = std::bit_cast<uint32_t>(expected[i]);
    const auto a = std::bit_cast<uint32_t>(actual[i]);
    if (!same_fp32(e, a)) mark(g, i, ulp_distance_fp32(e, a));
  }
  return g;
}

HeatmapGrid heatmap_from_bf16(std::size_t rows, std::size_t cols,
                              std::span<const uint16_t> expected,
                              std::span<const uint16_t> actual) {
  HeatmapGrid g = empty_grid(rows, cols, expected.size(), "heatmap_from_bf16 (expected)");
  empty_grid(rows, cols, actual.size(), "heatmap_from_bf16 (actual)");
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (!same_bf16(expected[i], actual[i])) mark(g, i, ulp_distance_bf16(expected[i], actual[i]));
  }
  return g;
}

HeatmapGrid heatmap_from_bound(const BoundVerdict& verdict) {
  const std::size_t n =
      verdict.cols != 0 && verdict.rows <= std::numeric_limits<std::size_t>::max() / verdict.cols
          ? verdict.rows * verdict.cols
          : 0;
  HeatmapGrid g = empty_grid(verdict.rows, verdict.cols, n, "heatmap_from_bound");
  g.ulp_known = false;
  for (const BoundViolation& v : verdict.violations) {
    if (v.row >= g.rows || v.col >= g.cols) {
      throw std::invalid_argument("heatmap_from_bound: violation at (" + std::to_string(v.row) +
                                  "," + std::to_string(v.col) + ") outside the " +
                                  std::to_string(g.rows) + " x " + std::to_string(g.cols) +
                                  " output");
    }
    mark(g, v.row * g.cols + v.col, 1);
  }
  return g;
}

HeatmapGrid downsample_max(const HeatmapGrid& grid, std::size_t max_cells) {
  if (max_cells == 0) throw std::invalid_argument("downsample_max: max_cells must be positive");
  std::size_t fr = 1, fc = 1;
  while ((grid.rows + fr - 1) / fr > max_cells) fr *= 2;
  while ((grid.cols + fc - 1) / fc > max_cells) fc *= 2;
  if (fr == 1 && fc == 1) return grid;
  HeatmapGrid p = grid;
  p.rows = (grid.rows + fr - 1) / fr;
  p.cols = (grid.cols + fc - 1) / fc;
  p.row_step = grid.row_step * fr;
  p.col_step = grid.col_step * fc;
  p.cells.assign(p.rows * p.cols, 0);
  for (std::size_t r = 0; r < grid.rows; ++r) {
    for (std::size_t c = 0; c < grid.cols; ++c) {
      uint64_t& cell = p.cells[(r / fr) * p.cols + c / fc];
      cell = std::max(cell, grid.at(r, c));
    }
  }
  return p;
}

Rgb heatmap_mismatch_color(uint64_t ulp, uint64_t lo, uint64_t hi, HeatmapColor mode) {
  if (mode == HeatmapColor::kMismatch) return {215, 48, 39};
  double t = 1;
  if (hi > lo && ulp > 0) {
    const double l = std::log2(static_cast<double>(lo)), h = std::log2(static_cast<double>(hi));
    t = std::clamp((std::log2(static_cast<double>(ulp)) - l) / (h - l), 0.0, 1.0);
  }
  // Yellow-orange -> red -> dark red (the ColorBrewer YlOrRd end points): all far from the light
  // grey of matching cells.
  const Rgb stops[3] = {{254, 217, 118}, {240, 59, 32}, {128, 0, 38}};
  const int seg = t < 0.5 ? 0 : 1;
  const double u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
  const auto mix = [&](uint8_t a, uint8_t b) {
    return static_cast<uint8_t>(std::lround(a + (static_cast<double>(b) - a) * u));
  };
  const Rgb& a = stops[seg];
  const Rgb& b = stops[seg + 1];
  return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)};
}

std::string heatmap_summary(const HeatmapGrid& grid, const std::string& title) {
  const double total = static_cast<double>(grid.element_rows) * grid.element_cols;
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.3g%%", total > 0 ? 100.0 * grid.mismatches / total : 0.0);
  std::string s = title.empty() ? "" : title + ": ";
  s += std::to_string(grid.mismatches) + " of " +
       std::to_string(grid.element_rows * grid.element_cols) + " elements differ (" + pct + ")";
  if (grid.ulp_known && grid.max_ulp > 0) s += ", max " + severity_text(grid.max_ulp, true);
  s += ", " + std::to_string(grid.element_rows) + " x " + std::to_string(grid.element_cols) +
       " (m x n)";
  return s;
}

void write_heatmap_svg(const HeatmapGrid& grid, const HeatmapOptions& options, std::ostream& out) {
  const HeatmapGrid g = downsample_max(grid, options.max_cells);
  if (g.rows == 0 || g.cols == 0) throw std::invalid_argument("write_heatmap_svg: empty grid");
  const std::size_t cell = std::max<std::size_t>(2, 512 / std::max(g.rows, g.cols));
  const std::size_t left = 72, top = 56, right = 24, bottom = 60;
  const std::size_t plot_w = g.cols * cell, plot_h = g.rows * cell;
  const std::string summary = heatmap_summary(g, options.title), key = legend(g, options.color);
  // Wide enough for the two text lines (monospace 13 px: under 8 px a character).
  const std::size_t text_w = 16 + 8 * std::max(summary.size(), key.size());
  const std::size_t width = std::max({left + plot_w + right, text_w, std::size_t{480}});
  const std::size_t height = top + plot_h + bottom;
  const auto [lo, hi] = severity_range(g);

  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << ' ' << height
      << "\" font-family=\"monospace\" font-size=\"12\">\n";
  out << "<title>" << xml_escape_text(summary) << "</title>\n";
  out << "<rect width=\"" << width << "\" height=\"" << height << "\" fill=\"#ffffff\"/>\n";
  out << "<text x=\"8\" y=\"18\" font-size=\"13\">" << xml_escape_text(summary) << "</text>\n";
  out << "<text x=\"8\" y=\"36\">" << xml_escape_text(key) << "</text>\n";
  out << "<rect class=\"plot\" x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w
      << "\" height=\"" << plot_h << "\" fill=\"" << hex_colour(kHeatmapMatchColor)
      << "\" stroke=\"#888888\" stroke-width=\"1\"/>\n";

  // Per-cell tooltips only while the file stays small; axis ticks locate cells otherwise.
  const bool tooltips =
      std::count_if(g.cells.begin(), g.cells.end(), [](uint64_t v) { return v != 0; }) <= 4096;
  out << "<g shape-rendering=\"crispEdges\">\n";
  for (std::size_t r = 0; r < g.rows; ++r) {
    for (std::size_t c = 0; c < g.cols; ++c) {
      const uint64_t v = g.at(r, c);
      if (v == 0) continue;
      out << "<rect class=\"m\" x=\"" << left + c * cell << "\" y=\"" << top + r * cell
          << "\" width=\"" << cell << "\" height=\"" << cell << "\" fill=\""
          << hex_colour(heatmap_mismatch_color(v, lo, hi, options.color)) << '"';
      if (!tooltips) {
        out << "/>\n";
        continue;
      }
      const std::size_t m0 = r * g.row_step, n0 = c * g.col_step;
      const std::size_t m1 = std::min(m0 + g.row_step, g.element_rows) - 1;
      const std::size_t n1 = std::min(n0 + g.col_step, g.element_cols) - 1;
      out << "><title>m " << m0;
      if (m1 != m0) out << '-' << m1;
      out << ", n " << n0;
      if (n1 != n0) out << '-' << n1;
      out << ": " << severity_text(v, g.ulp_known) << "</title></rect>\n";
    }
  }
  out << "</g>\n";

  // Ticks in element coordinates.
  const std::size_t xstep = tick_step(g.element_cols, g.col_step);
  for (std::size_t n = 0; n <= g.element_cols; n += xstep) {
    const std::size_t x = left + n / g.col_step * cell;
    out << "<line x1=\"" << x << "\" y1=\"" << top + plot_h << "\" x2=\"" << x << "\" y2=\""
        << top + plot_h + 5 << "\" stroke=\"#444444\"/>"
        << "<text x=\"" << x << "\" y=\"" << top + plot_h + 18 << "\" text-anchor=\"middle\">" << n
        << "</text>\n";
  }
  const std::size_t ystep = tick_step(g.element_rows, g.row_step);
  for (std::size_t m = 0; m <= g.element_rows; m += ystep) {
    const std::size_t y = top + m / g.row_step * cell;
    out << "<line x1=\"" << left - 5 << "\" y1=\"" << y << "\" x2=\"" << left << "\" y2=\"" << y
        << "\" stroke=\"#444444\"/>"
        << "<text x=\"" << left - 8 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">" << m
        << "</text>\n";
  }
  out << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << top + plot_h + 42
      << "\" text-anchor=\"middle\">n (output column)</text>\n";
  out << "<text x=\"16\" y=\"" << top + plot_h / 2
      << "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " << top + plot_h / 2
      << ")\">m (row)</text>\n";
  out << "</svg>\n";
  if (!out) throw std::runtime_error("write_heatmap_svg: output stream failed");
}

void write_heatmap_png(const HeatmapGrid& grid, const HeatmapOptions& options, std::ostream& out) {
  const HeatmapGrid g = downsample_max(grid, options.max_cells);
  if (g.rows == 0 || g.cols == 0) throw std::invalid_argument("write_heatmap_png: empty grid");
  const std::size_t long_side = std::max(g.rows, g.cols), short_side = std::min(g.rows, g.cols);
  std::size_t s = std::max<std::size_t>(1, ceil_div(options.min_png_side, long_side));
  // A 1 x 256 grid would be a 1-pixel line: thicken it while the image stays reasonable.
  if (short_side * s < 16) {
    s = std::max(s, std::min(ceil_div(std::size_t{16}, short_side),
                             std::max<std::size_t>(1, 4096 / long_side)));
  }
  const Rgb bg = kHeatmapMatchColor;
  RgbImage image(g.cols * s, g.rows * s, bg.r, bg.g, bg.b);
  const auto [lo, hi] = severity_range(g);
  for (std::size_t r = 0; r < g.rows; ++r) {
    for (std::size_t c = 0; c < g.cols; ++c) {
      const uint64_t v = g.at(r, c);
      if (v == 0) continue;
      const Rgb col = heatmap_mismatch_color(v, lo, hi, options.color);
      for (std::size_t y = r * s; y < (r + 1) * s; ++y) {
        for (std::size_t x = c * s; x < (c + 1) * s; ++x) image.set(x, y, col.r, col.g, col.b);
      }
    }
  }
  write_png(
      image, out,
      {{"Title", options.title},
       {"Comment", heatmap_summary(g, options.title) + "; " + legend(g, options.color) +
                       "; pixel block (x, y) of " + std::to_string(s) + " px = cell (n, m)"}});
}

void write_heatmap_svg_file(const HeatmapGrid& grid, const HeatmapOptions& options,
                            const std::filesystem::path& path) {
  write_file(path, "SVG heatmap",
             [&](std::ostream& out) { write_heatmap_svg(grid, options, out); });
}

void write_heatmap_png_file(const HeatmapGrid& grid, const HeatmapOptions& options,
                            const std::filesystem::path& path) {
  write_file(path, "PNG heatmap",
             [&](std::ostream& out) { write_heatmap_png(grid, options, out); });
}

}  // namespace mxgate::report
