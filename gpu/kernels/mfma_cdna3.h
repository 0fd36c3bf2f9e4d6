// The AMD CDNA3 (MI300) FP8 MFMA accumulation as the FNUZ block GEMM runs it: the registry model
// cdna3_fp8_mfma (docs/accumulators.md §4.2), written here again in integer arithmetic from that
// description and sharing no code with the reference's simulation
// (reference/accumulator_simulation.h), which tests/test_gemm_fnuz.cpp holds it to bit for bit.
// One step adds 16 exact products at consecutive k to the running fp32 partial C:
//   1. the products at even and at odd positions are fused apart: every term of a half goes on the
//      grid 2^(e_h - 24) (e_h: the exponent of the half's largest product; 25 significant bits),
//      truncated toward zero, and the half's terms are added exactly;
//   2. the two half sums go on the grid 2^(e_p - 24) (e_p: the larger e_h), rounded down (toward
//      -Inf), and are added;
//   3. late C: with e the larger of e_p and C's exponent, the product sum is rounded down onto
//      2^(e - 31) and C onto 2^(e - 24) (dropped when its exponent is below e - 25), and the two
//      are added exactly;
//   4. the sum is rounded to fp32, nearest even.
// No grid is finer than 2^-149 (the fp32 register's unit). Every value stays exact in int64: a
// term is below 2^25 units of its grid, a step's sum below 2^38.
#pragma once

#include <stdint.h>

#include "gpu/kernels/bits.h"

namespace mxgate::gpu::cdna3 {

inline constexpr int kStepK = 16;           // products per MFMA step
inline constexpr int kHalfBits = 25;        // F = 24 fraction bits per half and for C
inline constexpr int kProductSumBits = 32;  // F2 = 31 fraction bits of the late product sum
inline constexpr int kFinestUnit = -149;
inline constexpr int kNoTop = -100000;  // the "exponent" of zero: below every real one

MXGATE_HD inline int max_int(int a, int b) { return a > b ? a : b; }

MXGATE_HD inline int bit_width(uint64_t v) {
  int w = 0;
  for (; v != 0; v >>= 1) ++w;
  return w;
}

// A value sig * 2^exp held exactly; top is the exponent of its leading bit (kNoTop for zero).
struct Exact {
  int64_t sig = 0;
  int exp = 0;
  int top = kNoTop;
};

MXGATE_HD inline Exact exact_of(int64_t sig, int exp) {
  Exact e{sig, exp, kNoTop};
  if (sig != 0) e.top = exp + bit_width(static_cast<uint64_t>(sig < 0 ? -sig : sig)) - 1;
  return e;
}

// A finite fp32 value: its 24-bit significand and exponent from the bits.
MXGATE_HD inline Exact exact_of(float x) {
  const uint32_t u = bits::f32_bits(x);
  const uint32_t field = (u >> 23) & 0xFFu;
  const int64_t sig = field == 0 ? (u & 0x7FFFFFu) : ((u & 0x7FFFFFu) | 0x800000u);
  return exact_of((u >> 31) ? -sig : sig, (field == 0 ? 1 : static_cast<int>(field)) - 150);
}

// v in units of 2^unit: exact when the grid is finer than v's bits, else truncated toward zero
// or (down) rounded toward -Inf.
MXGATE_HD inline int64_t units_of(const Exact& v, int unit, bool down) {
  if (v.sig == 0) return 0;
  if (v.exp >= unit) return v.sig * (int64_t{1} << (v.exp - unit));
  const int shift = unit - v.exp;
  const uint64_t mag = static_cast<uint64_t>(v.sig < 0 ? -v.sig : v.sig);
  const uint64_t kept = shift >= 63 ? 0 : mag >> shift;
  const bool inexact = shift >= 63 || (kept << shift) != mag;
  if (v.sig > 0) return static_cast<int64_t>(kept);
  return -static_cast<int64_t>(kept) - (down && inexact ? 1 : 0);
}

// units * 2^unit rounded to fp32, nearest even (the MFMA's result register).
MXGATE_HD inline float to_f32_rne(int64_t units, int unit) {
  if (units == 0) return 0.0f;
  uint64_t mag = static_cast<uint64_t>(units < 0 ? -units : units);
  const int target = max_int(unit + bit_width(mag) - 1 - 23, kFinestUnit);
  if (target > unit) {
    const int shift = target - unit;
    const uint64_t rem = mag & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    mag >>= shift;
    if (rem > half || (rem == half && (mag & 1u))) ++mag;
    unit = target;
  }
  // mag <= 2^24 and unit in [-149, 127]: both factors and their product are exact.
  const float pow2 = unit >= -126 ? bits::f32_from(static_cast<uint32_t>(unit + 127) << 23)
                                  : bits::f32_from(1u << (unit + 149));
  const float v = bits::mul(static_cast<float>(mag), pow2);
  return units < 0 ? -v : v;
}

// One half of a step: t[first], t[first + 2], ... fused at kHalfBits by truncation.
MXGATE_HD inline Exact fuse_half(const float* t, int count, int first) {
  int top = kNoTop;
  for (int i = first; i < count; i += 2) top = max_int(top, exact_of(t[i]).top);
  if (top == kNoTop) return {};
  const int unit = max_int(top - (kHalfBits - 1), kFinestUnit);
  int64_t units = 0;
  for (int i = first; i < count; i += 2) units += units_of(exact_of(t[i]), unit, false);
  Exact h = exact_of(units, unit);
  h.top = top;  // the half's grid follows its largest product, not its sum
  return h;
}

// One MFMA step: the new partial from C and `count` (<= 16) exact fp32 products.
MXGATE_HD inline float mfma_step(float c, const float* t, int count) {
  bool finite = (bits::f32_bits(c) & 0x7F800000u) != 0x7F800000u;
  for (int i = 0; i < count; ++i)
    finite = finite && (bits::f32_bits(t[i]) & 0x7F800000u) != 0x7F800000u;
  if (!finite) {  // IEEE: NaN stays NaN, Inf + finite is Inf
    float r = c;
    for (int i = 0; i < count; ++i) r = bits::add(r, t[i]);
    return r;
  }
  const Exact even = fuse_half(t, count, 0), odd = fuse_half(t, count, 1);
  const int top_p = max_int(even.top, odd.top);
  const Exact ce = exact_of(c);
  const int top = max_int(top_p, ce.top);
  if (top == kNoTop) return c;
  Exact products{};
  if (top_p != kNoTop) {
    const int unit = max_int(top_p - (kHalfBits - 1), kFinestUnit);
    products = exact_of(units_of(even, unit, true) + units_of(odd, unit, true), unit);
  }
  const int unit_p = max_int(top - (kProductSumBits - 1), kFinestUnit);
  const int unit_c = max_int(top - (kHalfBits - 1), kFinestUnit);
  int64_t units = units_of(products, unit_p, true);
  if (ce.top != kNoTop && ce.top >= top - kHalfBits) {
    units += units_of(ce, unit_c, true) * (int64_t{1} << (unit_c - unit_p));
  }
  return to_f32_rne(units, unit_p);
}

}  // namespace mxgate::gpu::cdna3
