// The Python worker process of one py: spec (impl/python.h): started with the interpreter
// MXGATE_PYTHON running `-m mxgate._worker MODULE:OBJECT` over a socket pair (common/
// child_process.h), its handshake read, one framed request and answer per call under
// MXGATE_PYTHON_TIMEOUT, and a fresh worker after one died or hung. The wire protocol:
// docs/python.md §10.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "impl/op.h"

namespace mxgate::impl {

// What every Python adapter spec starts with: py:MODULE:OBJECT.
inline constexpr std::string_view kPythonPrefix = "py:";

// The interpreter workers run: MXGATE_PYTHON if set, else discover_python()'s choice (python3
// where none imports numpy, so that its own import error shows).
std::string python_interpreter();

// Which interpreter can run numpy code: MXGATE_PYTHON if set (it alone is tried), else the first
// of `python3` (PATH) and /usr/bin/python3 that can import numpy (the first python3 on PATH of a
// fresh Debian 12 lacks numpy). `interpreter` is empty when none can; `refused` lists the
// candidates tried before it (or all of them), comma separated.
struct PythonChoice {
  std::string interpreter;
  bool from_env = false;
  std::string refused;
};
PythonChoice discover_python();

// The environment a Python child of this build runs in: the caller's, with this tree's package
// appended to PYTHONPATH and this build's libmxgate.so as MXGATE_LIBRARY unless the caller set
// one (the worker's, and `mxgate replay` / `mxgate shrink`'s).
std::vector<std::string> python_environment();

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

  // The cast survey of op `index` to `target` over `inputs` ("all" | "sample") inside the
  // worker (mxgate._survey: inputs made there, the comparison by the worker's libmxgate.so), one
  // request: MXGATE_DONE with `lines` (properties::survey_lines' form), MXGATE_UNSUPPORTED when
  // the worker cannot (the caller falls back to calls), MXGATE_ERROR with `message`. The
  // worker's "progress DONE TOTAL" messages go to `progress`; each restarts the timeout.
  mxgate_status survey(uint32_t index, const std::string& target, const std::string& inputs,
                       const std::function<void(uint64_t, uint64_t)>& progress, std::string& lines,
                       std::string& message);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mxgate::impl
