// The implementation model: an Implementation is a named set of Ops; an Op is one entry point of
// a fixed family (impl/contract.h Family) with its contract as data and a run function. Two
// kinds exist: the built-in implementation `builtin` (gpu/kernels on the backend under test,
// impl/builtin.h) and plugins loaded through the C ABI (include/mxgate/plugin.h,
// impl/plugin.h). Properties, the harness (impl/harness.h) and the CLI see only this model.
// docs/plugins.md §2.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/backend.h"
#include "impl/contract.h"

namespace mxgate::impl {

// What an entry point returns (plugin.h mxgate_status).
enum class Status { kDone, kUnsupported, kError };

struct Op {
  std::string name;  // unique inside its implementation
  Family family = Family::kCast;
  Memory memory = Memory::kHost;
  Contract contract;
  // Runs one call whose buffers are allocations of `be` (a backend of the op's memory; for
  // kBackend the backend under test). Writes a reason into `message` on kUnsupported / kError.
  std::function<Status(gpu::Backend& be, const Call& call, std::string& message)> run;
  // Whether the op runs on `be` (a built-in kernel the backend does not implement: false).
  // Empty: always.
  std::function<bool(const gpu::Backend& be)> available;
  std::string impl;  // its implementation's name (for messages and the watchdog)
};

// Whether an implementation's description declares it wrong on purpose: it starts with
// MXGATE_PLANTED_FAULT_PREFIX ("planted fault:", include/mxgate/plugin.h). The one place that
// reads the convention; `mxgate zoo --impl` then requires the gate to catch it (docs/plugins.md
// §7).
bool is_planted_fault_description(std::string_view description);

struct Implementation {
  std::string name;            // "builtin", "example", ...
  std::string description;     // one line
  bool planted_fault = false;  // is_planted_fault_description(description), set when loaded
  std::string origin;          // "built in" or the plugin's path
  std::string spec;            // what --impl names it by (regression files record it)
  bool builtin = false;
  std::vector<Op> ops;

  const Op* find_op(std::string_view op) const;
  FamilyMask families() const;
};

}  // namespace mxgate::impl
