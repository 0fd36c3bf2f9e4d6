// Covers report/'s mismatch heatmaps: grids from fp32 / bf16 / masks / bound verdicts,
// max-pooling, the colour scale, the PNG (decoded here: signature, IHDR, CRC-32 of every chunk
// computed independently, IDAT inflated with zlib, pixels of a known stripe pattern) and the SVG
// (one highlighted rect per mismatched cell, labels, pooling of large outputs). The gate reports
// are test_report.cpp.
// Does NOT cover: whether a heatmap looks good to a person.
// The SVG well-formedness check skips when xmllint is absent.
#include <gtest/gtest.h>
#include <zlib.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/verdict.h"
#include "report/heatmap.h"
#include "report/png.h"
#include "tests/report_files.h"
#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate::report {
namespace {

using test_support::shell_quote;
using test_support::TempDir;

// ---------------------------------------------------------------------------------------------
// Heatmap grids

// Guards against a grid that disagrees with verdict.h's policy: NaN equals NaN, +0 vs -0 is a
// mismatch (and must show), severity is the ULP distance.
TEST(Heatmap, Fp32GridFollowsTheVerdictPolicy) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> e{1.0f, 0.0f, nan, 2.0f, 5.0f, 1.0f};
  std::vector<float> a{1.0f, -0.0f, -nan, std::bit_cast<float>(0x40000007u), nan, 1.0f};
  const HeatmapGrid g = heatmap_from_fp32(2, 3, e, a);
  EXPECT_EQ(g.mismatches, 3u);
  EXPECT_EQ(g.at(0, 0), 0u);
  EXPECT_EQ(g.at(0, 1), 1u);  // signed zero: 0 ulp, shown as 1
  EXPECT_EQ(g.at(0, 2), 0u);  // NaN == NaN
  EXPECT_EQ(g.at(1, 0), 7u);
  EXPECT_EQ(g.at(1, 1), kNanUlpDistance);
  EXPECT_EQ(g.max_ulp, kNanUlpDistance);
  EXPECT_TRUE(g.ulp_known);
  const std::vector<uint16_t> be{0x3f80, 0x4000}, ba{0x3f81, 0x4000};
  const HeatmapGrid b = heatmap_from_bf16(1, 2, be, ba);
  EXPECT_EQ(b.mismatches, 1u);
  EXPECT_EQ(b.at(0, 0), 1u);
}

// Guards against sizes that do not match the declared shape being read out of bounds.
TEST(Heatmap, BadSizesThrow) {
  std::vector<uint8_t> mask(11);
  EXPECT_THROW(heatmap_from_mask(3, 4, mask), std::invalid_argument);
  EXPECT_THROW(heatmap_from_mask(0, 4, {}), std::invalid_argument);
  std::vector<float> e(12), a(11);
  EXPECT_THROW(heatmap_from_fp32(3, 4, e, a), std::invalid_argument);
  BoundVerdict v;
  v.rows = 2;
  v.cols = 2;
  v.violations.push_back({.row = 2, .col = 0});
  EXPECT_THROW(heatmap_from_bound(v), std::invalid_argument);
  EXPECT_THROW(downsample_max(heatmap_from_mask(1, 1, std::vector<uint8_t>{1}), 0),
               std::invalid_argument);
}

