#include "reference/accumulator_simulation.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/fp_fence.h"
#include "reference/gemm_shared.h"
#include "reference/parallel.h"

// fl(a*b) must stay a separate rounding from the addition that follows (no FMA contraction);
// fence() (fp_fence.h) makes that hold for every compiler.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace mxgate {
namespace {

using std::size_t;

constexpr int kFinestUnit = -149;  // the fp32 register holding a partial has no finer unit

// x / 2^unit rounded to an integer by `r` (x / 2^unit is exact in double: a power-of-two
// scaling well inside double's range). Round-to-nearest-even is spelled out so that the result
// does not depend on the floating-point environment.
int64_t to_units(double x, int unit, AlignRounding r) {
  const double scaled = std::ldexp(x, -unit);
  if (r == AlignRounding::kTruncate) {
    return static_cast<int64_t>(std::trunc(scaled));
  }
  const double low = std::floor(scaled);
  auto n = static_cast<int64_t>(low);
  if (r == AlignRounding::kRoundDown) {
    return n;
  }
  const double frac = scaled - low;  // exact
  if (frac > 0.5 || (frac == 0.5 && (n & 1) != 0)) {
    ++n;
  }
  return n;
}

// Exponent of the leading bit of a finite nonzero double (bit extraction, never log2).
int leading_exponent(double x) { return std::ilogb(x); }

// An aligned sum: every nonzero term put on the grid 2^max(top - prec + 1, -149) (top: the
// largest term's exponent; INT32_MIN when all are zero) and the results added exactly.
struct Aligned {
  double sum = 0;
  int top = INT32_MIN;
};

// The `count` terms terms[0], terms[stride], ... and the partial `s`.
Aligned fuse(const double* terms, size_t count, size_t stride, float s, int prec, AlignRounding r) {
  Aligned a;
  if (s != 0) a.top = leading_exponent(s);
  for (size_t i = 0; i < count; ++i) {
    const double x = terms[i * stride];
    if (x != 0) a.top = std::max(a.top, leading_exponent(x));
  }
  if (a.top == INT32_MIN) return a;
  const int unit = std::max(a.top - prec + 1, kFinestUnit);
  int64_t units = to_units(s, unit, r);
  for (size_t i = 0; i < count; ++i) units += to_units(terms[i * stride], unit, r);
  a.sum = std::ldexp(static_cast<double>(units), unit);  // exact: validate_accumulator
  return a;
}

// The group step's result in the fp32 register (exact: validate_accumulator made it fit).
float store(double sum, StoreRounding r) {
  if (r == StoreRounding::kExact || sum == 0) return static_cast<float>(sum);
  const int unit = std::max(leading_exponent(sum) - 23, kFinestUnit);
  const double v = std::ldexp(
      static_cast<double>(to_units(
          sum, unit,
          r == StoreRounding::kTruncate ? AlignRounding::kTruncate : AlignRounding::kNearestEven)),
      unit);
  if (std::fabs(v) >= 0x1p128) {
    return r == StoreRounding::kTruncate ? std::copysign(0x1.fffffep127f, static_cast<float>(v))
                                         : static_cast<float>(v);  // Inf
  }
  return static_cast<float>(v);  // exact
}

struct ChunkRange {
  size_t begin;
  size_t end;
};

std::vector<ChunkRange> chunk_ranges(size_t k, size_t chunk_k) {
  const size_t len = chunk_k == 0 ? k : chunk_k;
  std::vector<ChunkRange> out;
  for (size_t k0 = 0; k0 < k; k0 += len) {
    out.push_back({k0, std::min(k, k0 + len)});
  }
  return out;
}

void require_constant_scales(const GemmProblem& p, size_t chunk_k, const std::string& model) {
  if (const auto x = first_scale_crossing(p, chunk_k)) {
    throw std::invalid_argument(
        "accumulator " + model + ": chunk [" + std::to_string(x->begin) + ", " +
        std::to_string(x->end) + ") crosses a" + (x->a ? "n A" : " B") +
        " scale block; the tensor core sums a chunk under one scale (docs/accumulators.md §3)");
  }
}

GemmOutput simulate_float(const GemmProblem& p, const AccumulatorModel& m, OutputFormat output) {
  if (m.fp.unit_roundoff != 0x1p-24) {
    throw std::invalid_argument("accumulator " + m.name +
                                ": only fp32 round-to-nearest float accumulators are simulated");
  }
  OrderModel order;
  order.block_k = m.fp.block_k;
  order.output = output;
  if (m.fp.product_roundings == 1 && m.fp.partial_roundings == 2) {
    order.scale_application = ScaleApplication::kPerPartial;
  } else if (m.fp.product_roundings == 3 && m.fp.partial_roundings == 0) {
    order.scale_application = ScaleApplication::kPerProduct;
  } else {
    throw std::invalid_argument("accumulator " + m.name +
                                ": simulated float orders are product_roundings=1 "
                                "partial_roundings=2 and product_roundings=3 partial_roundings=0");
  }
  return ordered_gemm(p, order);
}

}  // namespace

