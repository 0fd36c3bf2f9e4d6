// The bug zoo (BUG_CLASSES.md): named switches that re-create, in the dispatch framework, the
// silent bug classes that live there. Off by default; a layer carries its own set, chosen at run
// time (tests, later `mxgate zoo`). Each fault changes behaviour on its minimal case
// (tests/test_dispatch_faults.cpp). Classes of the quantizers and GEMM kernels themselves
// (Z8-Z16) are not here.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace mxgate::dispatch {

enum class Fault : uint8_t {
  kZ1NoPerStepFallback,       // apply drops the third branch: an fp8 weight goes to dot_scaled
  kZ2IgnoreActScaleOrder,     // a pre-quantized activation's scales are used whatever their order
  kZ3NoPreshuffleGuard,       // model and kernel both shuffle, no weight_already_preshuffled check
  kZ4RelayoutDirectlyRead,    // is_bmm / skip_weight_relayout ignored: the weight is preshuffled
  kZ5ShiftE8m0Upcast,         // e8m0 weight scales upcast by byte << 23 (0x00 -> 0, 0xFF -> Inf)
  kZ6PerStepRematerialize,    // unaligned-K MXFP8 weight dequantized on every apply, not at load
  kZ7EarlyReturnSkipsUpcast,  // a directly-read layer returns before the e8m0 upcast; apply reads
                              // the e8m0 bytes as fp32
};
inline constexpr std::size_t kFaultCount = 7;

std::span<const Fault> all_faults();
std::string_view to_string(Fault f);  // "z1_no_per_step_fallback", ...
std::optional<Fault> parse_fault(std::string_view s);

class Faults {
 public:
  Faults() = default;
  Faults(std::initializer_list<Fault> faults) {
    for (Fault f : faults) enable(f);
  }
  void enable(Fault f) { bits_ |= bit(f); }
  bool has(Fault f) const { return (bits_ & bit(f)) != 0; }
  bool none() const { return bits_ == 0; }

 private:
  static uint32_t bit(Fault f) { return 1u << static_cast<uint32_t>(f); }
  uint32_t bits_ = 0;
};

// "z1_no_per_step_fallback,z5_shift_e8m0_upcast" -> Faults; throws std::invalid_argument naming
// an unknown fault.
Faults parse_faults(std::string_view list);

}  // namespace mxgate::dispatch
