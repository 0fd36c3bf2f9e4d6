// The tiled parallel exact engine; see gemm_oracle_engine.h.
#include "reference/gemm_oracle_engine.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <vector>

#include "reference/exact_sum.h"
#include "reference/float_bits.h"
#include "reference/gemm_oracle_dot.h"
#include "reference/parallel.h"

namespace mxgate::gemm_engine {
namespace {

using std::size_t;

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
    const unsigned threads = thread_count(options_.threads, p_.m * p_.n * p_.k);
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

void exact_sums_fp32(const GemmProblem& problem, const ExactOptions& options, float* out) {
  Fp32Sink sink{out, problem.n};
  run_exact(problem, options, sink);
}

void exact_sums_bf16(const GemmProblem& problem, const ExactOptions& options, uint16_t* out) {
  Bf16Sink sink{out, problem.n};
  run_exact(problem, options, sink);
}

void exact_sums_fp64(const GemmProblem& problem, const ExactOptions& options, double* out) {
  Fp64Sink sink{out, problem.n};
  run_exact(problem, options, sink);
}

}  // namespace mxgate::gemm_engine
