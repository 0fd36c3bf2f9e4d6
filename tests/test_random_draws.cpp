// Covers properties/random_draws.h Mt64Batch, the batched generator of the fingerprint operands:
// it must draw exactly std::mt19937_64's numbers for a seed (recorded cases' seeds fix the
// operands), across several refills of its 312-number state, for seeds at the edges of 64 bits.
// Does not cover: the draw helpers of the value classes (test_values.cpp and the property suites
// that use them).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "properties/random_draws.h"

namespace {

// A twist or tempering constant copied wrong would change every operand of every fingerprint
// case (and silently re-seed recorded cases): the first 2000 numbers of each seed must match.
TEST(Mt64Batch, DrawsStdMt19937_64Numbers) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{5489}, uint64_t{0x9E3779B97F4A7C15},
                        ~uint64_t{0}, uint64_t{12345} ^ uint64_t{0x9E3779B97F4A7C15}}) {
    std::mt19937_64 want(seed);
    mxgate::properties::Mt64Batch got(seed);
    for (int i = 0; i < 2000; ++i) {
      ASSERT_EQ(got(), want()) << "seed " << seed << ", number " << i;
    }
  }
}

}  // namespace
