#include "reference/exact_sum.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace mxgate {

struct ExactSum::Target {
  int precision;          // significand bits, implicit bit included
  int min_unit_exponent;  // exponent of the smallest subnormal (the finest unit)
  int max_exponent;       // largest binade; a rounded value >= 2^(max_exponent + 1) is Inf
};

namespace {

using u128 = unsigned __int128;
constexpr uint64_t kDigitMask = 0xFFFFFFFFu;
// Adds between carry propagations: limbs start below 2^40 in magnitude and move by less than
// 2^32 per add, so 2^29 adds keep them below 2^62.
constexpr int kMaxPending = 1 << 29;
// The top touched limb absorbs carries signed; it is split upward once it reaches this size.
constexpr int64_t kTopLimit = int64_t{1} << 40;

constexpr ExactSum::Target kFloatTarget{24, -149, 127};
constexpr ExactSum::Target kBf16Target{8, -133, 127};
constexpr ExactSum::Target kDoubleTarget{53, -1074, 1023};

// A finite float or double as (-1)^negative * significand * 2^exponent (significand integer).
struct Parts {
  bool negative;
  bool nan;
  bool inf;
  uint64_t significand;  // 0 for zero
  int exponent;
};

Parts parts_of(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t biased = (u >> 23) & 0xFF;
  const uint32_t frac = u & 0x7FFFFF;
  Parts p{(u >> 31) != 0, false, false, frac, -149};
  if (biased == 0xFF) {
    p.nan = frac != 0;
    p.inf = frac == 0;
  } else if (biased != 0) {
    p.significand = frac | 0x800000u;
    p.exponent = static_cast<int>(biased) - 150;
  }
  return p;
}

Parts parts_of(double x) {
  const uint64_t u = std::bit_cast<uint64_t>(x);
  const uint64_t biased = (u >> 52) & 0x7FF;
  const uint64_t frac = u & ((uint64_t{1} << 52) - 1);
  Parts p{(u >> 63) != 0, false, false, frac, -1074};
  if (biased == 0x7FF) {
    p.nan = frac != 0;
    p.inf = frac == 0;
  } else if (biased != 0) {
    p.significand = frac | (uint64_t{1} << 52);
    p.exponent = static_cast<int>(biased) - 1075;
  }
  return p;
}

// Rounds (-1)^negative * (m + f) * 2^e to `t`, RNE, where m != 0 has its top bit at bit 63 and
// `sticky` says whether the fraction f (bits below 2^e) is nonzero. Returns the target value as an
// exact double, or +-Inf on overflow. Underflow to zero keeps the sign (IEEE).
double round_core(bool negative, uint64_t m, int e, bool sticky, const ExactSum::Target& t) {
  const int msb = e + 63;
  const int q = std::max(msb - t.precision + 1, t.min_unit_exponent);  // unit of the result
  const int shift = q - e;  // >= 64 - precision > 0: the window holds the round bit
  uint64_t mant = 0;
  bool round = false;
  if (shift < 64) {
    mant = m >> shift;
    round = ((m >> (shift - 1)) & 1) != 0;
    sticky = sticky || (m & ((uint64_t{1} << (shift - 1)) - 1)) != 0;
  } else if (shift == 64) {
    round = true;  // bit 63 of m is set
    sticky = sticky || (m << 1) != 0;
  } else {
    sticky = true;
  }
  if (round && (sticky || (mant & 1) != 0)) {
    ++mant;
  }
  if (mant != 0 && q + 63 - std::countl_zero(mant) > t.max_exponent) {
    return negative ? -HUGE_VAL : HUGE_VAL;
  }
  const double v = std::ldexp(static_cast<double>(mant), q);  // exact: mant <= 2^precision
  return negative ? -v : v;
}

}  // namespace

void ExactSum::clear() {
  if (lo_ <= hi_) {
    std::fill(limb_.begin() + lo_, limb_.begin() + hi_ + 1, 0);
  }
  lo_ = kLimbs;
  hi_ = -1;
  pending_ = 0;
  nan_ = pos_inf_ = neg_inf_ = any_term_ = false;
  all_negative_zero_ = true;
}

void ExactSum::note_special_or_zero_term(bool nan, bool inf, bool negative, bool zero) {
  any_term_ = true;
  if (nan) {
    nan_ = true;
  } else if (inf) {
    (negative ? neg_inf_ : pos_inf_) = true;
  }
  if (!(zero && negative)) {
    all_negative_zero_ = false;
  }
}

