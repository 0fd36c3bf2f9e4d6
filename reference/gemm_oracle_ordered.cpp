// Ordered mode (gemm_oracle.h): the bit-exact fp32 emulation of one declared summation order.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reference/fp_fence.h"
#include "reference/gemm_oracle.h"
#include "reference/gemm_shared.h"

// The ordered emulation must round every operation separately. Clang contracts a*b + c into an
// FMA by default (-ffp-contract=on), GCC does with GNU dialects (-ffp-contract=fast); the
// pragma covers Clang, and fence() (fp_fence.h) makes fusion impossible for every compiler.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace mxgate {

using std::size_t;

GemmOutput ordered_gemm(const GemmProblem& problem, const OrderModel& order) {
  validate_gemm_problem(problem);
  const GemmProblem& p = problem;
  const size_t len = order.block_k == 0 ? p.k : order.block_k;
  const bool per_partial = order.scale_application == ScaleApplication::kPerPartial;
  if (per_partial) {
    if (const auto x = first_scale_crossing(p, len)) {
      throw std::invalid_argument(
          "ordered_gemm: kPerPartial needs each K-block inside one scale block, but block [" +
          std::to_string(x->begin) + ", " + std::to_string(x->end) + ") of block_k=" +
          std::to_string(len) + " crosses a" + (x->a ? "n A" : " B") + " scale block (" +
          (x->a ? "a_k=" : "b_k=") + std::to_string(x->a ? p.blocks.a_k : p.blocks.b_k) +
          "); use kPerProduct or a smaller block_k");
    }
  }
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
  return gemm_output_from_fp32(p.m, p.n, order.output, std::move(c));
}

}  // namespace mxgate
