/* Number formats for the example plugin, written from their specifications (not from mxgate's
 * reference/): the OCP 8-bit floating point formats E4M3 and E5M2 (OCP "OFP8" specification
 * v1.0, and the OCP Microscaling Formats (MX) specification v1.0 §5), the E8M0 scale format
 * (MX §5.4), bfloat16. All conversions work on the fp32 bit pattern with integer arithmetic.
 *
 *   E4M3 (e4m3fn): bias 7, 3 mantissa bits, no infinity, S.1111.111 is NaN, max 448 (0x7E)
 *   E5M2:          bias 15, 2 mantissa bits, S.11111.00 is infinity, S.11111.{01,10,11} NaN,
 *                  max 57344 (0x7B)
 *   E8M0:          byte e in [0, 254] is 2^(e - 127), 0xFF is NaN
 */
#ifndef MXGATE_EXAMPLE_FP8_H_
#define MXGATE_EXAMPLE_FP8_H_

#include <stdint.h>
#include <string.h>

/* Device code (example_device.hip) compiles these for the GPU as well. */
#ifndef FP8_FN
#define FP8_FN static inline
#endif

typedef struct fp8_format {
  int mbits;       /* mantissa bits */
  int bias;        /* exponent bias */
  int has_inf;     /* an all-ones exponent with zero mantissa is infinity (E5M2) */
  uint8_t max_mag; /* the largest finite magnitude code */
  uint8_t inf_mag; /* infinity's magnitude code (has_inf only) */
  uint8_t nan_mag; /* the NaN magnitude code the casts write */
} fp8_format;

static const fp8_format kE4m3 = {3, 7, 0, 0x7E, 0, 0x7F};
static const fp8_format kE5m2 = {2, 15, 1, 0x7B, 0x7C, 0x7F};

/* What a cast does at the edges. */
typedef enum rounding { ROUND_NEAREST_EVEN, ROUND_NEAREST_AWAY } rounding;
typedef enum overflow {
  OVERFLOW_SATURATE,         /* finite overflow and +-infinity -> +-max (satfinite) */
  OVERFLOW_SATURATE_INF_NAN, /* finite overflow -> +-max, +-infinity -> NaN */
  OVERFLOW_NAN               /* finite overflow and +-infinity -> NaN (no satfinite) */
} overflow;

FP8_FN uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