void ExactSum::add_term(bool negative, u128 magnitude, int exponent) {
  any_term_ = true;
  all_negative_zero_ = false;
  const int offset = exponent - kBaseExponent;
  const int limb = offset >> 5;
  const int shift = offset & 31;
  // Each 64-bit half, shifted, spans three digits; every limb moves by less than 2^32.
  auto add_half = [&](uint64_t x, int at) {
    const u128 v = static_cast<u128>(x) << shift;  // < 2^95
    const auto d0 = static_cast<int64_t>(static_cast<uint64_t>(v) & kDigitMask);
    const auto d1 = static_cast<int64_t>(static_cast<uint64_t>(v >> 32) & kDigitMask);
    const auto d2 = static_cast<int64_t>(static_cast<uint64_t>(v >> 64));
    if (negative) {
      limb_[at] -= d0;
      limb_[at + 1] -= d1;
      limb_[at + 2] -= d2;
    } else {
      limb_[at] += d0;
      limb_[at + 1] += d1;
      limb_[at + 2] += d2;
    }
  };
  add_half(static_cast<uint64_t>(magnitude), limb);
  int top = limb + 2;
  ++pending_;
  if (const auto hi = static_cast<uint64_t>(magnitude >> 64); hi != 0) {
    add_half(hi, limb + 2);
    top = limb + 4;
    ++pending_;
  }
  lo_ = std::min(lo_, limb);
  hi_ = std::max(hi_, top);
  if (pending_ >= kMaxPending) {
    normalize();
  }
}

void ExactSum::normalize() {
  if (lo_ > hi_) {
    return;
  }
  int64_t carry = 0;
  for (int i = lo_; i < hi_; ++i) {
    const int64_t v = limb_[i] + carry;
    carry = v >> 32;  // arithmetic: floor division by 2^32
    limb_[i] = v & static_cast<int64_t>(kDigitMask);
  }
  limb_[hi_] += carry;
  while (hi_ + 1 < kLimbs && (limb_[hi_] >= kTopLimit || limb_[hi_] <= -kTopLimit)) {
    const int64_t c = limb_[hi_] >> 32;
    limb_[hi_] &= static_cast<int64_t>(kDigitMask);
    limb_[++hi_] += c;
  }
  pending_ = 0;
}

void ExactSum::add(double x) {
  const Parts p = parts_of(x);
  if (p.nan || p.inf || p.significand == 0) {
    note_special_or_zero_term(p.nan, p.inf, p.negative, p.significand == 0);
    return;
  }
  add_term(p.negative, p.significand, p.exponent);
}

void ExactSum::add_product(float a, float b) { add_product(a, b, 1.0f, 1.0f); }

void ExactSum::add_product(float a, float b, float c, float d) {
  const Parts pa = parts_of(a), pb = parts_of(b), pc = parts_of(c), pd = parts_of(d);
  const bool negative = (pa.negative ^ pb.negative ^ pc.negative ^ pd.negative) != 0;
  const bool nan = pa.nan || pb.nan || pc.nan || pd.nan;
  const bool inf = pa.inf || pb.inf || pc.inf || pd.inf;
  const bool zero =
      (pa.significand == 0 && !pa.inf && !pa.nan) || (pb.significand == 0 && !pb.inf && !pb.nan) ||
      (pc.significand == 0 && !pc.inf && !pc.nan) || (pd.significand == 0 && !pd.inf && !pd.nan);
  if (nan || inf || zero) {
    // 0 * Inf is NaN; NaN wins over everything.
    note_special_or_zero_term(nan || (inf && zero), inf, negative, zero && !inf);
    return;
  }
  const u128 magnitude = static_cast<u128>(pa.significand * pb.significand) *
                         static_cast<u128>(pc.significand * pd.significand);  // < 2^96
  add_term(negative, magnitude, pa.exponent + pb.exponent + pc.exponent + pd.exponent);
}

void ExactSum::add_scaled(double x, float s1, float s2) {
  const Parts px = parts_of(x), p1 = parts_of(s1), p2 = parts_of(s2);
  const bool negative = (px.negative ^ p1.negative ^ p2.negative) != 0;
  const bool nan = px.nan || p1.nan || p2.nan;
  const bool inf = px.inf || p1.inf || p2.inf;
  const bool zero = (px.significand == 0 && !px.inf && !px.nan) ||
                    (p1.significand == 0 && !p1.inf && !p1.nan) ||
                    (p2.significand == 0 && !p2.inf && !p2.nan);
  if (nan || inf || zero) {
    note_special_or_zero_term(nan || (inf && zero), inf, negative, zero && !inf);
    return;
  }
  const u128 magnitude =
      static_cast<u128>(px.significand) * static_cast<u128>(p1.significand * p2.significand);
  add_term(negative, magnitude, px.exponent + p1.exponent + p2.exponent);  // < 2^101
}

