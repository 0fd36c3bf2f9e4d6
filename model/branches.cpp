#include "model/branches.h"

#include <array>

namespace mxgate::model {
namespace {

struct Named {
  Branch branch;
  std::string_view name;
};

// docs/dispatch_model.md §8, in enum order.
constexpr std::array<Named, kBranchCount> kBranches = {{
    {Branch::kSelectSkipDisabled, "select.skip_disabled"},
    {Branch::kSelectSkipUnsupported, "select.skip_unsupported"},
    {Branch::kRejectScheme, "select.reject_scheme"},
    {Branch::kRejectMxKAlign, "select.reject_mx_k%32"},
    {Branch::kRejectMxScaleDtype, "select.reject_mx_fp32_scale"},
    {Branch::kRejectPreshuffleN128, "select.reject_preshuffle_n%128"},
    {Branch::kRejectPreshuffleShuffle, "select.reject_preshuffle_tile"},
    {Branch::kSelectDotScaled, "select.dot_scaled"},
    {Branch::kSelectEmulation, "select.emulation"},
    {Branch::kSelectPreshuffled, "select.preshuffled"},
    {Branch::kSelectBlockScaled, "select.block_scaled"},
    {Branch::kSelectBf16, "select.bf16"},
    {Branch::kSelectNone, "select.none"},
    {Branch::kLoadDequantize, "load.dequantize"},
    {Branch::kLoadKeepFp8Aligned, "load.keep_fp8_aligned"},
    {Branch::kLoadKeepFp8PerStep, "load.keep_fp8_per_step"},
    {Branch::kLoadAlreadyBf16, "load.already_bf16"},
    {Branch::kLoadUpcastScale, "load.upcast_scale"},
    {Branch::kLoadScaleAlreadyFp32, "load.scale_already_fp32"},
    {Branch::kLoadPreshuffle, "load.preshuffle"},
    {Branch::kLoadKeepLayoutReadsDirectly, "load.keep_layout_read_directly"},
    {Branch::kLoadKeepLayoutAlreadyPreshuffled, "load.keep_layout_already_preshuffled"},
    {Branch::kLoadBf16Nothing, "load.bf16_nothing"},
    {Branch::kModelShuffle, "model_shuffle.shuffles"},
    {Branch::kModelShuffleSkipPlainKernel, "model_shuffle.skip_plain_kernel"},
    {Branch::kModelShuffleSkipReadsDirectly, "model_shuffle.skip_read_directly"},
    {Branch::kModelShuffleSkipAlreadyPreshuffled, "model_shuffle.skip_already_preshuffled"},
    {Branch::kApplyBf16Weight, "apply.bf16_weight"},
    {Branch::kApplyDotScaled, "apply.dot_scaled"},
    {Branch::kApplyPerStepFallback, "apply.per_step_fallback"},
    {Branch::kApplyEmulationPerStep, "apply.emulation_per_step"},
    {Branch::kApplyBlockscale, "apply.blockscale"},
    {Branch::kApplyBpreshuffle, "apply.bpreshuffle"},
    {Branch::kApplyPerStepUpcast, "apply.per_step_upcast"},
    {Branch::kApplyFusedAccepted, "apply.fused_accepted"},
    {Branch::kApplyFusedRefused, "apply.fused_refused"},
    {Branch::kApplyFusedIgnored, "apply.fused_ignored"},
    {Branch::kOrderRowMajor, "order.row_major"},
    {Branch::kOrderColMajor, "order.col_major"},
    {Branch::kOrderNone, "order.none"},
    {Branch::kNegotiateAgreeRowMajor, "negotiate.agree_row_major"},
    {Branch::kNegotiateAgreeColMajor, "negotiate.agree_col_major"},
    {Branch::kNegotiateDisagree, "negotiate.disagree"},
    {Branch::kNegotiateUndeclared, "negotiate.undeclared"},
}};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kBranches.size(); ++i) {
    if (static_cast<std::size_t>(kBranches[i].branch) != i) return false;
  }
  return true;
}
static_assert(in_enum_order(), "kBranches must list every Branch in enum order");

constexpr std::array<Branch, kBranchCount> all() {
  std::array<Branch, kBranchCount> out{};
  for (std::size_t i = 0; i < kBranchCount; ++i) out[i] = kBranches[i].branch;
  return out;
}
constexpr std::array<Branch, kBranchCount> kAll = all();

}  // namespace

std::string_view name(Branch b) { return kBranches[static_cast<std::size_t>(b)].name; }

std::span<const Branch> all_branches() { return kAll; }

}  // namespace mxgate::model
