// Covers the MX scale rules of reference/mx_quant over every positive normal fp32 amax (bit
// patterns 0x00800000..0x7F7FFFFF), against the two device measurements of
// docs/conventions.md §3.6:
//   (a) "RCEIL ceil_pow2(a/448) vs ceil_pow2(fl32(a*fl32(1/448))): 0 mismatches over all
//       positive normal fp32 a" - recomputed here from bits by test-local code, then the
//       reference's RCEIL byte (mx_scale_byte, TE policy) is held to the same rule;
//   (b) "AITER-triton _mxfp8_quant_op scale vs RCEIL: 246 mismatches (exactly the amax with
//       mantissa == 1.75)" - mx_scale_byte(kAiterTriton) vs mx_scale_byte(kRceil), held to the
//       mismatch set derived from the formulas of docs/formats.md §3.6 / §3.4, which contains the
//       measured 246 plus 1 + 2^21 more (see the comment above aiter_differs_by_derivation).
// The library sweeps are cut into 8 slices (one ctest entry each); every sweep runs on two
// std::threads. Label `exhaustive`.
// Does not cover: subnormal or non-finite amax (test_mx_quant.cpp), E5M2 / FNUZ scale rules,
// element bytes, or the log2f ceil rule (its 3654-value sweep belongs to the e8m0 encoder).
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "reference/format.h"
#include "reference/mx_quant.h"
#include "tests/hex.h"

namespace mxgate {
namespace {

constexpr uint32_t kFirstNormal = 0x00800000u;  // 2^-126
constexpr uint32_t kTwoTo127 = 0x7F000000u;     // first bit pattern of the top binade
constexpr uint32_t kLastNormal = 0x7F7FFFFFu;   // FLT_MAX

// ceil(log2 y) for finite y > 0, exact, from the bits (test-local; subnormals by their width).
int ceil_log2(float y) {
  const uint32_t b = std::bit_cast<uint32_t>(y);
  const uint32_t e = b >> 23, m = b & 0x7FFFFFu;
  if (e != 0) return static_cast<int>(e) - 127 + (m != 0 ? 1 : 0);
  const int w = static_cast<int>(std::bit_width(m));
  return w - 1 - 149 + ((m & (m - 1)) != 0 ? 1 : 0);
}

struct Tally {
  uint64_t count = 0;
  uint64_t odd = 0;             // mismatches that break the expected shape
  std::vector<uint32_t> first;  // first few mismatching bit patterns, for the message
  void add(uint32_t bits, bool expected_shape) {
    ++count;
    if (!expected_shape) ++odd;
    if (first.size() < 8) first.push_back(bits);
  }
  void merge(const Tally& o) {
    count += o.count;
    odd += o.odd;
    for (uint32_t b : o.first) {
      if (first.size() < 8) first.push_back(b);
    }
  }
};

// Runs fn(bits, tally) over [lo, hi] (inclusive) on two threads; returns the merged tally.
template <typename Fn>
Tally sweep(uint32_t lo, uint32_t hi, Fn fn) {
  const uint32_t mid = lo + (hi - lo) / 2;
  Tally t0, t1;
  auto run = [&fn](uint32_t a, uint32_t b, Tally* t) {
    for (uint32_t bits = a;; ++bits) {
      fn(bits, *t);
      if (bits == b) break;
    }
  };
  std::thread th(run, mid + 1, hi, &t1);
  run(lo, mid, &t0);
  th.join();
  t0.merge(t1);
  return t0;
}

std::string hexes(const std::vector<uint32_t>& v) {
  std::string s;
  for (uint32_t b : v) {
    s += " " + test_support::hex(b, 8);
  }
  return s;
}

class Timer {
 public:
  explicit Timer(const char* what) : what_(what), t0_(std::chrono::steady_clock::now()) {}
  ~Timer() {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    std::cout << "[ timing ] " << what_ << ": " << s << " s\n";
  }

 private:
  const char* what_;
  std::chrono::steady_clock::time_point t0_;
};

// The normal range in kChunks consecutive slices, one ctest entry each, so every entry stays well
// under a minute on two busy cores while the slices together cover every pattern once.
constexpr uint32_t kChunks = 8;
uint32_t chunk_lo(uint32_t i) {
  return kFirstNormal +
         static_cast<uint32_t>((uint64_t{kLastNormal - kFirstNormal + 1} * i) / kChunks);
}
uint32_t chunk_hi(uint32_t i) { return i + 1 == kChunks ? kLastNormal : chunk_lo(i + 1) - 1; }

std::string chunk_name(const ::testing::TestParamInfo<uint32_t>& info) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "bits_%08X_%08X", chunk_lo(info.param), chunk_hi(info.param));
  return buf;
}