float aligned_group_sum(float s, const double* terms, size_t count,
                        const AlignedChunkParams& params) {
  const int prec = params.precision_bits;
  // Non-finite terms: IEEE semantics (Inf + finite = Inf, Inf - Inf = NaN).
  bool finite = std::isfinite(s);
  for (size_t i = 0; i < count && finite; ++i) {
    finite = std::isfinite(terms[i]);
  }
  if (!finite) {
    double sum = s;
    for (size_t i = 0; i < count; ++i) {
      sum += terms[i];
    }
    return static_cast<float>(sum);
  }
  // Exact sub-sums of sub_sum consecutive products are the aligned terms (§3.1).
  thread_local std::vector<double> runs;
  if (params.sub_sum > 1) {
    runs.assign((count + params.sub_sum - 1) / params.sub_sum, 0.0);
    for (size_t i = 0; i < count; ++i) runs[i / params.sub_sum] += terms[i];
    terms = runs.data();
    count = runs.size();
  }
  double sum = 0;
  if (params.late_c_bits == 0) {
    // Early C: the partial is one more term of the alignment.
    const Aligned a = fuse(terms, count, 1, s, prec, params.rounding);
    if (a.top == INT32_MIN) return s;  // every term is zero: the partial is unchanged
    sum = a.sum;
  } else {
    // The products alone (as two halves: each fused, then both aligned to the larger's top).
    Aligned p;
    if (params.halves) {
      const Aligned even = fuse(terms, (count + 1) / 2, 2, 0.0f, prec, params.rounding);
      const Aligned odd = fuse(terms + 1, count / 2, 2, 0.0f, prec, params.rounding);
      p.top = std::max(even.top, odd.top);
      if (p.top != INT32_MIN) {
        const int unit = std::max(p.top - prec + 1, kFinestUnit);
        p.sum = std::ldexp(static_cast<double>(to_units(even.sum, unit, params.late_rounding) +
                                               to_units(odd.sum, unit, params.late_rounding)),
                           unit);
      }
    } else {
      p = fuse(terms, count, 1, 0.0f, prec, params.rounding);
    }
    // Late C: the product sum keeps late_c_bits, the partial precision_bits, relative to the
    // larger of the products' top and the partial's exponent.
    const int top = std::max(p.top, s != 0 ? leading_exponent(s) : INT32_MIN);
    if (top == INT32_MIN) return s;
    const int unit_p = std::max(top - params.late_c_bits + 1, kFinestUnit);
    const int unit_s = std::max(top - prec + 1, kFinestUnit);
    int64_t units = to_units(p.sum, unit_p, params.late_rounding);
    // MMA-Sim's earlier code drops a C more than p bits below the top before rounding it down.
    const bool dropped = params.late_rounding == AlignRounding::kRoundDown && s != 0 &&
                         leading_exponent(s) < top - prec;
    if (!dropped) {
      units += to_units(s, unit_s, params.late_rounding) * (int64_t{1} << (unit_s - unit_p));
    }
    sum = std::ldexp(static_cast<double>(units), unit_p);  // exact: validate_accumulator
  }
  if (params.normalize_group_sum && sum != 0) {
    const int u2 = std::max(leading_exponent(sum) - prec + 1, kFinestUnit);
    sum = std::ldexp(static_cast<double>(to_units(sum, u2, params.rounding)), u2);
  }
  return store(sum, params.store);
}

GemmOutput simulate_gemm(const GemmProblem& problem, const AccumulatorModel& model,
                         OutputFormat output, unsigned threads) {
  validate_gemm_problem(problem);
  validate_accumulator(model);
  if (model.kind == AccumulatorKind::kFloat) {
    return simulate_float(problem, model, output);
  }
  const GemmProblem& p = problem;
  const AlignedChunkParams& params = model.chunks;
  const std::vector<ChunkRange> chunks = chunk_ranges(p.k, params.chunk_k);
  require_constant_scales(p, params.chunk_k, model.name);
  std::vector<float> c(p.m * p.n);
  parallel_for(p.m, thread_count(threads), [&](size_t i, unsigned) {
    std::vector<double> terms(params.group_size);
    const float* a = &p.a[i * p.k];
    for (size_t j = 0; j < p.n; ++j) {
      const float* b = &p.b[j * p.k];
      float acc = 0.0f;
      for (const ChunkRange& ch : chunks) {
        float s = 0.0f;
        for (size_t g0 = ch.begin; g0 < ch.end; g0 += params.group_size) {
          const size_t g1 = std::min(ch.end, g0 + params.group_size);
          for (size_t kk = g0; kk < g1; ++kk) {
            terms[kk - g0] = static_cast<double>(a[kk]) * b[kk];  // exact in double
          }
          s = aligned_group_sum(s, terms.data(), g1 - g0, params);
        }
        const float sa = p.scale_a(i, ch.begin), sb = p.scale_b(j, ch.begin);
        if (params.partial_roundings == 2) {
          acc = fence(acc + fence(fence(s * sa) * sb));
        } else {
          acc = std::fma(s, fence(sa * sb), acc);
        }
      }
      c[i * p.n + j] = p.alpha == 1.0f ? acc : fence(p.alpha * acc);  // the epilogue's alpha
    }
  });
  return gemm_output_from_fp32(p.m, p.n, output, std::move(c));
}

}  // namespace mxgate
