#include "reference/accumulator_bounds.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/machinery_fault.h"
#include "reference/gemm_shared.h"
#include "reference/parallel.h"

namespace mxgate {
namespace {

using std::size_t;

// ---- The aligned-chunk bound (sm90_fp8_mma) --------------------------------------------------
//
// Derivation (docs/accumulators.md §5). One output element; K is cut into chunks of chunk_k
// consecutive k (the last may be shorter), each under one A scale sa and one B scale sb. Inside a
// chunk the exact products x_i = a_i b_i are taken in groups G_1..G_r of group_size consecutive k,
// in ANY order of the groups. A group step turns the running partial s (s = 0 before the first)
// into s' = sum over T = {s} u G of tau(y), tau rounding y to a multiple of
//   q = max(2^(E - p + 1), 2^-149),   E = exponent of the largest |y| in T,
// toward zero (truncate) or to nearest; with normalize_group_sum the sum is rounded once more to
// p bits of its own exponent (unit <= q as long as |sum| stays below the bound M below).
//
// 1. Per term error. Truncation moves a positive term down by less than q and a negative term up
//    by less than q; rounding to nearest moves any term by at most q/2. A zero term is exact.
//    Over the whole chunk, with N+ / N- its positive / negative products, r its groups, and
//    X = r - 1 running-partial terms (+ r normalisations) of unknown sign, the chunk's error
//    E_c = s_c - P_c (P_c the exact chunk sum) satisfies, if every step's unit is <= Q,
//      truncate: -Q (N+ + X) < E_c < Q (N- + X)  =>  |E_c| <= kappa Q, kappa = max(N+, N-) + X
//      nearest:  |E_c| <= kappa Q,  kappa = (N+ + N- + X) / 2.
// 2. The unit. Let G_l be the exact group sums and S = max(sum_l max(G_l, 0), sum_l max(-G_l, 0)):
//    every partial sum of any subset of groups (any order) is at most S in magnitude. With
//      M = max(max_i |x_i|, (S + kappa 2^-149) / (1 - kappa 2^(1-p))),   Q = max(2^(e(M)-p+1),
//      2^-149)
//    (e(M) the exponent of M's leading bit, so Q <= 2^(1-p) M + 2^-149), induction over the steps
//    shows every term is at most M: the running partial is an exact subset sum plus the errors so
//    far, |s| <= S + kappa Q <= S + kappa (2^(1-p) M + 2^-149) <= M. Hence every step's unit is
//    <= Q and (1) holds: |E_c| <= Ebar_c = kappa Q. (kappa 2^(1-p) >= 1, or M >= 2^128 so that a
//    partial might overflow fp32: the bound is +Inf.)
// 3. Promotion. Each s_c is an fp32 value; the kernel scales it with partial_roundings fp32 RN
//    roundings (2: fl(fl(s sa) sb); 1: fma(s, fl(sa sb), acc)) and adds the B chunk partials in
//    ANY order in fp32 RN: every s_c sa sb passes through at most N = B + 1 roundings, so (Higham
//    §2.2, Lemma 3.1, as in gemm_oracle.h compute_bounds)
//      |c_hat - sum_c s_c sa_c sb_c| <= gamma_N sum_c |sa_c sb_c| |s_c| + (1 + gamma_N) eta ops A
//    with eta = 2^-150 per rounding, ops = B (partial_roundings + 1) roundings, A the largest
//    factor max(1, |sa|) max(1, |sb|) an absolute error can still be multiplied by. With
//    |s_c| <= |P_c| + Ebar_c and |sum_c (s_c - P_c) sa_c sb_c| <= sum_c |sa_c sb_c| Ebar_c:
//      |c_hat - c| <= gamma_N sum_c w_c (|P_c| + Ebar_c) + sum_c w_c Ebar_c + (1 + gamma_N) eta ops
//      A,
//    w_c = |sa_c sb_c|. If (1 + gamma_N) sum_c w_c (|P_c| + Ebar_c) + eta ops A, or a partial
//    times max(1, |sa|) max(1, |sb|), reaches fp32's overflow threshold, the bound is +Inf.
// 4. Epilogue and output. alpha != 1 (docs/fp4.md §8) multiplies the fp32 result once more in
//    fp32 RN, as gemm_oracle.h compute_bounds: B -> |alpha| B + 2^-24 |alpha| (|c| + B) + 2^-150.
//    bf16 output adds 2^-8 (|c| + bound) + 2^-134 (+Inf at bf16's overflow threshold).
// 5. Evaluation. G_l, P_c and S are computed in double: each group sum of n <= group_size exact
//    products errs by at most n^2 2^-53 max|x| (Higham (3.4)); with max|x| <= max|a| max|b| over
//    the chunk, r group_size^2 2^-52 max|a| max|b| is added to S and |P_c|. The final bound is
//    inflated by 2^-40 for the double arithmetic evaluating it, as in compute_bounds.
// NaN / Inf exact results get bound 0: the kernel must produce NaN / the same Inf.

struct ChunkRange {
  size_t begin;
  size_t end;
};

constexpr size_t kCols = 8;  // columns of B processed together (one transposed panel)

// B transposed in panels of kCols columns: panel[jb][kk * kCols + jj] = b[(jb*kCols + jj), kk].
std::vector<float> transpose_panels(const GemmProblem& p) {
  const size_t panels = (p.n + kCols - 1) / kCols;
  std::vector<float> out(panels * p.k * kCols, 0.0f);
  for (size_t j = 0; j < p.n; ++j) {
    float* dst = &out[(j / kCols) * p.k * kCols + j % kCols];
    for (size_t kk = 0; kk < p.k; ++kk) {
      dst[kk * kCols] = p.b[j * p.k + kk];
    }
  }
  return out;
}

// max |values| of each row over each chunk: rows x chunks.
std::vector<double> chunk_amax(const std::vector<float>& values, size_t rows, size_t k,
                               const std::vector<ChunkRange>& chunks) {
  std::vector<double> out(rows * chunks.size(), 0.0);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < chunks.size(); ++c) {
      double m = 0;
      for (size_t kk = chunks[c].begin; kk < chunks[c].end; ++kk) {
        m = std::max(m, std::fabs(static_cast<double>(values[r * k + kk])));
      }
      out[r * chunks.size() + c] = m;
    }
  }
  return out;
}

