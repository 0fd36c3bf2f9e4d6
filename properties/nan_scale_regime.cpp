// The "NaN scale over nonzero elements" regime of gemm.exact (nan_scale_regime.h).
#include "properties/nan_scale_regime.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "properties/case.h"
#include "properties/gemm_cases.h"
#include "properties/props.h"
#include "reference/accumulator_exact.h"
#include "reference/format.h"

namespace mxgate::properties {

bool takes_nan_scale(const impl::Op& op) {
  return (op.family == impl::Family::kGemmMx || op.family == impl::Family::kGemmBlock) &&
         gemm_accepts(op);
}

rc::Gen<bool> gen_nan_scale(const impl::Op& op) {
  if (!takes_nan_scale(op)) return rc::gen::just(false);
  if (op.family == impl::Family::kGemmMx) return pick<bool>({false, false, false, true});
  return pick<bool>({false, false, false, false, false, false, false, true});
}

std::vector<std::string> plant_nan_scale(const impl::Op& op, Operands& o, uint64_t seed,
                                         const AccumulatorModel& model) {
  if (!takes_nan_scale(op)) {
    throw CaseError("case field 'edge=" + std::string(kNanScaleEdge) +
                    "' needs an MX or block GEMM, not " + op.name);
  }
  GemmProblem& p = o.problem;
  if (p.a_scale.empty() || o.m == 0 || o.k == 0) {
    throw CaseError("case field 'edge=" + std::string(kNanScaleEdge) + "' needs A scales");
  }
  const bool mx = op.family == impl::Family::kGemmMx;
  const std::size_t rows = p.a_scale_rows(), cols = p.a_scale_cols();
  const std::size_t rb = (seed >> 3) % rows, kb = (seed >> 11) % cols;
  const std::size_t r0 = rb * p.blocks.a_m, r1 = std::min(o.m, r0 + p.blocks.a_m);
  const std::size_t k0 = kb * p.blocks.a_k, k1 = std::min(o.k, k0 + p.blocks.a_k);
  // Element (row, kk) of A (or B) set to v, its code and the value the reference sees.
  const auto set = [&](bool a, std::size_t row, std::size_t kk, float v) {
    (a ? p.a : p.b)[row * o.k + kk] = v;
    (a ? o.a : o.b)[row * o.k + kk] = fp8_code(gemm_element_format(a ? o.types.a : o.types.b), v);
  };
  for (std::size_t kk = k0; kk < k1; ++kk) {
    for (std::size_t i = 0; i < o.m; ++i) set(true, i, kk, 0.0f);
    for (std::size_t j = 0; j < o.n; ++j) set(false, j, kk, 1.0f);
  }
  // The self-check before the block's +1s and its NaN (no exact-mode problem holds a NaN): the
  // K range contributes zero to every output, the rest is the fingerprint's.
  std::string why;
  if (o.m * o.n * o.k <= (std::size_t{1} << 20) && !is_exact_mode(p, model, &why)) {
    throw std::logic_error("NaN-scale operands are not exact-mode in " + model.name + ": " + why);
  }
  for (std::size_t i = r0; i < r1; ++i) {
    for (std::size_t kk = k0; kk < k1; ++kk) set(true, i, kk, 1.0f);
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  p.a_scale[rb * cols + kb] = nan;
  if (mx) {
    o.a_e8m0[rb * cols + kb] = 0xFF;
  } else {
    o.a_f32[rb * cols + kb] = nan;  // a UE8M0 op reads its exponent byte: 0xFF
  }
  return {"edge:" + std::string(kNanScaleEdge)};
}

}  // namespace mxgate::properties
