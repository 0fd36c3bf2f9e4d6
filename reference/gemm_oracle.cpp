#include "reference/gemm_oracle.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "reference/exact_sum.h"
#include "reference/parallel.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MXGATE_X86_DOT_ENGINES 1
#endif

// The ordered emulation must round every operation separately. Clang contracts a*b + c into an
// FMA by default (-ffp-contract=on), GCC does with GNU dialects (-ffp-contract=fast); the
// pragma covers Clang, and fence() below makes fusion impossible for every compiler.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace mxgate {

namespace {

using std::size_t;

std::string num(size_t x) { return std::to_string(x); }

// Forces x to be materialized as an fp32 value: the compiler cannot see through the asm, so it
// can neither fuse the operation that produced x into a later one (no FMA) nor keep excess
// precision.
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

bool is_pow2_or_zero(float s) {
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

int ceil_log2(size_t x) { return x <= 1 ? 0 : static_cast<int>(std::bit_width(x - 1)); }

// ---- The exact engine ---------------------------------------------------------------------------
//
// Fast path, and why it is exact. Fold power-of-two scales into the values in double:
// a' = a*sa is exact (a float times a power of two never leaves double's range). For a run of k
// ("range") let every a' of the rows involved be a multiple of 2^lo_a and below 2^(hi_a+1), and
// likewise for b'. Every product a'b' is then a multiple of 2^(lo_a+lo_b) below
// 2^(hi_a+hi_b+2), and any partial sum of L of them is below 2^(hi_a+hi_b+2+ceil(log2 L)). When
//   (hi_a - lo_a) + (hi_b - lo_b) + 2 + ceil(log2 L) <= 53,
// every product and every partial sum has at most 53 significant bits: it is a double, so a
// double dot product over the range (in any order, FMA or not) is EXACT. E4M3 x E4M3 spans at most
// 2 * 17 bits, so a 32- or 128-block always qualifies and typical quantized data lets the whole
// K qualify: then the double result IS the exact sum and is rounded once. Otherwise the exact
// range sums go into an ExactSum (times the non-power-of-two scales, exactly), and a range that
// cannot even hold one atom, or holds NaN/Inf, is added product by product (general path).

constexpr size_t kMR = 8;          // rows per tile (one packed A chunk)
constexpr size_t kNR = 16;         // columns per tile (one packed B panel)
constexpr size_t kPanelGroup = 4;  // panels packed together: an A chunk is reused across them
constexpr size_t kMaxAtom = 128;   // longest atom (stats granularity) when scales allow longer

constexpr int kEmptyLo = 1 << 20;  // stats of an all-zero group: lo > hi
constexpr int kEmptyHi = -(1 << 20);

struct GroupStats {      // one (row group, atom)
  int lo = kEmptyLo;     // lowest set bit over the group's nonzero values
  int hi = kEmptyHi;     // highest set bit
  bool special = false;  // a NaN/Inf value, or a non-finite unfolded scale

  // Adds float bits u times 2^scale_exp.
  void add(uint32_t u, int scale_exp) {
    const uint32_t mag = u & 0x7FFFFFFFu;
    if (mag == 0) {
      return;
    }
    const uint32_t biased = mag >> 23;
    if (biased == 0xFF) {
      special = true;
      return;
    }
    uint32_t mant = mag & 0x7FFFFF;
    int e = -149;
    if (biased != 0) {
      mant |= 0x800000;
      e = static_cast<int>(biased) - 150;
    }
    lo = std::min(lo, e + std::countr_zero(mant) + scale_exp);
    hi = std::max(hi, e + 31 - std::countl_zero(mant) + scale_exp);
  }
};

bool fits(int lo_a, int hi_a, int lo_b, int hi_b, size_t len) {
  if (hi_a < lo_a || hi_b < lo_b) {
    return true;  // one side all zero: every product is zero
  }
  return (hi_a - lo_a) + (hi_b - lo_b) + 2 + ceil_log2(len) <= 53;
}

// out[i*kNR + j] = sum_{kk < len} a[kk*kMR + i] * b[kk*kNR + j] for i < kMR, j < kNR.
using DotFn = void (*)(const double* a, const double* b, size_t len, double* out);

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

// Exponent of a nonzero finite power of two.
int pow2_exponent(float s) {
  const uint32_t u = std::bit_cast<uint32_t>(s) & 0x7FFFFFFFu;
  const uint32_t biased = u >> 23;
  return biased != 0 ? static_cast<int>(biased) - 127 : -149 + std::countr_zero(u);
}

template <class Sink>
class ExactEngine {
 public:
  ExactEngine(const GemmProblem& p, const ExactOptions& options, Sink& sink)
      : p_(p), options_(options), sink_(sink), dot_(pick_dot_engine(options.dot_engine)) {}

  // Work is split into items of (panel group, block of A chunks); each output tile belongs to one
  // item and is computed the same way whichever worker runs it (parallel.h), so the result does
  // not depend on the thread count.
  void run() {
    const bool a_scaled = !p_.a_scale.empty(), b_scaled = !p_.b_scale.empty();
    fold_a_ = std::all_of(p_.a_scale.begin(), p_.a_scale.end(), is_pow2_or_zero);
    fold_b_ = std::all_of(p_.b_scale.begin(), p_.b_scale.end(), is_pow2_or_zero);
    has_post_ = (a_scaled && !fold_a_) || (b_scaled && !fold_b_);
    make_atoms(a_scaled, b_scaled);
    const unsigned threads = thread_count(options_.threads);
    prepare_a(threads);
    panels_ = (p_.n + kNR - 1) / kNR;
    const size_t groups = (panels_ + kPanelGroup - 1) / kPanelGroup;
    const size_t blocks = (chunks_ + kChunkBlock - 1) / kChunkBlock;
    std::vector<std::unique_ptr<Worker>> workers(worker_count(groups * blocks, threads));
    parallel_for(groups * blocks, threads, [&](size_t item, unsigned w) {
      if (!workers[w]) {
        workers[w] = std::make_unique<Worker>(p_.k, atoms_);
      }
      run_item(*workers[w], item / blocks, item % blocks);
    });
    if (options_.stats != nullptr) {
      ExactStats total;
      for (const auto& w : workers) {
        if (w) {
          total.direct_elements += w->stats.direct_elements;
          total.range_sums += w->stats.range_sums;
          total.general_products += w->stats.general_products;
        }
      }
      *options_.stats = total;
    }
  }

 private:
  static constexpr size_t kChunkBlock = 16;  // A chunks per work item (128 rows)
  static constexpr size_t kNoGroup = ~size_t{0};

  // The per-worker state: the packed panel group it works on and the tile accumulators.
  struct Worker {
    Worker(size_t k, size_t atoms)
        : bp(kPanelGroup * k * kNR, 0.0), panel_stats(kPanelGroup * atoms) {}
    std::vector<double> bp;               // folded B, kPanelGroup panels of K x kNR
    std::vector<GroupStats> panel_stats;  // kPanelGroup x atoms
    size_t packed_group = kNoGroup;       // panel group held in bp
    ExactSum acc[kMR * kNR];
    double out[kMR * kNR] = {};
    ExactStats stats;
  };

  void run_item(Worker& w, size_t group, size_t block) {
    const size_t pg = group * kPanelGroup;
    const size_t count = std::min(kPanelGroup, panels_ - pg);
    if (w.packed_group != group) {
      for (size_t g = 0; g < count; ++g) {
        pack_panel(w, pg + g, g);
      }
      w.packed_group = group;
    }
    const size_t c_end = std::min(chunks_, (block + 1) * kChunkBlock);
    for (size_t c = block * kChunkBlock; c < c_end; ++c) {
      for (size_t g = 0; g < count; ++g) {
        tile(w, c, pg + g, g);
      }
    }
  }

  void make_atoms(bool a_scaled, bool b_scaled) {
    begin_.assign(1, 0);
    for (size_t pos = 0; pos < p_.k;) {
      size_t next = std::min(p_.k, pos + kMaxAtom);
      if (a_scaled) {
        next = std::min(next, (pos / p_.blocks.a_k + 1) * p_.blocks.a_k);
      }
      if (b_scaled) {
        next = std::min(next, (pos / p_.blocks.b_k + 1) * p_.blocks.b_k);
      }
      begin_.push_back(next);
      pos = next;
    }
    atoms_ = begin_.size() - 1;
    // A range must not cross the boundary of a scale it multiplies afterwards.
    breaks_.assign(atoms_, 0);
    for (size_t t = 1; t < atoms_; ++t) {
      breaks_[t] = (a_scaled && !fold_a_ && begin_[t] % p_.blocks.a_k == 0) ||
                   (b_scaled && !fold_b_ && begin_[t] % p_.blocks.b_k == 0);
    }
  }

  float post_a(size_t row, size_t t) const { return fold_a_ ? 1.0f : p_.scale_a(row, begin_[t]); }
  float post_b(size_t col, size_t t) const { return fold_b_ ? 1.0f : p_.scale_b(col, begin_[t]); }

  // Folds (when foldable) the scale of one row's atom into its values, writes them to `dst` with
  // stride `stride` and records their exponent range. Atoms never straddle a scale block, so the
  // scale is constant here.
  void load_atom(const float* values, float scale, bool fold, size_t t, double* dst, size_t stride,
                 GroupStats& s) const {
    const size_t k0 = begin_[t], k1 = begin_[t + 1];
    if (!fold) {
      if (!std::isfinite(scale)) {
        s.special = true;
      }
      for (size_t kk = k0; kk < k1; ++kk) {
        dst[kk * stride] = values[kk];
        s.add(std::bit_cast<uint32_t>(values[kk]), 0);
      }
      return;
    }
    const double sc = scale;
    const bool zero = scale == 0;
    const int e = zero ? 0 : pow2_exponent(scale);
    for (size_t kk = k0; kk < k1; ++kk) {
      dst[kk * stride] = values[kk] * sc;  // exact: a power of two in double
      const uint32_t u = std::bit_cast<uint32_t>(values[kk]);
      if (!zero || (u & 0x7F800000u) == 0x7F800000u) {
        s.add(u, e);  // 0 * Inf is special
      }
    }
  }

  // Packs A chunk by chunk (each chunk's rows and stats belong to one item of the split).
  void prepare_a(unsigned threads) {
    chunks_ = (p_.m + kMR - 1) / kMR;
    ap_.assign(chunks_ * kMR * p_.k, 0.0);
    chunk_stats_.assign(chunks_ * atoms_, GroupStats{});
    parallel_for(chunks_, threads, [&](size_t c, unsigned) {
      for (size_t i = c * kMR; i < std::min(p_.m, (c + 1) * kMR); ++i) {
        double* dst = &ap_[c * kMR * p_.k + i % kMR];
        for (size_t t = 0; t < atoms_; ++t) {
          load_atom(&p_.a[i * p_.k], p_.scale_a(i, begin_[t]), fold_a_, t, dst, kMR,
                    chunk_stats_[c * atoms_ + t]);
        }
      }
    });
  }

  void pack_panel(Worker& w, size_t pn, size_t g) const {
    GroupStats* stats = &w.panel_stats[g * atoms_];
    std::fill(stats, stats + atoms_, GroupStats{});
    double* panel = &w.bp[g * p_.k * kNR];
    for (size_t j = 0; j < kNR; ++j) {
      const size_t col = pn * kNR + j;
      if (col >= p_.n) {
        for (size_t kk = 0; kk < p_.k; ++kk) {
          panel[kk * kNR + j] = 0.0;
        }
        continue;
      }
      for (size_t t = 0; t < atoms_; ++t) {
        load_atom(&p_.b[col * p_.k], p_.scale_b(col, begin_[t]), fold_b_, t, panel + j, kNR,
                  stats[t]);
      }
    }
  }

  // Adds atom t product by product, from the original floats.
  void general_atom(Worker& w, size_t c, size_t pn, size_t t) const {
    for (size_t i = c * kMR; i < std::min(p_.m, (c + 1) * kMR); ++i) {
      for (size_t col = pn * kNR; col < std::min(p_.n, (pn + 1) * kNR); ++col) {
        ExactSum& acc = w.acc[(i % kMR) * kNR + col % kNR];
        for (size_t kk = begin_[t]; kk < begin_[t + 1]; ++kk) {
          acc.add_product(p_.a[i * p_.k + kk], p_.b[col * p_.k + kk], p_.scale_a(i, kk),
                          p_.scale_b(col, kk));
        }
        w.stats.general_products += begin_[t + 1] - begin_[t];
      }
    }
  }

  void tile(Worker& w, size_t c, size_t pn, size_t g) const {
    const size_t i0 = c * kMR, j0 = pn * kNR;
    const size_t rows = std::min(kMR, p_.m - i0), cols = std::min(kNR, p_.n - j0);
    for (ExactSum& s : w.acc) {
      s.clear();
    }
    bool direct = false;
    const GroupStats* as = &chunk_stats_[c * atoms_];
    const GroupStats* bs = &w.panel_stats[g * atoms_];
    const double* a = &ap_[c * kMR * p_.k];
    const double* b = &w.bp[g * p_.k * kNR];
    for (size_t t = 0; t < atoms_;) {
      if (options_.force_general_path || as[t].special || bs[t].special ||
          !fits(as[t].lo, as[t].hi, bs[t].lo, bs[t].hi, begin_[t + 1] - begin_[t])) {
        general_atom(w, c, pn, t++);
        continue;
      }
      // Extend the range while the double sum stays provably exact.
      int lo_a = as[t].lo, hi_a = as[t].hi, lo_b = bs[t].lo, hi_b = bs[t].hi;
      size_t u = t + 1;
      for (; u < atoms_ && !breaks_[u] && !as[u].special && !bs[u].special; ++u) {
        const int la = std::min(lo_a, as[u].lo), ha = std::max(hi_a, as[u].hi);
        const int lb = std::min(lo_b, bs[u].lo), hb = std::max(hi_b, bs[u].hi);
        if (!fits(la, ha, lb, hb, begin_[u + 1] - begin_[t])) {
          break;
        }
        lo_a = la, hi_a = ha, lo_b = lb, hi_b = hb;
      }
      dot_(a + begin_[t] * kMR, b + begin_[t] * kNR, begin_[u] - begin_[t], w.out);
      if (t == 0 && u == atoms_ && !has_post_) {
        direct = true;  // the whole K in one exact double sum
      } else {
        float pa[kMR], pb[kNR];  // the unfolded scales of this range (1.0 when folded)
        for (size_t i = 0; i < rows; ++i) {
          pa[i] = post_a(i0 + i, t);
        }
        for (size_t j = 0; j < cols; ++j) {
          pb[j] = post_b(j0 + j, t);
        }
        for (size_t i = 0; i < rows; ++i) {
          for (size_t j = 0; j < cols; ++j) {
            const double d = w.out[i * kNR + j];
            if (d != 0) {
              w.acc[i * kNR + j].add_scaled(d, pa[i], pb[j]);
            }
          }
        }
        w.stats.range_sums += rows * cols;
      }
      t = u;
    }
    for (size_t i = 0; i < rows; ++i) {
      for (size_t j = 0; j < cols; ++j) {
        if (direct) {
          sink_.direct(i0 + i, j0 + j, w.out[i * kNR + j]);
        } else {
          sink_.sum(i0 + i, j0 + j, w.acc[i * kNR + j]);
        }
      }
    }
    if (direct) {
      w.stats.direct_elements += rows * cols;
    }
  }

  const GemmProblem& p_;
  const ExactOptions& options_;
  Sink& sink_;
  DotFn dot_;
  bool fold_a_ = false, fold_b_ = false, has_post_ = false;
  std::vector<size_t> begin_;    // atom t covers k in [begin_[t], begin_[t+1])
  std::vector<uint8_t> breaks_;  // 1: a range may not extend from atom t-1 into atom t
  size_t atoms_ = 0, chunks_ = 0, panels_ = 0;
  std::vector<double> ap_;               // folded A, per chunk K x kMR (k-major)
  std::vector<GroupStats> chunk_stats_;  // chunks x atoms
};

struct Fp32Sink {
  float* out;
  size_t cols;
  // d is the exact sum: one RNE conversion; "+ 0.0f" turns -0 into +0.
  void direct(size_t i, size_t j, double d) { out[i * cols + j] = static_cast<float>(d) + 0.0f; }
  void sum(size_t i, size_t j, const ExactSum& s) {
    const float f = s.round_to_float();
    out[i * cols + j] = f == 0 ? 0.0f : f;  // zero results are +0 (header)
  }
};

struct Bf16Sink {
  uint16_t* out;
  size_t cols;
  static uint16_t positive_zero(uint16_t bits) { return bits == 0x8000 ? 0 : bits; }
  void direct(size_t i, size_t j, double d) {
    out[i * cols + j] = positive_zero(round_to_bf16_bits(d));
  }
  void sum(size_t i, size_t j, const ExactSum& s) {
    out[i * cols + j] = positive_zero(s.round_to_bf16());
  }
};

struct Fp64Sink {
  double* out;
  size_t cols;
  void direct(size_t i, size_t j, double d) { out[i * cols + j] = d + 0.0; }
  void sum(size_t i, size_t j, const ExactSum& s) {
    const double d = s.round_to_double();
    out[i * cols + j] = d == 0 ? 0.0 : d;
  }
};

template <class Sink>
void run_exact(const GemmProblem& p, const ExactOptions& options, Sink& sink) {
  // Workers hold 128 accumulators each; keep them off the stack.
  auto engine = std::make_unique<ExactEngine<Sink>>(p, options, sink);
  engine->run();
}

}  // namespace

bool dot_engine_available(DotEngine engine) { return cpu_has(engine); }

// ---- Problem ------------------------------------------------------------------------------------

float GemmProblem::scale_a(size_t row, size_t kk) const {
  return a_scale.empty() ? 1.0f : a_scale[(row / blocks.a_m) * a_scale_cols() + kk / blocks.a_k];
}

float GemmProblem::scale_b(size_t col, size_t kk) const {
  return b_scale.empty() ? 1.0f : b_scale[(col / blocks.b_n) * b_scale_cols() + kk / blocks.b_k];
}

namespace {

[[noreturn]] void invalid_problem(const std::string& what) {
  throw std::invalid_argument("GEMM problem: " + what);
}

// Dimensions and block sizes only.
void validate_shape(const GemmProblem& p) {
  const auto fail = invalid_problem;
  if (p.m == 0) {
    fail("M is 0");
  }
  if (p.n == 0) {
    fail("N is 0");
  }
  if (p.k == 0) {
    fail("K is 0");
  }
  const BlockSizes& b = p.blocks;
  if (b.a_m == 0 || b.a_k == 0) {
    fail("A scale block is " + num(b.a_m) + "x" + num(b.a_k) + " (must be positive)");
  }
  if (b.b_n == 0 || b.b_k == 0) {
    fail("B scale block is " + num(b.b_n) + "x" + num(b.b_k) + " (must be positive)");
  }
  constexpr size_t kMax = size_t{1} << 40;  // keeps every product of sizes far from overflow
  if (p.m > kMax || p.n > kMax || p.k > kMax || p.m * p.k > kMax || p.n * p.k > kMax ||
      p.m * p.n > kMax) {
    fail("shape " + num(p.m) + "x" + num(p.n) + "x" + num(p.k) + " is too large");
  }
}

}  // namespace

GemmProblem make_gemm_problem(size_t m, size_t n, size_t k, BlockSizes blocks, bool scaled) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.blocks = blocks;
  validate_shape(p);  // before allocating
  p.a.assign(m * k, 0.0f);
  p.b.assign(n * k, 0.0f);
  if (scaled) {
    p.a_scale.assign(p.a_scale_rows() * p.a_scale_cols(), 1.0f);
    p.b_scale.assign(p.b_scale_rows() * p.b_scale_cols(), 1.0f);
  }
  validate_gemm_problem(p);
  return p;
}