// Sign masks of one row of values: bit k of `pos` / `neg` is set when value k is > 0 / < 0.
struct SignMasks {
  std::vector<uint64_t> pos, neg;
};

std::vector<SignMasks> sign_masks(const std::vector<float>& values, size_t rows, size_t k) {
  std::vector<SignMasks> out(rows);
  const size_t words = (k + 63) / 64;
  for (size_t r = 0; r < rows; ++r) {
    out[r].pos.assign(words, 0);
    out[r].neg.assign(words, 0);
    for (size_t kk = 0; kk < k; ++kk) {
      const float v = values[r * k + kk];
      if (v > 0) out[r].pos[kk / 64] |= uint64_t{1} << (kk % 64);
      if (v < 0) out[r].neg[kk / 64] |= uint64_t{1} << (kk % 64);
    }
  }
  return out;
}

// Positive and negative products over k in [k0, k1): a and b nonzero of equal / opposite signs.
struct SignCounts {
  size_t pos = 0, neg = 0;
};

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("popcnt", "default")))
#endif
SignCounts
count_signs(const SignMasks& a, const SignMasks& b, size_t k0, size_t k1) {
  SignCounts n;
  for (size_t w = k0 / 64; w * 64 < k1; ++w) {
    uint64_t in = ~uint64_t{0};
    if (w == k0 / 64) in &= ~uint64_t{0} << (k0 % 64);
    if ((w + 1) * 64 > k1) in &= ~uint64_t{0} >> (64 - k1 % 64);
    const uint64_t pos = ((a.pos[w] & b.pos[w]) | (a.neg[w] & b.neg[w])) & in;  // disjoint sets
    const uint64_t neg = ((a.pos[w] & b.neg[w]) | (a.neg[w] & b.pos[w])) & in;
    n.pos += static_cast<size_t>(std::popcount(pos));
    n.neg += static_cast<size_t>(std::popcount(neg));
  }
  return n;
}

