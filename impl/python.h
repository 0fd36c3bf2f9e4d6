// Implementations written in Python: `--impl py:MODULE:OBJECT` names an adapter object
// (python/mxgate/adapter.py: ops, contracts, a callable per op) that runs in a Python worker
// process. The worker is the interpreter MXGATE_PYTHON (default python3) running
// `-m mxgate._worker MODULE:OBJECT`; it describes the adapter's ops in a handshake, which goes
// through the same checks as a plugin's description (impl/plugin.h implementations_of), then
// answers one request per call: the call's input tensors in, its output tensors out.
//
// Isolation: a worker that dies during a call (a crash, an exit) or gives no answer within
// MXGATE_PYTHON_TIMEOUT seconds (default 120; it is killed) makes that call an error naming the
// op and how the worker ended; the next call starts a fresh worker. A worker that cannot start,
// or whose adapter does not import, is a PluginError (kInput: exit 2); an adapter that reports
// itself unavailable (an optional module missing, no device) a kEnvironment one (exit 3).
// The wire protocol: docs/python.md §10. The process and its protocol: impl/python_worker.h; the
// handshake's description: impl/python_description.h; this file: the specs and their cache.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/op.h"

namespace mxgate::impl {

// Whether SPEC has the form py:MODULE:OBJECT.
bool is_python_spec(std::string_view spec);

// The implementation a py: spec names (process lifetime; one worker per spec). Throws
// PluginError.
std::vector<const Implementation*> resolve_python(std::string_view spec);

// The cast survey of `op` (an op of the implementation `spec` resolved to) to `target` inside
// its worker, one request (PythonWorker::survey): properties::survey_lines' text, an error line
// when the worker failed, nullopt when the worker cannot survey (the caller calls the op).
std::optional<std::string> python_survey_cast(
    std::string_view spec, const Op& op, Dtype target, const std::string& inputs,
    const std::function<void(uint64_t done, uint64_t total)>& progress);

// The adapters the package ships (mxgate.adapters.SHIPPED), as py: specs, from the worker's
// interpreter; empty with `why` set when it cannot say (no interpreter, no package).
std::vector<std::string> shipped_python_specs(std::string* why = nullptr);

}  // namespace mxgate::impl
