#include "reference/format.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/fp_encode.h"

namespace mxgate {
namespace {

// Bit layouts: docs/formats.md §1.1 (fp8), §2 (e8m0), docs/fp4.md §1 (e2m1, e2m3, e3m2);
// BF16/FP16/FP32 are IEEE-754.
constexpr std::array<FormatInfo, kFormatCount> kFormats = {{
    {Format::kE4M3FN, "e4m3fn", 8, 4, 3, 7, SpecialStyle::kFn},
    {Format::kE5M2, "e5m2", 8, 5, 2, 15, SpecialStyle::kIeee},
    {Format::kE4M3FNUZ, "e4m3fnuz", 8, 4, 3, 8, SpecialStyle::kFnuz},
    {Format::kE5M2FNUZ, "e5m2fnuz", 8, 5, 2, 16, SpecialStyle::kFnuz},
    {Format::kE8M0, "e8m0", 8, 8, 0, 127, SpecialStyle::kE8m0},
    {Format::kBF16, "bf16", 16, 8, 7, 127, SpecialStyle::kIeee},
    {Format::kFP16, "fp16", 16, 5, 10, 15, SpecialStyle::kIeee},
    {Format::kFP32, "fp32", 32, 8, 23, 127, SpecialStyle::kIeee},
    // OCP MX v1.0 element formats (docs/fp4.md §1): no Inf, no NaN.
    {Format::kE2M1, "e2m1", 4, 2, 1, 1, SpecialStyle::kNone},
    {Format::kE2M3, "e2m3", 6, 2, 3, 1, SpecialStyle::kNone},
    {Format::kE3M2, "e3m2", 6, 3, 2, 3, SpecialStyle::kNone},
    // ml_dtypes 0.6 float8_e3m4, float8_e4m3 (IEEE 754 style) and float8_e4m3b11fnuz
    // (docs/formats.md §1.4).
    {Format::kE3M4, "e3m4", 8, 3, 4, 3, SpecialStyle::kIeee},
    {Format::kE4M3IEEE, "e4m3ieee", 8, 4, 3, 7, SpecialStyle::kIeee},
    {Format::kE4M3B11FNUZ, "e4m3b11fnuz", 8, 4, 3, 11, SpecialStyle::kFnuz},
    // OCP MX v1.0 §5.3 INT8: two's complement, 6 fraction bits (docs/formats.md §1.5).
    {Format::kMXINT8, "mxint8", 8, 0, 6, 0, SpecialStyle::kInt},
}};

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kFormats.size(); ++i) {
    if (static_cast<std::size_t>(kFormats[i].format) != i) return false;
  }
  return true;
}
static_assert(rows_in_enum_order(), "kFormats must list every Format in enum order");

}  // namespace

uint32_t bits_of(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

float float_of(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

uint16_t bf16_of(float x) { return static_cast<uint16_t>(encode(Format::kBF16, x, kIeeeDefault)); }

float float_of_bf16(uint16_t bits) { return float_of(static_cast<uint32_t>(bits) << 16); }

float nan_ignoring_max(float a, float b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return a < b ? b : a;
}

float nan_ignoring_min(float a, float b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return b < a ? b : a;
}

float clamp_nan_to_low(float x, float m) { return nan_ignoring_min(nan_ignoring_max(x, -m), m); }

const FormatInfo& info(Format f) { return kFormats[static_cast<size_t>(f)]; }

std::span<const FormatInfo> all_formats() { return kFormats; }

std::optional<Format> parse_format(std::string_view name) {
  for (const auto& fi : kFormats) {
    if (fi.name == name) return fi.format;
  }
  return std::nullopt;
}

bool is_nan_code(Format f, uint32_t code) {
  const FormatInfo& fi = info(f);
  const uint32_t man_mask = (1u << fi.man_bits) - 1;
  const uint32_t exp_all = (1u << fi.exp_bits) - 1;
  const uint32_t e = (code >> fi.man_bits) & exp_all;
  const uint32_t m = code & man_mask;
  switch (fi.specials) {
    case SpecialStyle::kIeee:
      return e == exp_all && m != 0;
    case SpecialStyle::kFn:
      return e == exp_all && m == man_mask;
    case SpecialStyle::kFnuz:
      return code == (1u << (fi.bits - 1));
    case SpecialStyle::kE8m0:
      return code == 0xFF;
    case SpecialStyle::kNone:
    case SpecialStyle::kInt:
      return false;
  }
  return false;
}

bool has_no_specials(Format f) {
  return info(f).specials == SpecialStyle::kNone || info(f).specials == SpecialStyle::kInt;
}

bool is_twos_complement(Format f) { return info(f).specials == SpecialStyle::kInt; }

float decode(Format f, uint32_t code) {
  const FormatInfo& fi = info(f);
  if (f == Format::kFP32) return float_of(code);
  if (fi.specials == SpecialStyle::kE8m0) {
    // OCP: byte e in [0, 254] is 2^(e-127); 0x00 = 2^-127 is an fp32 subnormal (0x00400000).
    if (code == 0xFF) return std::numeric_limits<float>::quiet_NaN();
    return code == 0 ? float_of(0x00400000u) : float_of(code << 23);
  }
  const uint32_t sign = (code >> (fi.bits - 1)) & 1u;
  if (fi.specials == SpecialStyle::kInt) {
    // Two's complement: the sign bit weighs -2^(bits-1); exact in fp32 (|code| <= 2^(bits-1)).
    const int value = static_cast<int>(code) - (sign ? (1 << fi.bits) : 0);
    return std::ldexp(static_cast<float>(value), -fi.man_bits);
  }
  const uint32_t man_mask = (1u << fi.man_bits) - 1;
  const uint32_t exp_all = (1u << fi.exp_bits) - 1;
  const uint32_t e = (code >> fi.man_bits) & exp_all;
  const uint32_t m = code & man_mask;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (is_nan_code(f, code)) return sign ? -nan : nan;
  if (fi.specials == SpecialStyle::kIeee && e == exp_all) {
    return sign ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  // value = significand * 2^(exponent - bias - man_bits); exact in fp32 for every format here.
  const int exp = (e == 0 ? 1 : static_cast<int>(e)) - fi.bias - fi.man_bits;
  const uint32_t significand = e == 0 ? m : (m | (1u << fi.man_bits));
  const float magnitude = std::ldexp(static_cast<float>(significand), exp);
  return sign ? -magnitude : magnitude;
}

float max_finite(Format f) {
  const FormatInfo& fi = info(f);
  const uint32_t exp_all = (1u << fi.exp_bits) - 1;
  const uint32_t man_mask = (1u << fi.man_bits) - 1;
  switch (fi.specials) {
    case SpecialStyle::kIeee:
      return decode(f, ((exp_all - 1) << fi.man_bits) | man_mask);
    case SpecialStyle::kFn:
      return decode(f, (exp_all << fi.man_bits) | (man_mask - 1));
    case SpecialStyle::kFnuz:
      return decode(f, (exp_all << fi.man_bits) | man_mask);
    case SpecialStyle::kE8m0:
      return decode(f, 0xFE);
    case SpecialStyle::kNone:
      return decode(f, (exp_all << fi.man_bits) | man_mask);
    case SpecialStyle::kInt:
      return decode(f, (1u << (fi.bits - 1)) - 1);  // 0x7F: 127/64
  }
  return 0.0f;
}

}  // namespace mxgate