// g[jj] = sum over k in [k0, k1) of a[k] * panel[k * kCols + jj], in double (each product exact;
// the sum's rounding is covered by step 5 in any order, FMA or not). The hot loop of the bound,
// also compiled for AVX2 and picked at run time where the CPU has it (as gemm_oracle_dot.cpp's
// kernels are).
template <int kVariant>
inline void group_sums_body(const float* a, const float* panel, size_t k0, size_t k1, double* g) {
  double acc[kCols] = {};
  for (size_t kk = k0; kk < k1; ++kk) {
    const double av = a[kk];
    for (size_t jj = 0; jj < kCols; ++jj) {
      acc[jj] += av * panel[kk * kCols + jj];
    }
  }
  for (size_t jj = 0; jj < kCols; ++jj) g[jj] = acc[jj];
}

void group_sums_portable(const float* a, const float* panel, size_t k0, size_t k1, double* g) {
  group_sums_body<0>(a, panel, k0, k1, g);
}

using GroupSums = void (*)(const float*, const float*, size_t, size_t, double*);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2,fma"))) void group_sums_avx2(const float* a, const float* panel,
                                                         size_t k0, size_t k1, double* g) {
  group_sums_body<1>(a, panel, k0, k1, g);
}

GroupSums pick_group_sums() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? group_sums_avx2
                                                                         : group_sums_portable;
}
#else
GroupSums pick_group_sums() { return group_sums_portable; }
#endif

// 2^(exponent of x's leading bit) for finite x > 0 (bit extraction, never log2).
double leading_power(double x) { return std::ldexp(1.0, std::ilogb(x)); }

struct ChunkTotals {    // one element's promotion sums
  double promoted = 0;  // sum_c w_c (|P_c| + Ebar_c)
  double error = 0;     // sum_c w_c Ebar_c
  bool infinite = false;
};

class AlignedChunkBounds {
 public:
  AlignedChunkBounds(const GemmProblem& p, const AlignedChunkParams& params)
      : p_(p), params_(params) {
    const size_t len = params.chunk_k == 0 ? p.k : params.chunk_k;
    for (size_t k0 = 0; k0 < p.k; k0 += len) {
      chunks_.push_back({k0, std::min(p.k, k0 + len)});
    }
    bt_ = transpose_panels(p);
    amax_a_ = chunk_amax(p.a, p.m, p.k, chunks_);
    amax_b_ = chunk_amax(p.b, p.n, p.k, chunks_);
    signs_a_ = sign_masks(p.a, p.m, p.k);
    signs_b_ = sign_masks(p.b, p.n, p.k);
  }

  size_t chunk_count() const { return chunks_.size(); }