// The e8m0 RCEIL byte of an exact ceil exponent: ceil <= -127 means y <= 2^-127 -> byte 0
// (docs/formats.md §2.1 "> 2^-127 -> 0x01, else 0x00"); a finite normal a never gets past 2^120.
int rceil_byte(int ceil_exponent) { return ceil_exponent + 127 < 0 ? 0 : ceil_exponent + 127; }

// Guards against the RCEIL byte depending on whether amax / 448 is computed by division or by
// multiplication with fl32(1/448) (TE, torchao and AITER multiply; the Python refs divide).
// docs/conventions.md §3.6: "0 mismatches over all positive normal fp32 a". Both sides from bits
// here. In raw ceil exponents the two differ for 7 a (0x00E000E0 ... 0x03E00003, y ~ 2^-134 ..
// 2^-128: division and multiplication round differently in the fp32 subnormal range), every one
// with both ceils <= -127, i.e. byte 0 on both sides: the e8m0 bytes agree everywhere, as measured.
TEST(ExhaustiveRceil, DivideAndReciprocalMultiplyGiveTheSameByte) {
  Timer timer("divide vs reciprocal multiply, every normal amax");
  const Tally bytes = sweep(kFirstNormal, kLastNormal, [](uint32_t bits, Tally& tally) {
    const float a = std::bit_cast<float>(bits);
    const float rcp = 1.0f / 448.0f;  // fl32(1/448), as TE's max_norm_rcp
    const int c_div = ceil_log2(a / 448.0f), c_mul = ceil_log2(a * rcp);
    if (c_div != c_mul) tally.add(bits, rceil_byte(c_div) == rceil_byte(c_mul));
  });
  EXPECT_EQ(bytes.odd, 0u) << "e8m0 byte mismatches (device: 0):" << hexes(bytes.first);
  std::cout << "[ counts ] raw ceil-exponent mismatches (all below byte 0): " << bytes.count
            << hexes(bytes.first) << "\n";
}

class ExhaustiveRceilChunk : public ::testing::TestWithParam<uint32_t> {};

// Guards against the reference's RCEIL byte (transformer_engine policy: multiply by
// fl32(1/448), saturating e8m0) leaving the measured rule byte = ceil(log2(a/448)) + 127 (byte 0
// when that ceil is <= -127) for any positive normal a.
TEST_P(ExhaustiveRceilChunk, ReferenceByteMatchesCeilOfAmaxOver448) {
  Timer timer("mx_scale_byte(kRceil) vs ceil(log2(a/448)) + 127, one slice");
  MxPolicy rceil;
  rceil.rule = MxScaleRule::kRceil;
  rceil.rceil_encode = E8m0Encode::kCeilSat;
  const Tally t =
      sweep(chunk_lo(GetParam()), chunk_hi(GetParam()), [&rceil](uint32_t bits, Tally& tally) {
        const float a = std::bit_cast<float>(bits);
        const int want = rceil_byte(ceil_log2(a / 448.0f));
        if (mx_scale_byte(a, Format::kE4M3FN, rceil) != want) {
          tally.add(bits, false);
        }
      });
  EXPECT_EQ(t.count, 0u) << "first mismatches:" << hexes(t.first);
}

INSTANTIATE_TEST_SUITE_P(Slices, ExhaustiveRceilChunk, ::testing::Range(0u, kChunks), chunk_name);

// AITER Triton's 0x200000 bump vs RCEIL (docs/formats.md §3.6; docs/conventions.md §3.6 "246
// mismatches (exactly the amax with mantissa == 1.75)"), derived from the two formulas on fp32
// bits:
//  1. a = 1.75 * 2^k: RCEIL a * fl32(1/448) rounds to exactly 2^(k-8) -> byte max(k + 119, 0);
//     AITER bumps to 2^(k+1) -> clamp(k - 7, -127, 127) + 127 = k + 120 for k >= -120. They
//     differ for k in [-119, 126]: 246 values, the measured count.
//  2. a = 0x04600001 = (1.75 + 2^-23) * 2^-119: RCEIL y = 2^-127 (1 + 0.946 * 2^-23), an fp32
//     subnormal 0.473 quanta above 2^-127 -> rounds to 2^-127 -> byte 0 (a / 448 rounds the same
//     way); AITER bumps to 2^-118 -> byte 1. (0x04600002 is 0.76 quanta above and rounds up.)
//  3. Top binade [2^127, FLT_MAX], mantissa >= 0x600000: bits + 0x200000 carries into exponent
//     0xFF, the masked value is +Inf, log2(Inf) - 8 clamps to 127 -> byte 254; RCEIL 246/247.
//     0x200000 = 2^21 values.
// Every other normal a: significand in (1.75, 2) makes both bump; below 1.75 neither does.
// DISAGREEMENT WITH THE MEASUREMENT (reported to the lead): the formulas give 247 mismatches
// below 2^127 and 247 + 2^21 over all positive normal fp32, where the probe reports 246 "over all
// positive normal fp32". 246 is exactly item 1, which is what a probe whose RCEIL side does not
// round y in fp32 (exact / float64 a / 448) and whose sweep stops below 2^127 (as its log2 sweep
// states) would count. The expected values below follow the formulas; items 2 and 3 are the
// disagreement.
bool aiter_differs_by_derivation(uint32_t bits) {
  const uint32_t exp = bits >> 23, man = bits & 0x7FFFFFu;
  if (bits >= kTwoTo127) return man >= 0x600000u;  // item 3
  if (bits == 0x04600001u) return true;            // item 2
  return man == 0x600000u && exp >= 8;             // item 1: k = exp - 127 >= -119
}

