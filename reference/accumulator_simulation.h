// Bit-faithful software simulation of an accumulator model (docs/accumulators.md §3): one fixed
// order, computed independently of the bound code, so tests can hold the bound against it and
// the probe (probe/accumulator_probe.h) can be run on a known model.
//   kFloat:         the fp32 order of gemm_oracle.h ordered_gemm (product_roundings 1 and
//                   partial_roundings 2: kPerPartial; 3 and 0: kPerProduct); fp32 RN only.
//   kAlignedChunks: for each (m, n), chunks [c*chunk_k, (c+1)*chunk_k) in increasing c; inside a
//                   chunk, groups of group_size consecutive k in increasing k; per group, the
//                   running partial s and the exact products a*b are aligned to the largest
//                   nonzero term's exponent E: each becomes a multiple of 2^max(E-p+1, -149)
//                   (truncated or rounded to nearest even), they are summed exactly, the sum is
//                   (normalize_group_sum) rounded to p bits once more and stored as the new fp32
//                   partial. The chunk's partial is then promoted:
//                     partial_roundings 2: acc = fl(acc + fl(fl(s * sa) * sb))
//                     partial_roundings 1: acc = fma(s, fl(sa * sb), acc)
//                   with the chunk's scales (constant over the chunk, else invalid_argument), acc
//                   starting at +0.0f; with alpha != 1 acc = fl(alpha * acc) (the epilogue,
//                   docs/fp4.md §8); C = acc (fp32) or RNE(acc) to bf16.
#pragma once

#include "reference/accumulator.h"
#include "reference/gemm_oracle.h"

namespace mxgate {

// Throws std::invalid_argument for an invalid problem or model, a chunk that crosses a scale
// block, or a float-kind model other than fp32 round-to-nearest.
GemmOutput simulate_gemm(const GemmProblem& problem, const AccumulatorModel& model,
                         OutputFormat output, unsigned threads = 0);

// One group step of the aligned-chunk accumulator, exposed for hand-derived tests: the new
// partial from the running partial `s` and the exact products `terms` (doubles holding a*b).
float aligned_group_sum(float s, const double* terms, std::size_t count,
                        const AlignedChunkParams& params);

}  // namespace mxgate
