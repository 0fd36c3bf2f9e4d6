// fp32 -> FP8 / BF16 / FP16 encoding with explicit, named edge policies.
//
// Every implementation surveyed in docs/formats.md §1.2 rounds the fp32 value once; they
// differ in the rounding rule (microxcaling rounds half away from zero), in what finite overflow
// and ±Inf become, and in the sign of NaN. Each of those is a policy here, never a hidden choice.
// The encoder works on the fp32 bits (integer arithmetic only).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "reference/format.h"

namespace mxgate {

enum class Rounding : uint8_t {
  kNearestEven,  // IEEE RNE: every hardware and library cast (docs/formats.md §1.2)
  kNearestAway,  // ties away from zero: microxcaling's default "nearest" (docs/formats.md §3.2)
  kTowardZero,   // truncation
};

enum class Overflow : uint8_t {
  kSaturate,          // finite overflow and ±Inf -> ±max finite (CUDA __NV_SATFINITE, Triton NV)
  kToInf,             // -> ±Inf; formats without Inf give their NaN (PyTorch <= 2.11, ml_dtypes)
  kToNaN,             // finite overflow and ±Inf -> NaN
  kSaturateInfToNaN,  // finite overflow -> ±max, ±Inf -> NaN (Triton AMD mode bit, HIP gfx942)
};

enum class NanPolicy : uint8_t {
  kKeepSign,   // NaN keeps its sign bit (PyTorch `result |= sign`)
  kCanonical,  // positive canonical NaN (CUDA widens to double and canonicalizes)
  kToNegMax,   // NaN -> -max: vLLM's fminf(fmaxf(NaN, -max), max) clamp (docs/formats.md §5.1)
};

struct EncodePolicy {
  Rounding rounding = Rounding::kNearestEven;
  Overflow overflow = Overflow::kSaturate;
  NanPolicy nan = NanPolicy::kCanonical;
};

// Encodes fp32 `x` into `f` (any format but E8M0, which has its own rules in e8m0.h).
// The sign of a zero result follows the format: FNUZ formats have no -0 and give 0x00.
uint32_t encode(Format f, float x, const EncodePolicy& policy);

// BF16 and FP16 as every library rounds them: RNE, overflow to Inf, canonical NaN.
inline constexpr EncodePolicy kIeeeDefault{Rounding::kNearestEven, Overflow::kToInf,
                                           NanPolicy::kCanonical};

std::string_view name(Rounding r);
std::string_view name(Overflow o);
std::string_view name(NanPolicy n);

// Code helpers shared by the encoders and their tests.
uint32_t nan_code(Format f, bool negative);
uint32_t max_code(Format f, bool negative);
std::optional<uint32_t> inf_code(Format f, bool negative);

}  // namespace mxgate
