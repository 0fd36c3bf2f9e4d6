// Faults planted in mxgate's own machinery, for the tests of the gate's self-test only
// (tests/test_cli_gate.cpp, python/tests): MXGATE_MACHINERY_FAULT=NAME puts ONE of them in, at
// its real spot, so a test can see the self-test stage (tools/mxgate/gate_selftest*.cpp) catch
// it. They are not implementation faults (those are MXGATE_FAULTS, dispatch/faults.h, and the
// planted-fault implementations): these break the detectors and the call paths themselves.
// `mxgate gate` names the one set, loudly, before it runs; an unknown name is a usage error.
// The Python adapter's write-back (python/mxgate/adapter.py) reads the same variable.
#pragma once

#include <array>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace mxgate {

enum class MachineryFault : unsigned char {
  kNone,
  kPluginSwapsMN,        // impl/plugin.cpp: every plugin call gets M and N swapped
  kPluginTacticZero,     // impl/plugin.cpp: every plugin call runs tactic 0
  kSweepFirstChunkOnly,  // properties/cast_sweep.cpp: only the first chunk is compared
  kAdapterDropsOddRow,   // python/mxgate/adapter.py: an odd row count's last row not written back
  kBackGuardUnchecked,   // gpu/backend.cpp: the guard band past a buffer's end never checked
  kProbeSearchShort,     // probe/accumulator_probe.cpp: first_kept answers one step short
  kSm90BoundChunk256,  // reference/accumulator_bounds.cpp: sm90_fp8_mma bound from 256-wide chunks
};

constexpr const char* kMachineryFaultEnv = "MXGATE_MACHINERY_FAULT";

struct MachineryFaultRow {
  MachineryFault fault;
  std::string_view name;
  std::string_view what;
};

inline constexpr std::array<MachineryFaultRow, 7> kMachineryFaults = {{
    {MachineryFault::kPluginSwapsMN, "plugin_swaps_m_n",
     "the plugin call path passes M and N swapped"},
    {MachineryFault::kPluginTacticZero, "plugin_tactic_zero",
     "the plugin call path always passes tactic 0"},
    {MachineryFault::kSweepFirstChunkOnly, "sweep_first_chunk_only",
     "the cast sweep compares only its first chunk"},
    {MachineryFault::kAdapterDropsOddRow, "adapter_drops_odd_row",
     "the Python adapter write-back drops the last row of an odd row count"},
    {MachineryFault::kBackGuardUnchecked, "back_guard_unchecked",
     "the guard band past a buffer's end is never checked"},
    {MachineryFault::kProbeSearchShort, "probe_search_short",
     "the accumulator probe's searches answer one step short"},
    {MachineryFault::kSm90BoundChunk256, "sm90_bound_chunk_256",
     "the sm90_fp8_mma bound is built from 256-wide K chunks instead of 128"},
}};

// The row named `name`; nullopt for an unknown name.
inline std::optional<MachineryFaultRow> find_machinery_fault(std::string_view name) {
  for (const MachineryFaultRow& r : kMachineryFaults) {
    if (r.name == name) return r;
  }
  return std::nullopt;
}

// The fault MXGATE_MACHINERY_FAULT names (read once); kNone when unset, empty or unknown (the
// gate refuses an unknown name before it runs).
inline MachineryFault machinery_fault() {
  static const MachineryFault f = [] {
    const char* env = std::getenv(kMachineryFaultEnv);
    if (env == nullptr || *env == '\0') return MachineryFault::kNone;
    const auto row = find_machinery_fault(env);
    return row ? row->fault : MachineryFault::kNone;
  }();
  return f;
}

inline bool machinery_fault_is(MachineryFault f) { return machinery_fault() == f; }

// Every name, comma separated (for messages and --help).
inline std::string machinery_fault_names() {
  std::string out;
  for (const MachineryFaultRow& r : kMachineryFaults) {
    out += (out.empty() ? "" : ", ") + std::string(r.name);
  }
  return out;
}

}  // namespace mxgate
