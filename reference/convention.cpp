#include "reference/convention.h"

#include <array>
#include <cmath>
#include <stdexcept>

namespace mxgate {
namespace {

constexpr uint32_t kE4m3 = format_bit(Format::kE4M3FN);
constexpr uint32_t kE5m2 = format_bit(Format::kE5M2);
constexpr uint32_t kOcpFp8 = kE4m3 | kE5m2;
constexpr uint32_t kAllFp8 =
    kOcpFp8 | format_bit(Format::kE4M3FNUZ) | format_bit(Format::kE5M2FNUZ);
constexpr uint32_t kFp4 = format_bit(Format::kE2M1);
constexpr uint32_t kFp4Fp6 = kFp4 | format_bit(Format::kE2M3) | format_bit(Format::kE3M2);
// ml_dtypes' other 8-bit formats (docs/formats.md §1.4): only its own convention takes them.
constexpr uint32_t kMlDtypesOnly =
    format_bit(Format::kE3M4) | format_bit(Format::kE4M3IEEE) | format_bit(Format::kE4M3B11FNUZ);

constexpr EncodePolicy kSatFinite{Rounding::kNearestEven, Overflow::kSaturate,
                                  NanPolicy::kCanonical};
constexpr EncodePolicy kTorchCast{Rounding::kNearestEven, Overflow::kToInf, NanPolicy::kKeepSign};
// As torch but a NaN becomes +-quiet_NaN(): E5M2 0x7E / 0xFE (measured, docs/conventions.md §3.7).
constexpr EncodePolicy kMlDtypesCast{Rounding::kNearestEven, Overflow::kToInf,
                                     NanPolicy::kQuietKeepSign};

// FP4 / FP6 element policies (docs/fp4.md §3): all saturate; they differ in ties and NaN.
constexpr EncodePolicy kSubOcp{Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kUndefined};
constexpr EncodePolicy kSubTorchao{Rounding::kNearestEven, Overflow::kSaturate,
                                   NanPolicy::kTorchaoNormalPath};
constexpr EncodePolicy kSubMlDtypes{Rounding::kNearestEven, Overflow::kSaturate,
                                    NanPolicy::kToZeroSignFlipped};
constexpr EncodePolicy kSubTritonRne{Rounding::kNearestEven, Overflow::kSaturate,
                                     NanPolicy::kToMaxKeepSign};
constexpr EncodePolicy kSubTritonHalfUp{Rounding::kNearestAway, Overflow::kSaturate,
                                        NanPolicy::kToMaxKeepSign};
constexpr EncodePolicy kSubAiterFallback{Rounding::kNearestEven, Overflow::kSaturate,
                                         NanPolicy::kToPosZero};
constexpr EncodePolicy kSubAiterPre3992{Rounding::kNearestAway, Overflow::kSaturate,
                                        NanPolicy::kToPosZero};
constexpr EncodePolicy kSubTeRef{Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kToPosZero,
                                 NegZeroInput::kToPositive};

// Each source names the implementation and ends with its section of docs/conventions.md §2.
const std::array<Convention, 23> kConventions = {{
    {"ocp_mx",
     "OCP MX v1.0 §6.3 as torchao FLOOR and microxcaling implement it: normals saturate, Inf in a "
     "block gives NaN, scale = floor; FP4/FP6 NaN undefined (docs/fp4.md §3.3); "
     "docs/conventions.md §2.1",
     kOcpFp8 | kFp4Fp6,
     {Rounding::kNearestEven, Overflow::kSaturateInfToNaN, NanPolicy::kKeepSign},
     E8m0Encode::kFloor,
     E8m0Decode::kOcp,
     false,
     0.0f,
     kSubOcp},
    {"torchao_floor",
     "torchao to_mx FLOOR (mx_formats/mx_tensor.py): clamp(+-max) then cast, so Inf -> max; "
     "non-finite amax -> 0xFF; FP4/FP6 through custom_fp_utils._f32_to_floatx_unpacked "
     "(docs/fp4.md §3.2); docs/conventions.md §2.2",
     kOcpFp8 | kFp4Fp6,
     {Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kKeepSign},
     E8m0Encode::kFloor,
     E8m0Decode::kOcp,
     false,
     0.0f,
     kSubTorchao},
    {"torchao_rceil",
     "torchao to_mx RCEIL, _f32_to_e8m0_rceil (mx_formats/mx_tensor.py): ceil, no satfinite; "
     "FP4/FP6 as torchao_floor (docs/fp4.md §3.2); docs/conventions.md §2.3",
     kOcpFp8 | kFp4Fp6,
     {Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kKeepSign},
     E8m0Encode::kCeilNoSat,
     E8m0Decode::kOcp,
     false,
     0.0f,
     kSubTorchao},
    {"transformer_engine",
     "TE quantize_mxfp8.cuh, ptx::float_to_e8m0, static_cast<fp8e4m3> SATFINITE; "
     "docs/conventions.md §2.4",
     kOcpFp8, kSatFinite, E8m0Encode::kCeilSat, E8m0Decode::kOcp},
    {"cuda_satfinite",
     "cuda_fp8.hpp __NV_SATFINITE, __nv_fp8_e8m0 ctor = RoundPosInf + SATFINITE; measured on "
     "an H200; docs/conventions.md §2.5",
     kOcpFp8, kSatFinite, E8m0Encode::kCeilSat, E8m0Decode::kOcp},
    {"cuda_nosat",
     "cuda_fp8.hpp __NV_NOSAT: e4m3 overflow -> NaN, e5m2 -> Inf; e8m0 RoundPosInf NOSAT; "
     "measured on an H200; docs/conventions.md §2.6",
     kOcpFp8,
     {Rounding::kNearestEven, Overflow::kToInf, NanPolicy::kCanonical},
     E8m0Encode::kCeilNoSat,
     E8m0Decode::kOcp},
    {"torch_2_11",
     "PyTorch 2.11 c10 Float8_* casts, non-saturating; fp8e8m0fnu_from_fp32_value nearest ties "
     "up; measured; docs/conventions.md §2.7",
     kAllFp8, kTorchCast, E8m0Encode::kNearestTorch, E8m0Decode::kOcp},
    {"ml_dtypes",
     "ml_dtypes 0.6.0 ConvertImpl kSaturate=false: overflow -> infinity() (NaN for fn/fnuz); "
     "NaN -> +-quiet_NaN() (e5m2 0x7E); e8m0 0 and negatives -> NaN; float4_e2m1fn / float6_*: "
     "infinity() is max, quiet_NaN() is -0 (docs/fp4.md §3.1); float8_e3m4 / float8_e4m3 "
     "overflow -> Inf (0x70 / 0x78), NaN -> 0x78 / 0x7C, float8_e4m3b11fnuz -> 0x80 "
     "(docs/formats.md §1.4); docs/conventions.md §2.8",
     kAllFp8 | kFp4Fp6 | kMlDtypesOnly, kMlDtypesCast, E8m0Encode::kNearestMlDtypes,
     E8m0Decode::kOcp, false, 0.0f, kSubMlDtypes},
    {"triton_nvidia",
     "Triton 3.6 NVIDIA cvt.rn.satfinite for e4m3 and e5m2 incl. Inf; dot_scaled emulation "
     "decodes scales by shift then masks 0xFF to NaN; docs/conventions.md §2.9",
     kOcpFp8, kSatFinite, std::nullopt, E8m0Decode::kShiftMaskNan},
    {"aiter_hip",
     "AITER HIP: gfx942 fmed3 clamp then hardware cvt, Inf/NaN -> NaN; "
     "fp_f32_to_e8m0_scale<RoundUp> with subnormal bump, dequant float = exponent << 23; "
     "docs/conventions.md §2.10",
     kE4m3 | format_bit(Format::kE4M3FNUZ),
     {Rounding::kNearestEven, Overflow::kSaturateInfToNaN, NanPolicy::kCanonical},
     E8m0Encode::kAiterCeil,
     E8m0Decode::kShift},
    {"aiter_triton",
     "AITER Triton _mxfp8_quant_op: 0x200000 exponent bump; Triton AMD FP16_OVFL mode bit: "
     "finite overflow saturates, Inf -> NaN; e2m1 _mxfp4_quant_op as torchao (docs/fp4.md §2.2); "
     "docs/conventions.md §2.11",
     kOcpFp8 | kFp4,
     {Rounding::kNearestEven, Overflow::kSaturateInfToNaN, NanPolicy::kCanonical},
     E8m0Encode::kAiterTritonBump,
     E8m0Decode::kOcp,
     false,
     0.0f,
     kSubTorchao},
    {"vllm_group_quant",
     "vLLM per_token_group_quant_fp8: fminf(fmaxf(x, -max), max) then cast (NaN -> -max), "
     "UE8M0 scale exp2f(ceilf(log2f(y))); docs/conventions.md §2.12",
     kE4m3 | format_bit(Format::kE4M3FNUZ),
     {Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kToNegMax},
     E8m0Encode::kCeilViaLog2f,
     E8m0Decode::kOcp,
     /*clamp_before_cast=*/true,
     /*e4m3fnuz_clamp_max=*/224.0f},
    {"vllm_e8m0_shift",
     "vLLM _upcast_e8m0_to_fp32 / _cast_mxfp8_scales_to_bf16: byte << 23; torch casts "
     "otherwise; docs/conventions.md §2.13",
     kAllFp8, kTorchCast, E8m0Encode::kNearestTorch, E8m0Decode::kShift},
    {"vllm_mxfp8_exp2",
     "vLLM dequant_mxfp8_to_bf16 torch.exp2(scale - 127) on CUDA (measured 0x1.fffff8p-128 "
     "for byte 0); torch casts otherwise; docs/conventions.md §2.14",
     kAllFp8, kTorchCast, E8m0Encode::kNearestTorch, E8m0Decode::kExp2Cuda},
    {"deepgemm",
     "DeepGEMM ceil_to_ue8m0 clamp(1, 254), __nv_fp8x4_e4m3 SATFINITE; fast_pow2 builds "
     "scales as (e + 127) << 23; docs/conventions.md §2.15",
     kE4m3, kSatFinite, E8m0Encode::kDeepGemmClamp, E8m0Decode::kShift},
    // FP4-only implementations (docs/fp4.md §3). Their FP8 policy field is unused.
    {"triton_mxfp4",
     "triton_kernels downcast_to_mxfp (triton-lang/triton @0616e645, docs/fp4.md §3.4): e2m1 by "
     "bits, RTNE with a sticky that misses bits of |x| < 1, saturate, NaN -> max; scale "
     "ROUND_UP = ceil pow2 of fl32(amax/6); upcast 0x00 = 2^-127, 0xFF = NaN; "
     "docs/conventions.md §2.16",
     kFp4, kSatFinite, std::nullopt, E8m0Decode::kOcp, false, 0.0f, kSubTritonRne, true},
    {"triton_mxfp4_half_up",
     "triton_kernels downcast_to_mxfp before its RTNE fix (docs/fp4.md §3.4): e2m1 rounds half "
     "up (ties away), saturate, NaN -> max; docs/conventions.md §2.17",
     kFp4, kSatFinite, std::nullopt, E8m0Decode::kOcp, false, 0.0f, kSubTritonHalfUp},
    {"aiter_fp4_fallback",
     "AITER csrc/kernels/quant_mxfp4.cu even_round_e2m1 (non-gfx950) after ROCm/aiter#3992: "
     "RNE thresholds, NaN -> +0; scale fp_f32_to_e8m0_scale<RoundUp> (docs/fp4.md §3.5); "
     "docs/conventions.md §2.18",
     kFp4, kSatFinite, E8m0Encode::kAiterCeil, E8m0Decode::kShift, false, 0.0f, kSubAiterFallback},
    {"aiter_fp4_fallback_pre3992",
     "AITER even_round_e2m1 before ROCm/aiter#3992: >= at every midpoint, ties away from zero "
     "(docs/fp4.md §3.5); docs/conventions.md §2.19",
     kFp4, kSatFinite, E8m0Encode::kAiterCeil, E8m0Decode::kShift, false, 0.0f, kSubAiterPre3992},
    {"aiter_gfx950",
     "AITER gfx950 v_cvt_scalef32_pk_fp4_{bf16,f16} (quant_mxfp4.cu): RNE per ROCm/aiter#3992, "
     "saturate; NaN unmeasured (no gfx950 here): undefined (docs/fp4.md §3.5); "
     "docs/conventions.md §2.20",
     kFp4, kSatFinite, E8m0Encode::kAiterCeil, E8m0Decode::kShift, false, 0.0f, kSubOcp},
    {"te_nvfp4_ref",
     "TransformerEngine custom_recipes/reference_nvfp4.py cast_to_fp4x2 (@bce8162f): RNE "
     "thresholds after clamp(+-6), NaN -> +0, -0.0 -> +0 (docs/fp4.md §3.6); "
     "docs/conventions.md §2.21",
     kFp4, kSatFinite, std::nullopt, E8m0Decode::kOcp, false, 0.0f, kSubTeRef},
    {"flashinfer_nvfp4",
     "FlashInfer quantization_utils.cuh cvt_warp_fp16_to_fp4: cvt.rn.satfinite.e2m1x2.f32; NaN "
     "unmeasured (sm_100 only): undefined; mxfp4 scale __nv_cvt_float_to_e8m0 RoundPosInf "
     "SATFINITE (docs/fp4.md §3.7); docs/conventions.md §2.22",
     kFp4, kSatFinite, E8m0Encode::kCeilSat, E8m0Decode::kOcp, false, 0.0f, kSubOcp},
    {"torchao_nvfp4",
     "torchao nvfp4_tensor.py nvfp4_quantize (@d1e0e2d8): clamp(+-6) then "
     "_f32_to_floatx_unpacked (docs/fp4.md §3.2, §6.2); docs/conventions.md §2.23",
     kFp4, kSatFinite, std::nullopt, E8m0Decode::kOcp, false, 0.0f, kSubTorchao},
}};

std::string covered_formats(const Convention& c) {
  std::string out;
  for (const FormatInfo& fi : all_formats()) {
    if (c.element_formats & format_bit(fi.format)) {
      if (!out.empty()) out += ", ";
      out += fi.name;
    }
  }
  return out;
}

}  // namespace

std::span<const Convention> all_conventions() { return kConventions; }

const Convention* find_convention(std::string_view name) {
  for (const Convention& c : kConventions) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const Convention& require_convention(std::string_view name) {
  if (const Convention* c = find_convention(name)) return *c;
  throw std::invalid_argument("no convention '" + std::string(name) +
                              "' (known: " + convention_names() + ")");
}

std::string convention_names() {
  std::string out;
  for (const Convention& c : kConventions) {
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

bool defines(const Convention& c, Format f) {
  switch (f) {
    case Format::kE8M0:  // decoding is always defined; encode_with checks the encoder
    case Format::kBF16:
    case Format::kFP16:
    case Format::kFP32:
      return true;
    default:
      return (c.element_formats & format_bit(f)) != 0;
  }
}

const EncodePolicy& element_policy(const Convention& c, Format f) {
  return has_no_specials(f) ? c.sub_byte : c.element;
}

uint32_t encode_with(const Convention& c, Format f, float x) {
  if (f == Format::kE8M0) {
    if (!c.e8m0) {
      throw std::invalid_argument("convention '" + std::string(c.name) +
                                  "' defines no fp32 -> e8m0 encoder");
    }
    return encode_e8m0(x, *c.e8m0);
  }
  if (f == Format::kBF16 || f == Format::kFP16 || f == Format::kFP32) {
    return encode(f, x, kIeeeDefault);
  }
  if (!defines(c, f)) {
    throw std::invalid_argument("convention '" + std::string(c.name) + "' does not define format " +
                                std::string(info(f).name) + " (it defines " + covered_formats(c) +
                                ", bf16, fp16, e8m0)");
  }
  return encode(f, pre_cast(c, f, x), element_policy(c, f));
}

float pre_cast(const Convention& c, Format f, float x) {
  if (c.truncate_below_one_to_2m23 && has_no_specials(f)) return truncate_below_one_to_2m23(x);
  if (!c.clamp_before_cast) return x;
  const float m = (f == Format::kE4M3FNUZ && c.e4m3fnuz_clamp_max > 0.0f) ? c.e4m3fnuz_clamp_max
                                                                          : max_finite(f);
  return clamp_nan_to_low(x, m);
}

float decode_with(const Convention& c, Format f, uint32_t code) {
  const int bits = info(f).bits;
  if (bits < 32 && (code >> bits) != 0) {
    throw std::invalid_argument("code " + std::to_string(code) + " does not fit the " +
                                std::to_string(bits) + "-bit format " + std::string(info(f).name));
  }
  if (f == Format::kE8M0) return decode_e8m0(static_cast<uint8_t>(code), c.e8m0_decode);
  // MXINT8 (docs/formats.md §1.5): no convention casts single values to it, but its codes decode
  // one way under every convention (two's complement / 64), as the MX dequantizers read them.
  if (!defines(c, f) && !is_twos_complement(f)) {
    throw std::invalid_argument("convention '" + std::string(c.name) + "' does not define format " +
                                std::string(info(f).name) + " (it defines " + covered_formats(c) +
                                ", bf16, fp16, e8m0)");
  }
  return decode(f, code);
}

}  // namespace mxgate
