// The dot engines of the exact GEMM engine (gemm_oracle_engine.cpp): one kMR x kNR tile of double
// dot products over packed operands, portable or SIMD (AVX2, AVX-512), and the CPU detection that
// picks one. Every engine is exact under the engine's fit condition, FMA or not, in any order;
// they differ only in speed (gemm_oracle.h DotEngine).
#pragma once

#include <cstddef>

#include "reference/gemm_oracle.h"

namespace mxgate::gemm_engine {

inline constexpr std::size_t kMR = 8;   // rows per tile (one packed A chunk)
inline constexpr std::size_t kNR = 16;  // columns per tile (one packed B panel)

// out[i*kNR + j] = sum_{kk < len} a[kk*kMR + i] * b[kk*kNR + j] for i < kMR, j < kNR.
using DotFn = void (*)(const double* a, const double* b, std::size_t len, double* out);

// Whether this CPU can run `engine` (kAuto and kPortable always can).
bool cpu_has(DotEngine engine);

// The engine `choice` names (kAuto: the widest this CPU runs); std::invalid_argument when the CPU
// lacks it.
DotFn pick_dot_engine(DotEngine choice);

}  // namespace mxgate::gemm_engine
