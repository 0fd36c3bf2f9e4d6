// fence(x): forces x to be materialized as an fp32 value. The compiler cannot see through the
// asm, so it can neither fuse the operation that produced x into a later one (no FMA) nor keep
// excess precision. The emulations that must round every operation separately (gemm_oracle's
// ordered mode, accumulator_simulation) wrap each step in it, and set
// `#pragma STDC FP_CONTRACT OFF` for Clang, which contracts a*b + c by default; exact mode's
// alpha epilogue (one fp32 multiply) uses it too.
#pragma once

namespace mxgate {

inline float fence(float x) {
#if defined(__GNUC__) && defined(__x86_64__)
  __asm__("" : "+x"(x));
  return x;
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(x));
  return x;
#else
  volatile float v = x;
  return v;
#endif
}

}  // namespace mxgate
