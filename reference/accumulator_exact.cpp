#include "reference/accumulator_exact.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "reference/float_bits.h"
#include "reference/gemm_shared.h"

namespace mxgate {
namespace {

using std::size_t;

std::string num(size_t x) { return std::to_string(x); }

// fp32 with round-to-nearest (unit roundoff 2^-24) or directed rounding (2^-23): operands whose
// every partial sum is an fp32 value are exact in either, since no rounding mode changes a value
// it can represent.
void require_fp32(const AccumulatorModel& m) {
  if (m.fp.unit_roundoff != 0x1p-24 && m.fp.unit_roundoff != 0x1p-23) {
    throw std::invalid_argument("accumulator " + m.name +
                                ": exact-mode operands are modelled for fp32 float accumulators "
                                "(round-to-nearest or directed) only");
  }
}

size_t chunk_len(const AccumulatorModel& m, size_t k) {
  return m.chunks.chunk_k == 0 ? k : std::min(m.chunks.chunk_k, k);
}

// The chunk condition of accumulator_exact.h for every element.
bool chunks_exact(const GemmProblem& p, const AccumulatorModel& m, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why != nullptr) *why = reason;
    return false;
  };
  const int prec = effective_precision(m.chunks);  // §3.1: the fewest bits any rounding keeps
  const size_t len = chunk_len(m, p.k);
  if (const auto x = first_scale_crossing(p, len)) {
    return fail("chunk [" + num(x->begin) + ", " + num(x->end) + ") crosses a scale block");
  }
  std::vector<OddParts> av(p.a.size()), bv(p.b.size());
  std::transform(p.a.begin(), p.a.end(), av.begin(), odd_parts);
  std::transform(p.b.begin(), p.b.end(), bv.begin(), odd_parts);
  for (size_t i = 0; i < p.m; ++i) {
    for (size_t j = 0; j < p.n; ++j) {
      for (size_t k0 = 0; k0 < p.k; k0 += len) {
        const size_t k1 = std::min(p.k, k0 + len);
        if (p.scale_a(i, k0) == 0 || p.scale_b(j, k0) == 0) {
          continue;  // the partial is multiplied by zero
        }
        int e0 = std::numeric_limits<int>::max();
        for (size_t kk = k0; kk < k1; ++kk) {
          const OddParts &x = av[i * p.k + kk], &y = bv[j * p.k + kk];
          if (x.odd != 0 && y.odd != 0) e0 = std::min(e0, x.lsb + y.lsb);
        }
        if (e0 == std::numeric_limits<int>::max()) continue;  // every product is zero
        uint64_t units = 0;                                   // sum |a_i b_i| / 2^e0
        for (size_t kk = k0; kk < k1; ++kk) {
          const OddParts &x = av[i * p.k + kk], &y = bv[j * p.k + kk];
          if (x.odd == 0 || y.odd == 0) continue;
          const int shift = x.lsb + y.lsb - e0;
          const uint64_t odd = x.odd * y.odd;  // < 2^48
          if (shift + static_cast<int>(std::bit_width(odd)) > prec) {
            return fail("a product needs more than " + std::to_string(prec) +
                        " bits above the chunk's lowest bit at C(" + num(i) + "," + num(j) +
                        "), chunk at k=" + num(k0));
          }
          units += odd << shift;
          if (units >= (uint64_t{1} << prec)) {
            return fail("sum |a*b| over the chunk at k=" + num(k0) + " reaches 2^" +
                        std::to_string(prec) + " units of its lowest bit at C(" + num(i) + "," +
                        num(j) + "): the accumulator would drop bits");
          }
        }
      }
    }
  }
  return true;
}

}  // namespace

void require_exact_mode_operands(size_t k, BlockSizes blocks, bool scaled,
                                 const AccumulatorModel& model) {
  validate_accumulator(model);
  if (model.kind == AccumulatorKind::kFloat) require_fp32(model);
  if (k > (size_t{1} << 24)) {
    throw std::invalid_argument("make_exact_mode_operands: K = " + num(k) +
                                " > 2^24: no integer operands keep fp32 sums exact");
  }
  if (model.kind == AccumulatorKind::kFloat) return;
  const size_t len = chunk_len(model, k);
  // A chunk crosses a scale block only where a block boundary (a multiple of the block, below K)
  // falls inside it: never for a block spanning all of K (per-tensor or row-wise scales, any K).
  const auto crosses = [k, len](size_t block) {
    return block < k && (len > block || block % len != 0);
  };
  if (scaled && k > len && (crosses(blocks.a_k) || crosses(blocks.b_k))) {
    throw std::invalid_argument("make_exact_mode_operands: accumulator " + model.name +
                                " sums chunks of " + num(len) +
                                " k under one scale, but the scale blocks are " + num(blocks.a_k) +
                                " / " + num(blocks.b_k) + " k");
  }
  const int prec = effective_precision(model.chunks);
  if (len >= (uint64_t{1} << prec)) {
    throw std::invalid_argument("make_exact_mode_operands: chunks of " + num(len) +
                                " k exceed 2^precision_bits - 1 = " + num((size_t{1} << prec) - 1) +
                                ": no nonzero operands are exact");
  }
}

ExactModeOperands make_exact_mode_operands(size_t m, size_t n, size_t k, BlockSizes blocks,
                                           bool scaled, uint64_t seed,
                                           const AccumulatorModel& model) {
  require_exact_mode_operands(k, blocks, scaled, model);
  if (model.kind == AccumulatorKind::kFloat) {
    return make_exact_mode_operands(m, n, k, blocks, scaled, seed);
  }
  const size_t len = chunk_len(model, k);
  const int prec = effective_precision(model.chunks);
  // fp32 promotion: K * v^2 * 2^spread <= 2^24 (as gemm_oracle.h); chunk: v^2 * len < 2^p.
  const int log_k = ceil_log2(k);
  int log_v = 3;
  while (log_v > 0 &&
         (2 * log_v + log_k > 24 || (uint64_t{1} << (2 * log_v)) * len >= (uint64_t{1} << prec))) {
    --log_v;
  }
  ExactModeOperands out;
  out.seed = seed;
  out.problem = make_gemm_problem(m, n, k, blocks, scaled);
  GemmProblem& p = out.problem;
  const int v = 1 << log_v;
  const int spread = 24 - log_k - 2 * log_v;
  const int spread_a = std::min(spread / 2, 8), spread_b = std::min(spread - spread / 2, 8);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> value(-v, v);
  for (float& x : p.a) x = static_cast<float>(value(rng));
  for (float& x : p.b) x = static_cast<float>(value(rng));
  if (scaled) {
    std::uniform_int_distribution<int> base(-4, 4);
    const int base_a = base(rng), base_b = base(rng);
    std::uniform_int_distribution<int> ea(base_a - spread_a, base_a), eb(base_b - spread_b, base_b);
    for (float& s : p.a_scale) s = std::ldexp(1.0f, ea(rng));
    for (float& s : p.b_scale) s = std::ldexp(1.0f, eb(rng));
  }
  return out;
}

bool is_exact_mode(const GemmProblem& problem, const AccumulatorModel& model, std::string* why) {
  validate_accumulator(model);
  if (model.kind == AccumulatorKind::kFloat) {
    require_fp32(model);
    return is_exact_mode(problem, why);
  }
  // The fp32 conditions make every promoted (scaled) partial and every sum of them exact.
  return is_exact_mode(problem, why) && chunks_exact(problem, model, why);
}

}  // namespace mxgate
