#include "reference/quant_conventions.h"

#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace mxgate {

namespace {

// MXINT8's element cast under ocp_mx (docs/formats.md §1.5): |x| * 64 rounded to nearest even,
// saturating to +-127 (int_symmetric, as microxcaling clamps; the spec's -128 is not written), NaN
// undefined (a NaN or Inf block's elements are named 0 by nan_block_code).
constexpr EncodePolicy kMxint8Ocp{Rounding::kNearestEven, Overflow::kSaturate,
                                  NanPolicy::kUndefined, NegZeroInput::kKeep, IntRange::kSymmetric};

}  // namespace

std::optional<MxPolicy> mx_policy(const Convention& c, Format element) {
  if (is_twos_complement(element)) {
    // MXINT8 has one MX quantizer, OCP MX v1.0 §6.3 with emax_elem 0: shared exponent
    // floor(log2 amax) on the bits of amax, NaN / Inf in a block -> scale 0xFF. No convention of
    // convention.cpp casts single values to it, so it is not among their element formats.
    if (c.name != "ocp_mx") return std::nullopt;
    MxPolicy p;
    p.rule = MxScaleRule::kFloor;
    p.amax_nan = AmaxNan::kPropagate;
    p.nan_block_code = 0;
    p.element = kMxint8Ocp;
    return p;
  }
  if (!defines(c, element)) return std::nullopt;
  MxPolicy p;
  p.element = element_policy(c, element);
  const std::string_view n = c.name;
  const bool sub_byte = has_no_specials(element);
  if (n == "triton_mxfp4" || n == "triton_mxfp4_half_up") {
    // docs/fp4.md §4.2: default DequantScaleRoundingMode.ROUND_UP on fl32(amax / 6); tl.max ignores
    // NaN (propagate_nan defaults to False); quant_scale = rounded == 0 ? 0 : 1 / rounded.
    p.rule = MxScaleRule::kCeilOfQuotient;
    p.amax_nan = AmaxNan::kIgnore;
    p.reciprocal = MxReciprocal::kZeroForZeroByte;
    p.truncate_below_one_to_2m23 = c.truncate_below_one_to_2m23;
    return p;
  }
  if (n == "aiter_fp4_fallback" || n == "aiter_fp4_fallback_pre3992" || n == "aiter_gfx950") {
    // docs/fp4.md §4.3: quant_mxfp4.cu: fmaxf amax from 0 (NaN ignored), RoundUp on
    // fl32(amax * (1/6)), dequant float exponent << 23, quant_scale 0 when that is 0.
    p.rule = MxScaleRule::kRceil;
    p.rceil_encode = E8m0Encode::kAiterCeil;
    p.amax_nan = AmaxNan::kIgnore;
    p.reciprocal = MxReciprocal::kZeroForZeroByte;
    return p;
  }
  if (n == "flashinfer_nvfp4") {
    if (!sub_byte) return std::nullopt;
    // docs/fp4.md §4.4: cvt_warp_fp16_to_fp4<UE8M0_SF>: fl32(amax * rcp(6)) then
    // __nv_cvt_float_to_e8m0(SATFINITE, RoundPosInf); NaN inputs are not modelled (element NaN
    // undefined).
    p.rule = MxScaleRule::kRceil;
    p.rceil_encode = E8m0Encode::kCeilSat;
    p.amax_nan = AmaxNan::kIgnore;
    return p;
  }
  if (n == "ocp_mx" && sub_byte) {
    // OCP MX v1.0 §6.3: FLOOR with emax 2 (E2M1, E2M3) or 4 (E3M2); a NaN block's elements are
    // undefined, named 0 here (docs/fp4.md §4.1).
    p.rule = MxScaleRule::kFloor;
    p.amax_nan = AmaxNan::kPropagate;
    p.nan_block_code = 0;
    return p;
  }
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
