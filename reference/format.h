// Number formats of the reference: bit layouts and exact decoding.
//
// Every format here (E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ, E8M0, BF16, FP16, FP32, the OCP MX
// element formats E2M1 (FP4), E2M3 and E3M2 (FP6), and ml_dtypes' E3M4, E4M3 (IEEE, spelled
// e4m3ieee) and E4M3B11FNUZ, and OCP MXINT8's element, two's complement int8 times 2^-6) decodes
// exactly into an fp32 value, so `decode` returns float.
// Encoding (which needs rounding and overflow policies) lives in fp_encode.h and e8m0.h. Semantics:
// docs/formats.md §1.1 and §2; FP4 / FP6: docs/fp4.md §1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace mxgate {

// The FP4 / FP6 formats come last so the older formats keep their enum values.
enum class Format : uint8_t {
  kE4M3FN,
  kE5M2,
  kE4M3FNUZ,
  kE5M2FNUZ,
  kE8M0,
  kBF16,
  kFP16,
  kFP32,
  kE2M1,  // FP4: 1.2.1, bias 1, max 6 (docs/fp4.md §1)
  kE2M3,  // FP6: 1.2.3, bias 1, max 7.5
  kE3M2,  // FP6: 1.3.2, bias 3, max 28
  // ml_dtypes' other 8-bit formats (docs/formats.md §1.4):
  kE3M4,         // 1.3.4, bias 3, max 15.5, IEEE specials (Inf 0x70)
  kE4M3IEEE,     // 1.4.3, bias 7, max 240, IEEE specials (Inf 0x78)
  kE4M3B11FNUZ,  // 1.4.3, bias 11, max 30, FNUZ (0x80 is the NaN)
  // OCP MX v1.0 §5.3 (docs/formats.md §1.5): two's complement int8, value = code * 2^-6 in
  // [-2, 127/64]; no Inf, no NaN, one zero. -128 (value -2) is a code; encoders reach it only under
  // IntRange::kFull (fp_encode.h).
  kMXINT8
};
// The number of formats: tables indexed by Format are this long (a new format goes last).
inline constexpr std::size_t kFormatCount = static_cast<std::size_t>(Format::kMXINT8) + 1;

// How a format spells NaN and Inf.
enum class SpecialStyle : uint8_t {
  kIeee,  // all-ones exponent: mantissa 0 = Inf, else NaN (E5M2, BF16, FP16, FP32)
  kFn,    // no Inf; all-ones exponent and mantissa = NaN (E4M3FN, docs/formats.md §1.1)
  kFnuz,  // no Inf, no -0; the code 0x80 alone is NaN (AMD gfx942 "NANOO")
  kE8m0,  // unsigned exponent only; 0xFF = NaN, no zero, no Inf (docs/formats.md §2)
  kNone,  // no Inf, no NaN: every code is a finite value (OCP MX FP4 / FP6, docs/fp4.md §1)
  // Two's complement fixed point, no Inf, no NaN: value = (signed code) * 2^-man_bits, exp_bits 0
  // (MXINT8, docs/formats.md §1.5). Not sign-magnitude: -x is the code 2^bits - code.
  kInt,
};

struct FormatInfo {
  Format format;
  std::string_view name;  // CLI spelling
  int bits;               // storage width
  int exp_bits;
  int man_bits;  // kInt: the fraction bits below the binary point
  int bias;
  SpecialStyle specials;
};

const FormatInfo& info(Format f);
std::span<const FormatInfo> all_formats();
std::optional<Format> parse_format(std::string_view name);

// Exact value of `code` (the low `bits` bits are used; higher bits must be zero).
// E8M0 decodes with the OCP rule (0x00 = 2^-127, 0xFF = NaN); see e8m0.h for other rules.
float decode(Format f, uint32_t code);

// Largest finite value, as decoded.
float max_finite(Format f);

// True for the formats without Inf and NaN codes (E2M1, E2M3, E3M2, MXINT8).
bool has_no_specials(Format f);

// True for the two's complement formats (MXINT8): negation is not a sign bit.
bool is_twos_complement(Format f);

bool is_nan_code(Format f, uint32_t code);

// fmaxf / fminf as CUDA and IEEE maxNum define them for kernels: a NaN operand (quiet or
// signaling) yields the other operand. libm's fmax may return NaN for a signaling NaN, so the
// reference spells the rule out.
float nan_ignoring_max(float a, float b);
float nan_ignoring_min(float a, float b);
// fminf(fmaxf(x, -m), m): NaN -> -m (vLLM's pre-cast clamp, docs/formats.md §5.1).
float clamp_nan_to_low(float x, float m);

// fp32 bit helpers (memcpy-based, no aliasing UB).
uint32_t bits_of(float x);
float float_of(uint32_t bits);

// BF16 bits <-> fp32, the one conversion of the reference and what builds on it: bf16_of rounds
// once (RNE, overflow to Inf, NaN to the canonical 0x7FC0: kIeeeDefault of fp_encode.h);
// float_of_bf16 is exact (the bits are the top half of an fp32).
uint16_t bf16_of(float x);
float float_of_bf16(uint16_t bits);

}  // namespace mxgate