// Guards against the derivation above miscounting: item 1 has 246 members (the measured
// figure), the whole set below 2^127 has 247, the top binade 2^21, and the named members carry
// the bytes derived for them.
TEST(ExhaustiveAiterTriton, DerivedMismatchSet) {
  uint32_t item1 = 0, below = 0;
  for (uint32_t e = 1; e <= 254; ++e) {
    const uint32_t bits = (e << 23) | 0x600000u;
    if (bits < kTwoTo127 && aiter_differs_by_derivation(bits)) ++item1;
  }
  below = item1 + (aiter_differs_by_derivation(0x04600001u) ? 1 : 0);
  EXPECT_EQ(item1, 246u) << "docs/conventions.md §3.6: 246";
  EXPECT_EQ(below, 247u);
  MxPolicy rceil;
  rceil.rule = MxScaleRule::kRceil;
  MxPolicy aiter;
  aiter.rule = MxScaleRule::kAiterTriton;
  for (int k = -126; k <= 127; ++k) {
    const float a = std::ldexp(1.75f, k);
    const int r = mx_scale_byte(a, Format::kE4M3FN, rceil);
    const int t = mx_scale_byte(a, Format::kE4M3FN, aiter);
    EXPECT_EQ(r, k + 119 < 0 ? 0 : k + 119) << "RCEIL, a = 1.75 * 2^" << k;
    EXPECT_EQ(t, k == 127 ? 254 : (k + 120 < 0 ? 0 : k + 120)) << "AITER, a = 1.75 * 2^" << k;
  }
  const float a2 = std::bit_cast<float>(0x04600001u);
  EXPECT_EQ(a2 * (1.0f / 448.0f), 0x1p-127f);
  EXPECT_EQ(mx_scale_byte(a2, Format::kE4M3FN, rceil), 0);
  EXPECT_EQ(mx_scale_byte(a2, Format::kE4M3FN, aiter), 1);
  const float a3 = std::bit_cast<float>(0x7F600000u);  // 1.75 * 2^127
  EXPECT_EQ(mx_scale_byte(a3, Format::kE4M3FN, aiter), 254);
  EXPECT_EQ(mx_scale_byte(std::bit_cast<float>(kLastNormal), Format::kE4M3FN, rceil), 247);
}

class ExhaustiveAiterTritonChunk : public ::testing::TestWithParam<uint32_t> {};

// Guards against AITER Triton's scale differing from RCEIL anywhere outside the derived set
// (or agreeing inside it): mx_scale_byte(kAiterTriton) vs mx_scale_byte(kRceil) on every
// positive normal fp32 of the slice.
TEST_P(ExhaustiveAiterTritonChunk, DiffersFromRceilExactlyOnTheDerivedSet) {
  Timer timer("mx_scale_byte(kAiterTriton) vs mx_scale_byte(kRceil), one slice");
  MxPolicy rceil;
  rceil.rule = MxScaleRule::kRceil;
  MxPolicy aiter;
  aiter.rule = MxScaleRule::kAiterTriton;
  const Tally t =
      sweep(chunk_lo(GetParam()), chunk_hi(GetParam()), [&](uint32_t bits, Tally& tally) {
        const float a = std::bit_cast<float>(bits);
        const bool differs =
            mx_scale_byte(a, Format::kE4M3FN, aiter) != mx_scale_byte(a, Format::kE4M3FN, rceil);
        const bool derived = aiter_differs_by_derivation(bits);
        // Tally every disagreement with the derivation; `odd` marks the ones
        // that differ where the derivation says they agree.
        if (differs != derived) tally.add(bits, !differs);
      });
  EXPECT_EQ(t.count, 0u) << t.odd << " unexpected mismatches, " << t.count - t.odd
                         << " expected mismatches missing; first:" << hexes(t.first);
}

INSTANTIATE_TEST_SUITE_P(Slices, ExhaustiveAiterTritonChunk, ::testing::Range(0u, kChunks),
                         chunk_name);

}  // namespace
}  // namespace mxgate
