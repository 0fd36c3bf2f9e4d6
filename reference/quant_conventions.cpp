#include "reference/quant_conventions.h"

#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace mxgate {

std::optional<MxPolicy> mx_policy(const Convention& c) {
  MxPolicy p;
  p.element = c.element;
  const std::string_view n = c.name;
  if (n == "ocp_mx" || n == "torchao_floor") {
    // docs/formats.md §3.1, §3.3: FLOOR, NaN (and Inf) in a block -> scale 0xFF, zero block ->
    // byte 0.
    p.rule = MxScaleRule::kFloor;
    p.amax_nan = AmaxNan::kPropagate;
  } else if (n == "torchao_rceil") {
    p.rule = MxScaleRule::kRceil;
    p.rceil_encode = E8m0Encode::kCeilNoSat;  // _f32_to_e8m0_rceil: no satfinite
    p.amax_nan = AmaxNan::kPropagate;
  } else if (n == "transformer_engine") {
    // docs/formats.md §3.4: fmaxf amax (NaN ignored), float_to_e8m0 saturating: Inf in a
    // block -> 0xFE.
    p.rule = MxScaleRule::kRceil;
    p.rceil_encode = E8m0Encode::kCeilSat;
    p.amax_nan = AmaxNan::kIgnore;
  } else if (n == "aiter_hip") {
    // docs/formats.md §3.6: absMax seeded with 1e-10 (zero block -> byte 85), RoundUp with
    // the subnormal bump.
    p.rule = MxScaleRule::kRceil;
    p.rceil_encode = E8m0Encode::kAiterCeil;
    p.amax_nan = AmaxNan::kIgnore;
    p.amax_floor = 1e-10f;
  } else if (n == "aiter_triton") {
    // docs/formats.md §3.6: 0x200000 bump; tl.max NaN semantics unverified, NaN amax taken as
    // propagated (canonical NaN -> byte 254).
    p.rule = MxScaleRule::kAiterTriton;
    p.amax_nan = AmaxNan::kPropagate;
  } else if (n == "vllm_mxfp8_exp2") {
    // docs/formats.md §3.5 gen-2 (@00134422): floor(log2(amax.clamp(min=tiny))) + 127, no
    // emax offset.
    p.rule = MxScaleRule::kNoOffset;
    p.amax_nan = AmaxNan::kPropagate;
    p.amax_floor = std::numeric_limits<float>::min();
  } else {
    return std::nullopt;
  }
  return p;
}

std::optional<BlockPolicy> block_policy(const Convention& c, Format element, bool ue8m0) {
  BlockPolicy p;
  p.element = c.element;
  const std::string_view n = c.name;
  if (n == "vllm_group_quant") {
    // docs/formats.md §5.1: eps 1e-10 (fmaxf, NaN ignored), y_s = amax / max, UE8M0 via log2f with
    // the CUDA kernel's 1e-10 clamp, q = clamp(x / y_s), fnuz max 224.
    p.fp8_max = element == Format::kE4M3FNUZ ? 224.0f : max_finite(element);
    p.eps = 1e-10f;
    p.amax_nan = AmaxNan::kIgnore;
    p.ue8m0 = ue8m0 ? Ue8m0::kLog2fCeil : Ue8m0::kNone;
    p.ue8m0_floor = 1e-10f;
    p.scaling = ElementScaling::kDivide;
    p.clamp_before_cast = true;
  } else if (n == "deepgemm") {
    // docs/formats.md §5.2: amax.clamp(1e-4) (torch amax propagates NaN), sf = amax / 448,
    // ceil_to_ue8m0, x * (1.0 / sf) then cast.
    p.fp8_max = max_finite(element);
    p.eps = 1e-4f;
    p.amax_nan = AmaxNan::kPropagate;
    p.ue8m0 = ue8m0 ? Ue8m0::kDeepGemmClamp : Ue8m0::kNone;
    p.scaling = ElementScaling::kMultiplyReciprocal;
    p.clamp_before_cast = false;
  } else if (n == "aiter_hip") {
    // docs/formats.md §3.6, §5.4: per_1x128 HIP quant seeds absMax with 1e-10, data * (1 / scale).
    p.fp8_max = max_finite(element);
    p.eps = 1e-10f;
    p.amax_nan = AmaxNan::kIgnore;
    p.ue8m0 = ue8m0 ? Ue8m0::kBitCeil : Ue8m0::kNone;
    p.scaling = ElementScaling::kMultiplyReciprocal;
    p.clamp_before_cast = false;
  } else {
    return std::nullopt;
  }
  return p;
}

MxPolicy require_mx_policy(const Convention& c) {
  if (auto p = mx_policy(c)) return *p;
  throw std::invalid_argument("convention '" + std::string(c.name) + "' has no MX quantizer");
}

BlockPolicy require_block_policy(const Convention& c, Format element, bool ue8m0) {
  if (auto p = block_policy(c, element, ue8m0)) return *p;
  throw std::invalid_argument("convention '" + std::string(c.name) + "' has no block quantizer");
}

}  // namespace mxgate
