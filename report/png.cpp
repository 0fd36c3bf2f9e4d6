#include "report/png.h"

#include <zlib.h>

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace mxgate::report {
namespace {

void put_u32(std::string& s, uint32_t v) {
  s += static_cast<char>(v >> 24);
  s += static_cast<char>(v >> 16);
  s += static_cast<char>(v >> 8);
  s += static_cast<char>(v);
}

// length, type, data, CRC-32 over type and data (PNG spec §5.3).
void write_chunk(std::ostream& out, const char type[4], std::string_view data) {
  std::string chunk;
  chunk.reserve(data.size() + 12);
  put_u32(chunk, static_cast<uint32_t>(data.size()));
  chunk.append(type, 4);
  chunk.append(data);
  const auto* typed = reinterpret_cast<const Bytef*>(chunk.data() + 4);
  const uLong crc = crc32(0L, typed, static_cast<uInt>(data.size() + 4));
  put_u32(chunk, static_cast<uint32_t>(crc));
  out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
}

std::string latin1(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7E) c = '?';
  }
  return out;
}

}  // namespace

RgbImage::RgbImage(std::size_t w, std::size_t h, uint8_t r, uint8_t g, uint8_t b)
    : width(w), height(h), rgb(w * h * 3) {
  for (std::size_t i = 0; i < w * h; ++i) {
    rgb[3 * i] = r;
    rgb[3 * i + 1] = g;
    rgb[3 * i + 2] = b;
  }
}

void RgbImage::set(std::size_t x, std::size_t y, uint8_t r, uint8_t g, uint8_t b) {
  uint8_t* p = &rgb.at(3 * (y * width + x));
  p[0] = r;
  p[1] = g;
  p[2] = b;
}

void write_png(const RgbImage& image, std::ostream& out,
               const std::vector<std::pair<std::string, std::string>>& text) {
  // PNG allows 2^31 - 1 per side; far beyond any report image, so refuse early instead.
  constexpr std::size_t kMaxSide = 1u << 15;
  if (image.width == 0 || image.height == 0 || image.width > kMaxSide || image.height > kMaxSide) {
    throw std::invalid_argument("write_png: image size " + std::to_string(image.width) + " x " +
                                std::to_string(image.height) + " is empty or larger than " +
                                std::to_string(kMaxSide) + " per side");
  }
  if (image.rgb.size() != image.width * image.height * 3) {
    throw std::invalid_argument(
        "write_png: rgb buffer has " + std::to_string(image.rgb.size()) +
        " bytes, expected width * height * 3 = " + std::to_string(image.width * image.height * 3));
  }
  static const char kSignature[8] = {'\x89', 'P', 'N', 'G', '\r', '\n', '\x1a', '\n'};
  out.write(kSignature, 8);

  std::string ihdr;
  put_u32(ihdr, static_cast<uint32_t>(image.width));
  put_u32(ihdr, static_cast<uint32_t>(image.height));
  ihdr += static_cast<char>(8);  // bit depth
  ihdr += static_cast<char>(2);  // colour type: truecolour (RGB)
  ihdr += static_cast<char>(0);  // compression: deflate
  ihdr += static_cast<char>(0);  // filter method 0
  ihdr += static_cast<char>(0);  // no interlace
  write_chunk(out, "IHDR", ihdr);

  for (const auto& [keyword, value] : text) {
    // Keywords are 1-79 Latin-1 characters; longer ones are cut rather than rejected.
    std::string data = latin1(keyword).substr(0, 79);
    if (data.empty()) continue;
    data += '\0';
    data += latin1(value);
    write_chunk(out, "tEXt", data);
  }

  // Scanlines: a filter-type byte (0, None) then the row's RGB bytes.
  const std::size_t stride = image.width * 3;
  std::vector<Bytef> raw((stride + 1) * image.height);
  for (std::size_t y = 0; y < image.height; ++y) {
    raw[y * (stride + 1)] = 0;
    std::copy_n(image.rgb.begin() + static_cast<std::ptrdiff_t>(y * stride), stride,
                raw.begin() + static_cast<std::ptrdiff_t>(y * (stride + 1) + 1));
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::vector<Bytef> packed(packed_size);
  const int rc = compress2(packed.data(), &packed_size, raw.data(), static_cast<uLong>(raw.size()),
                           Z_BEST_COMPRESSION);
  if (rc != Z_OK)
    throw std::runtime_error("write_png: zlib compress2 failed (" + std::to_string(rc) + ")");
  // IDAT chunks of at most 1 MiB: any split is valid, readers concatenate them.
  constexpr std::size_t kIdatMax = 1u << 20;
  for (std::size_t off = 0; off < packed_size; off += kIdatMax) {
    const std::size_t n = std::min<std::size_t>(kIdatMax, packed_size - off);
    write_chunk(out, "IDAT",
                std::string_view(reinterpret_cast<const char*>(packed.data()) + off, n));
  }
  write_chunk(out, "IEND", {});
  if (!out) throw std::runtime_error("write_png: output stream failed");
}

}  // namespace mxgate::report
