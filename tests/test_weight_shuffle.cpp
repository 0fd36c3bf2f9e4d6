// Covers reference/weight_shuffle: AITER shuffle_weight(x, (16,16)) for fp8 and bf16 checked
// against the source's own view/permute composition (docs/layouts.md §1), bijection and round
// trips, the double-shuffle properties behind bug class Z3 (docs/layouts.md §1.2), and K padding.
// Does not cover: the gfx1250, MoE GUGU/GGUU, int4 or fp4 shuffle variants (docs/layouts.md §1.3),
// nor any kernel that consumes the shuffled weight.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <limits>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "reference/weight_shuffle.h"
#include "tests/tensor_view.h"

namespace mxgate {
namespace {

using Bytes = std::vector<std::uint8_t>;
using Perm = std::vector<std::size_t>;

// torch semantics: view contiguous data as `shape`, `.permute(perm)`, `.contiguous()`. Returns,
// for each output element, the index of the source element it copies.
Perm permute_contiguous(const std::vector<std::size_t>& shape,
                        const std::vector<std::size_t>& perm) {
  return test_support::permute_source_index(shape, perm);
}

// AITER: BK = IK*2, KP = 16 // element_size, BN = IN;
// x.view(-1, N//BN, BN, K//BK, BK//KP, KP).permute(0,1,3,4,2,5).contiguous()   (docs/layouts.md §1)
Perm composed_shuffle(std::size_t n, std::size_t k, std::size_t e) {
  const std::size_t bn = 16, bk = 32, kp = 16 / e;
  return permute_contiguous({1, n / bn, bn, k / bk, bk / kp, kp}, {0, 1, 3, 4, 2, 5});
}

// Element permutation from the module's offset function: dst_of[src] = shuffled offset.
Perm offset_perm(std::size_t n, std::size_t k, std::size_t e) {
  Perm dst_of(n * k);
  for (std::size_t row = 0; row < n; ++row) {
    for (std::size_t col = 0; col < k; ++col) {
      dst_of[row * k + col] = shuffle_weight_offset(n, k, e, row, col);
    }
  }
  return dst_of;
}

constexpr std::uint32_t kSeed = 20240917;

// Prints the seed of a test's random data so a failure can be replayed.
std::uint32_t announce_seed(std::uint32_t seed) {
  std::cout << "[ seed     ] random weight bytes from mt19937 seed " << seed << "\n";
  testing::Test::RecordProperty("seed", static_cast<int>(seed));
  return seed;
}

// Deterministic random bytes (raw mt19937 output is portable; distributions are not).
Bytes random_bytes(std::size_t size, std::uint32_t seed) {
  std::mt19937 gen(seed);
  Bytes out(size);
  for (auto& b : out) {
    b = static_cast<std::uint8_t>(gen() & 0xFF);
  }
  return out;
}

// Multiplicative order of 16 modulo m (m > 1, gcd(16, m) = 1 since m = K*e - 1 is odd).
std::size_t order_of_16_mod(std::size_t m) {
  std::size_t x = 16 % m, ord = 1;
  while (x != 1) {
    x = x * 16 % m;
    ++ord;
  }
  return ord;
}

// Order of the shuffle, found by iterating its element permutation until it is the identity.
std::size_t iterated_order(std::size_t n, std::size_t k, std::size_t e) {
  const Perm dst_of = offset_perm(n, k, e);
  Perm pos(dst_of.size());
  std::iota(pos.begin(), pos.end(), std::size_t{0});
  for (std::size_t steps = 1;; ++steps) {
    bool identity = true;
    for (std::size_t i = 0; i < pos.size(); ++i) {
      pos[i] = dst_of[pos[i]];
      identity = identity && pos[i] == i;
    }
    if (identity) {
      return steps;
    }
  }
}

struct Shape {
  std::size_t n, k, e;
};

std::vector<Shape> sweep_shapes() {
  std::vector<Shape> shapes;
  for (std::size_t e : {1, 2}) {
    for (std::size_t n : {16, 32, 48}) {
      for (std::size_t k : {32, 64, 96, 128, 160, 256, 288, 512, 576}) {
        shapes.push_back({n, k, e});
      }
    }
  }
  return shapes;
}

// Guards against swapped digits in the closed form; values worked by hand from docs/layouts.md
// §1.1: fp8 off = 16*K*n0 + 256*(k/16) + 16*n1 + k%16, bf16 off = 16*K*n0 + 128*(k/8) + 8*n1 + k%8.
TEST(WeightShuffle, HandWorkedOffsets) {
  EXPECT_EQ(shuffle_weight_offset(32, 64, 1, 1, 0), 16u);
  EXPECT_EQ(shuffle_weight_offset(32, 64, 1, 0, 16), 256u);
  EXPECT_EQ(shuffle_weight_offset(32, 64, 1, 0, 15), 15u);
  EXPECT_EQ(shuffle_weight_offset(32, 64, 1, 17, 33), 16u * 64 + 256 * 2 + 16 * 1 + 1);
  EXPECT_EQ(shuffle_weight_offset(32, 64, 2, 1, 0), 8u);
  EXPECT_EQ(shuffle_weight_offset(32, 64, 2, 0, 8), 128u);
  EXPECT_EQ(shuffle_weight_offset(32, 64, 2, 17, 33), 16u * 64 + 128 * 4 + 8 * 1 + 1);
}

// Guards against the closed form drifting from AITER's view/permute code: the offset function
// and the byte-level shuffle must both reproduce the composition, for fp8 and bf16.
TEST(WeightShuffle, MatchesViewPermuteComposition) {
  const std::uint32_t seed = announce_seed(kSeed);
  for (const Shape& s : sweep_shapes()) {
    SCOPED_TRACE(testing::Message() << "N=" << s.n << " K=" << s.k << " e=" << s.e);
    const Perm src_of = composed_shuffle(s.n, s.k, s.e);
    const Perm dst_of = offset_perm(s.n, s.k, s.e);
    for (std::size_t out = 0; out < src_of.size(); ++out) {
      ASSERT_EQ(dst_of[src_of[out]], out) << "shuffled element " << out;
    }
    const Bytes w = random_bytes(s.n * s.k * s.e, seed);
    const Bytes shuffled = shuffle_weight(w, s.n, s.k, s.e);
    Bytes expected(w.size());
    for (std::size_t out = 0; out < src_of.size(); ++out) {
      for (std::size_t b = 0; b < s.e; ++b) {
        expected[out * s.e + b] = w[src_of[out] * s.e + b];
      }
    }
    EXPECT_EQ(shuffled, expected);
  }
}

// Guards against collisions, offsets past the buffer, and an inverse that is not one.
TEST(WeightShuffle, OffsetIsABijectionWithInverse) {
  for (const Shape& s : sweep_shapes()) {
    SCOPED_TRACE(testing::Message() << "N=" << s.n << " K=" << s.k << " e=" << s.e);
    std::vector<bool> used(s.n * s.k, false);
    for (std::size_t row = 0; row < s.n; ++row) {
      for (std::size_t col = 0; col < s.k; ++col) {
        const std::size_t off = shuffle_weight_offset(s.n, s.k, s.e, row, col);
        ASSERT_LT(off, used.size());
        ASSERT_FALSE(used[off]) << "collision at (" << row << ", " << col << ")";
        used[off] = true;
        ASSERT_EQ(shuffle_weight_inverse(s.n, s.k, s.e, off), std::pair(row, col));
      }
    }
  }
}

// Guards against unshuffle_weight not being the exact inverse (in both orders) of the shuffle.
TEST(WeightShuffle, ShuffleUnshuffleRoundTrip) {
  const std::uint32_t seed = announce_seed(kSeed + 1);
  for (const Shape& s : sweep_shapes()) {
    SCOPED_TRACE(testing::Message() << "N=" << s.n << " K=" << s.k << " e=" << s.e);
    const Bytes w = random_bytes(s.n * s.k * s.e, seed);
    EXPECT_EQ(unshuffle_weight(shuffle_weight(w, s.n, s.k, s.e), s.n, s.k, s.e), w);
    EXPECT_EQ(shuffle_weight(unshuffle_weight(w, s.n, s.k, s.e), s.n, s.k, s.e), w);
  }
}

// Guards bug class Z3 detection (docs/layouts.md §1.2): the shuffle must move random data, a double
// shuffle must differ from a single one, and (rows not of 256 bytes) must not restore the original.
TEST(WeightShuffle, DoubleShuffleDiffersFromSingleForRandomData) {
  const std::uint32_t seed = announce_seed(kSeed + 2);
  for (const Shape& s : sweep_shapes()) {
    SCOPED_TRACE(testing::Message() << "N=" << s.n << " K=" << s.k << " e=" << s.e);
    const Bytes w = random_bytes(s.n * s.k * s.e, seed);
    const Bytes once = shuffle_weight(w, s.n, s.k, s.e);
    const Bytes twice = shuffle_weight(once, s.n, s.k, s.e);
    EXPECT_NE(once, w);
    EXPECT_NE(twice, once);
    if (s.k * s.e != 256) {
      EXPECT_NE(twice, w);
    }
  }
}

// Guards against the involution trap (docs/layouts.md §1.2): with rows of exactly 256 bytes (fp8
// K=256, bf16 K=128) a double shuffle IS the identity, so "unshuffle and compare" cannot detect it.
TEST(WeightShuffle, RowsOf256BytesMakeDoubleShuffleTheIdentity) {
  const std::uint32_t seed = announce_seed(kSeed + 3);
  for (Shape s : {Shape{16, 256, 1}, Shape{48, 256, 1}, Shape{16, 128, 2}, Shape{48, 128, 2}}) {
    SCOPED_TRACE(testing::Message() << "N=" << s.n << " K=" << s.k << " e=" << s.e);
    const Bytes w = random_bytes(s.n * s.k * s.e, seed);
    const Bytes once = shuffle_weight(w, s.n, s.k, s.e);
    EXPECT_NE(once, w);
    EXPECT_EQ(shuffle_weight(once, s.n, s.k, s.e), w);
    EXPECT_EQ(shuffle_weight(w, s.n, s.k, s.e), unshuffle_weight(w, s.n, s.k, s.e));
  }
}

// Guards the cycle structure claimed in docs/layouts.md §1.2: the example orders for fp8, by
// iterating.
TEST(WeightShuffle, PermutationOrderMatchesLayoutsExamples) {
  const std::vector<std::pair<std::size_t, std::size_t>> fp8_k_to_order = {
      {256, 2}, {512, 9}, {576, 55}, {1024, 5}, {2048, 11}, {4096, 3}};
  for (auto [k, order] : fp8_k_to_order) {
    EXPECT_EQ(iterated_order(16, k, 1), order) << "fp8 K=" << k;
    EXPECT_EQ(order_of_16_mod(k - 1), order) << "fp8 K=" << k;
  }
  EXPECT_EQ(iterated_order(32, 512, 1), 9u);  // stripes are independent: N does not matter
  EXPECT_EQ(order_of_16_mod(7168 - 1), 597u);
  EXPECT_EQ(order_of_16_mod(18432 - 1), 987u);
}

// Guards the general law ord(shuffle) = ord_{K*e-1}(16) (docs/layouts.md §1.2) across fp8 and bf16.
TEST(WeightShuffle, PermutationOrderIsOrderOf16ModuloRowBytesMinusOne) {
  for (std::size_t e : {1, 2}) {
    for (std::size_t k = 32; k <= 1024; k += 32) {
      EXPECT_EQ(iterated_order(16, k, e), order_of_16_mod(k * e - 1)) << "K=" << k << " e=" << e;
    }
  }
}

// Guards the reason the double-shuffle tests use random data (docs/layouts.md §1.2): fixed points
// exist.
TEST(WeightShuffle, FixedPointCountsMatchLayouts) {
  const auto fixed_points = [](std::size_t n, std::size_t k) {
    const Perm dst_of = offset_perm(n, k, 1);
    std::size_t count = 0;
    for (std::size_t i = 0; i < dst_of.size(); ++i) {
      count += dst_of[i] == i;
    }
    return count;
  };
  EXPECT_EQ(fixed_points(16, 32), 32u);
  EXPECT_EQ(fixed_points(128, 256), 2048u);
}

// Guards against shapes AITER's asserts reject (or wrong buffers) being shuffled silently.
TEST(WeightShuffle, RejectsBadInput) {
  constexpr std::size_t kElems = 512;  // a 16 x 32 fp8 weight
  const Bytes w(kElems);
  EXPECT_THROW(shuffle_weight(Bytes(kElems / 2), 8, 32, 1), std::invalid_argument);  // N % 16
  EXPECT_THROW(shuffle_weight(Bytes(kElems * 3 / 2), 16, 48, 1),
               std::invalid_argument);                                                // K % 32
  EXPECT_THROW(shuffle_weight(Bytes(kElems * 4), 16, 32, 4), std::invalid_argument);  // e = 4
  EXPECT_THROW(shuffle_weight(w, 16, 32, 2), std::invalid_argument);  // buffer too small
  EXPECT_THROW(unshuffle_weight(w, 32, 32, 1), std::invalid_argument);
  EXPECT_THROW(shuffle_weight_offset(16, 32, 1, 16, 0), std::invalid_argument);
  EXPECT_THROW(shuffle_weight_offset(16, 32, 1, 0, 32), std::invalid_argument);
  EXPECT_THROW(shuffle_weight_inverse(16, 32, 1, kElems), std::invalid_argument);
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 16 * 16;
  EXPECT_THROW(check_shuffle_weight_shape(huge, 32, 1), std::invalid_argument);
}

// Guards against K padding that misplaces rows, writes the wrong pad bytes, or cannot be undone;
// K=288 -> 384 is the MXFP8 K % 128 case of docs/layouts.md §5.
TEST(WeightShuffle, PadKThenStripKRoundTrips) {
  const std::uint32_t seed = announce_seed(kSeed + 4);
  const Bytes pad_bf16_one = {0x80, 0x3F};  // bf16 1.0 (0x3F80), little-endian bytes
  const std::size_t n = 3, k = 288, e = 2, kp = 384;
  const Bytes w = random_bytes(n * k * e, seed);
  ASSERT_EQ(padded_k(k, 128), kp);
  const Bytes padded = pad_k(w, n, k, e, 128, pad_bf16_one);
  ASSERT_EQ(padded.size(), n * kp * e);
  for (std::size_t row = 0; row < n; ++row) {
    for (std::size_t col = 0; col < kp; ++col) {
      for (std::size_t b = 0; b < e; ++b) {
        const std::uint8_t want = col < k ? w[(row * k + col) * e + b] : pad_bf16_one[b];
        ASSERT_EQ(padded[(row * kp + col) * e + b], want) << row << ", " << col << ", " << b;
      }
    }
  }
  EXPECT_EQ(strip_k(padded, n, kp, k, e), w);
  EXPECT_EQ(pad_k(w, n, k, e, 32, pad_bf16_one), w);  // already aligned: unchanged
}

// Guards the intended pipeline: an fp8 weight with K % 32 != 0 is padded, then shuffled, and
// both steps undo back to the original.
TEST(WeightShuffle, PaddedWeightShufflesAndRestores) {
  const std::uint32_t seed = announce_seed(kSeed + 5);
  const std::size_t n = 16, k = 40, e = 1;
  const Bytes w = random_bytes(n * k * e, seed);
  const Bytes zero = {0x00};
  const std::size_t kp = padded_k(k, 32);
  ASSERT_EQ(kp, 64u);
  const Bytes shuffled = shuffle_weight(pad_k(w, n, k, e, 32, zero), n, kp, e);
  EXPECT_EQ(strip_k(unshuffle_weight(shuffled, n, kp, e), n, kp, k, e), w);
}

// Guards against bad padding arguments becoming out-of-bounds copies.
TEST(WeightShuffle, PadKRejectsBadInput) {
  const Bytes w(10);  // a 2 x 5 fp8 matrix
  EXPECT_THROW(padded_k(5, 0), std::invalid_argument);
  EXPECT_THROW(padded_k(std::numeric_limits<std::size_t>::max(), 32), std::invalid_argument);
  EXPECT_THROW(pad_k(w, 2, 5, 1, 0, Bytes{0}), std::invalid_argument);
  EXPECT_THROW(pad_k(w, 2, 5, 1, 32, Bytes{0, 0}), std::invalid_argument);  // pad != elem size
  EXPECT_THROW(pad_k(w, 2, 6, 1, 32, Bytes{0}), std::invalid_argument);     // buffer size
  EXPECT_THROW(strip_k(w, 2, 5, 6, 1), std::invalid_argument);              // k > kp
  EXPECT_THROW(strip_k(w, 2, 4, 4, 1), std::invalid_argument);              // buffer size
}

}  // namespace
}  // namespace mxgate