void validate_gemm_problem(const GemmProblem& p) {
  const auto fail = invalid_problem;
  validate_shape(p);
  const BlockSizes& b = p.blocks;
  if (p.a.size() != p.m * p.k) {
    fail("A has " + num(p.a.size()) + " values, expected M*K = " + num(p.m) + "*" + num(p.k));
  }
  if (p.b.size() != p.n * p.k) {
    fail("B has " + num(p.b.size()) + " values, expected N*K = " + num(p.n) + "*" + num(p.k));
  }
  const size_t as = p.a_scale_rows() * p.a_scale_cols(), bs = p.b_scale_rows() * p.b_scale_cols();
  if (!p.a_scale.empty() && p.a_scale.size() != as) {
    fail("A scales have " + num(p.a_scale.size()) + " entries, expected ceil(M/" + num(b.a_m) +
         ")*ceil(K/" + num(b.a_k) + ") = " + num(p.a_scale_rows()) + "*" + num(p.a_scale_cols()) +
         " (or none)");
  }
  if (!p.b_scale.empty() && p.b_scale.size() != bs) {
    fail("B scales have " + num(p.b_scale.size()) + " entries, expected ceil(N/" + num(b.b_n) +
         ")*ceil(K/" + num(b.b_k) + ") = " + num(p.b_scale_rows()) + "*" + num(p.b_scale_cols()) +
         " (or none)");
  }
}

