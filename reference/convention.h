// Named conventions: the policy sets of real implementations.
//
// A convention bundles the edge policies one implementation uses (element rounding, overflow,
// NaN; the e8m0 encode and decode rules), so a test or a user can ask "what bytes does
// TransformerEngine produce here" instead of re-deriving it. Every entry cites its section of
// docs/conventions.md §2 and is held to the measured bytes of docs/conventions.md §3 by tests.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/fp_encode.h"

namespace mxgate {

struct Convention {
  std::string_view name;
  std::string_view
      source;  // where the policies come from; ends with its docs/conventions.md section
  uint32_t element_formats;        // bitmask of the FP8 formats it defines (1 << Format)
  EncodePolicy element;            // fp32 -> FP8 element cast
  std::optional<E8m0Encode> e8m0;  // fp32 -> E8M0 (absent: the implementation has none)
  E8m0Decode e8m0_decode;          // E8M0 -> fp32
  // Explicit clamp to +-max before the cast (vLLM fminf(fmaxf(x, -max), max): NaN -> -max), with
  // its own max for E4M3FNUZ where the implementation uses one (vLLM: 224, docs/formats.md §5.1).
  bool clamp_before_cast = false;
  float e4m3fnuz_clamp_max = 0.0f;  // 0: the format's max finite
  // fp32 -> E2M1 / E2M3 / E3M2 (formats without Inf and NaN take their own policies; docs/fp4.md
  // §3 cites each). Used for the formats of element_formats that have_no_specials.
  EncodePolicy sub_byte{Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kUndefined};
  // Triton's triton_kernels e2m1 path shifts the significand of |x| < 1 right before it rounds, so
  // the sticky bit misses the low bits: |x| < 1 is first truncated toward zero to a multiple of
  // 2^-23 (docs/fp4.md §3.4). Applied by pre_cast to the sub-byte formats.
  bool truncate_below_one_to_2m23 = false;
  // The exact fp32 bits E8M0 0xFF decodes to, where the implementation's are part of the
  // convention: PyTorch's fp32_from_bits(0x7f800001) (docs/conventions.md §2.26). nullopt: a NaN
  // whose bits are not (e8m0_decode's). Kept out of E8m0Decode, whose rules fuzz/fuzz_codecs.cpp
  // transcribes value for value.
  std::optional<uint32_t> e8m0_nan_bits = std::nullopt;
  // microxcaling rounds with floor(fl32(|a| + 0.5)) on a scaled to the quantum (docs/conventions.md
  // §2.25): the fp32 sum 1 - 2^-25 rounds to 1.0, so the fp32 predecessor of half the smallest
  // subnormal (a normal fp32 number for every format but BF16) rounds up to that subnormal. Applied
  // by pre_cast to the element formats (BF16 / FP16 stay IEEE in every convention).
  bool add_half_in_fp32 = false;
};

std::span<const Convention> all_conventions();
// nullptr for an unknown name (for input from users, which the caller reports).
const Convention* find_convention(std::string_view name);
// For a name written in code: throws std::invalid_argument naming it and the known conventions,
// so a typo fails loudly instead of dereferencing nullptr.
const Convention& require_convention(std::string_view name);
std::string convention_names();  // "a, b, c" for error messages

constexpr uint32_t format_bit(Format f) { return 1u << static_cast<uint32_t>(f); }

// The element policy the convention uses for `f` (sub_byte for E2M1 / E2M3 / E3M2).
const EncodePolicy& element_policy(const Convention& c, Format f);

// Encodes `x` into `f` under the convention. BF16/FP16 use kIeeeDefault in every convention
// (fuzz/fuzz_codecs.cpp holds every convention to that; microxcaling's ties-away BF16 / FP16 are
// not modelled, docs/conventions.md §2.25).
// Throws std::invalid_argument naming the problem when the convention does not define `f`.
uint32_t encode_with(const Convention& c, Format f, float x);
// Decodes `code`; E8M0 uses the convention's decode rule, every other format decodes exactly.
// Throws std::invalid_argument when the code does not fit the format.
float decode_with(const Convention& c, Format f, uint32_t code);
bool defines(const Convention& c, Format f);
// What the convention does to x before the element cast (its clamp, Triton's truncation below 1,
// microxcaling's add-half step); x otherwise.
float pre_cast(const Convention& c, Format f, float x);

// microxcaling's add-half step alone: the fp32 predecessor of half the smallest subnormal of `f`
// (when that half is an fp32 normal with a biased exponent >= 2) becomes the half, which ties away
// to the smallest subnormal; every other x is returned unchanged.
float add_half_in_fp32(Format f, float x);

}  // namespace mxgate
