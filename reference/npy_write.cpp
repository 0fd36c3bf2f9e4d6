// Writing .npy files: the bytes np.save writes (serialize_npy) and an atomic replace of the
// file (write_npy).
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string>

#include "reference/npy.h"
#include "reference/npy_common.h"

namespace mxgate {

using npy_detail::errno_message;
using npy_detail::kMagic;

namespace {

constexpr size_t kArrayAlign = 64;        // numpy.lib.format.ARRAY_ALIGN
constexpr size_t kGrowthAxisDigits = 21;  // numpy.lib.format.GROWTH_AXIS_MAX_DIGITS

}  // namespace

std::vector<uint8_t> serialize_npy(const NpyArray& array) {
  array.validate();
  // Same text, key order and padding as numpy.lib.format._write_array_header, including the spare
  // spaces it leaves so the first extent can grow in place.
  std::string dict = "{'descr': '" + std::string(npy_dtype_descr(array.dtype)) +
                     "', 'fortran_order': False, 'shape': " + npy_shape_string(array.shape) + ", }";
  if (!array.shape.empty()) {
    const size_t digits = std::to_string(array.shape[0]).size();
    if (digits < kGrowthAxisDigits) {
      dict.append(kGrowthAxisDigits - digits, ' ');
    }
  }
  // Version 1.0 unless its 2-byte header size cannot hold the header.
  const size_t text_size = dict.size() + 1;  // with the final '\n'
  uint8_t major = 1;
  size_t length_size = 2;
  size_t padding = kArrayAlign - (kMagic.size() + 2 + length_size + text_size) % kArrayAlign;
  if (text_size + padding > 0xffff) {
    major = 2;
    length_size = 4;
    padding = kArrayAlign - (kMagic.size() + 2 + length_size + text_size) % kArrayAlign;
    if (text_size + padding > 0xffffffff) {
      throw NpyError("header too large for .npy version 2.0");
    }
  }
  const size_t header_size = text_size + padding;

  std::vector<uint8_t> out(kMagic.begin(), kMagic.end());
  out.reserve(kMagic.size() + 2 + length_size + header_size + array.bytes.size());
  out.push_back(major);
  out.push_back(0);
  for (size_t i = 0; i < length_size; ++i) {
    out.push_back(static_cast<uint8_t>(header_size >> 8 * i));
  }
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), padding, ' ');
  out.push_back('\n');
  out.insert(out.end(), array.bytes.begin(), array.bytes.end());
  return out;
}

void write_npy(const std::string& path, const NpyArray& array) {
  const std::vector<uint8_t> contents = serialize_npy(array);  // may throw: nothing touched yet

  // A fresh name per attempt (pid + counter), created exclusively so no other file is clobbered;
  // mode 0666 lets the umask decide, as for any newly created file.
  static std::atomic<unsigned> counter{0};
  const std::string temp_prefix = path + ".tmp." + std::to_string(::getpid()) + ".";
  std::string temp;
  int fd = -1;
  for (int attempt = 0;; ++attempt) {
    temp = temp_prefix + std::to_string(counter++);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST || attempt >= 100) {
      break;
    }
  }
  if (fd < 0) {
    const int err = errno;
    throw NpyError("cannot write '" + path + "': cannot create temporary file '" + temp +
                   "': " + errno_message(err));
  }
  const auto abandon = [&](const std::string& step, int err) {
    if (fd >= 0) {
      ::close(fd);
    }
    ::unlink(temp.c_str());
    throw NpyError("cannot write '" + path + "': " + step + " failed: " + errno_message(err));
  };

  for (size_t done = 0; done < contents.size();) {
    const ssize_t wrote = ::write(fd, contents.data() + done, contents.size() - done);
    if (wrote < 0) {
      const int err = errno;  // read before building the message can clobber it
      if (err == EINTR) {
        continue;
      }
      abandon("write to '" + temp + "'", err);
    }
    done += static_cast<size_t>(wrote);
  }
  // Data must be on disk before the rename makes it the file, or a crash could leave it empty.
  if (::fsync(fd) != 0) {
    const int err = errno;
    abandon("fsync of '" + temp + "'", err);
  }
  const int closed = ::close(fd);
  const int close_err = errno;
  fd = -1;
  if (closed != 0) {
    abandon("close of '" + temp + "'", close_err);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    abandon("rename of '" + temp + "' to it", err);
  }
}

}  // namespace mxgate
