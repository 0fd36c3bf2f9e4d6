#include "reference/fp_encode.h"

#include <array>
#include <bit>
#include <string>

namespace mxgate {
namespace {

// sig / 2^shift rounded to an integer by `r` (1 <= shift < the width of U), on the bits.
template <class U>
U round_shifted(U sig, int shift, Rounding r) {
  const U rem = sig & ((U{1} << shift) - 1);
  const U half = U{1} << (shift - 1);
  U n = sig >> shift;
  switch (r) {
    case Rounding::kNearestEven:
      n += (rem > half || (rem == half && (n & 1))) ? 1 : 0;
      break;
    case Rounding::kNearestAway:
      n += rem >= half ? 1 : 0;
      break;
    case Rounding::kTowardZero:
      break;
  }
  return n;
}

uint32_t sign_bit(Format f, bool negative) { return negative ? (1u << (info(f).bits - 1)) : 0u; }

}  // namespace

uint32_t nan_code(Format f, bool negative) {
  const FormatInfo& fi = info(f);
  const uint32_t exp_all = (1u << fi.exp_bits) - 1;
  const uint32_t man_mask = (1u << fi.man_bits) - 1;
  switch (fi.specials) {
    case SpecialStyle::kFnuz:
      return 1u << (fi.bits - 1);  // 0x80, the only NaN
    case SpecialStyle::kFn:
      return sign_bit(f, negative) | (exp_all << fi.man_bits) | man_mask;
    case SpecialStyle::kE8m0:
      return 0xFF;
    case SpecialStyle::kNone:
    case SpecialStyle::kInt:
      throw std::invalid_argument("format " + std::string(fi.name) + " has no NaN code");
    case SpecialStyle::kIeee:
      break;
  }
  // Quiet NaN with every mantissa bit set for E5M2 (0x7F, as PyTorch, CUDA and Triton emit,
  // docs/conventions.md §3.1); the IEEE quiet bit alone for the 16-bit formats (0x7FC0, 0x7E00).
  const uint32_t payload = fi.bits == 8 ? man_mask : (1u << (fi.man_bits - 1));
  return sign_bit(f, negative) | (exp_all << fi.man_bits) | payload;
}

uint32_t max_code(Format f, bool negative) {
  const FormatInfo& fi = info(f);
  const uint32_t exp_all = (1u << fi.exp_bits) - 1;
  const uint32_t man_mask = (1u << fi.man_bits) - 1;
  uint32_t magnitude = 0;
  switch (fi.specials) {
    case SpecialStyle::kIeee:
      magnitude = ((exp_all - 1) << fi.man_bits) | man_mask;
      break;
    case SpecialStyle::kFn:
      magnitude = (exp_all << fi.man_bits) | (man_mask - 1);
      break;
    case SpecialStyle::kFnuz:
    case SpecialStyle::kNone:
      magnitude = (exp_all << fi.man_bits) | man_mask;
      break;
    case SpecialStyle::kE8m0:
      return 0xFE;
    case SpecialStyle::kInt: {
      const uint32_t max = (1u << (fi.bits - 1)) - 1;  // 0x7F
      return negative ? (1u << fi.bits) - max : max;   // -127: 0x81
    }
  }
  return sign_bit(f, negative) | magnitude;
}

std::optional<uint32_t> inf_code(Format f, bool negative) {
  const FormatInfo& fi = info(f);
  if (fi.specials != SpecialStyle::kIeee) return std::nullopt;
  return sign_bit(f, negative) | (((1u << fi.exp_bits) - 1) << fi.man_bits);
}

namespace {

// Per-format constants of the hot path, derived once from the format table.
struct EncodeTraits {
  Format format;
  int man_bits;
  int bias;
  int exp_bits;
  uint32_t sign;           // sign bit of the code
  uint32_t max_magnitude;  // code of +max finite
  bool fnuz;
  bool no_specials;           // E2M1 / E2M3 / E3M2: no Inf and no NaN code
  uint32_t inf_pos, inf_neg;  // Inf codes, or the NaN a format without Inf gives instead
  uint32_t nan_pos, nan_neg;  // NaN codes with the sign kept
};

const EncodeTraits& traits(Format f) {
  static const auto table = [] {
    std::array<EncodeTraits, kFormatCount> t{};
    for (const FormatInfo& fi : all_formats()) {
      if (fi.format == Format::kFP32 || fi.format == Format::kE8M0) continue;
      if (fi.specials == SpecialStyle::kInt) continue;  // encode_int
      const bool none = fi.specials == SpecialStyle::kNone;
      const uint32_t max = max_code(fi.format, false);
      const uint32_t nan_p = none ? max : nan_code(fi.format, false);  // unused when none
      const uint32_t nan_n = none ? max : nan_code(fi.format, true);
      t[static_cast<size_t>(fi.format)] = {fi.format,
                                           fi.man_bits,
                                           fi.bias,
                                           fi.exp_bits,
                                           1u << (fi.bits - 1),
                                           max,
                                           fi.specials == SpecialStyle::kFnuz,
                                           none,
                                           inf_code(fi.format, false).value_or(nan_p),
                                           inf_code(fi.format, true).value_or(nan_n),
                                           nan_p,
                                           nan_n};
    }
    return t;
  }();
  return table[static_cast<size_t>(f)];
}

[[noreturn]] void undefined(const EncodeTraits& t, std::string_view policy, const char* input) {
  throw UndefinedEncoding("format " + std::string(info(t.format).name) + " has no Inf or NaN: " +
                          std::string(policy) + " cannot encode " + input + " (docs/fp4.md §2.2)");
}

// A finite |x| that rounds past the largest finite value.
uint32_t finite_overflow(const EncodeTraits& t, const EncodePolicy& policy, bool negative) {
  const uint32_t sign = negative ? t.sign : 0u;
  if (policy.rounding == Rounding::kTowardZero) return sign | t.max_magnitude;  // never rounds up
  switch (policy.overflow) {
    case Overflow::kSaturate:
    case Overflow::kSaturateInfToNaN:
      return sign | t.max_magnitude;
    case Overflow::kToInf:
      if (t.no_specials) undefined(t, name(policy.overflow), "a finite overflow");
      return negative ? t.inf_neg : t.inf_pos;
    case Overflow::kToNaN:
      if (t.no_specials) undefined(t, name(policy.overflow), "a finite overflow");
      return negative ? t.nan_neg : t.nan_pos;
  }
  return negative ? t.nan_neg : t.nan_pos;
}

// torchao _f32_to_floatx_unpacked sends a NaN down its normal-number branch (its saturate test
// x >= max and its subnormal test x < min_normal are both false): rebias the exponent by
// (bias - 127) << 23, add 2^(22 - m) - 1 plus the lowest kept mantissa bit, shift right by 23 - m
// and keep the low byte (the int32 -> uint8 cast), then OR the sign back.
uint32_t torchao_nan_code(const EncodeTraits& t, uint32_t abs_bits, bool negative) {
  const int shift = 23 - t.man_bits;
  const uint32_t rebias = static_cast<uint32_t>(127 - t.bias) << 23;
  const uint32_t magic = (1u << (shift - 1)) - 1;
  const uint32_t odd = (abs_bits >> shift) & 1u;
  const uint32_t code = ((abs_bits - rebias + magic + odd) >> shift) & 0xFFu;
  return code | (negative ? t.sign : 0u);
}

uint32_t encode_nan(const EncodeTraits& t, Format f, const EncodePolicy& policy, uint32_t abs_bits,
                    bool negative) {
  switch (policy.nan) {
    case NanPolicy::kKeepSign:
      if (t.no_specials) undefined(t, name(policy.nan), "NaN");
      return nan_code(f, negative);
    case NanPolicy::kCanonical:
      if (t.no_specials) undefined(t, name(policy.nan), "NaN");
      return nan_code(f, false);
    case NanPolicy::kToNegMax:
      return t.sign | t.max_magnitude;
    case NanPolicy::kToPosZero:
      return 0;
    case NanPolicy::kToMaxKeepSign:
      return (negative ? t.sign : 0u) | t.max_magnitude;
    case NanPolicy::kToZeroSignFlipped:
      return (negative || t.fnuz) ? 0u : t.sign;
    case NanPolicy::kTorchaoNormalPath:
      if (!t.no_specials) {
        throw UndefinedEncoding("nan_torchao_bits applies to e2m1, e2m3 and e3m2 only, not " +
                                std::string(info(f).name));
      }
      return torchao_nan_code(t, abs_bits, negative);
    case NanPolicy::kQuietKeepSign:
      if (t.no_specials) undefined(t, name(policy.nan), "NaN");
      if (t.inf_pos != t.nan_pos) {  // a format with Inf: the quiet NaN, first mantissa bit only
        const uint32_t quiet = (((1u << t.exp_bits) - 1u) << t.man_bits) | (1u << (t.man_bits - 1));
        return quiet | (negative ? t.sign : 0u);
      }
      return nan_code(f, negative);
    case NanPolicy::kUndefined:
      throw UndefinedEncoding("NaN -> " + std::string(info(f).name) +
                              " is undefined by this convention's source (nan_undefined, "
                              "docs/fp4.md §2.2)");
  }
  return 0;
}

[[noreturn]] void undefined_int(Format f, std::string_view policy, const char* input) {
  throw UndefinedEncoding("format " + std::string(info(f).name) +
                          " has no Inf or NaN: " + std::string(policy) + " cannot encode " + input +
                          " (docs/formats.md §1.5)");
}

// Two's complement fixed point (MXINT8): n = |x| * 2^man_bits rounded on the fp32 bits (|x| = sig *
// 2^e2 exactly), clamped to the policy's range, then negated modulo 2^bits.
uint32_t encode_int(Format f, float x, const EncodePolicy& policy) {
  const FormatInfo& fi = info(f);
  const uint32_t xb = bits_of(x);
  const bool negative = (xb >> 31) != 0;
  const uint32_t abs_bits = xb & 0x7FFFFFFFu;
  const uint32_t modulus = 1u << fi.bits;
  const uint64_t pos_max = (modulus >> 1) - 1;  // 127
  const uint64_t neg_max = policy.int_range == IntRange::kFull ? pos_max + 1 : pos_max;
  const auto code = [&](bool neg, uint64_t n) {
    return neg ? (modulus - static_cast<uint32_t>(n)) & (modulus - 1) : static_cast<uint32_t>(n);
  };
  if (abs_bits > 0x7F800000u) {  // NaN
    switch (policy.nan) {
      case NanPolicy::kToPosZero:
        return 0;
      case NanPolicy::kToMaxKeepSign:
        return code(negative, negative ? neg_max : pos_max);
      case NanPolicy::kToNegMax:
        return code(true, neg_max);
      default:
        undefined_int(f, name(policy.nan), "NaN");
    }
  }
  const uint64_t limit = negative ? neg_max : pos_max;
  if (abs_bits == 0x7F800000u) {  // +-Inf
    if (policy.overflow != Overflow::kSaturate) undefined_int(f, name(policy.overflow), "Inf");
    return code(negative, limit);
  }
  if (abs_bits == 0) return 0;  // one zero: -0.0 too
  const uint32_t fexp = abs_bits >> 23;
  const uint64_t sig = fexp == 0 ? abs_bits : ((abs_bits & 0x7FFFFFu) | 0x800000u);
  const int k = (fexp == 0 ? 1 : static_cast<int>(fexp)) - 150 + fi.man_bits;  // n = sig * 2^k
  uint64_t n;
  if (k >= 0) {
    n = k >= fi.bits ? limit + 1 : sig << k;  // sig >= 1: 2^bits and more overflow
  } else if (k < -25) {
    n = 0;  // sig < 2^24 is below half of 2^-k: zero under every rounding rule
  } else {
    const int shift = -k;
    n = round_shifted<uint64_t>(sig, shift, policy.rounding);
  }
  if (n > limit) {  // finite overflow; truncation never rounds up, so it saturates
    if (policy.rounding != Rounding::kTowardZero && policy.overflow != Overflow::kSaturate &&
        policy.overflow != Overflow::kSaturateInfToNaN) {
      undefined_int(f, name(policy.overflow), "a finite overflow");
    }
    n = limit;
  }
  return code(negative, n);
}

}  // namespace

uint32_t encode(Format f, float x, const EncodePolicy& policy) {
  if (f == Format::kFP32) return bits_of(x);
  // The one two's complement format (SpecialStyle::kInt); a constant test keeps the hot path free
  // of a table lookup.
  if (f == Format::kMXINT8) return encode_int(f, x, policy);
  const EncodeTraits& t = traits(f);
  const uint32_t xb = bits_of(x);
  const bool negative = (xb >> 31) != 0;
  const uint32_t sign = negative ? t.sign : 0u;
  const uint32_t abs_bits = xb & 0x7FFFFFFFu;

  if (abs_bits >= 0x7F800000u) [[unlikely]] {
    if (abs_bits > 0x7F800000u) return encode_nan(t, f, policy, abs_bits, negative);
    // ±Inf
    switch (policy.overflow) {
      case Overflow::kSaturate:
        return sign | t.max_magnitude;
      case Overflow::kToInf:
        if (t.no_specials) undefined(t, name(policy.overflow), "Inf");
        if (auto inf = inf_code(f, negative)) return *inf;
        return nan_code(f, negative);
      case Overflow::kToNaN:
      case Overflow::kSaturateInfToNaN:
        if (t.no_specials) undefined(t, name(policy.overflow), "Inf");
        return nan_code(f, negative);
    }
  }
  if (xb == 0x80000000u && policy.neg_zero == NegZeroInput::kToPositive) return 0;
  const uint32_t zero = t.fnuz ? 0u : sign;
  if (abs_bits == 0) return zero;

  const int emin = 1 - t.bias;
  const int unbiased = static_cast<int>(abs_bits >> 23) - 127;  // floor(log2|x|) for normals
  // Below half the smallest subnormal 2^(emin - man_bits): zero under every rounding rule.
  if (unbiased < emin - t.man_bits - 1) return zero;
  if (unbiased >= emin) [[likely]] {
    // |x| is at least the target's smallest normal: the target quantum is 2^(23 - man_bits) fp32
    // mantissa units. Round the fp32 bits in place (a carry out of the mantissa moves into the
    // exponent, as rounding up into the next binade must), then rebias the exponent field.
    const int shift = 23 - t.man_bits;
    const uint32_t half = 1u << (shift - 1);
    uint32_t r = abs_bits;
    switch (policy.rounding) {
      case Rounding::kNearestEven:
        r += half - 1 + ((abs_bits >> shift) & 1u);
        break;
      case Rounding::kNearestAway:
        r += half;
        break;
      case Rounding::kTowardZero:
        break;
    }
    const uint32_t magnitude = (r >> shift) - (static_cast<uint32_t>(127 - t.bias) << t.man_bits);
    if (magnitude > t.max_magnitude) [[unlikely]] {
      return finite_overflow(t, policy, negative);
    }
    return sign | magnitude;
  }

  // |x| = sig * 2^e2 exactly, sig < 2^24.
  const uint32_t fexp = abs_bits >> 23;
  const uint32_t sig = fexp == 0 ? abs_bits : ((abs_bits & 0x7FFFFFu) | 0x800000u);
  const int e2 = (fexp == 0 ? 1 : static_cast<int>(fexp)) - 150;
  const int floor_log2 = static_cast<int>(std::bit_width(sig)) - 1 + e2;
  // Quantum (ulp) exponent of the target at this magnitude; below emin the spacing is fixed.
  int q = (floor_log2 > emin ? floor_log2 : emin) - t.man_bits;
  const int shift = q - e2;
  uint64_t n;  // |x| / 2^q after rounding
  if (shift <= 0) {
    n = static_cast<uint64_t>(sig) << (-shift);  // exact (only for wider targets)
  } else if (shift > 25) {
    n = 0;  // sig < 2^24 < half a quantum: every rounding rule gives zero
  } else {
    n = round_shifted<uint32_t>(sig, shift, policy.rounding);
  }
  if (n == 0) return zero;
  if (n >> (t.man_bits + 1)) {  // rounded up into the next binade
    n >>= 1;
    ++q;
  }
  uint32_t magnitude = static_cast<uint32_t>(n);  // subnormal: exponent field 0
  if (n >> t.man_bits) {
    const uint32_t exp_field = static_cast<uint32_t>(q + t.man_bits + t.bias);
    if (exp_field >= (1u << t.exp_bits))
      magnitude = ~0u;  // past the exponent field
    else
      magnitude = (exp_field << t.man_bits) | (static_cast<uint32_t>(n) & ((1u << t.man_bits) - 1));
  }
  if (magnitude > t.max_magnitude) [[unlikely]] {  // rounded up past max
    return finite_overflow(t, policy, negative);
  }
  return sign | magnitude;
}

float truncate_below_one_to_2m23(float x) {
  const uint32_t b = bits_of(x);
  const uint32_t a = b & 0x7FFFFFFFu;
  if (a >= 0x3F800000u) return x;  // |x| >= 1, Inf and NaN keep every bit
  // |x| = 2^e * 1.f with e < 0: clearing the -e lowest significand bits leaves a multiple of 2^-23.
  const int e = static_cast<int>(a >> 23) - 127;
  if (e < -23) return float_of(b & 0x80000000u);  // below 2^-23 (fp32 subnormals too): zero
  return float_of((b & 0x80000000u) | (a & ~((1u << (-e)) - 1u)));
}

std::string_view name(Rounding r) {
  switch (r) {
    case Rounding::kNearestEven:
      return "nearest_even";
    case Rounding::kNearestAway:
      return "nearest_away";
    case Rounding::kTowardZero:
      return "toward_zero";
  }
  return "?";
}

std::string_view name(Overflow o) {
  switch (o) {
    case Overflow::kSaturate:
      return "saturate_finite";
    case Overflow::kToInf:
      return "to_inf";
    case Overflow::kToNaN:
      return "to_nan";
    case Overflow::kSaturateInfToNaN:
      return "saturate_finite_inf_to_nan";
  }
  return "?";
}

std::string_view name(NanPolicy n) {
  switch (n) {
    case NanPolicy::kKeepSign:
      return "nan_keep_sign";
    case NanPolicy::kCanonical:
      return "nan_canonical";
    case NanPolicy::kToNegMax:
      return "nan_to_neg_max";
    case NanPolicy::kToPosZero:
      return "nan_to_pos_zero";
    case NanPolicy::kToMaxKeepSign:
      return "nan_to_max_keep_sign";
    case NanPolicy::kToZeroSignFlipped:
      return "nan_to_zero_sign_flipped";
    case NanPolicy::kTorchaoNormalPath:
      return "nan_torchao_bits";
    case NanPolicy::kUndefined:
      return "nan_undefined";
    case NanPolicy::kQuietKeepSign:
      return "nan_quiet_keep_sign";
  }
  return "?";
}

std::string_view name(IntRange r) {
  switch (r) {
    case IntRange::kSymmetric:
      return "int_symmetric";
    case IntRange::kFull:
      return "int_full_range";
  }
  return "?";
}

std::string_view name(NegZeroInput z) {
  switch (z) {
    case NegZeroInput::kKeep:
      return "neg_zero_keep";
    case NegZeroInput::kToPositive:
      return "neg_zero_to_pos";
  }
  return "?";
}

}  // namespace mxgate
