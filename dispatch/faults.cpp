#include "dispatch/faults.h"

#include <array>
#include <cstdlib>
#include <stdexcept>

#include "gpu/kernels/params.h"

namespace mxgate::dispatch {
namespace {

constexpr std::array<Fault, kFaultCount> kAll = {
    Fault::kZ1NoPerStepFallback,      Fault::kZ2IgnoreActScaleOrder,
    Fault::kZ3NoPreshuffleGuard,      Fault::kZ4RelayoutDirectlyRead,
    Fault::kZ5ShiftE8m0Upcast,        Fault::kZ6PerStepRematerialize,
    Fault::kZ7EarlyReturnSkipsUpcast, Fault::kZ8Log2ExponentCeil,
    Fault::kZ9DropTrailingKBlock,     Fault::kZ10ReadScalePadding,
    Fault::kZ11WrongFp8Max,           Fault::kZ12IgnoreAsStride,
    Fault::kZ13SwizzleReadLinear,     Fault::kZ14UnroundedScalePayload,
    Fault::kZ15Bf16AmaxDoubleRound,   Fault::kZ16ShardBlockIndex,
};
constexpr std::array<std::string_view, kFaultCount> kNames = {
    "z1_no_per_step_fallback",      "z2_ignore_act_scale_order",   "z3_no_preshuffle_guard",
    "z4_relayout_directly_read",    "z5_shift_e8m0_upcast",        "z6_per_step_rematerialize",
    "z7_early_return_skips_upcast", "z8_log2_exponent_ceil",       "z9_drop_trailing_k_block",
    "z10_read_scale_padding",       "z11_wrong_fp8_max",           "z12_ignore_as_stride",
    "z13_swizzle_read_linear",      "z14_unrounded_scale_payload", "z15_bf16_amax_double_round",
    "z16_shard_block_index",
};
// kernel_fault bit of each fault (0: a dispatch fault), in the order of kAll.
constexpr std::array<uint32_t, kFaultCount> kKernelBits = {
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    gpu::kernel_fault::kLog2Ceil,
    gpu::kernel_fault::kDropTailBlock,
    gpu::kernel_fault::kReadScalePadding,
    gpu::kernel_fault::kFnuzMax,
    gpu::kernel_fault::kIgnoreAsStride,
    gpu::kernel_fault::kSwizzleReadLinear,
    gpu::kernel_fault::kUnroundedScalePayload,
    gpu::kernel_fault::kBf16Amax,
    gpu::kernel_fault::kShardBlockIndex,
};

}  // namespace

std::span<const Fault> all_faults() { return kAll; }

std::string_view to_string(Fault f) { return kNames[static_cast<std::size_t>(f)]; }

uint32_t kernel_fault_bits(const Faults& faults) {
  uint32_t out = 0;
  for (std::size_t i = 0; i < kFaultCount; ++i) {
    if (faults.has(kAll[i])) out |= kKernelBits[i];
  }
  return out;
}

std::optional<Fault> parse_fault(std::string_view s) {
  for (std::size_t i = 0; i < kFaultCount; ++i) {
    if (kNames[i] == s) return kAll[i];
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
