#include "gpu/contract.h"

#include <array>

namespace mxgate::gpu {
namespace {

using AO = ActScaleOrder;
using WL = WeightLayout;
using SD = ScaleDtype;

// Orders mirror the comments in kernels/gemm.h.
constexpr AccumOrder kMxPerPartial32{32, true, 1, 2};
constexpr AccumOrder kMxPerProduct32{32, false, 3, 0};
constexpr AccumOrder kBlockPerPartial128{128, true, 1, 2};
constexpr AccumOrder kWholeK{0, true, 1, 0};

const std::array<Contract, kKernelCount> kContracts = {{
    {Kernel::kQuantizeMx, 1, 1, 1, AO::kNone, WL::kNone, SD::kE8m0, std::nullopt,
     "blocks of 32 along K; a short last block is padded with 0 (docs/formats.md §3)"},
    {Kernel::kQuantizeMxHw, 1, 1, 1, AO::kNone, WL::kNone, SD::kE8m0, std::nullopt,
     "as quantize_mx; elements by cvt.rn.satfinite.e4m3x2.f32 (docs/formats.md §1.2.1)"},
    {Kernel::kDequantMxToBf16, 1, 1, 1, AO::kNone, WL::kNone, SD::kE8m0, std::nullopt,
     "fp32 product, one RNE to bf16 (docs/formats.md §3.5)"},
    {Kernel::kUpcastE8m0, 1, 1, 1, AO::kNone, WL::kNone, SD::kE8m0, std::nullopt,
     "correct or shift rule (docs/formats.md §2.2)"},
    {Kernel::kPreshuffleWeight, 1, 16, 32, AO::kNone, WL::kPlain, SD::kNone, std::nullopt,
     "AITER shuffle_weight asserts N % 16 == 0 and K % 32 == 0 (docs/layouts.md §1)"},
    {Kernel::kGemmMxDotScaled, 1, 1, 128, AO::kRowMajor, WL::kPlain, SD::kE8m0, kMxPerPartial32,
     "tl.dot_scaled with BLOCK_K = 128, unmasked K tiles (docs/formats.md §4)"},
    {Kernel::kGemmMxDequant, 1, 1, 32, AO::kRowMajor, WL::kPlain, SD::kE8m0, kMxPerProduct32,
     "one E8M0 scale per 32 along K; K masked"},
    {Kernel::kGemmBlockscale, 1, 1, 1, AO::kRowMajor, WL::kPlain, SD::kFp32, kBlockPerPartial128,
     "AITER gemm_a8w8_blockscale (docs/layouts.md §2.1); K masked"},
    {Kernel::kGemmBlockscaleBpreshuffle, 1, 16, 32, AO::kColMajor, WL::kAiterPreshuffled, SD::kFp32,
     kBlockPerPartial128,
     "AITER gemm_a8w8_blockscale_bpreshuffle: As column-major, ld = M; B shuffle_weight (16,16) "
     "(docs/layouts.md §1.1, §2.1)"},
    {Kernel::kGemmBf16, 1, 1, 1, AO::kNone, WL::kPlain, SD::kNone, kWholeK,
     "bf16 x bf16, fp32 accumulation"},
    {Kernel::kFaultWritePastEnd, 1, 1, 1, AO::kNone, WL::kNone, SD::kNone, std::nullopt,
     "planted fault (tests only)"},
    {Kernel::kFaultSkipElement, 1, 1, 1, AO::kNone, WL::kNone, SD::kNone, std::nullopt,
     "planted fault (tests only)"},
}};

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

const Contract& contract(Kernel k) { return kContracts[static_cast<std::size_t>(k)]; }

std::optional<std::string> check_contract(Kernel k, const Shape& shape, const Layouts& layouts) {
  const Contract& c = contract(k);
  const std::array<std::pair<char, std::pair<std::size_t, std::size_t>>, 3> dims = {
      {{'M', {shape.m, c.m_align}}, {'N', {shape.n, c.n_align}}, {'K', {shape.k, c.k_align}}}};
  for (const auto& [letter, d] : dims) {
    const auto [value, align] = d;
    if (value == 0) {
      return clause(k, std::string(1, letter) + " > 0 violated (" + letter + " = 0)");
    }
    if (value % align != 0) {
      return clause(k, std::string(1, letter) + " % " + std::to_string(align) + " == 0 violated (" +
                           letter + " = " + std::to_string(value) + ")");
    }
  }
  if (layouts.act_scale != AO::kNone && layouts.act_scale != c.act_scale) {
    return clause(k, "activation scales must be " + std::string(to_string(c.act_scale)) + ", got " +
                         std::string(to_string(layouts.act_scale)));
  }
  if (layouts.weight != WL::kNone && layouts.weight != c.weight) {
    return clause(k, "weight layout must be " + std::string(to_string(c.weight)) + ", got " +
                         std::string(to_string(layouts.weight)));
  }
  if (layouts.scale != SD::kNone && layouts.scale != c.scale) {
    return clause(k, "scale dtype must be " + std::string(to_string(c.scale)) + ", got " +
                         std::string(to_string(layouts.scale)));
  }
  return std::nullopt;
}

}  // namespace mxgate::gpu