// Guards against pooling that blurs a 32-column stripe pattern (non-power-of-two factors) or
// drops isolated mismatches (averaging instead of max).
TEST(Heatmap, MaxPoolingKeepsStripesPeriodicAndSingleMismatches) {
  const std::size_t rows = 600, cols = 1024;
  std::vector<uint8_t> mask(rows * cols, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; c += 32) mask[r * cols + c] = 1;
  }
  mask[599 * cols + 1023] = 1;  // a lone corner element
  const HeatmapGrid g = downsample_max(heatmap_from_mask(rows, cols, mask), 256);
  EXPECT_EQ(g.row_step, 4u);  // 600 -> 300 -> 150 rows: factor 4, not 3
  EXPECT_EQ(g.col_step, 4u);
  ASSERT_EQ(g.rows, 150u);
  ASSERT_EQ(g.cols, 256u);
  EXPECT_EQ(g.mismatches, rows * cols / 32 + 1);  // element count survives pooling
  for (std::size_t r = 0; r < g.rows; ++r) {
    for (std::size_t c = 0; c < g.cols; ++c) {
      const bool want = c % 8 == 0 || (r == 149 && c == 255);
      ASSERT_EQ(g.at(r, c) != 0, want) << "cell (" << r << "," << c << ")";
    }
  }
  const HeatmapGrid same = downsample_max(heatmap_from_mask(rows, cols, mask), 1024);
  EXPECT_EQ(same.cols, cols);
  EXPECT_EQ(same.col_step, 1u);
}

