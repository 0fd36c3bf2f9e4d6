// The exhaustive device check of a `cast` op (include/mxgate/plugin.h, MXGATE_OP_CAST): every one
// of the 2^32 fp32 bit patterns goes through the op's own entry point, chunk by chunk, with device
// pointers and a stream, and its codes are compared ON THE GPU with the reference encoder's
// expected output, uploaded as run tables (reference/encode_oracle.h build_runs). Nothing but the
// verdict (counts, the first mismatch, the mismatching input ranges) comes back to the host.
//
// Per chunk: output poisoned with a code the chunk's expected output never contains (so an
// unwritten element is always a mismatch), op.run, compare. Guard bands around the output buffer
// are checked at the end. Inputs are generated on the device (all 2^32 patterns resident when the
// device has the memory, else regenerated per chunk). Docs: docs/nvidia.md §5.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mxgate/plugin.h"

namespace mxgate::sweep {

// The expected code of every input in [0, 2^32): inputs [begin[i], begin[i + 1]) map to code[i].
struct RunTable {
  std::vector<uint32_t> begin;  // ascending, begin[0] == 0
  std::vector<uint16_t> code;
  std::string describes;  // e.g. "e4m3fn under cuda_satfinite"
};

// The expected output for an op's claim and output format. `claim` is a convention name
// (`mxgate conventions`) or "e8m0:RULE" with RULE an E8m0Encode name (reference/e8m0.h); nullopt
// with `why` set when the claim is unknown, the convention does not define the format, or the
// format is not one a cast writes.
std::optional<RunTable> expected_runs(const std::string& claim, mxgate_dtype out,
                                      std::string* why = nullptr);

// One maximal range of consecutive inputs that all got the same wrong code.
struct MismatchRange {
  uint32_t first = 0;
  uint32_t last = 0;
  uint32_t expected = 0;
  uint32_t actual = 0;
};

struct SweepResult {
  mxgate_status status = MXGATE_ERROR;  // the op's status on the chunk that stopped the sweep
  std::string message;                  // its message, or the driver's error
  uint64_t checked = 0;                 // inputs compared
  uint64_t mismatches = 0;
  std::optional<MismatchRange> first;  // the lowest mismatching input (first == last)
  std::vector<MismatchRange> ranges;   // every mismatching range, ascending, unless truncated
  bool ranges_truncated = false;       // more ranges than the device recorded (count is exact)
  bool guard_damaged = false;          // the op wrote outside its output buffer
  double device_ms = 0;                // poison + run + compare, all chunks (events)
  bool ok() const { return status == MXGATE_DONE && mismatches == 0 && !guard_damaged; }
  std::string summary() const;  // one line
};

// The compare kernel's per-thread code run on the CPU over `count` codes for inputs base..: the
// same partition into blocks and threads, the same range edges; for the unit test of the device
// logic (no GPU needed).
SweepResult compare_on_host(const uint8_t* codes, uint64_t count, uint64_t base,
                            const RunTable& expected, uint32_t code_bytes);

// Holds the device buffers of a sweep; one per process is enough. Throws std::runtime_error
// naming the runtime call when the device refuses (environment error).
class CastSweeper {
 public:
  static bool device_present();
  // resident_inputs: keep all 2^32 inputs on the device (16 GiB, generated once) when memory
  // allows; false regenerates each chunk's inputs before its call.
  explicit CastSweeper(uint64_t chunk = uint64_t{1} << 28, bool resident_inputs = true);
  ~CastSweeper();
  CastSweeper(const CastSweeper&) = delete;
  CastSweeper& operator=(const CastSweeper&) = delete;

  // Every input in [begin, end) through op.run (out_dtype: a 1- or 2-byte code format) and
  // compared with `expected`. A chunk the op declines or fails stops the sweep (status, message).
  // `progress` (may be empty) hears the inputs handed to the op so far after each chunk.
  SweepResult sweep(const mxgate_op& op, mxgate_dtype out_dtype, const RunTable& expected,
                    uint64_t begin = 0, uint64_t end = uint64_t{1} << 32,
                    const std::function<void(uint64_t done)>& progress = {});

  // The same with every table of `tables` compared per chunk: the op runs once per chunk, its
  // output (poisoned with a code no table expects there) compared with each table; one result
  // per table, in order (a declined or failed chunk stops them all).
  std::vector<SweepResult> sweep_tables(const mxgate_op& op, mxgate_dtype out_dtype,
                                        const std::vector<const RunTable*>& tables,
                                        uint64_t begin = 0, uint64_t end = uint64_t{1} << 32,
                                        const std::function<void(uint64_t done)>& progress = {});

  // The op alone over [begin, end), on the resident (or regenerated) inputs, no poison, no
  // compare: the cost of the cast itself, for the benchmark. Returns device milliseconds.
  double cast_only_ms(const mxgate_op& op, mxgate_dtype out_dtype, uint64_t begin = 0,
                      uint64_t end = uint64_t{1} << 32);

  // Milliseconds the one-time generation of all 2^32 resident inputs took (0 when not resident).
  double fill_ms() const { return fill_ms_; }
  bool inputs_resident() const { return resident_; }
  uint64_t chunk() const { return chunk_; }

 private:
  struct Impl;
  static void release(Impl* impl);  // frees what `impl` holds, then impl itself
  Impl* impl_;
  uint64_t chunk_;
  bool resident_ = false;
  double fill_ms_ = 0;
};

}  // namespace mxgate::sweep
