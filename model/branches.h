// The named branches of the decision model (docs/dispatch_model.md §8): every decision the model
// makes takes exactly one branch of its function, and a Trace collects the branches a run took.
// The property suite tags each as "model:<name>" and requires every one to be reached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace mxgate::model {

enum class Branch : uint8_t {
  // Selection (§3): a candidate passed over, a linear kernel picked, or none.
  kSelectSkipDisabled,
  kSelectSkipUnsupported,
  kRejectScheme,
  kRejectMxKAlign,
  kRejectMxScaleDtype,
  kRejectPreshuffleN128,
  kRejectPreshuffleShuffle,
  kSelectDotScaled,
  kSelectEmulation,
  kSelectPreshuffled,
  kSelectBlockScaled,
  kSelectBf16,
  kSelectNone,
  // Load processing (§4).
  kLoadDequantize,
  kLoadKeepFp8Aligned,
  kLoadKeepFp8PerStep,
  kLoadAlreadyBf16,
  kLoadUpcastScale,
  kLoadScaleAlreadyFp32,
  kLoadPreshuffle,
  kLoadKeepLayoutReadsDirectly,
  kLoadKeepLayoutAlreadyPreshuffled,
  kLoadBf16Nothing,
  // Model-side preshuffle (§4.6).
  kModelShuffle,
  kModelShuffleSkipPlainKernel,
  kModelShuffleSkipReadsDirectly,
  kModelShuffleSkipAlreadyPreshuffled,
  // Apply (§5).
  kApplyBf16Weight,
  kApplyDotScaled,
  kApplyPerStepFallback,
  kApplyEmulationPerStep,
  kApplyBlockscale,
  kApplyBpreshuffle,
  kApplyPerStepUpcast,
  kApplyFusedAccepted,
  kApplyFusedRefused,
  kApplyFusedIgnored,
  // Declared activation-scale order (§5.4).
  kOrderRowMajor,
  kOrderColMajor,
  kOrderNone,
  // Negotiation (§6).
  kNegotiateAgreeRowMajor,
  kNegotiateAgreeColMajor,
  kNegotiateDisagree,
  kNegotiateUndeclared,
};
inline constexpr std::size_t kBranchCount = 44;

// "select.skip_disabled", "load.dequantize", ... (§8 lists them).
std::string_view name(Branch b);
std::span<const Branch> all_branches();

// The branches one or more decisions took (a bit set: no allocation).
class Trace {
 public:
  void add(Branch b) { bits_ |= uint64_t{1} << static_cast<unsigned>(b); }
  bool has(Branch b) const { return (bits_ >> static_cast<unsigned>(b)) & 1u; }
  bool empty() const { return bits_ == 0; }
  void clear() { bits_ = 0; }
  // Calls f(Branch) for each branch taken, in all_branches() order.
  template <class F>
  void for_each(F f) const {
    for (Branch b : all_branches()) {
      if (has(b)) f(b);
    }
  }

 private:
  uint64_t bits_ = 0;
};

}  // namespace mxgate::model
