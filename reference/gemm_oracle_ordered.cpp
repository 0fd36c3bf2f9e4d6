// Ordered mode (gemm_oracle.h): the bit-exact fp32 emulation of one declared summation order.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reference/exact_sum.h"
#include "reference/fp_fence.h"
#include "reference/gemm_oracle.h"

// Clang contracts a*b + c into an FMA by default; every file of the GEMM oracle compiles without
// contraction, so no result depends on where code lives.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace mxgate {

using std::size_t;

namespace {

std::string num(size_t x) { return std::to_string(x); }

}  // namespace

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

}  // namespace mxgate
