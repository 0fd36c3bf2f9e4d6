// Bit-level number conversions shared by the host models (g++) and the device kernels (hipcc,
// nvcc): E4M3FN encode/decode, E8M0 decode and the two MX scale rules, BF16 rounding, and fp32
// arithmetic that is never fused. Written from docs/formats.md §1.1, §1.2, §2, §3.1, §3.3;
// no vendored fp8 header (HIP 5.2 has none) and no code from reference/.
#pragma once

#include <math.h>
#include <stdint.h>

#include "common/host_device.h"

// The declared accumulation orders round every product and sum separately; clang (hipcc) would
// otherwise contract a*b+c into an FMA in device code.
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

namespace mxgate::gpu::bits {

MXGATE_HD inline uint32_t f32_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  return u;
#endif
}

MXGATE_HD inline float f32_from(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  __builtin_memcpy(&x, &u, sizeof x);
  return x;
#endif
}

// One rounding each; nvcc's __fmul_rn/__fadd_rn are never contracted.
MXGATE_HD inline float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

MXGATE_HD inline float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

MXGATE_HD inline bool is_nan(float x) { return (f32_bits(x) & 0x7FFFFFFFu) > 0x7F800000u; }

MXGATE_HD inline float abs_f32(float x) { return f32_from(f32_bits(x) & 0x7FFFFFFFu); }

// IEEE maxNum: a NaN operand is ignored (C fmaxf).
MXGATE_HD inline float max_num(float a, float b) {
  if (is_nan(a)) return b;
  if (is_nan(b)) return a;
  return a > b ? a : b;
}

inline constexpr uint32_t kQuietNan = 0x7FC00000u;

// E4M3FN: bias 7, 3 mantissa bits, S.1111.111 = NaN, no Inf (docs/formats.md §1.1). Exact.
// `nan_as_480`: planted Z25, S.1111.111 decoded as a normal number (+-480), the shift-and-scale
// decode of MLX #4164.
MXGATE_HD inline float decode_e4m3fn(uint8_t c, bool nan_as_480 = false) {
  const uint32_t sign = static_cast<uint32_t>(c >> 7) << 31;
  const uint32_t exp = (c >> 3) & 0xFu;
  const uint32_t man = c & 0x7u;
  if (exp == 0xFu && man == 0x7u && !nan_as_480) return f32_from(sign | kQuietNan);
  if (exp == 0) {
    // man * 2^-9, exact in fp32.
    const float v = static_cast<float>(man) * 0.001953125f;
    return f32_from(sign | f32_bits(v));
  }
  return f32_from(sign | ((exp - 7u + 127u) << 23) | (man << 20));
}

// E5M2: bias 15, 2 mantissa bits, S.11111.00 = Inf, S.11111.xx (xx != 0) = NaN (IEEE-like,
// docs/formats.md §1.1). Exact. `exp31_normal`: planted Z26, exponent 31 decoded as a normal
// binade (+Inf -> 65536, NaN codes -> finite), the widening of Triton #11784.
MXGATE_HD inline float decode_e5m2(uint8_t c, bool exp31_normal = false) {
  const uint32_t sign = static_cast<uint32_t>(c >> 7) << 31;
  const uint32_t exp = (c >> 2) & 0x1Fu;
  const uint32_t man = c & 0x3u;
  if (exp == 0x1Fu && !exp31_normal) return f32_from(sign | (man == 0 ? 0x7F800000u : kQuietNan));
  if (exp == 0) return f32_from(sign | f32_bits(static_cast<float>(man) * 0x1p-16f));
  return f32_from(sign | ((exp - 15u + 127u) << 23) | (man << 21));
}

