#include "reference/e8m0.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <numbers>

#include "reference/format.h"

namespace mxgate {
namespace {

constexpr std::array<E8m0Encode, 10> kEncodes = {
    E8m0Encode::kFloor,         E8m0Encode::kFloorSat,     E8m0Encode::kCeilSat,
    E8m0Encode::kCeilNoSat,     E8m0Encode::kNearestTorch, E8m0Encode::kNearestMlDtypes,
    E8m0Encode::kDeepGemmClamp, E8m0Encode::kAiterCeil,    E8m0Encode::kAiterTritonBump,
    E8m0Encode::kCeilViaLog2f};
constexpr std::array<E8m0Decode, 4> kDecodes = {E8m0Decode::kOcp, E8m0Decode::kShift,
                                                E8m0Decode::kExp2Cuda, E8m0Decode::kShiftMaskNan};

constexpr uint32_t kInfBits = 0x7F800000u;
constexpr uint32_t kManMask = 0x007FFFFFu;

// Ceil of log2 on the exponent field: a subnormal above 2^-127 (mantissa > 0x400000) needs
// 2^-126; one at or below it fits 2^-127 (byte 0). TE's test reference spells the same rule
// `!(exponent == 0 && mantissa <= 0x400000)` (docs/formats.md §2.1).
uint32_t ceil_exponent(uint32_t abs_bits) {
  const uint32_t exp = abs_bits >> 23;
  const uint32_t man = abs_bits & kManMask;
  if (exp == 0) return man > 0x400000u ? 1u : 0u;
  return exp + (man != 0 ? 1u : 0u);
}

// PyTorch fp8e8m0fnu_from_fp32_value (docs/formats.md §2.1): guard/round/sticky with the implied
// bit as LSB, so normals round up iff the fraction is >= 0.5 (a tie 1.5 * 2^e goes up).
uint8_t nearest_torch(uint32_t abs_bits) {
  const uint32_t exp = abs_bits >> 23;
  if (exp == 0xFF) return 0xFF;
  const bool g = (abs_bits & 0x400000u) != 0;
  const bool r = (abs_bits & 0x200000u) != 0;
  const bool s = (abs_bits & 0x1FFFFFu) != 0;
  const bool lsb = exp > 0;
  return static_cast<uint8_t>(exp + ((g && (r || s || lsb)) ? 1u : 0u));
}

}  // namespace

bool log2f_rounds_to_floor(float y) {
  const uint32_t a = bits_of(y) & 0x7FFFFFFFu;
  if (a == 0 || a >= kInfBits) return false;
  const uint32_t exp = a >> 23;
  const uint32_t sig = exp == 0 ? (a & kManMask) : ((a & kManMask) | 0x800000u);
  const int e2 = (exp == 0 ? 1 : static_cast<int>(exp)) - 150;
  const int width = static_cast<int>(std::bit_width(sig));
  const int k = width - 1 + e2;  // floor(log2 y), exact
  const uint32_t lead = 1u << (width - 1);
  if (sig == lead || k == 0)
    return false;  // powers of two are exact; log2f(y) ~ 0 never rounds to 0
  // log2 y = k + d with d = log2(1 + f) in (0, 1). fl32(k + d) == k iff d is below half the fp32
  // spacing next to k on the side k + d lies. For k < 0 that is below |k|, which is half as wide
  // when |k| is a power of two. d == h is impossible (log2 of a rational != 1 is irrational).
  // Thresholds 2^h - 1 per k, computed once (k spans [-149, 127]).
  static const auto thresholds = [] {
    std::array<long double, 277> t{};
    for (int kk = -149; kk <= 127; ++kk) {
      if (kk == 0) continue;
      const int ak = std::abs(kk);
      const int p = static_cast<int>(std::bit_width(static_cast<unsigned>(ak))) - 1;
      const bool narrower = kk < 0 && std::has_single_bit(static_cast<unsigned>(ak));
      const long double h = std::ldexp(1.0L, p - (narrower ? 25 : 24));
      t[static_cast<size_t>(kk) + 149] = std::expm1(h * std::numbers::ln2_v<long double>);
    }
    return t;
  }();
  const long double f = static_cast<long double>(sig - lead) / static_cast<long double>(lead);
  return f < thresholds[static_cast<size_t>(k) + 149];
}

uint8_t encode_e8m0(float x, E8m0Encode rule) {
  const uint32_t xb = bits_of(x);
  const uint32_t a = xb & 0x7FFFFFFFu;  // every rule but ml_dtypes ignores the sign
  const bool is_nan = a > kInfBits;
  const bool is_inf = a == kInfBits;
  switch (rule) {
    case E8m0Encode::kFloor:
      return static_cast<uint8_t>(a >> 23);  // Inf and NaN have exponent 0xFF already
    case E8m0Encode::kFloorSat:
      if (is_inf) return 0xFE;
      return static_cast<uint8_t>(a >> 23);
    case E8m0Encode::kCeilSat: {
      if (is_nan) return 0xFF;
      if (is_inf) return 0xFE;
      const uint32_t e = ceil_exponent(a);
      return static_cast<uint8_t>(e > 0xFE ? 0xFE : e);
    }
    case E8m0Encode::kCeilNoSat: {
      if (is_nan || is_inf) return 0xFF;
      const uint32_t e = ceil_exponent(a);
      return static_cast<uint8_t>(e > 0xFF ? 0xFF : e);
    }
    case E8m0Encode::kNearestTorch:
      return nearest_torch(a);
    case E8m0Encode::kNearestMlDtypes:
      // "target has no zero ... quiet_NaN" and negatives have no E8M0 value (docs/formats.md §2.1).
      if ((xb >> 31) != 0 || a == 0) return 0xFF;
      return nearest_torch(a);
    case E8m0Encode::kDeepGemmClamp: {
      const uint32_t e = (a >> 23) + ((a & kManMask) != 0 ? 1u : 0u);
      return static_cast<uint8_t>(e < 1 ? 1 : (e > 254 ? 254 : e));
    }
    case E8m0Encode::kAiterCeil: {
      // `if (exponent < 0xFF && mantissa) exponent += 1`: a subnormal 2^-128 becomes 2^-126.
      const uint32_t exp = a >> 23;
      const uint32_t e = exp + ((exp < 0xFF && (a & kManMask) != 0) ? 1u : 0u);
      return static_cast<uint8_t>(e > 0xFF ? 0xFF : e);
    }
    case E8m0Encode::kAiterTritonBump: {
      // amax_p2 = (bits + 0x200000) & 0xFF800000, then floor(log2(.)) clamped to [-127, 127]
      // (docs/formats.md §3.6). Large NaN payloads carry into the sign bit: -0.0 -> log2 = -inf.
      const uint32_t t = (a + 0x200000u) & 0xFF800000u;
      if (t == 0x80000000u) return 0;
      const uint32_t e = t >> 23;
      return static_cast<uint8_t>(e > 254 ? 254 : e);
    }
    case E8m0Encode::kCeilViaLog2f: {
      // vLLM: y_s = exp2f(ceilf(log2f(y))), stored as fp32, byte = bits >> 23
      // (docs/formats.md §5.1).
      if (is_nan || is_inf) return 0xFF;
      if (a == 0) return 0;  // exp2f(-inf) = +0
      const uint32_t exp = a >> 23;
      const uint32_t sig = exp == 0 ? (a & kManMask) : ((a & kManMask) | 0x800000u);
      const int k = static_cast<int>(std::bit_width(sig)) - 1 + (exp == 0 ? 1 : int(exp)) - 150;
      const bool pow2 = std::has_single_bit(sig);
      const int c = (pow2 || log2f_rounds_to_floor(float_of(a))) ? k : k + 1;
      if (c >= 128) return 0xFF;  // exp2f overflows to +Inf
      if (c <= -127) return 0;    // 2^c is an fp32 subnormal (or 0): exponent field 0
      return static_cast<uint8_t>(c + 127);
    }
  }
  return 0xFF;
}

float decode_e8m0(uint8_t byte, E8m0Decode rule) {
  switch (rule) {
    case E8m0Decode::kOcp:
      return decode(Format::kE8M0, byte);
    case E8m0Decode::kShift:
      return float_of(static_cast<uint32_t>(byte) << 23);
    case E8m0Decode::kExp2Cuda:
      // Measured: torch.exp2(e - 127) on CUDA returns 0x1.fffff8p-128 for e = 0, one subnormal
      // ulp below 2^-127 (docs/conventions.md §3.5); 255 gives exp2f(128) = +Inf.
      if (byte == 0) return float_of(0x003FFFFFu);
      return float_of(static_cast<uint32_t>(byte) << 23);
    case E8m0Decode::kShiftMaskNan:
      if (byte == 0xFF) return float_of(0x7FC00000u);
      return float_of(static_cast<uint32_t>(byte) << 23);
  }
  return float_of(0x7FC00000u);
}

std::string_view name(E8m0Encode r) {
  switch (r) {
    case E8m0Encode::kFloor:
      return "floor";
    case E8m0Encode::kFloorSat:
      return "floor_sat";
    case E8m0Encode::kCeilSat:
      return "ceil_sat";
    case E8m0Encode::kCeilNoSat:
      return "ceil_nosat";
    case E8m0Encode::kNearestTorch:
      return "nearest_torch";
    case E8m0Encode::kNearestMlDtypes:
      return "nearest_ml_dtypes";
    case E8m0Encode::kDeepGemmClamp:
      return "deepgemm_clamp";
    case E8m0Encode::kAiterCeil:
      return "aiter_ceil";
    case E8m0Encode::kAiterTritonBump:
      return "aiter_triton_bump";
    case E8m0Encode::kCeilViaLog2f:
      return "ceil_via_log2f";
  }
  return "?";
}

std::string_view name(E8m0Decode r) {
  switch (r) {
    case E8m0Decode::kOcp:
      return "ocp";
    case E8m0Decode::kShift:
      return "shift";
    case E8m0Decode::kExp2Cuda:
      return "exp2_cuda";
    case E8m0Decode::kShiftMaskNan:
      return "shift_mask_nan";
  }
  return "?";
}

std::optional<E8m0Encode> parse_e8m0_encode(std::string_view s) {
  // oneDNN's truncation (RZ, sign dropped, Inf/NaN -> 0xFF) equals floor on every fp32 input.
  if (s == "truncate") return E8m0Encode::kFloor;
  for (E8m0Encode r : kEncodes) {
    if (name(r) == s) return r;
  }
  return std::nullopt;
}

std::optional<E8m0Decode> parse_e8m0_decode(std::string_view s) {
  for (E8m0Decode r : kDecodes) {
    if (name(r) == s) return r;
  }
  return std::nullopt;
}

std::span<const E8m0Encode> all_e8m0_encodes() { return kEncodes; }
std::span<const E8m0Decode> all_e8m0_decodes() { return kDecodes; }

}  // namespace mxgate
