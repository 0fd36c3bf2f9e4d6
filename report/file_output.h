// Writing a report file with errors that name the file and the reason.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string_view>

namespace mxgate::report {

// Opens `path` for binary writing (create or truncate), lets `write` fill it, then flushes and
// closes. Throws std::runtime_error "<what>: cannot write '<path>': <reason>" on any failure.
void write_file(const std::filesystem::path& path, std::string_view what,
                const std::function<void(std::ostream&)>& write);

}  // namespace mxgate::report
