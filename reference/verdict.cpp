#include "reference/verdict.h"

#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "common/blocks.h"

namespace mxgate {

namespace {

void check_size(const char* fn, const char* what, std::size_t got, std::size_t rows,
                std::size_t cols) {
  if (got != rows * cols) {
    throw std::invalid_argument(std::string(fn) + ": " + what + " has " + std::to_string(got) +
                                " elements, expected rows*cols = " + std::to_string(rows) + "*" +
                                std::to_string(cols));
  }
}

bool is_nan_fp32(uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; }
bool is_nan_bf16(uint16_t bits) { return (bits & 0x7FFFu) > 0x7F80u; }

// Ordered-integer image; both zeros map to 0.
int64_t ordered(uint32_t bits, uint32_t sign_bit) {
  const int64_t magnitude = bits & (sign_bit - 1);
  return (bits & sign_bit) != 0 ? -magnitude : magnitude;
}

// The distance of the ordered images under the NaN policy of verdict.h.
uint64_t ordered_distance(bool a_nan, bool b_nan, uint32_t a, uint32_t b, uint32_t sign_bit) {
  if (a_nan || b_nan) return a_nan && b_nan ? 0 : kNanUlpDistance;
  const int64_t d = ordered(a, sign_bit) - ordered(b, sign_bit);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

double fp32_value(uint32_t bits) { return std::bit_cast<float>(bits); }
double bf16_value(uint32_t bits) { return float_of_bf16(static_cast<uint16_t>(bits)); }

// expected(i) / actual(i) give element i's bit pattern.
template <class Expected, class Actual, class Same, class Distance>
BitExactVerdict compare_bits(OutputFormat format, std::size_t rows, std::size_t cols,
                             Expected expected, Actual actual, Same same, Distance distance) {
  BitExactVerdict v;
  v.format = format;
  v.rows = rows;
  v.cols = cols;
  for (std::size_t i = 0; i < rows * cols; ++i) {
    const auto e = expected(i), a = actual(i);
    if (same(e, a)) {
      continue;
    }
    ++v.mismatches;
    BitMismatch mm{i / cols, i % cols, e, a, distance(e, a)};
    if (!v.first) {
      v.first = mm;
    }
    if (!v.worst || mm.ulp_distance > v.worst->ulp_distance) {
      v.worst = mm;
    }
  }
  return v;
}

// One side of a NaN-vs-number mismatch, so that the verdict tells NaN from Inf (an E8M0 0xFF
// scale decoded as +Inf, not NaN, shows as "expected NaN, got +Inf"): "NaN", "+Inf", "-Inf", or
// "finite <value>".
std::string nan_side(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[48];
  std::snprintf(buf, sizeof buf, "finite %.9g", v);
  return buf;
}

std::string describe(const BitMismatch& m, OutputFormat format) {
  const bool bf16 = format == OutputFormat::kBf16;
  const double e = bf16 ? bf16_value(m.expected_bits) : fp32_value(m.expected_bits);
  const double a = bf16 ? bf16_value(m.actual_bits) : fp32_value(m.actual_bits);
  char buf[256];
  const char* hex = bf16 ? "0x%04" PRIx32 : "0x%08" PRIx32;
  char eb[16], ab[16];
  std::snprintf(eb, sizeof eb, hex, m.expected_bits);
  std::snprintf(ab, sizeof ab, hex, m.actual_bits);
  std::string ulps = m.ulp_distance == kNanUlpDistance
                         ? "NaN-vs-number (expected " + nan_side(e) + ", got " + nan_side(a) + ")"
                         : std::to_string(m.ulp_distance) + " ulp";
  std::snprintf(buf, sizeof buf, "(%zu,%zu) expected %s (%.9g) actual %s (%.9g) %s", m.row, m.col,
                eb, e, ab, a, ulps.c_str());
  return buf;
}

}  // namespace

uint64_t ulp_distance_fp32(uint32_t a_bits, uint32_t b_bits) {
  return ordered_distance(is_nan_fp32(a_bits), is_nan_fp32(b_bits), a_bits, b_bits, 0x80000000u);
}

uint64_t ulp_distance_bf16(uint16_t a_bits, uint16_t b_bits) {
  return ordered_distance(is_nan_bf16(a_bits), is_nan_bf16(b_bits), a_bits, b_bits, 0x8000u);
}

uint64_t ulp_distance(float a, float b) {
  return ulp_distance_fp32(std::bit_cast<uint32_t>(a), std::bit_cast<uint32_t>(b));
}

uint64_t ulp_distance_code(Format f, uint32_t a, uint32_t b) {
  if (is_twos_complement(f)) {  // MXINT8: adjacent codes of the signed integers are one apart
    const int shift = 32 - info(f).bits;
    const int64_t sa = static_cast<int32_t>(a << shift) >> shift;
    const int64_t sb = static_cast<int32_t>(b << shift) >> shift;
    return static_cast<uint64_t>(sa > sb ? sa - sb : sb - sa);
  }
  // E8M0 has no sign bit: a sign bit above its 8 bits makes every byte its own image.
  const uint32_t sign_bit =
      info(f).specials == SpecialStyle::kE8m0 ? 1u << info(f).bits : 1u << (info(f).bits - 1);
  return ordered_distance(is_nan_code(f, a), is_nan_code(f, b), a, b, sign_bit);
}

bool same_fp32(uint32_t a_bits, uint32_t b_bits) {
  return a_bits == b_bits || (is_nan_fp32(a_bits) && is_nan_fp32(b_bits));
}

bool same_bf16(uint16_t a_bits, uint16_t b_bits) {
  return a_bits == b_bits || (is_nan_bf16(a_bits) && is_nan_bf16(b_bits));
}

BitExactVerdict compare_fp32(std::size_t rows, std::size_t cols, std::span<const float> expected,
                             std::span<const float> actual) {
  check_size("compare_fp32", "expected", expected.size(), rows, cols);
  check_size("compare_fp32", "actual", actual.size(), rows, cols);
  // Compare bit patterns, never floats: -0 == +0 and NaN != NaN are the wrong policies here.
  return compare_bits(
      OutputFormat::kFp32, rows, cols,
      [&](std::size_t i) { return std::bit_cast<uint32_t>(expected[i]); },
      [&](std::size_t i) { return std::bit_cast<uint32_t>(actual[i]); }, same_fp32,
      ulp_distance_fp32);
}

BitExactVerdict compare_bf16(std::size_t rows, std::size_t cols, std::span<const uint16_t> expected,
                             std::span<const uint16_t> actual) {
  check_size("compare_bf16", "expected", expected.size(), rows, cols);
  check_size("compare_bf16", "actual", actual.size(), rows, cols);
  return compare_bits(
      OutputFormat::kBf16, rows, cols, [&](std::size_t i) { return expected[i]; },
      [&](std::size_t i) { return actual[i]; }, same_bf16, ulp_distance_bf16);
}

std::string BitExactVerdict::summary() const {
  const std::string name = format == OutputFormat::kBf16 ? "bf16" : "fp32";
  const std::size_t total = rows * cols;
  if (mismatches == 0) {
    return name + " bit-exact: all " + std::to_string(total) + " elements match";
  }
  return name + " bit-exact: " + std::to_string(mismatches) + " of " + std::to_string(total) +
         " differ; first " + describe(*first, format) + "; worst " + describe(*worst, format);
}

BoundVerdict check_within_bound(std::size_t rows, std::size_t cols, std::span<const double> exact,
                                std::span<const double> bound, std::span<const double> actual) {
  check_size("check_within_bound", "exact", exact.size(), rows, cols);
  check_size("check_within_bound", "bound", bound.size(), rows, cols);
  check_size("check_within_bound", "actual", actual.size(), rows, cols);
  BoundVerdict v;
  v.rows = rows;
  v.cols = cols;
  for (std::size_t i = 0; i < rows * cols; ++i) {
    const double e = exact[i], a = actual[i], b = bound[i];
    bool inside;
    double excess;
    if (std::isnan(e)) {
      inside = std::isnan(a);
      excess = HUGE_VAL;
    } else if (std::isinf(e)) {
      inside = a == e;
      excess = HUGE_VAL;
    } else if (std::isinf(b)) {
      inside = true;
      excess = 0;
    } else if (!std::isfinite(a)) {
      inside = false;
      excess = HUGE_VAL;
    } else {
      const double diff = std::fabs(a - e);
      inside = !(diff > b * (1 + 0x1p-50) + 0x1p-52 * std::fabs(e));
      excess = diff - b;
    }
    if (inside) {
      continue;
    }
    ++v.outside;
    BoundViolation bv{i / cols, i % cols, e, a, b, excess};
    if (!v.worst || bv.excess > v.worst->excess) {
      v.worst = bv;
    }
    v.violations.push_back(bv);
  }
  return v;
}

BoundVerdict check_within_bound(std::size_t rows, std::size_t cols, std::span<const double> exact,
                                std::span<const double> bound, std::span<const float> actual) {
  check_size("check_within_bound", "actual", actual.size(), rows, cols);
  std::vector<double> a(actual.begin(), actual.end());
  return check_within_bound(rows, cols, exact, bound, std::span<const double>(a));
}

BoundVerdict check_within_bound_bf16(std::size_t rows, std::size_t cols,
                                     std::span<const double> exact, std::span<const double> bound,
                                     std::span<const uint16_t> actual) {
  check_size("check_within_bound_bf16", "actual", actual.size(), rows, cols);
  std::vector<double> a(actual.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = bf16_value(actual[i]);
  }
  return check_within_bound(rows, cols, exact, bound, std::span<const double>(a));
}

std::string BoundVerdict::summary() const {
  const std::size_t total = rows * cols;
  if (outside == 0) {
    return "bound: all " + std::to_string(total) + " elements within their bound";
  }
  const BoundViolation& w = *worst;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "; worst (%zu,%zu) exact %.17g actual %.9g |diff| %.6g bound %.6g excess %.6g",
                w.row, w.col, w.exact, w.actual, std::fabs(w.actual - w.exact), w.bound, w.excess);
  return "bound: " + std::to_string(outside) + " of " + std::to_string(total) +
         " elements outside" + buf;
}

MismatchMap mismatch_map(std::size_t rows, std::size_t cols, std::span<const uint8_t> mask,
                         std::size_t tile_m, std::size_t tile_n) {
  check_size("mismatch_map", "mask", mask.size(), rows, cols);
  if (tile_m == 0 || tile_n == 0) {
    throw std::invalid_argument("mismatch_map: tile sizes must be positive (got " +
                                std::to_string(tile_m) + " x " + std::to_string(tile_n) + ")");
  }
  MismatchMap map;
  map.rows = rows;
  map.cols = cols;
  map.tile_m = tile_m;
  map.tile_n = tile_n;
  map.tile_rows = ceil_div(rows, tile_m);
  map.tile_cols = ceil_div(cols, tile_n);
  map.per_row.assign(rows, 0);
  map.per_col.assign(cols, 0);
  map.per_tile.assign(map.tile_rows * map.tile_cols, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      if (mask[r * cols + c] == 0) {
        continue;
      }
      ++map.total;
      ++map.per_row[r];
      ++map.per_col[c];
      ++map.per_tile[(r / tile_m) * map.tile_cols + c / tile_n];
    }
  }
  return map;
}

