// A minimal PNG encoder: 8-bit RGB, no interlace, filter type 0 on every row, one zlib stream
// (compress2) split into IDAT chunks, CRC-32 from zlib. Enough for report images; no decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace mxgate::report {

struct RgbImage {
  std::size_t width = 0;
  std::size_t height = 0;
  std::vector<uint8_t> rgb;  // height rows of width pixels, 3 bytes (R, G, B) each

  RgbImage() = default;
  RgbImage(std::size_t w, std::size_t h, uint8_t r, uint8_t g, uint8_t b);
  void set(std::size_t x, std::size_t y, uint8_t r, uint8_t g, uint8_t b);
};

// Writes `image` as a PNG, with optional tEXt chunks (keyword, text); both are written as
// Latin-1, so characters outside printable ASCII become '?'. Throws std::invalid_argument for an
// empty image, a size PNG cannot express or a rgb buffer of the wrong size, and
// std::runtime_error when compression or the stream fails.
void write_png(const RgbImage& image, std::ostream& out,
               const std::vector<std::pair<std::string, std::string>>& text = {});

}  // namespace mxgate::report
