// The random draws the value generators (values.cpp, fp4_values.cpp) build their classes from,
// and Mt64Batch, std::mt19937_64's sequence drawn a state at a time (the fingerprint operands').
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

#include "reference/format.h"

namespace mxgate::properties {

// The numbers std::mt19937_64(seed) draws, in the same order (the standard's seeding, twist and
// tempering, [rand.predef]), tempered 312 at a time into a buffer so a draw is a load rather than
// a call: the fingerprint operands draw one number per element, and recorded cases' seeds fix
// the numbers. tests/test_random_draws.cpp holds it to std::mt19937_64.
class Mt64Batch {
 public:
  explicit Mt64Batch(uint64_t seed) {
    s_[0] = seed;
    for (int i = 1; i < kN; ++i) {
      s_[i] = 6364136223846793005ull * (s_[i - 1] ^ (s_[i - 1] >> 62)) + static_cast<uint64_t>(i);
    }
  }
  uint64_t operator()() {
    if (next_ == kN) refill();
    return out_[next_++];
  }

 private:
  static constexpr int kN = 312, kM = 156;
  static uint64_t twist(uint64_t hi_word, uint64_t lo_word, uint64_t far) {
    const uint64_t x = (hi_word & (~uint64_t{0} << 31)) | (lo_word & ((uint64_t{1} << 31) - 1));
    return far ^ (x >> 1) ^ ((uint64_t{0} - (x & 1)) & 0xB5026F5AA96619E9ull);  // branch-free
  }
  void refill() {
    int i = 0;
    for (; i < kN - kM; ++i) s_[i] = twist(s_[i], s_[i + 1], s_[i + kM]);
    for (; i < kN - 1; ++i) s_[i] = twist(s_[i], s_[i + 1], s_[i + kM - kN]);
    s_[kN - 1] = twist(s_[kN - 1], s_[0], s_[kM - 1]);
    for (int j = 0; j < kN; ++j) {
      uint64_t y = s_[j];
      y ^= (y >> 29) & 0x5555555555555555ull;
      y ^= (y << 17) & 0x71D67FFFEDA60000ull;
      y ^= (y << 37) & 0xFFF7EEE000000000ull;
      out_[j] = y ^ (y >> 43);
    }
    next_ = 0;
  }
  uint64_t s_[kN];
  uint64_t out_[kN];
  int next_ = kN;
};

}  // namespace mxgate::properties

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
