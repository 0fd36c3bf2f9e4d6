// Comparison verdicts for GEMM outputs: bit-exact (fp32 / bf16), within-bound, and mismatch maps.
//
// A verdict names the element (docs/architecture.md §5.4): coordinates, expected bits, actual bits,
// ULP distance. Matrices are row-major, rows x cols.
//
// Policies (fixed here so every report agrees):
// - Equality is bit equality, except that ANY NaN equals ANY NaN (payload and sign ignored):
//   kernels and libraries disagree on NaN payloads (docs/formats.md §1.1), never on NaN-ness.
// - ULP distance is the distance between the operands' ORDERED-INTEGER images: bits for x >= +0,
//   minus (bits without the sign) for negative x. Both zeros map to 0, so +0 vs -0 has distance 0
//   (it is still a bit mismatch: a signed-zero-only difference shows as "0 ulp"), the smallest
//   positive and negative subnormals are 2 apart, and max finite vs Inf is 1. NaN vs non-NaN is
//   kNanUlpDistance (the maximum), so it is always the worst mismatch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reference/format.h"

namespace mxgate {

// Output number format of a GEMM (fp32 accumulator output, or bf16 after one final rounding).
enum class OutputFormat { kFp32, kBf16 };

inline constexpr uint64_t kNanUlpDistance = std::numeric_limits<uint64_t>::max();

// Ordered-integer ULP distance (see the header comment). Bits for bf16 are the 16-bit pattern.
uint64_t ulp_distance_fp32(uint32_t a_bits, uint32_t b_bits);
uint64_t ulp_distance_bf16(uint16_t a_bits, uint16_t b_bits);
uint64_t ulp_distance(float a, float b);
// The same rule for two stored codes of format `f` (an FP8 format or E8M0; codes must fit the
// format): the distance in that format's codes. Sign-magnitude formats use the ordered-integer
// image of their `bits`-bit pattern; E8M0, an unsigned exponent, the byte difference. NaN codes
// follow the policy above (two NaNs: 0; NaN vs a number: kNanUlpDistance).
uint64_t ulp_distance_code(Format f, uint32_t a, uint32_t b);

// True when the two patterns are equal under the NaN policy above.
bool same_fp32(uint32_t a_bits, uint32_t b_bits);
bool same_bf16(uint16_t a_bits, uint16_t b_bits);

struct BitMismatch {
  std::size_t row = 0;
  std::size_t col = 0;
  uint32_t expected_bits = 0;  // bf16: the 16-bit pattern
  uint32_t actual_bits = 0;
  uint64_t ulp_distance = 0;
};

struct BitExactVerdict {
  OutputFormat format = OutputFormat::kFp32;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t mismatches = 0;
  std::optional<BitMismatch> first;  // in row-major order
  std::optional<BitMismatch> worst;  // largest ULP distance; the first such in row-major order
  bool ok() const { return mismatches == 0; }
  // One line, e.g. "fp32 bit-exact: 3 of 64 differ; first (0,5) expected 0x3f800000 (1)
  // actual 0x3f800001 (1.00000012) 1 ulp; worst (2,7) ... 12 ulp".
  std::string summary() const;
};

// Throws std::invalid_argument when a span's size is not rows * cols.
BitExactVerdict compare_fp32(std::size_t rows, std::size_t cols, std::span<const float> expected,
                             std::span<const float> actual);
BitExactVerdict compare_bf16(std::size_t rows, std::size_t cols, std::span<const uint16_t> expected,
                             std::span<const uint16_t> actual);

struct BoundViolation {
  std::size_t row = 0;
  std::size_t col = 0;
  double exact = 0;   // the exact result, rounded once to double (NaN / +-Inf when special)
  double actual = 0;  // the kernel's value (fp32 or bf16, exact in double)
  double bound = 0;   // allowed |actual - exact|
  double excess = 0;  // |actual - exact| - bound; +Inf for a NaN/Inf disagreement
};

struct BoundVerdict {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t outside = 0;                 // elements outside their bound
  std::optional<BoundViolation> worst;     // largest excess
  std::vector<BoundViolation> violations;  // every element outside, row-major order
  bool ok() const { return outside == 0; }
  std::string summary() const;
};

// Element (r, c) is inside when:
// - exact is NaN: actual is NaN;  exact is +-Inf: actual is the same infinity;
// - bound is +Inf: anything (the model allows overflow there);
// - otherwise actual is finite and |actual - exact| <= bound. The difference is evaluated in
//   double; since `exact` is itself the exact result rounded to double (relative error <= 2^-53),
//   the test is |actual - exact| > bound * (1 + 2^-50) + 2^-52 * |exact| for "outside", so a kernel
//   truly within its bound is never flagged (rounding of this check can only make it laxer, by
//   about 2^-52 relative -- far below any fp32 effect).
BoundVerdict check_within_bound(std::size_t rows, std::size_t cols, std::span<const double> exact,
                                std::span<const double> bound, std::span<const double> actual);
BoundVerdict check_within_bound(std::size_t rows, std::size_t cols, std::span<const double> exact,
                                std::span<const double> bound, std::span<const float> actual);
BoundVerdict check_within_bound_bf16(std::size_t rows, std::size_t cols,
                                     std::span<const double> exact, std::span<const double> bound,
                                     std::span<const uint16_t> actual);

// Where the mismatches are: counts per row, per column and per (tile_m x tile_n) tile (edge tiles
// are partial), for reports and heatmaps.
struct MismatchMap {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t tile_m = 0;
  std::size_t tile_n = 0;
  std::size_t tile_rows = 0;  // ceil(rows / tile_m)
  std::size_t tile_cols = 0;  // ceil(cols / tile_n)
  std::size_t total = 0;
  std::vector<std::size_t> per_row;   // rows
  std::vector<std::size_t> per_col;   // cols
  std::vector<std::size_t> per_tile;  // tile_rows x tile_cols, row-major
  std::size_t tile_count(std::size_t tile_r, std::size_t tile_c) const {
    return per_tile[tile_r * tile_cols + tile_c];
  }
};

// From a mask (nonzero = mismatch), rows x cols. Throws std::invalid_argument on bad sizes or a
// zero tile size.
MismatchMap mismatch_map(std::size_t rows, std::size_t cols, std::span<const uint8_t> mask,
                         std::size_t tile_m, std::size_t tile_n);
// Mismatches under the bit-exact policy above.
MismatchMap mismatch_map_fp32(std::size_t rows, std::size_t cols, std::span<const float> expected,
                              std::span<const float> actual, std::size_t tile_m,
                              std::size_t tile_n);
MismatchMap mismatch_map_bf16(std::size_t rows, std::size_t cols,
                              std::span<const uint16_t> expected, std::span<const uint16_t> actual,
                              std::size_t tile_m, std::size_t tile_n);
// The elements of a bound verdict's violation list.
MismatchMap mismatch_map(const BoundVerdict& verdict, std::size_t tile_m, std::size_t tile_n);

}  // namespace mxgate
