// The dot engines and CPU detection; see gemm_oracle_dot.h.
#include "reference/gemm_oracle_dot.h"

#include <cstring>
#include <stdexcept>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MXGATE_X86_DOT_ENGINES 1
#endif

namespace mxgate {
namespace gemm_engine {
namespace {

using std::size_t;

void dot_portable(const double* a, const double* b, size_t len, double* out) {
  double acc[kMR][kNR] = {};
  for (size_t kk = 0; kk < len; ++kk) {
    for (size_t i = 0; i < kMR; ++i) {
      const double av = a[kk * kMR + i];
      for (size_t j = 0; j < kNR; ++j) {
        acc[i][j] += av * b[kk * kNR + j];
      }
    }
  }
  std::memcpy(out, acc, sizeof acc);
}

#ifdef MXGATE_X86_DOT_ENGINES
__attribute__((target("avx2,fma"))) void dot_avx2(const double* a, const double* b, size_t len,
                                                  double* out) {
  // Four 4x8 quarters: 8 accumulators each fit the 16 ymm registers.
  for (size_t r0 = 0; r0 < kMR; r0 += 4) {
    for (size_t j0 = 0; j0 < kNR; j0 += 8) {
      __m256d c[4][2];
      for (auto& row : c) {
        row[0] = row[1] = _mm256_setzero_pd();
      }
      for (size_t kk = 0; kk < len; ++kk) {
        const __m256d b0 = _mm256_loadu_pd(b + kk * kNR + j0);
        const __m256d b1 = _mm256_loadu_pd(b + kk * kNR + j0 + 4);
        for (size_t i = 0; i < 4; ++i) {
          const __m256d av = _mm256_broadcast_sd(a + kk * kMR + r0 + i);
          c[i][0] = _mm256_fmadd_pd(av, b0, c[i][0]);
          c[i][1] = _mm256_fmadd_pd(av, b1, c[i][1]);
        }
      }
      for (size_t i = 0; i < 4; ++i) {
        _mm256_storeu_pd(out + (r0 + i) * kNR + j0, c[i][0]);
        _mm256_storeu_pd(out + (r0 + i) * kNR + j0 + 4, c[i][1]);
      }
    }
  }
}

__attribute__((target("avx512f"))) void dot_avx512(const double* a, const double* b, size_t len,
                                                   double* out) {
  __m512d c[kMR][2];
  for (auto& row : c) {
    row[0] = row[1] = _mm512_setzero_pd();
  }
  for (size_t kk = 0; kk < len; ++kk) {
    const __m512d b0 = _mm512_loadu_pd(b + kk * kNR);
    const __m512d b1 = _mm512_loadu_pd(b + kk * kNR + 8);
    for (size_t i = 0; i < kMR; ++i) {
      const __m512d av = _mm512_set1_pd(a[kk * kMR + i]);
      c[i][0] = _mm512_fmadd_pd(av, b0, c[i][0]);
      c[i][1] = _mm512_fmadd_pd(av, b1, c[i][1]);
    }
  }
  for (size_t i = 0; i < kMR; ++i) {
    _mm512_storeu_pd(out + i * kNR, c[i][0]);
    _mm512_storeu_pd(out + i * kNR + 8, c[i][1]);
  }
}
#endif

}  // namespace

bool cpu_has(DotEngine engine) {
#ifdef MXGATE_X86_DOT_ENGINES
  __builtin_cpu_init();
  if (engine == DotEngine::kAvx512) {
    return __builtin_cpu_supports("avx512f");
  }
  if (engine == DotEngine::kAvx2) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }
#endif
  return engine == DotEngine::kAuto || engine == DotEngine::kPortable;
}

DotFn pick_dot_engine(DotEngine choice) {
  if (!cpu_has(choice)) {
    throw std::invalid_argument(
        "exact_gemm: the requested dot engine is not available on this CPU");
  }
#ifdef MXGATE_X86_DOT_ENGINES
  if (choice == DotEngine::kAvx512 || (choice == DotEngine::kAuto && cpu_has(DotEngine::kAvx512))) {
    return dot_avx512;
  }
  if (choice == DotEngine::kAvx2 || (choice == DotEngine::kAuto && cpu_has(DotEngine::kAvx2))) {
    return dot_avx2;
  }
#endif
  return dot_portable;
}

}  // namespace gemm_engine

bool dot_engine_available(DotEngine engine) { return gemm_engine::cpu_has(engine); }

}  // namespace mxgate