  // The totals of row i against the kCols columns of panel jb (columns past N are ignored).
  void panel_totals(size_t i, size_t jb, ChunkTotals* totals) const {
    const AlignedChunkParams& c = params_;
    const double unit_factor = std::ldexp(1.0, 1 - effective_precision(c));  // 2^(1-p), §3.1
    const float* a = &p_.a[i * p_.k];
    const float* bt = &bt_[jb * p_.k * kCols];
    const size_t cols = std::min(kCols, p_.n - jb * kCols);
    const size_t nc = chunks_.size();
    for (size_t ch = 0; ch < nc; ++ch) {
      const ChunkRange r = chunks_[ch];
      double sum[kCols] = {}, pos[kCols] = {}, neg[kCols] = {};
      size_t groups = 0;
      for (size_t g0 = r.begin; g0 < r.end; g0 += c.group_size) {
        const size_t g1 = std::min(r.end, g0 + c.group_size);
        double g[kCols];
        group_sums_(a, bt, g0, g1, g);
        for (size_t jj = 0; jj < kCols; ++jj) {
          sum[jj] += g[jj];
          pos[jj] += std::max(g[jj], 0.0);
          neg[jj] += std::max(-g[jj], 0.0);
        }
        ++groups;
      }
      // Roundings of unknown sign (step 1), each weighted 1/2 when it rounds to nearest: the
      // partial as a term and the renormalisations (`rounding`), the halves and the late product
      // sum (`late_rounding`), the store to fp32 (docs/accumulators.md §5, structured adders).
      const auto weight = [](bool nearest) { return nearest ? 0.5 : 1.0; };
      const auto r_groups = static_cast<double>(groups);
      const bool late = c.late_c_bits != 0;
      const double extra =
          weight((late ? c.late_rounding : c.rounding) == AlignRounding::kNearestEven) *
              (r_groups - 1) +
          weight(c.rounding == AlignRounding::kNearestEven) *
              (c.normalize_group_sum ? r_groups : 0.0) +
          weight(c.late_rounding == AlignRounding::kNearestEven) * r_groups *
              ((c.halves ? 2.0 : 0.0) + (late ? 1.0 : 0.0)) +
          weight(c.store == StoreRounding::kNearestEven) *
              (c.store != StoreRounding::kExact ? r_groups : 0.0);
      // Exact sub-sums are the aligned terms: their count, their signs unknown, their size up to
      // sub_sum products.
      const auto runs = static_cast<double>((r.end - r.begin + c.sub_sum - 1) / c.sub_sum);
      const double term_factor = static_cast<double>(c.sub_sum);
      const double gs = static_cast<double>(c.group_size);
      for (size_t jj = 0; jj < cols; ++jj) {
        ChunkTotals& t = totals[jj];
        if (t.infinite) {
          continue;
        }
        const size_t j = jb * kCols + jj;
        const double xmax = amax_a_[i * nc + ch] * amax_b_[j * nc + ch];  // >= every |x_i|
        const SignCounts signs = count_signs(signs_a_[i], signs_b_[j], r.begin, r.end);
        const auto npos = static_cast<double>(signs.pos), nneg = static_cast<double>(signs.neg);
        const double slack = static_cast<double>(groups) * gs * gs * 0x1p-52 * xmax;
        // Per term (step 1): truncation moves positive and negative terms apart, rounding down
        // moves all one way, nearest by half a unit; sub-sums of unknown sign count whole.
        double terms_kappa = 0;
        if (c.sub_sum > 1) {
          terms_kappa = c.rounding == AlignRounding::kNearestEven ? runs / 2 : runs;
        } else if (c.rounding == AlignRounding::kTruncate) {
          terms_kappa = std::max(npos, nneg);
        } else {
          terms_kappa = c.rounding == AlignRounding::kRoundDown ? npos + nneg : (npos + nneg) / 2;
        }
        const double kappa = terms_kappa + extra;
        double ebar = 0;
        if (npos + nneg > 0) {
          const double den = 1 - kappa * unit_factor;
          if (!(den > 0)) {
            t.infinite = true;
            continue;
          }
          const double s = std::max(pos[jj], neg[jj]) + slack;
          const double m =
              std::max(xmax * term_factor, (s + kappa * 0x1p-149) / den) * (1 + 0x1p-40);
          if (!(m < 0x1p128)) {
            t.infinite = true;  // a partial may leave fp32's range
            continue;
          }
          const double q = std::max(leading_power(m) * unit_factor, 0x1p-149);
          ebar = kappa * q;
        }
        const double sa = std::fabs(static_cast<double>(p_.scale_a(i, r.begin)));
        const double sb = std::fabs(static_cast<double>(p_.scale_b(j, r.begin)));
        const double part = std::fabs(sum[jj]) + slack + ebar;  // >= |s_c|
        if (!(part * std::max(1.0, sa) * std::max(1.0, sb) < 0x1.ffffffp127)) {
          t.infinite = true;
          continue;
        }
        t.promoted += sa * sb * part;
        t.error += sa * sb * ebar;
      }
    }
  }

 private:
  const GemmProblem& p_;
  const AlignedChunkParams& params_;
  std::vector<ChunkRange> chunks_;
  std::vector<float> bt_;
  std::vector<double> amax_a_, amax_b_;  // per row / column and chunk
  std::vector<SignMasks> signs_a_, signs_b_;
  GroupSums group_sums_ = pick_group_sums();
};

void require_constant_scales(const GemmProblem& p, size_t chunk_k, const std::string& model) {
  const size_t len = chunk_k == 0 ? p.k : chunk_k;
  if (const auto x = first_scale_crossing(p, chunk_k)) {
    throw std::invalid_argument(
        "accumulator " + model + ": chunk [" + std::to_string(x->begin) + ", " +
        std::to_string(x->end) + ") of chunk_k=" + std::to_string(len) + " crosses a" +
        (x->a ? "n A" : " B") + " scale block (" + (x->a ? "a_k=" : "b_k=") +
        std::to_string(x->a ? p.blocks.a_k : p.blocks.b_k) +
        "): the model sums a chunk under one scale (docs/accumulators.md §3)");
  }
}