int ExactSum::infinity_sign() const {
  if (is_nan()) {
    return 0;
  }
  if (pos_inf_) {
    return 1;
  }
  if (neg_inf_) {
    return -1;
  }
  return 0;
}

int ExactSum::magnitude_digits(uint32_t* digits, bool* negative, int* base_exponent) const {
  *negative = false;
  *base_exponent = kBaseExponent + 32 * lo_;
  int n = 0;
  int64_t carry = 0;
  for (int i = lo_; i <= hi_; ++i) {
    const int64_t v = limb_[i] + carry;
    digits[n++] = static_cast<uint32_t>(v & static_cast<int64_t>(kDigitMask));
    carry = v >> 32;
  }
  while (carry != 0 && carry != -1) {
    digits[n++] = static_cast<uint32_t>(carry & static_cast<int64_t>(kDigitMask));
    carry >>= 32;
  }
  if (carry == -1) {
    // Value = sum(digits) - 2^(32n): negate in two's complement to get the magnitude.
    *negative = true;
    uint64_t c = 1;
    for (int i = 0; i < n; ++i) {
      const uint64_t x = static_cast<uint64_t>(~digits[i]) + c;
      digits[i] = static_cast<uint32_t>(x);
      c = x >> 32;
    }
    if (c != 0) {
      digits[n++] = static_cast<uint32_t>(c);
    }
  }
  while (n > 0 && digits[n - 1] == 0) {
    --n;
  }
  return n;
}

bool ExactSum::finite_part_is_zero() const {
  uint32_t digits[kLimbs + 4];
  bool negative;
  int base;
  return magnitude_digits(digits, &negative, &base) == 0;
}

double ExactSum::round_to(const Target& t) const {
  if (is_nan()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (pos_inf_) {
    return HUGE_VAL;
  }
  if (neg_inf_) {
    return -HUGE_VAL;
  }
  uint32_t digits[kLimbs + 4];
  bool negative;
  int base;
  const int n = magnitude_digits(digits, &negative, &base);
  if (n == 0) {
    return any_term_ && all_negative_zero_ ? -0.0 : 0.0;
  }
  // 64-bit window whose top bit is the leading 1, plus a sticky bit for everything below it.
  const int top = 32 * (n - 1) + 31 - std::countl_zero(digits[n - 1]);  // bit index of the msb
  const int low = top - 63;                                             // window's lowest bit
  auto digit = [&](int i) -> uint64_t { return i >= 0 && i < n ? digits[i] : 0; };
  uint64_t m;
  bool sticky = false;
  if (low >= 0) {
    const int q = low >> 5, s = low & 31;
    const u128 w = static_cast<u128>(digit(q)) | static_cast<u128>(digit(q + 1)) << 32 |
                   static_cast<u128>(digit(q + 2)) << 64;
    m = static_cast<uint64_t>(w >> s);
    sticky = (digit(q) & ((uint64_t{1} << s) - 1)) != 0;
    for (int i = 0; i < q && !sticky; ++i) {
      sticky = digits[i] != 0;
    }
  } else {
    m = (digit(0) | digit(1) << 32) << -low;  // fewer than 64 significant bits
  }
  return round_core(negative, m, base + low, sticky, t);
}

float ExactSum::round_to_float() const { return static_cast<float>(round_to(kFloatTarget)); }

uint16_t ExactSum::round_to_bf16() const {
  const double v = round_to(kBf16Target);
  if (std::isnan(v)) {
    return 0x7FC0;
  }
  // v is a bf16 value, so the fp32 conversion is exact and its low 16 bits are zero.
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(v)) >> 16);
}

double ExactSum::round_to_double() const { return round_to(kDoubleTarget); }

uint16_t round_to_bf16_bits(double x) {
  const Parts p = parts_of(x);
  const uint16_t sign = p.negative ? 0x8000 : 0;
  if (p.nan) {
    return sign | 0x7FC0;
  }
  if (p.inf) {
    return sign | 0x7F80;
  }
  if (p.significand == 0) {
    return sign;
  }
  const int lz = std::countl_zero(p.significand);
  const double v = round_core(p.negative, p.significand << lz, p.exponent - lz, false, kBf16Target);
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(v)) >> 16);
}

double bf16_bits_to_double(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

}  // namespace mxgate
