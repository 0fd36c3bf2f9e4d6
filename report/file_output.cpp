#include "report/file_output.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

namespace mxgate::report {

void write_file(const std::filesystem::path& path, std::string_view what,
                const std::function<void(std::ostream&)>& write) {
  const auto fail = [&](const std::string& reason) {
    throw std::runtime_error(std::string(what) + ": cannot write '" + path.string() +
                             "': " + reason);
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("it is a directory");
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    const int err = errno;
    fail(err ? std::strerror(err) : "open failed");
  }
  write(out);
  out.flush();
  if (!out) fail("write failed (disk full?)");
  out.close();
  if (out.fail()) fail("close failed");
}

}  // namespace mxgate::report