// The FNUZ formats (AMD CDNA3): no Inf, no -0; the single NaN is 0x80 (docs/formats.md §1.1).
// E4M3FNUZ bias 8, E5M2FNUZ bias 16. Exact. `nan_as_neg_zero`: planted Z24, 0x80 decoded as the
// sign applied to zero (-0.0), the software upcast of Triton #10745.
MXGATE_HD inline float decode_fnuz(uint8_t c, bool e5m2, bool nan_as_neg_zero = false) {
  const uint32_t sign = static_cast<uint32_t>(c >> 7) << 31;
  if (c == 0x80u && !nan_as_neg_zero) return f32_from(kQuietNan);
  const uint32_t mbits = e5m2 ? 2u : 3u;
  const uint32_t bias = e5m2 ? 16u : 8u;
  const uint32_t exp = (c & 0x7Fu) >> mbits;
  const uint32_t man = c & ((1u << mbits) - 1u);
  if (exp == 0) {
    // man * 2^(1 - bias - mbits): E4M3FNUZ 2^-10, E5M2FNUZ 2^-17; exact in fp32.
    const float v = static_cast<float>(man) * (e5m2 ? 0x1p-17f : 0x1p-10f);
    return f32_from(sign | f32_bits(v));
  }
  return f32_from(sign | ((exp - bias + 127u) << 23) | (man << (23u - mbits)));
}

// fp32 -> E4M3FN, RNE on the bits. Finite overflow always saturates to +-448 (every convention
// used here); `inf_to_nan` picks Inf -> NaN (ocp_mx) or Inf -> +-448 (saturate); `nan_keep_sign`
// picks NaN -> 0x7F|sign (PyTorch) or canonical 0x7F (CUDA satfinite).
MXGATE_HD inline uint8_t encode_e4m3fn(float x, bool inf_to_nan, bool nan_keep_sign) {
  const uint32_t xb = f32_bits(x);
  const uint32_t sign = (xb >> 31) << 7;
  const uint32_t a = xb & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<uint8_t>((nan_keep_sign ? sign : 0u) | 0x7Fu);
  if (a == 0x7F800000u) return static_cast<uint8_t>(sign | (inf_to_nan ? 0x7Fu : 0x7Eu));
  if (a == 0) return static_cast<uint8_t>(sign);
  const uint32_t fexp = a >> 23;
  const uint32_t sig = fexp == 0 ? a : ((a & 0x7FFFFFu) | 0x800000u);
  const int e2 = (fexp == 0 ? 1 : static_cast<int>(fexp)) - 150;  // |x| = sig * 2^e2
  int width = 0;
  for (uint32_t s = sig; s != 0; s >>= 1) ++width;
  const int floor_log2 = width - 1 + e2;
  int q = (floor_log2 > -6 ? floor_log2 : -6) - 3;  // exponent of the target's ulp
  const int shift = q - e2;                         // >= 20 for every fp32 input
  if (shift >= 32) return static_cast<uint8_t>(sign);
  const uint32_t rem = sig & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  uint32_t n = sig >> shift;
  if (rem > half || (rem == half && (n & 1u))) ++n;
  if (n == 0) return static_cast<uint8_t>(sign);
  if (n >= 16u) {  // rounded into the next binade
    n >>= 1;
    ++q;
  }
  if (n < 8u) return static_cast<uint8_t>(sign | n);  // subnormal
  const int exp_field = q + 3 + 7;
  if (exp_field > 15 || (exp_field == 15 && (n & 7u) == 7u)) {
    return static_cast<uint8_t>(sign | 0x7Eu);  // finite overflow saturates
  }
  return static_cast<uint8_t>(sign | (static_cast<uint32_t>(exp_field) << 3) | (n & 7u));
}

// E8M0 -> fp32. Correct (OCP): 0x00 = 2^-127, 0xFF = NaN. Shift: byte << 23 (0x00 = +0,
// 0xFF = +Inf), the vLLM _upcast_e8m0_to_fp32 rule (docs/formats.md §2.2).
MXGATE_HD inline float decode_e8m0(uint8_t b, bool shift) {
  if (shift) return f32_from(static_cast<uint32_t>(b) << 23);
  if (b == 0xFFu) return f32_from(kQuietNan);
  if (b == 0) return f32_from(0x00400000u);
  return f32_from(static_cast<uint32_t>(b) << 23);
}

