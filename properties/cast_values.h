// Inputs of the cast property (cast.bit_exact) and its verdict: classes of fp32 values aimed at
// the edges of a target format, derived from the format's own codes (reference/format.h decode),
// and a comparison of code arrays that locates the first differing element with its input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "impl/contract.h"
#include "properties/property.h"
#include "reference/format.h"

namespace mxgate::properties {

enum class CastClass : uint8_t {
  kCodes,      // "codes": the exact value of a random code, sometimes one fp32 ulp off
  kTies,       // "ties": midpoints between neighbouring finite codes, and one fp32 ulp around
  kOverflow,   // "overflow": the largest finite value, the rounding boundary past it, Inf
  kSubnormal,  // "subnormal": the smallest codes, half of the smallest, fp32 subnormals
  kSpecials,   // "specials": signed zeros, infinities, NaNs with several payloads and signs
  kRandom,     // "random": uniform fp32 bit patterns
  kRange,      // "range": random mantissas with exponents inside the format's range
};

std::span<const CastClass> all_cast_classes();
std::string_view to_string(CastClass c);
std::optional<CastClass> parse_cast_class(std::string_view s);

// The reference format of a cast target (nullopt for fp32 and kNone).
std::optional<Format> cast_format(impl::Dtype d);

// The reference format of any cast target the reference checks element by element: cast_format's
// and the FP4 / FP6 element formats (E2M3, E3M2 one code per byte; E2M1 packed two per byte, the
// ABI's order). The device sweep compares one code per byte or word and takes cast_format's only.
std::optional<Format> element_cast_format(impl::Dtype d);

// The 8-bit MX-style element format of `d` (E4M3FN, E5M2, their FNUZ variants, ml_dtypes' other
// 8-bit formats, MXINT8), nullopt for any other: what quantize.bit_exact / dequantize.bit_exact
// take.
std::optional<Format> fp8_format(impl::Dtype d);

// The reference encoder a cast op's claim names for target `f`: the convention's
// (reference/convention.h encode_with), or for a claim "e8m0:RULE" the e8m0 rule of
// reference/e8m0.h (target e8m0 only: a rule no convention holds, e.g. CUDA's round-to-zero
// SATFINITE, floor_sat). Empty when the claim defines no encoder for `f`.
std::function<uint32_t(float)> cast_encoder(std::string_view claim, Format f);

// `count` values of class `c` for target `f` (a pure function of its arguments).
std::vector<float> cast_values(CastClass c, Format f, std::size_t count, uint64_t seed);

// Codes of `width` bytes each (little endian), compared element by element: the first
// difference is located (col = element) and named with its fp32 input.
std::optional<Failure> compare_codes(const std::string& what, std::span<const float> inputs,
                                     std::size_t width, std::span<const uint8_t> expected,
                                     std::span<const uint8_t> actual);

}  // namespace mxgate::properties
