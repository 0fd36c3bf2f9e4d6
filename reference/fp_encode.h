// fp32 -> FP8 / BF16 / FP16 encoding with explicit, named edge policies.
//
// Every implementation surveyed in docs/formats.md §1.2 rounds the fp32 value once; they
// differ in the rounding rule (microxcaling rounds half away from zero), in what finite overflow
// and ±Inf become, and in the sign of NaN. Each of those is a policy here, never a hidden choice.
// The encoder works on the fp32 bits (integer arithmetic only).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
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
  // The policies of formats without a NaN code (E2M1, E2M3, E3M2; docs/fp4.md §2.2):
  kToPosZero,          // +0: every comparison with NaN is false (AITER even_round_e2m1, TE ref)
  kToMaxKeepSign,      // +-max: the exponent 0xFF reads as huge, then saturates (Triton kernels)
  kToZeroSignFlipped,  // ml_dtypes: quiet_NaN() is the -0 code, negated for -NaN: +NaN -> -0
  kTorchaoNormalPath,  // torchao _f32_to_floatx_unpacked: NaN bits go down the normal-number path
  kUndefined,          // the source leaves NaN undefined (OCP MX); encoding one throws
  // ml_dtypes >= 0.5 (FP8): +-quiet_NaN() of the target, the IEEE 754-2019 §6.2.1 quiet pattern
  // where the format has Inf (E5M2: 0x7E / 0xFE, the first trailing-significand bit alone), the
  // one NaN code otherwise (E4M3FN 0x7F / 0xFF, FNUZ 0x80); docs/conventions.md §2.8.
  kQuietKeepSign,
};

// What an exactly -0.0 input becomes (results that round to zero keep their sign either way).
enum class NegZeroInput : uint8_t {
  kKeep,        // -0.0 -> the -0 code (IEEE, every hardware cast)
  kToPositive,  // -0.0 -> +0: TE's reference cast_to_fp4x2 tests x >= 0.0 first (docs/fp4.md §2.2)
};

// The codes a two's complement format's encoder may write (MXINT8, docs/formats.md §1.5). OCP MX
// v1.0 §5.3 gives INT8 the code -128 (value -2), but the implementations clamp symmetrically.
// Other formats ignore it.
enum class IntRange : uint8_t {
  kSymmetric,  // [-127, 127]: microxcaling clamps to +-max_norm = +-127/64; x <= -2 saturates to
               // -127
  kFull,       // [-128, 127]: the spec's range; -2 and below (saturating) give -128
};

struct EncodePolicy {
  Rounding rounding = Rounding::kNearestEven;
  Overflow overflow = Overflow::kSaturate;
  NanPolicy nan = NanPolicy::kCanonical;
  NegZeroInput neg_zero = NegZeroInput::kKeep;
  IntRange int_range = IntRange::kSymmetric;
};

// A policy that does not apply to the format (a NaN policy that needs a NaN code on E2M1, an
// overflow to Inf on a format without Inf) or a value the source leaves undefined: the message
// names the format, the policy and the input class.
struct UndefinedEncoding : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Encodes fp32 `x` into `f` (any format but E8M0, which has its own rules in e8m0.h).
// The sign of a zero result follows the format: FNUZ formats and MXINT8 have no -0 and give 0x00.
// MXINT8 (two's complement, docs/formats.md §1.5): |x| * 64 rounded by `rounding` on the fp32 bits,
// finite overflow and +-Inf saturate (Overflow::kSaturate; kSaturateInfToNaN saturates finite
// overflow and refuses Inf; kToInf / kToNaN refuse) to +127 and to -127 or -128 by `int_range`;
// NaN takes kToPosZero, kToMaxKeepSign or kToNegMax, every other NaN policy refuses.
// Throws UndefinedEncoding for a NaN or Inf input the policy cannot encode in `f` (see above).
uint32_t encode(Format f, float x, const EncodePolicy& policy);

// BF16 and FP16 as every library rounds them: RNE, overflow to Inf, canonical NaN.
inline constexpr EncodePolicy kIeeeDefault{Rounding::kNearestEven, Overflow::kToInf,
                                           NanPolicy::kCanonical};

// Triton's triton_kernels e2m1 pre-rounding step (docs/fp4.md §3.4): |x| < 1 truncated toward
// zero to a multiple of 2^-23 (its sticky bit misses the bits it shifted out); other x unchanged.
float truncate_below_one_to_2m23(float x);

std::string_view name(Rounding r);
std::string_view name(Overflow o);
std::string_view name(NanPolicy n);
std::string_view name(NegZeroInput z);
std::string_view name(IntRange r);

// Code helpers shared by the encoders and their tests. nan_code throws std::invalid_argument for
// a format without NaN (E2M1, E2M3, E3M2, MXINT8). max_code of MXINT8: 0x7F, negative 0x81 (-127,
// IntRange::kSymmetric).
uint32_t nan_code(Format f, bool negative);
uint32_t max_code(Format f, bool negative);
std::optional<uint32_t> inf_code(Format f, bool negative);

}  // namespace mxgate
