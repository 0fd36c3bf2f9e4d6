// The fuzz targets of fuzz/ linked into the CLI (each target's LLVMFuzzerTestOneInput under its
// own name, built by this build's compiler without libFuzzer), and the runner `mxgate gate`
// (checks fuzz.TARGET) and `mxgate fuzz` share: replay a corpus, then a time-boxed random run of
// byte-level mutations of it from a printed seed. Inputs run in a forked worker; the input in
// flight sits in shared memory, so a target that traps (its way to report a violation) or hangs
// leaves the exact input behind as a reproducer. No coverage guidance: the coverage-guided
// libFuzzer smoke is the `fuzz` preset's (`scripts/test`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mxgate::cli {

struct FuzzTarget {
  std::string_view name;
  // nullptr: not linked into this build (fuzz_dispatch needs clang's FuzzedDataProvider.h,
  // which scripts/bootstrap installs with clang-14).
  int (*one_input)(const uint8_t* data, std::size_t size);
};

// Every target of fuzz/, linked or not, in the fuzz preset's order.
std::span<const FuzzTarget> fuzz_targets();
const FuzzTarget* find_fuzz_target(std::string_view name);

struct FuzzResult {
  bool ok = true;
  bool error = false;     // the runner itself failed (no input to run, a fork failure)
  uint64_t replayed = 0;  // corpus inputs run
  uint64_t fuzzed = 0;    // mutated inputs run
  std::string detail;     // what went wrong, and where the log is
  std::string artifact;   // the input that failed, saved to a file
};

// Replays every file of `paths` (files, or folders of files), then fuzzes for `seconds` (0: replay
// only) from `seed`. A failing input is saved under `scratch` (created when needed).
FuzzResult run_fuzz_target(const FuzzTarget& t, const std::vector<std::string>& paths,
                           double seconds, uint64_t seed, const std::string& scratch);

}  // namespace mxgate::cli
