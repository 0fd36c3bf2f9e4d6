// Bound mode (gemm_oracle.h): the forward-error bound of a floating accumulator (AccumModel)
// around the exact result, and the check of a kernel's output against it.
#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/gemm_oracle.h"
#include "reference/gemm_shared.h"

// The bound is evaluated in double exactly as the derivation in gemm_oracle.h writes it: Clang
// would contract a*b + c into an FMA by default and move the bound's last bits.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace mxgate {

using std::size_t;

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
  out.abs_sum = exact_gemm_fp64(magnitude_problem(unscaled));

  const size_t len = model.block_k == 0 ? p.k : std::min(model.block_k, p.k);
  const size_t blocks = (p.k + len - 1) / len;
  const double r = model.product_roundings, s = model.partial_roundings;
  const double n_round = r + static_cast<double>(len - 1) + s + static_cast<double>(blocks - 1);
  const double nu = n_round * model.unit_roundoff;
  const double gamma = nu < 1 ? nu / (1 - nu) : HUGE_VAL;
  const double ops = static_cast<double>(p.k) * (r + 1) + static_cast<double>(blocks) * (s + 1);

  // Largest scale factor an absolute error can still be multiplied by, per row / column.
  const ScaleAmplification amp = scale_amplification(p);

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
      const double eta = model.underflow_eta * ops * amp.a[i] * amp.b[j];
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
    throw std::invalid_argument("check_bound: output is " + std::to_string(actual.rows) + "x" +
                                std::to_string(actual.cols) + ", bounds are " +
                                std::to_string(bounds.rows) + "x" + std::to_string(bounds.cols));
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

}  // namespace mxgate
