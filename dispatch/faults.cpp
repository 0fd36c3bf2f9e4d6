#include "dispatch/faults.h"

#include <array>
#include <cstdlib>
#include <stdexcept>

#include "gpu/kernels/params.h"

namespace mxgate::dispatch {
namespace {

// One row per fault: its name and the gpu::kernel_fault bit it plants (0: a dispatch fault).
struct FaultRow {
  Fault fault;
  std::string_view name;
  uint64_t kernel_bit;
};
constexpr std::array<FaultRow, kFaultCount> kRows = {{
    {Fault::kZ1NoPerStepFallback, "z1_no_per_step_fallback", 0},
    {Fault::kZ2IgnoreActScaleOrder, "z2_ignore_act_scale_order", 0},
    {Fault::kZ3NoPreshuffleGuard, "z3_no_preshuffle_guard", 0},
    {Fault::kZ4RelayoutDirectlyRead, "z4_relayout_directly_read", 0},
    {Fault::kZ5ShiftE8m0Upcast, "z5_shift_e8m0_upcast", 0},
    {Fault::kZ6PerStepRematerialize, "z6_per_step_rematerialize", 0},
    {Fault::kZ7EarlyReturnSkipsUpcast, "z7_early_return_skips_upcast", 0},
    {Fault::kZ8Log2ExponentCeil, "z8_log2_exponent_ceil", gpu::kernel_fault::kLog2Ceil},
    {Fault::kZ9DropTrailingKBlock, "z9_drop_trailing_k_block", gpu::kernel_fault::kDropTailBlock},
    {Fault::kZ10ReadScalePadding, "z10_read_scale_padding", gpu::kernel_fault::kReadScalePadding},
    {Fault::kZ11WrongFp8Max, "z11_wrong_fp8_max", gpu::kernel_fault::kFnuzMax},
    {Fault::kZ12IgnoreAsStride, "z12_ignore_as_stride", gpu::kernel_fault::kIgnoreAsStride},
    {Fault::kZ13SwizzleReadLinear, "z13_swizzle_read_linear",
     gpu::kernel_fault::kSwizzleReadLinear},
    {Fault::kZ14UnroundedScalePayload, "z14_unrounded_scale_payload",
     gpu::kernel_fault::kUnroundedScalePayload},
    {Fault::kZ15Bf16AmaxDoubleRound, "z15_bf16_amax_double_round", gpu::kernel_fault::kBf16Amax},
    {Fault::kZ16ShardBlockIndex, "z16_shard_block_index", gpu::kernel_fault::kShardBlockIndex},
    {Fault::kZ17SplitKSlice0Scales, "z17_split_k_slice0_scales",
     gpu::kernel_fault::kSplitKSlice0Scales},
    {Fault::kZ18WaveReappliesAScale, "z18_wave_reapplies_a_scale",
     gpu::kernel_fault::kWaveReappliesAScale},
    {Fault::kZ19Fp32ScaleAsUe8m0, "z19_fp32_scale_as_ue8m0", 0},
    {Fault::kZ20TruncateScaleExponent, "z20_truncate_scale_exponent",
     gpu::kernel_fault::kTruncateScaleExponent},
    {Fault::kZ21MinClampAfterPow2, "z21_min_clamp_after_pow2",
     gpu::kernel_fault::kMinClampAfterPow2},
    {Fault::kZ22Ue8m0PackLeak, "z22_ue8m0_pack_leak", gpu::kernel_fault::kUe8m0PackLeak},
    {Fault::kZ23E8m0NanOnValue, "z23_e8m0_nan_on_value", gpu::kernel_fault::kE8m0NanOnValue},
    {Fault::kZ24FnuzNanAsNegZero, "z24_fnuz_nan_as_neg_zero", gpu::kernel_fault::kFnuzNanAsNegZero},
    {Fault::kZ25E4m3NanAs480, "z25_e4m3_nan_as_480", gpu::kernel_fault::kE4m3NanAs480},
    {Fault::kZ26E5m2InfAsFinite, "z26_e5m2_inf_as_finite", gpu::kernel_fault::kE5m2InfAsFinite},
    {Fault::kZ27DefaultScaleByteOne, "z27_default_scale_byte_one",
     gpu::kernel_fault::kDefaultScaleByteOne},
    {Fault::kZ28KTailScaleUnmasked, "z28_k_tail_scale_unmasked",
     gpu::kernel_fault::kKTailScaleUnmasked},
    {Fault::kZ29Offset32Bit, "z29_offset_32bit", gpu::kernel_fault::kOffset32Bit},
    {Fault::kZ30LaunchCounterOrder, "z30_launch_counter_order",
     gpu::kernel_fault::kLaunchCounterOrder},
    {Fault::kZ31NibbleOrderSwapped, "z31_nibble_order_swapped", gpu::kernel_fault::kNibbleSwap},
    {Fault::kZ32E2m1TiesAway, "z32_e2m1_ties_away", gpu::kernel_fault::kE2m1TiesAway},
    {Fault::kZ33E4m3SubnormalAsNormal, "z33_e4m3_subnormal_as_normal",
     gpu::kernel_fault::kE4m3SubnormalAsNormal},
    {Fault::kZ34Nvfp4Amax32, "z34_nvfp4_amax_over_32", gpu::kernel_fault::kNvfp4Amax32},
    {Fault::kZ35Bf16GlobalAsFp32, "z35_bf16_global_as_fp32", gpu::kernel_fault::kGlobalReadAsFp32},
    {Fault::kZ36ZeroAmaxNanScale, "z36_zero_amax_nan_scale", gpu::kernel_fault::kZeroAmaxNanScale},
    {Fault::kZ37ScaleTailUnmasked, "z37_scale_tail_unmasked",
     gpu::kernel_fault::kScaleTailUnmasked},
    {Fault::kZ38FnuzDecodedAsOcp, "z38_fnuz_decoded_as_ocp", gpu::kernel_fault::kFnuzDecodedAsOcp},
    {Fault::kZ39E8m0ZeroAsZero, "z39_e8m0_zero_as_zero", gpu::kernel_fault::kE8m0ZeroAsZero},
    {Fault::kZ40ScalePad127, "z40_scale_pad_127", gpu::kernel_fault::kScalePad127},
    {Fault::kZ41E8m0Bias125, "z41_e8m0_bias_125", gpu::kernel_fault::kE8m0Bias125},
    {Fault::kZ42FnuzSizedScale, "z42_fnuz_sized_scale", gpu::kernel_fault::kScaleFnuzMax},
    {Fault::kZ43ScaleSliceNotAdvanced, "z43_scale_slice_not_advanced",
     gpu::kernel_fault::kScaleSliceFixed},
    {Fault::kZ44ZeroRowOneKTile, "z44_zero_row_one_k_tile", gpu::kernel_fault::kOneTileMinScale},
    {Fault::kZ45ScaleResultDropped, "z45_scale_result_dropped",
     gpu::kernel_fault::kScaleResultDropped},
    {Fault::kZ46ScaleLdIgnored, "z46_scale_ld_ignored", gpu::kernel_fault::kScaleLdIgnored},
    {Fault::kZ47SwizzleOtherArch, "z47_swizzle_other_arch", gpu::kernel_fault::kSwizzleOtherArch},
    {Fault::kZ48Ue4m3TopBinadeInf, "z48_ue4m3_top_binade_inf", gpu::kernel_fault::kUe4m3TopBinade},
    {Fault::kZ49Fp32ScaleDaz, "z49_fp32_scale_daz", gpu::kernel_fault::kFp32ScaleDaz},
    // E8M0 NaN scale decode (docs/bug_classes.md §6)
    {Fault::kZ50E8m0NanAsInf, "z50_e8m0_nan_as_inf", gpu::kernel_fault::kE8m0NanAsInf},
    {Fault::kZ51E8m0NanAsMax, "z51_e8m0_nan_as_max", gpu::kernel_fault::kE8m0NanAsMax},
    // MoE grouped GEMMs (Z52-Z59)
    {Fault::kZ52EmptyGroupStaleAccumulator, "z52_empty_group_stale_accumulator",
     gpu::kernel_fault::kGroupedStaleEmpty},
    {Fault::kZ53WalkStopsAtEmptyExpert, "z53_walk_stops_at_empty_expert",
     gpu::kernel_fault::kGroupedStopAtEmpty},
    {Fault::kZ54TileExpertFromFirstRow, "z54_tile_expert_from_first_row",
     gpu::kernel_fault::kGroupedTileFirstRowExpert},
    {Fault::kZ55StraddlingTileFirstGroup, "z55_straddling_tile_first_group",
     gpu::kernel_fault::kGroupedTileFirstGroupOnly},
    {Fault::kZ56MaskedRowsPastCount, "z56_masked_rows_past_count",
     gpu::kernel_fault::kMaskedRowsPastCount},
    {Fault::kZ57GroupSwizzleUnpadded, "z57_group_swizzle_unpadded",
     gpu::kernel_fault::kGroupedSwizzleUnpadded},
    {Fault::kZ58NextExpertTailScales, "z58_next_expert_tail_scales",
     gpu::kernel_fault::kNextExpertTailScales},
    {Fault::kZ59KEmptyStaleAccumulator, "z59_kgrouped_empty_stale_accumulator",
     gpu::kernel_fault::kKGroupedStaleAcc},
}};

// Rows in enum order: row i is fault i, so the faults of all_faults() and their names cannot
// drift apart.
constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    if (static_cast<std::size_t>(kRows[i].fault) != i) return false;
  }
  return true;
}
static_assert(rows_in_enum_order(), "kRows must list the faults in enum order");
static_assert(kFaultCount <= 64, "Faults keeps one bit per fault in a uint64_t");

