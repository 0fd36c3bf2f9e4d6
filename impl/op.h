// The implementation model: an Implementation is a named set of Ops; an Op is one entry point of
// a fixed family (impl/contract.h Family) with its contract as data and a run function. Two
// kinds exist: the built-in implementation `builtin` (gpu/kernels on the backend under test,
// impl/builtin.h) and plugins loaded through the C ABI (include/mxgate/plugin.h,
// impl/plugin.h). Properties, the harness (impl/harness.h) and the CLI see only this model.
// docs/plugins.md §2.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/backend.h"
#include "impl/contract.h"

namespace mxgate::impl {

// What an entry point returns (plugin.h mxgate_status). kNoTactic: the call's tactic does not
// exist for this case (a per-shape list shorter than the declared count): unsupported.
enum class Status { kDone, kUnsupported, kError, kNoTactic };

// One of the kernels an op runs for the same call (plugin.h mxgate_tactic): a cuBLASLt heuristic
// result, a Triton config. `accumulator` "" = the op's. docs/plugins.md §3.6.
struct Tactic {
  std::string name;
  std::string accumulator;
  std::string notes;
};

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
  // The tactics it declares (empty: one, unnamed) and the one `run` runs; a tactic view
  // (tactic_view below) binds `run` to run_tactic with its tactic.
  std::vector<Tactic> tactics;
  uint32_t tactic = 0;
  std::function<Status(gpu::Backend& be, const Call& call, uint32_t tactic, std::string& message)>
      run_tactic;
  uint32_t tactic_count() const {
    return tactics.empty() ? 1 : static_cast<uint32_t>(tactics.size());
  }
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

  // Set in a tactic view: the tactic index every op of the view runs.
  std::optional<uint32_t> tactic;

  const Op* find_op(std::string_view op) const;
  FamilyMask families() const;
  // The most tactics an op declares (1 when none declares any).
  uint32_t tactic_count() const;
  // " tactic 2 (algo2)" for a view whose ops name tactic 2 alike, " tactic 2" otherwise; "" for
  // an implementation that is no view.
  std::string tactic_label() const;
};

// The implementation as it runs tactic `t`: the ops declaring more than t tactics, each bound to
// tactic t with that tactic's accumulator model; the ops with fewer are left out (their tactics
// are checked in the views below t). Tactic 0 keeps every op. Throws std::out_of_range when no
// op declares t + 1 tactics.
Implementation tactic_view(const Implementation& im, uint32_t t);

}  // namespace mxgate::impl