// 2^(127 - byte): the exact reciprocal of a finite E8M0 scale; NaN for 0xFF.
MXGATE_HD inline float e8m0_reciprocal(uint8_t b) {
  if (b == 0xFFu) return f32_from(kQuietNan);
  const uint32_t e = 254u - b;  // biased exponent of 2^(127 - (b - 127) - 127)
  return e == 0 ? f32_from(0x00400000u) : f32_from(e << 23);
}

// OCP MX FLOOR (§6.3) for an element format of largest exponent `emax`: floor(log2 amax) - emax
// clamped to [-127, 127]; non-finite amax -> 0xFF; zero -> 0x00. On the bits, subnormals through
// their leading bit.
MXGATE_HD inline uint8_t mx_scale_floor_emax(float amax, int emax) {
  const uint32_t a = f32_bits(amax) & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) return 0xFFu;
  if (a == 0) return 0;
  int e;
  if ((a >> 23) != 0) {
    e = static_cast<int>(a >> 23) - 127;
  } else {
    int width = 0;
    for (uint32_t s = a; s != 0; s >>= 1) ++width;
    e = width - 1 - 149;
  }
  int s = e - emax;
  s = s < -127 ? -127 : (s > 127 ? 127 : s);
  return static_cast<uint8_t>(s + 127);
}

// FLOOR for E4M3 (emax 8; docs/formats.md §3.1/§3.3).
MXGATE_HD inline uint8_t mx_scale_floor(float amax) { return mx_scale_floor_emax(amax, 8); }

// RCEIL without saturation (torchao _f32_to_e8m0_rceil, docs/formats.md §2.1, §3.3): bit ceil of
// fl32(amax * fl32(1/448)); NaN, Inf and exponent overflow -> 0xFF; a subnormal above 2^-127
// needs 2^-126.
MXGATE_HD inline uint8_t mx_scale_rceil(float amax) {
  const float rcp = 1.0f / 448.0f;
  const uint32_t a = f32_bits(mul(amax, rcp)) & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) return 0xFFu;
  const uint32_t exp = a >> 23;
  const uint32_t man = a & 0x7FFFFFu;
  const uint32_t e = exp == 0 ? (man > 0x400000u ? 1u : 0u) : exp + (man != 0 ? 1u : 0u);
  return static_cast<uint8_t>(e > 0xFFu ? 0xFFu : e);
}

// Planted bug Z8 (docs/bug_classes.md): the RCEIL byte through exp2(ceil(log2(y))), as vLLM's CUDA
// / Triton group quant computes it. fp32 log2f of a y just above a power of two rounds onto the
// integer below, so the ceil misses by one binade (y = 0x1.000002p-126 gives 2^-126, not
// 2^-125). Zero, NaN and Inf as mx_scale_rceil.
MXGATE_HD inline uint8_t mx_scale_rceil_log2(float amax) {
  const float y = abs_f32(mul(amax, 1.0f / 448.0f));
  const uint32_t a = f32_bits(y);
  if (a >= 0x7F800000u) return 0xFFu;
  if (a == 0) return 0;
  const int e = static_cast<int>(ceilf(log2f(y))) + 127;
  return static_cast<uint8_t>(e < 0 ? 0 : (e > 0xFF ? 0xFF : e));
}

// fp32 -> bf16 bits, RNE, overflow to Inf, canonical NaN.
MXGATE_HD inline uint16_t bf16_rne(float x) {
  const uint32_t u = f32_bits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0u;
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

MXGATE_HD inline float bf16_to_f32(uint16_t b) { return f32_from(static_cast<uint32_t>(b) << 16); }

}  // namespace mxgate::gpu::bits