// ---- Exact mode ---------------------------------------------------------------------------------

GemmOutput exact_gemm(const GemmProblem& problem, OutputFormat format,
                      const ExactOptions& options) {
  validate_gemm_problem(problem);
  GemmOutput out;
  out.rows = problem.m;
  out.cols = problem.n;
  out.format = format;
  if (problem.alpha != 1.0f) {
    std::vector<float> acc(problem.m * problem.n, 0.0f);
    Fp32Sink sink{acc.data(), problem.n};
    run_exact(problem, options, sink);
    // The epilogue's one fp32 multiply, IEEE signs included: a negative acc whose product with
    // alpha underflows is -0, as fl32(alpha * acc) is in every kernel (and in ordered_gemm).
    for (float& c : acc) c = fence(problem.alpha * c);
    if (format == OutputFormat::kFp32) {
      out.fp32 = std::move(acc);
    } else {
      out.bf16.resize(acc.size());
      for (size_t e = 0; e < acc.size(); ++e) out.bf16[e] = round_to_bf16_bits(acc[e]);
    }
    return out;
  }
  if (format == OutputFormat::kFp32) {
    out.fp32.assign(problem.m * problem.n, 0.0f);
    Fp32Sink sink{out.fp32.data(), problem.n};
    run_exact(problem, options, sink);
  } else {
    out.bf16.assign(problem.m * problem.n, 0);
    Bf16Sink sink{out.bf16.data(), problem.n};
    run_exact(problem, options, sink);
  }
  return out;
}

