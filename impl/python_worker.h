// The Python worker process of one py: spec (impl/python.h): started with the interpreter
// MXGATE_PYTHON running `-m mxgate._worker MODULE:OBJECT` over a socket pair (common/
// child_process.h), its handshake read, one framed request and answer per call under
// MXGATE_PYTHON_TIMEOUT, and a fresh worker after one died or hung. The wire protocol:
// docs/python.md §10.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "impl/op.h"

namespace mxgate::impl {

// What every Python adapter spec starts with: py:MODULE:OBJECT.
inline constexpr std::string_view kPythonPrefix = "py:";

// The interpreter workers run: MXGATE_PYTHON, default python3.
std::string python_interpreter();

// One worker process for one spec, restarted after it dies or hangs; calls are serialized.
class PythonWorker {
 public:
  explicit PythonWorker(std::string spec);
  ~PythonWorker();  // kills the process
  PythonWorker(const PythonWorker&) = delete;
  PythonWorker& operator=(const PythonWorker&) = delete;

  // Starts the worker and returns its description (the handshake's body); throws PluginError.
  std::string start();

  // Runs op `index` (named `op` in messages) on `c`'s tensors: MXGATE_DONE with the outputs
  // written, or MXGATE_UNSUPPORTED / MXGATE_ERROR with `message` set (a worker that died or hung
  // is named so, and the next call starts a fresh one that must describe the same ops).
  mxgate_status call(uint32_t index, const std::string& op, const mxgate_call& c,
                     std::string& message);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mxgate::impl
