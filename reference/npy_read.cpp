// Reading .npy files: the preamble (magic, version, header size), the header (npy_header.cpp),
// the data, all checked against the bytes present before anything is allocated.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "reference/npy.h"
#include "reference/npy_common.h"
#include "reference/npy_header.h"

namespace mxgate {

using npy_detail::byte_count;
using npy_detail::errno_message;
using npy_detail::kMagic;
using npy_detail::printable;

namespace {

uint32_t read_le(std::span<const uint8_t> bytes) {
  uint32_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) {
    value = value << 8 | bytes[i];
  }
  return value;
}

}  // namespace

NpyArray parse_npy(std::span<const uint8_t> file) {
  // Preamble: magic, major and minor version, then a 2-byte (1.0) or 4-byte (2.0, 3.0) header size.
  const size_t magic_seen = std::min(file.size(), kMagic.size());
  if (!std::equal(file.begin(), file.begin() + magic_seen, kMagic.begin())) {
    const std::string_view start(reinterpret_cast<const char*>(file.data()), magic_seen);
    throw NpyError("bad magic: not a .npy file (expected \"\\x93NUMPY\", got \"" +
                   printable(start) + "\")");
  }
  if (file.size() < kMagic.size() + 2) {
    throw NpyError("truncated preamble: file is only " + std::to_string(file.size()) + " bytes");
  }
  const unsigned major = file[6];
  const unsigned minor = file[7];
  if (minor != 0 || major < 1 || major > 3) {
    throw NpyError("unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  const size_t length_size = major == 1 ? 2 : 4;
  const size_t header_start = 8 + length_size;
  if (file.size() < header_start) {
    throw NpyError("truncated preamble: file is only " + std::to_string(file.size()) +
                   " bytes, version " + std::to_string(major) + ".0 needs " +
                   std::to_string(header_start));
  }
  const size_t header_size = read_le(file.subspan(8, length_size));
  const size_t available = file.size() - header_start;
  if (header_size > available) {
    throw NpyError("truncated header: preamble declares " + std::to_string(header_size) +
                   " header bytes, file has " + std::to_string(available));
  }

  const std::string_view header_text(reinterpret_cast<const char*>(file.data()) + header_start,
                                     header_size);
  npy_detail::Header header = npy_detail::parse_header(header_text);

  const std::span<const uint8_t> data = file.subspan(header_start + header_size);
  const size_t expected = byte_count(header.dtype, header.shape);
  if (data.size() != expected) {
    throw NpyError("data size mismatch: " + std::string(npy_dtype_name(header.dtype)) + " " +
                   npy_shape_string(header.shape) + " needs " + std::to_string(expected) +
                   " bytes, but " + std::to_string(data.size()) + " bytes follow the header");
  }
  NpyArray array;
  array.dtype = header.dtype;
  array.shape = std::move(header.shape);
  array.bytes.assign(data.begin(), data.end());
  return array;
}

NpyArray read_npy(const std::string& path) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                             &std::fclose);
  if (!file) {
    const int err = errno;
    throw NpyError("cannot open '" + path + "': " + errno_message(err));
  }
  std::vector<uint8_t> contents;
  std::array<uint8_t, 1 << 16> chunk;
  int read_err = 0;
  for (;;) {
    const size_t got = std::fread(chunk.data(), 1, chunk.size(), file.get());
    read_err = errno;
    contents.insert(contents.end(), chunk.begin(), chunk.begin() + got);
    if (got < chunk.size()) {
      break;
    }
  }
  if (std::ferror(file.get())) {
    throw NpyError("cannot read '" + path + "': " + errno_message(read_err));
  }
  try {
    return parse_npy(contents);
  } catch (const NpyError& e) {
    throw NpyError(path + ": " + e.what());
  }
}

}  // namespace mxgate