std::vector<double> exact_gemm_fp64(const GemmProblem& problem, const ExactOptions& options) {
  validate_gemm_problem(problem);
  std::vector<double> out(problem.m * problem.n, 0.0);
  Fp64Sink sink{out.data(), problem.n};
  run_exact(problem, options, sink);
  if (problem.alpha != 1.0f) {
    for (double& c : out) c *= static_cast<double>(problem.alpha);
  }
  return out;
}

// ---- Bound mode ---------------------------------------------------------------------------------

GemmBounds compute_bounds(const GemmProblem& problem, const AccumModel& model) {
  validate_gemm_problem(problem);
  if (!(model.unit_roundoff > 0 && model.unit_roundoff < 1)) {
    throw std::invalid_argument("AccumModel: unit_roundoff must be in (0, 1)");
  }
  if (!(model.underflow_eta >= 0) || !(model.overflow_threshold > 0)) {
    throw std::invalid_argument("AccumModel: underflow_eta must be >= 0, overflow_threshold > 0");
  }
  if (model.product_roundings < 0 || model.partial_roundings < 0) {
    throw std::invalid_argument("AccumModel: rounding counts must be >= 0");
  }
  const GemmProblem& p = problem;
  GemmBounds out;
  out.rows = p.m;
  out.cols = p.n;
  out.output = model.output;
  GemmProblem unscaled = p;  // the accumulator's sums; alpha is applied below
  unscaled.alpha = 1.0f;
  out.exact = exact_gemm_fp64(unscaled);
  GemmProblem abs_problem = unscaled;
  for (auto* v : {&abs_problem.a, &abs_problem.b, &abs_problem.a_scale, &abs_problem.b_scale}) {
    for (float& x : *v) {
      x = std::fabs(x);
    }
  }
  out.abs_sum = exact_gemm_fp64(abs_problem);

  const size_t len = model.block_k == 0 ? p.k : std::min(model.block_k, p.k);
  const size_t blocks = (p.k + len - 1) / len;
  const double r = model.product_roundings, s = model.partial_roundings;
  const double n_round = r + static_cast<double>(len - 1) + s + static_cast<double>(blocks - 1);
  const double nu = n_round * model.unit_roundoff;
  const double gamma = nu < 1 ? nu / (1 - nu) : HUGE_VAL;
  const double ops = static_cast<double>(p.k) * (r + 1) + static_cast<double>(blocks) * (s + 1);

  // Largest scale factor an absolute error can still be multiplied by, per row / column.
  std::vector<double> amp_a(p.m, 1.0), amp_b(p.n, 1.0);
  for (size_t i = 0; i < p.m; ++i) {
    for (size_t kk = 0; kk < p.k; kk += p.blocks.a_k) {
      amp_a[i] = std::max(amp_a[i], std::fabs(static_cast<double>(p.scale_a(i, kk))));
    }
  }
  for (size_t j = 0; j < p.n; ++j) {
    for (size_t kk = 0; kk < p.k; kk += p.blocks.b_k) {
      amp_b[j] = std::max(amp_b[j], std::fabs(static_cast<double>(p.scale_b(j, kk))));
    }
  }

  const bool bf16 = model.output == OutputFormat::kBf16;
  const double u_out = bf16 ? 0x1p-8 : 0x1p-24;  // 2^-p, p = 8 or 24 significant bits
  const double eta_out = bf16 ? 0x1p-134 : 0x1p-150;
  const double overflow_out = bf16 ? 0x1.fep127 : 0x1.ffffffp127;
  const bool final_rounding = model.unit_roundoff < u_out;

  out.bound.assign(p.m * p.n, 0.0);
  for (size_t i = 0; i < p.m; ++i) {
    for (size_t j = 0; j < p.n; ++j) {
      const size_t e = i * p.n + j;
      const double alpha = p.alpha;
      const double acc = out.exact[e];
      const double c = alpha * acc;
      out.exact[e] = c;
      if (!std::isfinite(c)) {
        continue;  // NaN / Inf must be matched exactly
      }
      const double t = out.abs_sum[e] * (1 + 0x1p-50);  // upper bound on the exact sum |t_i|
      const double eta = model.underflow_eta * ops * amp_a[i] * amp_b[j];
      double bound = gamma * t + (1 + gamma) * eta;
      if (!(t * (1 + gamma) + eta < model.overflow_threshold)) {
        bound = HUGE_VAL;
      }
      if (alpha != 1.0 && std::isfinite(bound)) {  // the epilogue's fp32 RN multiply
        const double a = std::fabs(alpha);
        bound = a * bound + 0x1p-24 * a * (std::fabs(acc) + bound) + 0x1p-150;
        if (!(a * (std::fabs(acc) + bound) < 0x1.ffffffp127)) bound = HUGE_VAL;
      }
      if (final_rounding && std::isfinite(bound)) {
        bound += u_out * (std::fabs(c) + bound) + eta_out;
        if (!(std::fabs(c) + bound < overflow_out)) {
          bound = HUGE_VAL;
        }
      }
      out.bound[e] = bound * (1 + 0x1p-40);
    }
  }
  return out;
}