GemmBounds aligned_chunk_bounds(const GemmProblem& problem, const AccumulatorModel& model,
                                OutputFormat output, unsigned threads) {
  // The accumulator's sums; alpha (docs/fp4.md §8) is the epilogue's multiply, applied below.
  std::optional<GemmProblem> unscaled;
  if (problem.alpha != 1.0f) {
    unscaled = problem;
    unscaled->alpha = 1.0f;
  }
  const GemmProblem& p = unscaled ? *unscaled : problem;
  const double alpha = problem.alpha;
  const AlignedChunkParams& c = model.chunks;
  require_constant_scales(p, c.chunk_k, model.name);
  GemmBounds out;
  out.rows = p.m;
  out.cols = p.n;
  out.output = output;
  ExactOptions exact;
  exact.threads = threads;
  out.exact = exact_gemm_fp64(p, exact);
  out.abs_sum = exact_gemm_fp64(magnitude_problem(p), exact);

  // Test plant (common/machinery_fault.h): sm90_fp8_mma's bound cut into 256-wide chunks.
  AlignedChunkParams planted = c;
  if (model.name == "sm90_fp8_mma" && machinery_fault_is(MachineryFault::kSm90BoundChunk256)) {
    planted.chunk_k = 256;
  }
  const AlignedChunkBounds engine(p, planted);
  const double chunks = static_cast<double>(engine.chunk_count());
  const double n_round = chunks + 1;  // roundings a promoted partial passes through (step 3)
  const double nu = n_round * 0x1p-24;
  const double gamma = nu / (1 - nu);
  const double ops = chunks * (c.partial_roundings + 1);

  const ScaleAmplification amp = scale_amplification(p);
  const bool bf16 = output == OutputFormat::kBf16;
  out.bound.assign(p.m * p.n, 0.0);
  const size_t panels = (p.n + kCols - 1) / kCols;
  // Items of kRows rows: each panel of B (K x kCols) is read once per kRows rows, from cache.
  constexpr size_t kRows = 8;
  parallel_for((p.m + kRows - 1) / kRows, thread_count(threads), [&](size_t item, unsigned) {
    for (size_t jb = 0; jb < panels; ++jb) {
      for (size_t i = item * kRows; i < std::min(p.m, (item + 1) * kRows); ++i) {
        ChunkTotals totals[kCols];
        engine.panel_totals(i, jb, totals);
        for (size_t jj = 0; jj < kCols && jb * kCols + jj < p.n; ++jj) {
          const size_t j = jb * kCols + jj, e = i * p.n + j;
          const double acc = out.exact[e];
          const double exact_c = alpha * acc;
          out.exact[e] = exact_c;
          if (!std::isfinite(exact_c)) {
            continue;  // NaN / Inf must be matched exactly
          }
          const ChunkTotals& t = totals[jj];
          const double eta = 0x1p-150 * ops * amp.a[i] * amp.b[j];
          double bound = gamma * t.promoted + t.error + (1 + gamma) * eta;
          if (t.infinite || !((1 + gamma) * t.promoted + eta < 0x1.ffffffp127)) {
            bound = HUGE_VAL;
          }
          if (alpha != 1.0 && std::isfinite(bound)) {  // fl32(alpha * c): one more fp32 rounding
            const double a = std::fabs(alpha);
            bound = a * bound + 0x1p-24 * a * (std::fabs(acc) + bound) + 0x1p-150;
            if (!(a * (std::fabs(acc) + bound) < 0x1.ffffffp127)) bound = HUGE_VAL;
          }
          if (bf16 && std::isfinite(bound)) {
            bound += 0x1p-8 * (std::fabs(exact_c) + bound) + 0x1p-134;
            if (!(std::fabs(exact_c) + bound < 0x1.fep127)) {
              bound = HUGE_VAL;
            }
          }
          out.bound[e] = bound * (1 + 0x1p-40);
        }
      }
    }
  });
  return out;
}

}  // namespace

GemmBounds compute_bounds(const GemmProblem& problem, const AccumulatorModel& model,
                          OutputFormat output, unsigned threads) {
  validate_gemm_problem(problem);
  validate_accumulator(model);
  if (model.kind == AccumulatorKind::kFloat) {
    AccumModel m = model.fp;
    m.output = output;
    return compute_bounds(problem, m);
  }
  return aligned_chunk_bounds(problem, model, output, threads);
}

}  // namespace mxgate
