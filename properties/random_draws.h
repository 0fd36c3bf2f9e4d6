// The random draws the value generators (values.cpp, fp4_values.cpp) build their classes from.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

#include "reference/format.h"

namespace mxgate::properties::draw {

inline uint64_t below(std::mt19937_64& rng, uint64_t n) { return rng() % n; }
inline float sign(std::mt19937_64& rng) { return (rng() & 1) ? -1.0f : 1.0f; }
// 1.m with a random 23-bit mantissa.
inline float mantissa(std::mt19937_64& rng) { return float_of(0x3F800000u | (rng() & 0x7FFFFFu)); }
inline int in_range(std::mt19937_64& rng, int lo, int hi) {
  return lo + static_cast<int>(below(rng, static_cast<uint64_t>(hi - lo) + 1));
}
// An integer in [-8, 8] (class "ints").
inline float small_int(std::mt19937_64& rng) {
  return static_cast<float>(static_cast<int>(below(rng, 17)) - 8);
}
// +-1.m * 2^e, e in [-3, 3] (class "normal").
inline float normal_value(std::mt19937_64& rng) {
  return sign(rng) * std::ldexp(mantissa(rng), in_range(rng, -3, 3));
}

}  // namespace mxgate::properties::draw
