#include "gpu/contract.h"

namespace mxgate::gpu {
namespace {

using AO = ActScaleOrder;
using WL = WeightLayout;
using SD = ScaleDtype;
using contract::Layout;
using contract::layout_bit;

std::string clause(Kernel k, const std::string& text) {
  return std::string(kernel_name(k)) + ": " + text;
}

}  // namespace

std::string_view to_string(ActScaleOrder o) {
  switch (o) {
    case AO::kNone:
      return "none";
    case AO::kRowMajor:
      return "row_major";
    case AO::kColMajor:
      return "col_major";
  }
  return "?";
}

std::string_view to_string(WeightLayout w) {
  switch (w) {
    case WL::kNone:
      return "none";
    case WL::kPlain:
      return "plain";
    case WL::kAiterPreshuffled:
      return "aiter_preshuffled";
  }
  return "?";
}

std::string_view to_string(ScaleDtype s) {
  switch (s) {
    case SD::kNone:
      return "none";
    case SD::kE8m0:
      return "e8m0";
    case SD::kFp32:
      return "fp32";
  }
  return "?";
}

ActScaleOrder act_scale_order(Kernel k) {
  // The scaled GEMMs read activation scales; a TMA-aligned As is column-major too.
  const contract::Contract& c = k->contract;
  if (k->family != contract::Family::kGemmBlock && k->family != contract::Family::kGemmMx) {
    return AO::kNone;
  }
  if (c.a_scale_layouts & layout_bit(Layout::kRowMajor)) return AO::kRowMajor;
  if (c.a_scale_layouts & (layout_bit(Layout::kColMajor) | layout_bit(Layout::kTmaColMajor))) {
    return AO::kColMajor;
  }
  return AO::kNone;
}

WeightLayout weight_layout(Kernel k) {
  const contract::Contract& c = k->contract;
  if (c.b_layouts & layout_bit(Layout::kAiterShuffle16x16)) return WL::kAiterPreshuffled;
  if (c.b_layouts & layout_bit(Layout::kRowMajor)) return WL::kPlain;
  return WL::kNone;
}

ScaleDtype scale_dtype(Kernel k) {
  switch (k->contract.scale_dtype) {
    case contract::Dtype::kE8m0:
      return SD::kE8m0;
    case contract::Dtype::kF32:
      return SD::kFp32;
    default:
      return SD::kNone;
  }
}

std::optional<std::string> check_contract(Kernel k, const Shape& shape, const Layouts& layouts) {
  if (auto why = contract::check_dims(kernel_name(k), k->contract, shape.m, shape.n, shape.k)) {
    return why;
  }
  const AO act = act_scale_order(k);
  if (layouts.act_scale != AO::kNone && layouts.act_scale != act) {
    return clause(k, "activation scales must be " + std::string(to_string(act)) + ", got " +
                         std::string(to_string(layouts.act_scale)));
  }
  const WL weight = weight_layout(k);
  if (layouts.weight != WL::kNone && layouts.weight != weight) {
    return clause(k, "weight layout must be " + std::string(to_string(weight)) + ", got " +
                         std::string(to_string(layouts.weight)));
  }
  const SD scale = scale_dtype(k);
  if (layouts.scale != SD::kNone && layouts.scale != scale) {
    return clause(k, "scale dtype must be " + std::string(to_string(scale)) + ", got " +
                         std::string(to_string(layouts.scale)));
  }
  return std::nullopt;
}

}  // namespace mxgate::gpu
