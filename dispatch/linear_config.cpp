#include "dispatch/linear_config.h"

#include <array>
#include <utility>

#include "common/name_table.h"

namespace mxgate::dispatch {
namespace {

constexpr NameTable<Scheme, 3> kSchemes = {{
    {Scheme::kMxfp8, "mxfp8"},
    {Scheme::kFp8Block, "fp8_block"},
    {Scheme::kBf16, "bf16"},
}};
constexpr NameTable<WeightScaleDtype, 2> kScaleDtypes = {{
    {WeightScaleDtype::kE8m0, "e8m0"},
    {WeightScaleDtype::kFp32, "fp32"},
}};
constexpr NameTable<Platform, 4> kPlatforms = {{
    {Platform::kGfx950, "gfx950"},
    {Platform::kGfx942, "gfx942"},
    {Platform::kSm90, "sm90"},
    {Platform::kHost, "host"},
}};
constexpr NameTable<LoadAction, 3> kLoadActions = {{
    {LoadAction::kDequantizeWeightToBf16, "dequantize_weight_to_bf16"},
    {LoadAction::kUpcastWeightScaleE8m0ToFp32, "upcast_weight_scale_e8m0_to_fp32"},
    {LoadAction::kPreshuffleWeight, "preshuffle_weight"},
}};
constexpr NameTable<ApplyPath, 5> kApplyPaths = {{
    {ApplyPath::kMxfp8DotScaled, "mxfp8_dot_scaled"},
    {ApplyPath::kMxfp8DequantPerStep, "mxfp8_dequant_per_step"},
    {ApplyPath::kBf16Gemm, "bf16_gemm"},
    {ApplyPath::kFp8Blockscale, "fp8_blockscale"},
    {ApplyPath::kFp8BlockscaleBpreshuffle, "fp8_blockscale_bpreshuffle"},
}};

}  // namespace

std::string_view to_string(Scheme s) { return name_in(kSchemes, s); }
std::string_view to_string(WeightScaleDtype d) { return name_in(kScaleDtypes, d); }
std::string_view to_string(Platform p) { return name_in(kPlatforms, p); }
std::string_view to_string(LoadAction a) { return name_in(kLoadActions, a); }
std::string_view to_string(ApplyPath p) { return name_in(kApplyPaths, p); }
std::optional<Scheme> parse_scheme(std::string_view s) { return parse_in(kSchemes, s); }
std::optional<WeightScaleDtype> parse_weight_scale_dtype(std::string_view s) {
  return parse_in(kScaleDtypes, s);
}
std::optional<Platform> parse_platform(std::string_view s) { return parse_in(kPlatforms, s); }

std::string describe(const LinearConfig& c) {
  std::string out = std::string(to_string(c.platform)) + " " + std::string(to_string(c.scheme)) +
                    " N=" + std::to_string(c.n) + " K=" + std::to_string(c.k);
  if (c.scheme != Scheme::kBf16) {
    out += " weight_scale=" + std::string(to_string(c.weight_scale));
  }
  if (c.is_bmm || c.skip_weight_relayout) {
    out += " flags=";
    if (c.is_bmm) out += "is_bmm";
    if (c.is_bmm && c.skip_weight_relayout) out += ",";
    if (c.skip_weight_relayout) out += "skip_weight_relayout";
  }
  return out;
}

}  // namespace mxgate::dispatch
