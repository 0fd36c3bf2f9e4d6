// The gate's self-test stage (selftest.*, docs/architecture.md "The gate's self-test"): each check
// proves a detector both ways. A faithful twin runs beside every plant and must pass (a call
// path or a detector that breaks everything fails the gate, naming the path), and every plant
// must produce exactly the answer written beside it, derived from its definition (the differing
// inputs, the located element, the damaged offsets): "at least one mismatch" is not enough.
//   gate_selftest.cpp               the stage; example_plugin, plugin_tactics, numpy_adapters
//   gate_selftest_detectors.cpp     cast_sweep, guard_bands
//   gate_selftest_accumulators.cpp  accumulators
// tests/test_cli_gate.cpp plants faults in mxgate's own machinery (MXGATE_MACHINERY_FAULT,
// common/machinery_fault.h) and asserts that the check named here catches each one.
#pragma once

#include <string>

#include "gpu/backend.h"
#include "impl/op.h"
#include "tools/mxgate/gate_stages.h"

namespace mxgate::cli::selftest {

// Appends `line` to the check's detail (one line each).
void say(CheckRun& run, const std::string& line);

// Compares an answer with the one written beside its plant or twin: on a difference the check
// fails, naming `what` with both answers. Returns whether they agree.
bool expect_answer(CheckRun& run, const std::string& what, const std::string& expected,
                   const std::string& got);

// The answer of one case (the form of properties::Case::describe) of property `property` on
// `im`: "pass", "fail at (ROW, COL)", "fail: WHAT" (no located element), "unsupported: WHY".
std::string case_answer(const std::string& property, const impl::Implementation& im,
                        gpu::Backend& be, const std::string& case_text);

CheckRun example_plugin_check(const GateOptions& opts);
CheckRun plugin_tactics_check();
CheckRun numpy_adapters_check(const GateOptions& opts);
CheckRun cast_sweep_check();
CheckRun guard_bands_check();
CheckRun accumulators_check(const GateOptions& opts);

}  // namespace mxgate::cli::selftest