// Guards against colours that cannot be told apart from matching cells, or a scale that runs
// the wrong way (more ULP must be darker).
TEST(Heatmap, ColoursAreDistinctFromMatchAndDarkenWithUlp) {
  const Rgb light = heatmap_mismatch_color(1, 1, 1 << 20, HeatmapColor::kLogUlp);
  const Rgb dark = heatmap_mismatch_color(1 << 20, 1, 1 << 20, HeatmapColor::kLogUlp);
  const Rgb mid = heatmap_mismatch_color(1 << 10, 1, 1 << 20, HeatmapColor::kLogUlp);
  const auto luma = [](Rgb c) { return 299 * c.r + 587 * c.g + 114 * c.b; };
  EXPECT_GT(luma(light), luma(mid));
  EXPECT_GT(luma(mid), luma(dark));
  for (uint64_t u : {uint64_t{1}, uint64_t{1000}, kNanUlpDistance}) {
    for (HeatmapColor m : {HeatmapColor::kLogUlp, HeatmapColor::kMismatch}) {
      EXPECT_NE(heatmap_mismatch_color(u, 1, kNanUlpDistance, m), kHeatmapMatchColor);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// PNG

// Bitwise CRC-32 (ISO-HDLC, as PNG specifies), written here so the check does not trust zlib's
// crc32 that the encoder used.
uint32_t crc32_reference(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char b : bytes) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint32_t be32(const std::string& s, std::size_t at) {
  return (uint32_t{static_cast<unsigned char>(s[at])} << 24) |
         (uint32_t{static_cast<unsigned char>(s[at + 1])} << 16) |
         (uint32_t{static_cast<unsigned char>(s[at + 2])} << 8) |
         uint32_t{static_cast<unsigned char>(s[at + 3])};
}

struct DecodedPng {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;  // filter bytes removed
  std::vector<std::string> chunk_types;
  std::vector<std::string> texts;  // "keyword=value"
  Rgb at(std::size_t x, std::size_t y) const {
    const uint8_t* p = &rgb[3 * (y * width + x)];
    return {p[0], p[1], p[2]};
  }
};

// Decodes what write_png writes (8-bit RGB, filter 0); ADD_FAILUREs on any structural error.
DecodedPng decode_png(const std::string& png) {
  DecodedPng d;
  if (png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) {
    ADD_FAILURE() << "bad PNG signature";
    return d;
  }
  std::string idat;
  std::size_t at = 8;
  while (at + 12 <= png.size()) {
    const uint32_t len = be32(png, at);
    if (at + 12 + len > png.size()) {
      ADD_FAILURE() << "chunk overruns the file at " << at;
      return d;
    }
    const std::string type = png.substr(at + 4, 4);
    const std::string data = png.substr(at + 8, len);
    EXPECT_EQ(be32(png, at + 8 + len), crc32_reference(type + data)) << "CRC of " << type;
    d.chunk_types.push_back(type);
    if (type == "IHDR") {
      EXPECT_EQ(len, 13u);
      d.width = be32(data, 0);
      d.height = be32(data, 4);
      EXPECT_EQ(data.substr(8), std::string("\x08\x02\x00\x00\x00", 5)) << "8-bit RGB expected";
    } else if (type == "IDAT") {
      idat += data;
    } else if (type == "tEXt") {
      const std::size_t nul = data.find('\0');
      d.texts.push_back(data.substr(0, nul) + "=" + data.substr(nul + 1));
    }
    at += 12 + len;
  }
  EXPECT_EQ(at, png.size()) << "trailing bytes";
  if (d.chunk_types.empty() || d.chunk_types.front() != "IHDR" || d.chunk_types.back() != "IEND") {
    ADD_FAILURE() << "PNG must start with IHDR and end with IEND";
    return d;
  }
  const std::size_t stride = std::size_t{d.width} * 3 + 1;
  std::vector<Bytef> raw(stride * d.height);
  uLongf raw_size = raw.size();
  const int rc =
      uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size());
  if (rc != Z_OK || raw_size != raw.size()) {
    ADD_FAILURE() << "IDAT does not inflate to height * (1 + 3 * width) bytes (zlib " << rc << ")";
    return d;
  }
  for (std::size_t y = 0; y < d.height; ++y) {
    EXPECT_EQ(raw[y * stride], 0) << "filter type of row " << y;
    d.rgb.insert(d.rgb.end(), raw.begin() + static_cast<std::ptrdiff_t>(y * stride + 1),
                 raw.begin() + static_cast<std::ptrdiff_t>((y + 1) * stride));
  }
  return d;
}

// Guards against a PNG that viewers reject (bad CRC, wrong IHDR, bad zlib stream) or that draws
// a stripe pattern in the wrong place: a mismatch every 32 columns must colour exactly pixel
// columns 0, 32, 64, ... of a 256-cell-wide output.
TEST(HeatmapPng, DecodesToTheStripePattern) {
  const std::size_t rows = 64, cols = 256;
  std::vector<uint8_t> mask(rows * cols, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; c += 32) mask[r * cols + c] = 1;
  }
  std::ostringstream s;
  write_heatmap_png(heatmap_from_mask(rows, cols, mask), {.title = "stripes"}, s);
  const DecodedPng png = decode_png(s.str());
  ASSERT_EQ(png.width, 256u);  // long side already 256: scale 1
  ASSERT_EQ(png.height, 64u);
  ASSERT_EQ(png.rgb.size(), 256u * 64 * 3);
  for (std::size_t y = 0; y < png.height; ++y) {
    for (std::size_t x = 0; x < png.width; ++x) {
      ASSERT_EQ(png.at(x, y) != kHeatmapMatchColor, x % 32 == 0)
          << "pixel (" << x << "," << y << ")";
    }
  }
  ASSERT_FALSE(png.texts.empty());
  EXPECT_EQ(png.texts[0], "Title=stripes");
}

// Guards against small outputs drawn at one pixel per element (invisible) or with cells not
// aligned to whole pixel blocks.
TEST(HeatmapPng, SmallOutputsAreScaledToWholePixelBlocks) {
  // 4 x 8: scale 32 -> 256 x 128; mismatch at (1, 5) with 9 ulp and (3, 0) with 1 ulp.
  std::vector<float> e(32, 1.0f), a = e;
  a[1 * 8 + 5] = std::bit_cast<float>(0x3f800009u);
  a[3 * 8 + 0] = std::bit_cast<float>(0x3f800001u);
  std::ostringstream s;
  write_heatmap_png(heatmap_from_fp32(4, 8, e, a), {}, s);
  const DecodedPng png = decode_png(s.str());
  ASSERT_EQ(png.width, 256u);
  ASSERT_EQ(png.height, 128u);
  const Rgb dark = heatmap_mismatch_color(9, 1, 9, HeatmapColor::kLogUlp);
  const Rgb light = heatmap_mismatch_color(1, 1, 9, HeatmapColor::kLogUlp);
  for (std::size_t y = 0; y < png.height; ++y) {
    for (std::size_t x = 0; x < png.width; ++x) {
      const std::size_t r = y / 32, c = x / 32;
      const Rgb want = r == 1 && c == 5 ? dark : r == 3 && c == 0 ? light : kHeatmapMatchColor;
      ASSERT_EQ(png.at(x, y), want) << "pixel (" << x << "," << y << ")";
    }
  }
  // A one-row output still gets a visible height.
  std::ostringstream line;
  write_heatmap_png(heatmap_from_mask(1, 256, std::vector<uint8_t>(256, 1)), {}, line);
  EXPECT_GE(decode_png(line.str()).height, 16u);
}

// Guards against a heatmap file silently not written when its path is unusable.
TEST(HeatmapPng, UnwritablePathThrowsNamingThePath) {
  TempDir d;
  const HeatmapGrid g = heatmap_from_mask(1, 1, std::vector<uint8_t>{1});
  const std::string bad = d.file("missing/heat.png");
  try {
    write_heatmap_png_file(g, {}, bad);
    FAIL() << "no exception for " << bad;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_heatmap_svg_file(g, {}, d.file("missing/heat.svg")), std::runtime_error);
  write_heatmap_png_file(g, {}, d.file("heat.png"));
  EXPECT_EQ(decode_png(read_file(d.file("heat.png"))).width, 256u);
}

// ---------------------------------------------------------------------------------------------
// SVG

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// Guards against an SVG that highlights the wrong number of cells, or that lacks the labels a
// person needs to read it (title with counts, axis names).
TEST(HeatmapSvg, OneHighlightedRectPerMismatchedCell) {
  const std::size_t rows = 64, cols = 256;
  std::vector<uint8_t> mask(rows * cols, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; c += 32) mask[r * cols + c] = 1;  // 8 per row
  }
  for (std::size_t c = 0; c < 16; ++c) mask[5 * cols + 128 + c] = 1;  // a 1 x 16 run
  const HeatmapGrid g = heatmap_from_mask(rows, cols, mask);
  std::ostringstream s;
  write_heatmap_svg(g, {.title = "gemm.exact <host> & more"}, s);
  const std::string svg = s.str();
  EXPECT_EQ(count(svg, "<rect class=\"m\""), rows * 8 + 15);  // (5, 128) is already a stripe
  EXPECT_NE(svg.find("n (output column)"), std::string::npos);
  EXPECT_NE(svg.find("m (row)"), std::string::npos);
  EXPECT_NE(svg.find("gemm.exact &lt;host&gt; &amp; more: 527 of 16384 elements differ"),
            std::string::npos)
      << svg.substr(0, 600);
  EXPECT_NE(svg.find(">128</text>"), std::string::npos) << "a tick at n = 128";
  if (!have_xmllint()) GTEST_SKIP() << "xmllint not installed: SVG well-formedness not checked";
  TempDir d;
  write_text(d.file("h.svg"), svg);
  EXPECT_EQ(run("xmllint --noout " + shell_quote(d.file("h.svg"))), 0);
}

// Guards against an SVG with a rect per element for big outputs (hundreds of MB): a 2048 x 2048
// output is drawn as at most 256 x 256 cells, labelled as pooled.
TEST(HeatmapSvg, LargeOutputsArePooled) {
  const std::size_t n = 2048;
  std::vector<uint8_t> mask(n * n, 0);
  for (std::size_t r = 0; r < n; r += 128) {
    for (std::size_t c = 0; c < n; ++c) mask[r * n + c] = 1;  // a row every 128: 16 rows
  }
  std::ostringstream s;
  write_heatmap_svg(heatmap_from_mask(n, n, mask), {.title = "big"}, s);
  const std::string svg = s.str();
  EXPECT_EQ(count(svg, "<rect class=\"m\""), 16u * 256);
  EXPECT_NE(svg.find("each cell is 8 x 8 elements, max-pooled"), std::string::npos);
  EXPECT_LT(svg.size(), 2u << 20);
}

}  // namespace
}  // namespace mxgate::report