BoundVerdict check_bound(const GemmBounds& bounds, const GemmOutput& actual) {
  if (actual.rows != bounds.rows || actual.cols != bounds.cols) {
    throw std::invalid_argument("check_bound: output is " + num(actual.rows) + "x" +
                                num(actual.cols) + ", bounds are " + num(bounds.rows) + "x" +
                                num(bounds.cols));
  }
  if (actual.format != bounds.output) {
    throw std::invalid_argument("check_bound: output format differs from the model's");
  }
  if (actual.format == OutputFormat::kFp32) {
    return check_within_bound(bounds.rows, bounds.cols, bounds.exact, bounds.bound,
                              std::span<const float>(actual.fp32));
  }
  return check_within_bound_bf16(bounds.rows, bounds.cols, bounds.exact, bounds.bound, actual.bf16);
}

// ---- Ordered emulation --------------------------------------------------------------------------

GemmOutput ordered_gemm(const GemmProblem& problem, const OrderModel& order) {
  validate_gemm_problem(problem);
  const GemmProblem& p = problem;
  const size_t len = order.block_k == 0 ? p.k : order.block_k;
  const bool per_partial = order.scale_application == ScaleApplication::kPerPartial;
  if (per_partial) {
    for (size_t k0 = 0; k0 < p.k; k0 += len) {
      const size_t last = std::min(p.k, k0 + len) - 1;
      const bool a_ok = p.a_scale.empty() || k0 / p.blocks.a_k == last / p.blocks.a_k;
      const bool b_ok = p.b_scale.empty() || k0 / p.blocks.b_k == last / p.blocks.b_k;
      if (!a_ok || !b_ok) {
        throw std::invalid_argument(
            "ordered_gemm: kPerPartial needs each K-block inside one scale block, but block [" +
            num(k0) + ", " + num(last + 1) + ") of block_k=" + num(len) + " crosses a" +
            (a_ok ? " B" : "n A") + " scale block (" + (a_ok ? "b_k=" : "a_k=") +
            num(a_ok ? p.blocks.b_k : p.blocks.a_k) + "); use kPerProduct or a smaller block_k");
      }
    }
  }
  GemmOutput out;
  out.rows = p.m;
  out.cols = p.n;
  out.format = order.output;
  std::vector<float> c(p.m * p.n);
  for (size_t i = 0; i < p.m; ++i) {
    const float* a = &p.a[i * p.k];
    for (size_t j = 0; j < p.n; ++j) {
      const float* b = &p.b[j * p.k];
      float acc = 0.0f;
      for (size_t k0 = 0; k0 < p.k; k0 += len) {
        const size_t k1 = std::min(p.k, k0 + len);
        float part = 0.0f;
        if (per_partial) {
          for (size_t kk = k0; kk < k1; ++kk) {
            part = fence(part + fence(a[kk] * b[kk]));
          }
          const float scaled = fence(fence(part * p.scale_a(i, k0)) * p.scale_b(j, k0));
          acc = fence(acc + scaled);
        } else {
          for (size_t kk = k0; kk < k1; ++kk) {
            const float t =
                fence(fence(fence(a[kk] * b[kk]) * p.scale_a(i, kk)) * p.scale_b(j, kk));
            part = fence(part + t);
          }
          acc = fence(acc + part);
        }
      }
      c[i * p.n + j] = p.alpha == 1.0f ? acc : fence(p.alpha * acc);
    }
  }
  if (order.output == OutputFormat::kFp32) {
    out.fp32 = std::move(c);
  } else {
    out.bf16.resize(c.size());
    for (size_t e = 0; e < c.size(); ++e) {
      out.bf16[e] = round_to_bf16_bits(c[e]);
    }
  }
  return out;
}