FP8_FN float f32_from(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* fp32 -> 8-bit float. NaN -> the positive NaN code when `canonical_nan`, else keeping the
 * input's sign. */
FP8_FN uint8_t fp8_encode(float x, const fp8_format* f, rounding r, overflow o, int canonical_nan) {
  const uint32_t u = f32_bits(x);
  const uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return (uint8_t)((canonical_nan ? 0 : sign) | f->nan_mag);
  if (a == 0x7F800000u) {
    if (o == OVERFLOW_SATURATE) return (uint8_t)(sign | f->max_mag);
    return (uint8_t)((canonical_nan ? 0 : sign) | f->nan_mag);
  }
  if (a == 0) return sign;
  /* |x| = mant * 2^(exp2 - 23) exactly, mant < 2^24 */
  int e = (int)(a >> 23);
  uint32_t mant = a & 0x7FFFFFu;
  int exp2;
  if (e == 0) {
    exp2 = -126; /* fp32 subnormal: mant * 2^-149 */
  } else {
    mant |= 0x800000u;
    exp2 = e - 127;
  }
  /* The binade of |x| (its leading bit), for the quantum of the target. */
  int lead = exp2;
  if (e == 0) {
    uint32_t m = mant;
    lead = -127;
    while (m < 0x400000u && m != 0) {
      m <<= 1;
      --lead;
    }
  }
  const int emin = 1 - f->bias;                         /* smallest normal exponent */
  const int q = (lead < emin ? emin : lead) - f->mbits; /* log2 of the quantum */
  const int shift = q - (exp2 - 23);                    /* |x| / 2^q = mant >> shift */
  uint64_t n;
  if (shift <= 0) {
    n = (uint64_t)mant << -shift;
  } else if (shift >= 40) {
    n = 0;
  } else {
    const uint64_t m = mant, half = (uint64_t)1 << (shift - 1);
    const uint64_t low = m & (((uint64_t)1 << shift) - 1);
    n = m >> shift;
    if (r == ROUND_NEAREST_AWAY) {
      if (low >= half) ++n;
    } else if (low > half || (low == half && (n & 1))) {
      ++n;
    }
  }
  /* n * 2^q: a subnormal code when q is the subnormal quantum, else exponent and mantissa. */
  uint32_t code;
  if (lead < emin) {
    code = (uint32_t)n; /* may carry into the smallest normal: the same integer code */
  } else {
    code = ((uint32_t)(lead + f->bias) << f->mbits) + (uint32_t)(n - ((uint64_t)1 << f->mbits));
  }
  const int too_big = lead + f->bias > 31 || code > f->max_mag;
  if (too_big) {
    if (o == OVERFLOW_NAN) return (uint8_t)((canonical_nan ? 0 : sign) | f->nan_mag);
    return (uint8_t)(sign | f->max_mag);
  }
  return (uint8_t)(sign | code);
}

FP8_FN float fp8_decode(uint8_t c, const fp8_format* f) {
  const int neg = (c & 0x80) != 0;
  const int mag = c & 0x7F;
  const int e = mag >> f->mbits;
  const int m = mag & ((1 << f->mbits) - 1);
  const int eall = (1 << (7 - f->mbits)) - 1;
  float v;
  if (f->has_inf && e == eall) {
    v = m == 0 ? f32_from(0x7F800000u) : f32_from(0x7FC00000u);
  } else if (!f->has_inf && mag == 0x7F) {
    v = f32_from(0x7FC00000u);
  } else if (e == 0) {
    v = (float)m * f32_from((uint32_t)(127 + 1 - f->bias - f->mbits) << 23);
  } else {
    v = (float)((1 << f->mbits) + m) * f32_from((uint32_t)(127 + e - f->bias - f->mbits) << 23);
  }
  return neg ? -v : v;
}

/* E8M0 -> fp32: 2^(e - 127); 0xFF is NaN; 0x00 is 2^-127, an fp32 subnormal. */
FP8_FN float e8m0_decode(uint8_t e) {
  if (e == 0xFF) return f32_from(0x7FC00000u);
  if (e == 0) return f32_from(0x00400000u);
  return f32_from((uint32_t)e << 23);
}

/* fp32 -> E8M0 rounding up to the next power of two of |x|, saturating: NaN -> 0xFF, infinity
 * and values past 2^127 -> 0xFE, zero -> 0x00 (2^-127, the smallest). The CUDA conversion with
 * cudaRoundPosInf and __NV_SATFINITE (cuda_fp8.h __nv_cvt_float_to_e8m0). */
FP8_FN uint8_t e8m0_encode_ceil_sat(float x) {
  const uint32_t a = f32_bits(x) & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0xFF;
  if (a == 0x7F800000u) return 0xFE;
  const uint32_t e = a >> 23, m = a & 0x7FFFFFu;
  uint32_t byte;
  if (e == 0) {
    byte = m > 0x400000u ? 1 : 0; /* (2^-127, 2^-126) rounds up to 2^-126 */
  } else {
    byte = e + (m != 0);
  }
  return (uint8_t)(byte > 0xFE ? 0xFE : byte);
}

/* fp32 -> bfloat16, round to nearest even; NaN -> 0x7FC0. */
FP8_FN uint16_t bf16_encode(float x) {
  const uint32_t u = f32_bits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

FP8_FN float bf16_decode(uint16_t b) { return f32_from((uint32_t)b << 16); }

#endif /* MXGATE_EXAMPLE_FP8_H_ */
