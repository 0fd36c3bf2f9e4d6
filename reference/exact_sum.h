// Exact accumulation ("superaccumulator") of sums of products of fp32 values, rounded once.
//
// A term is a product of up to four floats (a*b*sa*sb), or a double times two floats. Every such
// term is an integer significand (at most 128 bits) times a power of two, so it is added EXACTLY
// into a fixed-point accumulator that spans every exponent such a term can have: double x float x
// float reaches 2^-1372 .. 2^1280 (four floats: 2^-596 .. 2^512), plus headroom for 2^62 terms.
// The exact sum is then rounded once, round-to-nearest-even, to fp32, bf16 or double.
//
// Representation: 88 signed 64-bit limbs holding base-2^32 digits (limb i weighs
// 2^(32*i + kBaseExponent)). A term touches at most six limbs, each by less than 2^32 in
// magnitude; carries are propagated lazily, every 2^29 adds, so no limb overflows. Only the limbs
// touched since the last clear() are cleared, normalized or scanned: a sum whose terms share a
// few binades costs a few limbs, not 88.
//
// Specials (IEEE semantics): a NaN factor, or 0 * Inf in one term, makes the sum NaN; +Inf and
// -Inf terms together make it NaN; otherwise an Inf term makes it that Inf. The finite part is
// then ignored. Overflow of the final rounding gives +-Inf as IEEE RNE does (a value at or
// above max_finite + half an ulp).
//
// Sign of a zero result (the rule implemented): an exact zero sum is +0.0, except when at least
// one term was added and EVERY term was -0.0 (e.g. 0 * -3), which gives -0.0 -- IEEE addition's
// rule for x + y with both -0. An empty sum is +0.0. (A GEMM kernel starts its accumulator at
// +0.0, so the GEMM oracle maps every zero result to +0.0; see gemm_oracle.h.)
#pragma once

#include <array>
#include <cstdint>

namespace mxgate {

class ExactSum {
 public:
  ExactSum() { clear(); }

  // Forgets every term. Costs O(limbs touched since the last clear).
  void clear();

  // Adds x exactly (any double, including NaN/Inf and subnormals).
  void add(double x);
  // Adds a*b exactly.
  void add_product(float a, float b);
  // Adds a*b*c*d exactly (the four-factor term of a block-scaled GEMM: value*value*scale*scale).
  void add_product(float a, float b, float c, float d);
  // Adds x*s1*s2 exactly (a double partial sum times two scales).
  void add_scaled(double x, float s1, float s2);

  // Propagates carries (value-preserving). Runs by itself every 2^29 adds; public for tests.
  void normalize();

  bool is_nan() const { return nan_ || (pos_inf_ && neg_inf_); }
  // +1 or -1 when the sum is an infinity (and not NaN), else 0.
  int infinity_sign() const;
  // True when the finite part is exactly zero (regardless of NaN/Inf).
  bool finite_part_is_zero() const;

  // The exact sum rounded once, RNE. NaN results are the canonical quiet NaN.
  float round_to_float() const;
  uint16_t round_to_bf16() const;  // bf16 bits (the top half of an fp32 pattern)
  double round_to_double() const;

  // A rounding target (precision, exponent range); defined in the .cpp.
  struct Target;

  // Limb layout, public for tests and documentation.
  static constexpr int kLimbs = 88;
  static constexpr int kBaseExponent = -1408;  // weight of limb 0's lowest bit: 2^-1408

 private:
  // Adds (-1)^negative * magnitude * 2^exponent; magnitude < 2^128, exponent >= kBaseExponent,
  // and the value < 2^1340 (every public add stays inside).
  void add_term(bool negative, unsigned __int128 magnitude, int exponent);
  void note_special_or_zero_term(bool nan, bool inf, bool negative, bool zero);
  // The sum rounded to `t`, returned as the double holding the target's value (exact): NaN,
  // +-Inf (special terms or overflow), +0/-0 for zero following the sign rule above.
  double round_to(const Target& t) const;
  // Fully carry-propagated sign and magnitude of the finite part: base-2^32 digits, digit 0
  // weighing 2^(*base_exponent). Returns the digit count (0 when the finite part is zero).
  int magnitude_digits(uint32_t* digits, bool* negative, int* base_exponent) const;

  std::array<int64_t, kLimbs> limb_{};  // zero outside [lo_, hi_]
  int lo_ = kLimbs;                     // touched limb range [lo_, hi_]; empty when lo_ > hi_
  int hi_ = -1;
  int pending_ = 0;  // adds since the last normalization
  bool nan_ = false;
  bool pos_inf_ = false;
  bool neg_inf_ = false;
  bool any_term_ = false;
  bool all_negative_zero_ = true;  // every term so far was -0.0
};

// RNE of a double to bf16 bits in ONE rounding (never through fp32: that would round twice).
// NaN gives the canonical quiet NaN 0x7FC0 (sign kept).
uint16_t round_to_bf16_bits(double x);

// The exact value of bf16 bits, as double.
double bf16_bits_to_double(uint16_t bits);

}  // namespace mxgate
