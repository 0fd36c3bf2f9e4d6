#include "dispatch/operand_layouts.h"

namespace mxgate::dispatch {
namespace {

using contract::Layout;
using contract::layout_bit;

}  // namespace

std::string_view to_string(ActScaleOrder o) {
  switch (o) {
    case ActScaleOrder::kNone:
      return "none";
    case ActScaleOrder::kRowMajor:
      return "row_major";
    case ActScaleOrder::kColMajor:
      return "col_major";
  }
  return "?";
}

std::string_view to_string(WeightLayout w) {
  switch (w) {
    case WeightLayout::kNone:
      return "none";
    case WeightLayout::kPlain:
      return "plain";
    case WeightLayout::kAiterPreshuffled:
      return "aiter_preshuffled";
  }
  return "?";
}

ActScaleOrder act_scale_order(gpu::Kernel k) {
  // The scaled GEMMs read activation scales; a TMA-aligned As is column-major too.
  const contract::Contract& c = k->contract;
  if (k->family != contract::Family::kGemmBlock && k->family != contract::Family::kGemmMx) {
    return ActScaleOrder::kNone;
  }
  if (c.a_scale_layouts & layout_bit(Layout::kRowMajor)) return ActScaleOrder::kRowMajor;
  if (c.a_scale_layouts & (layout_bit(Layout::kColMajor) | layout_bit(Layout::kTmaColMajor))) {
    return ActScaleOrder::kColMajor;
  }
  return ActScaleOrder::kNone;
}

WeightLayout weight_layout(gpu::Kernel k) {
  const contract::Contract& c = k->contract;
  if (c.b_layouts & layout_bit(Layout::kAiterShuffle16x16)) return WeightLayout::kAiterPreshuffled;
  if (c.b_layouts & layout_bit(Layout::kRowMajor)) return WeightLayout::kPlain;
  return WeightLayout::kNone;
}

}  // namespace mxgate::dispatch
