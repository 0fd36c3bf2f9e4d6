// Bit-level facts about floats that the GEMM oracle's engine and its exact-mode check share:
// read from the encoding, never through log2, so they are exact for subnormals too.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace mxgate {

// Whether s is +-0 or a finite power of two (subnormal powers included).
inline bool is_pow2_or_zero(float s) {
  const uint32_t u = std::bit_cast<uint32_t>(s) & 0x7FFFFFFFu;
  if (u == 0) {
    return true;
  }
  const uint32_t biased = u >> 23, frac = u & 0x7FFFFF;
  if (biased == 0xFF) {
    return false;
  }
  return biased != 0 ? frac == 0 : std::popcount(frac) == 1;
}

// Exponent of a nonzero finite power of two.
inline int pow2_exponent(float s) {
  const uint32_t u = std::bit_cast<uint32_t>(s) & 0x7FFFFFFFu;
  const uint32_t biased = u >> 23;
  return biased != 0 ? static_cast<int>(biased) - 127 : -149 + std::countr_zero(u);
}

// A finite float as +-odd * 2^lsb with its highest set bit at 2^msb (all 0 for zero).
struct OddParts {
  uint64_t odd = 0;
  int lsb = 0;
  int msb = 0;
};

inline OddParts odd_parts(float x) {
  OddParts v;
  const uint32_t u = std::bit_cast<uint32_t>(x) & 0x7FFFFFFFu;
  if (u == 0) return v;
  const uint32_t biased = u >> 23;
  uint32_t mant = u & 0x7FFFFF;
  int e = -149;
  if (biased != 0) {
    mant |= 0x800000;
    e = static_cast<int>(biased) - 150;
  }
  const int tz = std::countr_zero(mant);
  v.odd = mant >> tz;
  v.lsb = e + tz;
  v.msb = e + 31 - std::countl_zero(mant);
  return v;
}

// Exponents of the lowest and highest set bits of a finite nonzero double's significand.
inline void bit_range(double x, int* lsb, int* msb) {
  const uint64_t u = std::bit_cast<uint64_t>(x);
  const int biased = static_cast<int>((u >> 52) & 0x7FF);
  uint64_t mant = u & ((uint64_t{1} << 52) - 1);
  int e = -1074;
  if (biased != 0) {
    mant |= uint64_t{1} << 52;
    e = biased - 1075;
  }
  *lsb = e + std::countr_zero(mant);
  *msb = e + 63 - std::countl_zero(mant);
}

// ceil(log2(x)); 0 for x <= 1.
inline int ceil_log2(std::size_t x) { return x <= 1 ? 0 : static_cast<int>(std::bit_width(x - 1)); }

}  // namespace mxgate
