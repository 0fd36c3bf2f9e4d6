// The independent oracle for the encoders: value search over the decoded code table.
//
// It shares nothing with fp_encode.cpp / e8m0.cpp but `decode` (itself checked against
// hand-derived values in tests): it lists every finite value a format can hold, finds the two
// neighbours of |x| in exact (double) arithmetic and applies the policy's tie and overflow rule
// to *values*. MXINT8 (two's complement) keeps a second table for negative values. Used by the
// exhaustive tests, the benchmark and `mxgate gate`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/fp_encode.h"

namespace mxgate {

// One expected code per input bit pattern, computed from values.
class EncodeOracle {
 public:
  EncodeOracle(Format f, const EncodePolicy& policy);
  uint32_t expected(float x) const;  // binary search over the value table

 private:
  uint32_t round_magnitude(double ax, size_t hi_index, bool negative) const;
  uint32_t special(float x) const;  // NaN / Inf / zero
  Format format_;
  EncodePolicy policy_;
  // Positive finite values, ascending, starting with 0, plus one virtual value past max
  // (max + its spacing) that stands for "rounds beyond max".
  std::vector<double> values_;
  std::vector<uint32_t> codes_;  // code of values_[i] (virtual entry: unused)
  std::optional<uint32_t> inf_;  // code of +Inf, found by decoding, when the format has one
  // Two's complement formats (MXINT8): the negative codes are no sign bit on a positive code, so
  // negative x search their own table, |value| ascending from the zero code 0, built by decoding
  // the codes whose value is negative (and within policy.int_range), plus the virtual entry.
  bool twos_complement_ = false;
  std::vector<double> neg_values_;
  std::vector<uint32_t> neg_codes_;
};

// E8M0 oracle: which power of two each rule picks, from values (see e8m0.h for the rules).
uint8_t e8m0_oracle(float x, E8m0Encode rule);

// The expected output as runs: inputs [begin, next run's begin) all map to `code`. Built by
// galloping search on an oracle, which is exact because every oracle here maps each output to a
// contiguous range of fp32 patterns within a segment (finite positives, +Inf, +NaNs, and the
// same for negatives): the rules are monotone in |x|. A sweep then costs one encoder call per
// input, and the oracle is asked only O(runs * 32) times.
struct Run {
  uint64_t begin;
  uint32_t code;
};
std::vector<Run> build_runs(const std::function<uint32_t(uint32_t)>& oracle, uint64_t begin,
                            uint64_t end);

// Result of checking an encoder against its oracle over a range of fp32 patterns.
struct SweepResult {
  uint64_t checked = 0;
  uint64_t mismatches = 0;
  uint32_t first_bad_input = 0;
  uint32_t first_expected = 0;
  uint32_t first_actual = 0;
  std::string describe(std::string_view what) const;
};

// Every fp32 pattern in [begin, end) through `encode(f, x, policy)` vs the oracle, on `threads`
// threads (0 = hardware concurrency).
SweepResult sweep_encoder(Format f, const EncodePolicy& policy, uint64_t begin, uint64_t end,
                          unsigned threads = 0);
SweepResult sweep_e8m0(E8m0Encode rule, uint64_t begin, uint64_t end, unsigned threads = 0);

}  // namespace mxgate