// ---- Exact-mode operands ------------------------------------------------------------------------

ExactModeOperands make_exact_mode_operands(size_t m, size_t n, size_t k, BlockSizes blocks,
                                           bool scaled, uint64_t seed) {
  if (k > (size_t{1} << 24)) {
    throw std::invalid_argument("make_exact_mode_operands: K = " + num(k) +
                                " > 2^24: no integer operands keep fp32 sums exact");
  }
  ExactModeOperands out;
  out.seed = seed;
  out.problem = make_gemm_problem(m, n, k, blocks, scaled);
  GemmProblem& p = out.problem;
  // sum |t| <= K * v^2 * 2^(max scale exponent); terms are multiples of 2^(min scale exponent).
  // With v = 2^log_v: K * 2^(2 log_v) * 2^(spread) <= 2^24 keeps sum |t| <= 2^24 * 2^e0.
  const int log_k = ceil_log2(k);
  int log_v = 3;
  while (log_v > 0 && 2 * log_v + log_k > 24) {
    --log_v;
  }
  const int v = 1 << log_v;
  const int spread = 24 - log_k - 2 * log_v;
  const int spread_a = std::min(spread / 2, 8), spread_b = std::min(spread - spread / 2, 8);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> value(-v, v);
  for (float& x : p.a) {
    x = static_cast<float>(value(rng));
  }
  for (float& x : p.b) {
    x = static_cast<float>(value(rng));
  }
  if (scaled) {
    // A random base exponent per operand in [-4, 4] keeps scales away from 1 without leaving
    // fp32's comfortable range; each block draws from [base - spread, base].
    std::uniform_int_distribution<int> base(-4, 4);
    const int base_a = base(rng), base_b = base(rng);
    std::uniform_int_distribution<int> ea(base_a - spread_a, base_a), eb(base_b - spread_b, base_b);
    for (float& s : p.a_scale) {
      s = std::ldexp(1.0f, ea(rng));
    }
    for (float& s : p.b_scale) {
      s = std::ldexp(1.0f, eb(rng));
    }
  }
  return out;
}

