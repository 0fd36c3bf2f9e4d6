// The "one K tile, an all-zero row" regime of gemm.exact (zero_row_regime.h).
#include "properties/zero_row_regime.h"

#include <algorithm>
#include <stdexcept>

#include "properties/case.h"
#include "properties/gemm_cases.h"
#include "properties/props.h"
#include "reference/accumulator_exact.h"
#include "reference/format.h"

namespace mxgate::properties {

namespace {

// A block GEMM with fp32 scales and per-row A scales along K: the per-channel quantization of
// the report (a block GEMM's B may hold per-row scales too, or 128 x 128 blocks).
bool takes_regime(const impl::Op& op) {
  const impl::Contract& c = op.contract;
  return op.family == impl::Family::kGemmBlock && c.scale_dtype == impl::Dtype::kF32 &&
         c.a_block_rows == 1 && gemm_accepts(op);
}

const char* scale_name(std::size_t i) {
  static const char* const kNames[3] = {"1e-30", "min_normal", "subnormal"};
  return kNames[i];
}

}  // namespace

std::vector<std::size_t> zero_row_ks(const impl::Op& op) {
  std::vector<std::size_t> out;
  if (!takes_regime(op)) return out;
  for (std::size_t k : {static_cast<std::size_t>(op.contract.a_block_cols), std::size_t{128}}) {
    if (k != 0 && op.contract.k.admits(k) && std::find(out.begin(), out.end(), k) == out.end()) {
      out.push_back(k);
    }
  }
  return out;
}

rc::Gen<std::size_t> gen_zero_row_k(const impl::Op& op) {
  const std::vector<std::size_t> ks = zero_row_ks(op);
  if (ks.empty()) return rc::gen::just(std::size_t{0});
  std::vector<std::size_t> choice(7 * ks.size(), 0);
  choice.insert(choice.end(), ks.begin(), ks.end());
  return pick(std::move(choice));
}

std::vector<std::string> plant_zero_row(const impl::Op& op, Operands& o, uint64_t seed,
                                        const AccumulatorModel& model) {
  if (!takes_regime(op)) {
    throw CaseError("case field 'edge' needs a block GEMM with fp32 per-row A scales, not " +
                    op.name);
  }
  GemmProblem& p = o.problem;
  const std::size_t pick_scale = (seed >> 5) % 3;
  const float tiny = kZeroRowScales[pick_scale];
  // The zero codes of an operand's element format, its rows' values and scales.
  const auto zero_row = [&](bool a, std::size_t row) {
    const uint8_t zero = fp8_code(gemm_element_format(a ? o.types.a : o.types.b), 0.0f);
    Bytes& codes = a ? o.a : o.b;
    std::vector<float>& values = a ? p.a : p.b;
    std::fill(codes.begin() + static_cast<std::ptrdiff_t>(row * o.k),
              codes.begin() + static_cast<std::ptrdiff_t>((row + 1) * o.k), zero);
    std::fill(values.begin() + static_cast<std::ptrdiff_t>(row * o.k),
              values.begin() + static_cast<std::ptrdiff_t>((row + 1) * o.k), 0.0f);
  };
  const auto set_scales = [&](bool a, std::size_t row, float v) {
    const std::size_t cols = a ? p.a_scale_cols() : p.b_scale_cols();
    std::vector<float>& logical = a ? o.a_f32 : o.b_f32;
    std::vector<float>& seen = a ? p.a_scale : p.b_scale;
    for (std::size_t c = 0; c < cols; ++c) logical[row * cols + c] = seen[row * cols + c] = v;
  };
  const std::size_t a_row = (seed >> 3) % o.m;
  zero_row(true, a_row);
  const bool b_too = (seed >> 7) % 4 == 3 && o.n > 1;
  const std::size_t b_row = (seed >> 9) % o.n;
  const bool b_per_row = p.blocks.b_n == 1;
  if (b_too) zero_row(false, b_row);
  // The self-check (is_exact_mode takes power-of-two scales only) on the twin with 2^-100 for
  // 1e-30 (the same binade): the zero rows' terms are zero under either, the other rows' untouched.
  const auto plant_scales = [&](float v) {
    set_scales(true, a_row, v);
    if (b_too && b_per_row) set_scales(false, b_row, v);
    apply_scale_rule(op, o);  // a UE8M0 op sees E8M0 values (idempotent on powers of two)
  };
  plant_scales(pick_scale == 0 ? 0x1p-100f : tiny);
  std::string why;
  if (o.m * o.n * o.k <= (std::size_t{1} << 20) && !is_exact_mode(p, model, &why)) {
    throw std::logic_error("zero-row operands are not exact-mode in " + model.name + ": " + why);
  }
  plant_scales(tiny);
  const std::vector<std::size_t> ks = zero_row_ks(op);
  std::vector<std::string> tags = {std::find(ks.begin(), ks.end(), o.k) != ks.end()
                                       ? "edge:" + std::string(kZeroRowEdge)
                                       : std::string("edge:zero_row"),
                                   "edge:zero_row_scale:" + std::string(scale_name(pick_scale))};
  if (b_too) tags.push_back("edge:zero_b_row");
  return tags;
}

}  // namespace mxgate::properties
