// What one gate check produced, and the wire form in which a watchdog child hands it back to the
// gate: a sequence of records "KEY LENGTH\n" followed by LENGTH bytes of value and "\n". Values
// are arbitrary bytes (details hold newlines); a malformed payload is a decode error, which the
// gate reports as an error of that check.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include "report/gate_report.h"

namespace mxgate::cli {

struct CheckRun {
  // name, backend and seconds are set by the gate, not sent.
  report::CheckReport report;
  std::string located_text;  // located(failure): the element line people read; "" when none
  // Property checks: the coverage tags of their generated cases (has_tags even when empty).
  bool has_tags = false;
  std::map<std::string, uint64_t> tags;
  // Creating the backend failed (EnvironmentError, gpu::GpuError): exit code 3.
  bool environment_error = false;
};

struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string encode_check_run(const CheckRun& run);
CheckRun decode_check_run(std::string_view payload);  // throws ProtocolError

}  // namespace mxgate::cli