constexpr std::array<Fault, kFaultCount> kAll = [] {
  std::array<Fault, kFaultCount> a{};
  for (std::size_t i = 0; i < kRows.size(); ++i) a[i] = kRows[i].fault;
  return a;
}();

}  // namespace

std::span<const Fault> all_faults() { return kAll; }

std::string_view to_string(Fault f) { return kRows[static_cast<std::size_t>(f)].name; }

int fault_number(Fault f) {
  const std::string_view name = to_string(f);
  int n = 0;
  for (std::size_t i = 1; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) {
    n = n * 10 + (name[i] - '0');
  }
  return n;
}

uint64_t kernel_fault_bits(const Faults& faults) {
  uint64_t out = 0;
  for (const FaultRow& r : kRows) {
    if (faults.has(r.fault)) out |= r.kernel_bit;
  }
  return out;
}

std::optional<Fault> parse_fault(std::string_view s) {
  for (const FaultRow& r : kRows) {
    if (r.name == s) return r.fault;
  }
  return std::nullopt;
}

Faults parse_faults(std::string_view list) {
  Faults out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    const std::string_view name = list.substr(start, end - start);
    if (!name.empty()) {
      const auto f = parse_fault(name);
      if (!f) throw std::invalid_argument("unknown fault '" + std::string(name) + "'");
      out.enable(*f);
    }
    start = end + 1;
  }
  return out;
}

Faults faults_from_environment() {
  const char* v = std::getenv(kFaultsEnv);
  if (v == nullptr) return {};
  try {
    return parse_faults(v);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(kFaultsEnv) + ": " + e.what());
  }
}

}  // namespace mxgate::dispatch