MismatchMap mismatch_map_fp32(std::size_t rows, std::size_t cols, std::span<const float> expected,
                              std::span<const float> actual, std::size_t tile_m,
                              std::size_t tile_n) {
  check_size("mismatch_map_fp32", "expected", expected.size(), rows, cols);
  check_size("mismatch_map_fp32", "actual", actual.size(), rows, cols);
  std::vector<uint8_t> mask(rows * cols);
  for (std::size_t i = 0; i < mask.size(); ++i) {
    mask[i] = !same_fp32(std::bit_cast<uint32_t>(expected[i]), std::bit_cast<uint32_t>(actual[i]));
  }
  return mismatch_map(rows, cols, mask, tile_m, tile_n);
}

MismatchMap mismatch_map_bf16(std::size_t rows, std::size_t cols,
                              std::span<const uint16_t> expected, std::span<const uint16_t> actual,
                              std::size_t tile_m, std::size_t tile_n) {
  check_size("mismatch_map_bf16", "expected", expected.size(), rows, cols);
  check_size("mismatch_map_bf16", "actual", actual.size(), rows, cols);
  std::vector<uint8_t> mask(rows * cols);
  for (std::size_t i = 0; i < mask.size(); ++i) {
    mask[i] = !same_bf16(expected[i], actual[i]);
  }
  return mismatch_map(rows, cols, mask, tile_m, tile_n);
}

MismatchMap mismatch_map(const BoundVerdict& verdict, std::size_t tile_m, std::size_t tile_n) {
  std::vector<uint8_t> mask(verdict.rows * verdict.cols, 0);
  for (const BoundViolation& v : verdict.violations) {
    mask[v.row * verdict.cols + v.col] = 1;
  }
  return mismatch_map(verdict.rows, verdict.cols, mask, tile_m, tile_n);
}

}  // namespace mxgate