bool is_exact_mode(const GemmProblem& problem, std::string* why) {
  validate_gemm_problem(problem);
  const GemmProblem& p = problem;
  auto fail = [&](const std::string& reason) {
    if (why != nullptr) {
      *why = reason;
    }
    return false;
  };
  // (1) finite values, power-of-two (or zero) scales.
  for (size_t e = 0; e < p.a_scale.size(); ++e) {
    if (!std::isfinite(p.a_scale[e]) || !is_pow2_or_zero(p.a_scale[e])) {
      return fail("A scale #" + num(e) + " is not a power of two or zero");
    }
  }
  for (size_t e = 0; e < p.b_scale.size(); ++e) {
    if (!std::isfinite(p.b_scale[e]) || !is_pow2_or_zero(p.b_scale[e])) {
      return fail("B scale #" + num(e) + " is not a power of two or zero");
    }
  }
  struct Value {
    uint64_t odd = 0;  // odd significand; 0 for zero
    int lsb = 0;       // value = +-odd * 2^lsb
    int msb = 0;
  };
  auto decompose = [](float x) {
    Value v;
    if (x == 0) {
      return v;
    }
    bit_range(x, &v.lsb, &v.msb);
    v.odd = static_cast<uint64_t>(std::ldexp(std::fabs(static_cast<double>(x)), -v.lsb));
    return v;
  };
  auto scale_exp = [](float s) {  // s a nonzero power of two
    int l, h;
    bit_range(s, &l, &h);
    return l;
  };
  auto in_range = [](int unit, int top) { return unit >= -149 && top <= 127; };
  std::vector<Value> av(p.a.size()), bv(p.b.size());
  for (size_t e = 0; e < p.a.size(); ++e) {
    if (!std::isfinite(p.a[e])) {
      return fail("A value #" + num(e) + " is not finite");
    }
    av[e] = decompose(p.a[e]);
  }
  for (size_t e = 0; e < p.b.size(); ++e) {
    if (!std::isfinite(p.b[e])) {
      return fail("B value #" + num(e) + " is not finite");
    }
    bv[e] = decompose(p.b[e]);
  }
  // (3, dequantized operands) a*sa and b*sb are fp32 values.
  for (size_t i = 0; i < p.m; ++i) {
    for (size_t kk = 0; kk < p.k; ++kk) {
      const Value& v = av[i * p.k + kk];
      const float s = p.scale_a(i, kk);
      if (v.odd != 0 && s != 0 && !in_range(v.lsb + scale_exp(s), v.msb + scale_exp(s))) {
        return fail("a*sa leaves fp32 at A(" + num(i) + "," + num(kk) + ")");
      }
    }
  }
  for (size_t j = 0; j < p.n; ++j) {
    for (size_t kk = 0; kk < p.k; ++kk) {
      const Value& v = bv[j * p.k + kk];
      const float s = p.scale_b(j, kk);
      if (v.odd != 0 && s != 0 && !in_range(v.lsb + scale_exp(s), v.msb + scale_exp(s))) {
        return fail("b*sb leaves fp32 at B(" + num(j) + "," + num(kk) + ")");
      }
    }
  }
  // The scale exponent of every element (kZeroTerm: the element or its scale is zero), looked up
  // once: the O(M N K) loops below then index arrays instead of the scale grids.
  constexpr int kZeroTerm = std::numeric_limits<int>::min();
  std::vector<int> a_se(p.a.size()), b_se(p.b.size());
  for (size_t i = 0; i < p.m; ++i) {
    for (size_t kk = 0; kk < p.k; ++kk) {
      const float s = p.scale_a(i, kk);
      a_se[i * p.k + kk] = av[i * p.k + kk].odd == 0 || s == 0 ? kZeroTerm : scale_exp(s);
    }
  }
  for (size_t j = 0; j < p.n; ++j) {
    for (size_t kk = 0; kk < p.k; ++kk) {
      const float s = p.scale_b(j, kk);
      b_se[j * p.k + kk] = bv[j * p.k + kk].odd == 0 || s == 0 ? kZeroTerm : scale_exp(s);
    }
  }
  for (size_t i = 0; i < p.m; ++i) {
    for (size_t j = 0; j < p.n; ++j) {
      const std::string at = " at C(" + num(i) + "," + num(j) + ")";
      auto term_exps = [&](size_t kk, int* ea, int* eb) {
        *ea = a_se[i * p.k + kk];
        *eb = b_se[j * p.k + kk];
        return *ea != kZeroTerm && *eb != kZeroTerm;
      };
      // (2) e0 = lowest set bit over nonzero terms.
      int e0 = std::numeric_limits<int>::max();
      for (size_t kk = 0; kk < p.k; ++kk) {
        int ea, eb;
        if (!term_exps(kk, &ea, &eb)) {
          continue;
        }
        e0 = std::min(e0, av[i * p.k + kk].lsb + bv[j * p.k + kk].lsb + ea + eb);
      }
      if (e0 == std::numeric_limits<int>::max()) {
        continue;  // every term is zero
      }
      uint64_t units = 0;  // sum |t| / 2^e0
      for (size_t kk = 0; kk < p.k; ++kk) {
        int ea, eb;
        if (!term_exps(kk, &ea, &eb)) {
          continue;
        }
        const Value &x = av[i * p.k + kk], &y = bv[j * p.k + kk];
        const int shift = x.lsb + y.lsb + ea + eb - e0;
        const uint64_t odd = x.odd * y.odd;  // < 2^48
        if (shift + std::bit_width(odd) > 25) {
          return fail("a term exceeds 2^24 * 2^e0" + at);
        }
        units += odd << shift;
        if (units > (uint64_t{1} << 24)) {
          return fail("sum |terms| exceeds 2^24 * 2^e0" + at);
        }
        // (3) partial sums before / between / after scaling, and the scale product, in fp32.
        for (int g : {e0 - ea - eb, e0 - ea, e0 - eb, e0}) {
          if (!in_range(g, g + 24)) {
            return fail("a partial sum leaves fp32's range" + at);
          }
        }
        if (!in_range(ea + eb, ea + eb)) {
          return fail("sa*sb leaves fp32's range" + at);
        }
      }
    }
  }
  return true;
}

}  // namespace mxgate
