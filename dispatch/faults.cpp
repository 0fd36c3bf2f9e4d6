#include "dispatch/faults.h"

#include <array>
#include <stdexcept>

namespace mxgate::dispatch {
namespace {

constexpr std::array<Fault, kFaultCount> kAll = {
    Fault::kZ1NoPerStepFallback,      Fault::kZ2IgnoreActScaleOrder, Fault::kZ3NoPreshuffleGuard,
    Fault::kZ4RelayoutDirectlyRead,   Fault::kZ5ShiftE8m0Upcast,     Fault::kZ6PerStepRematerialize,
    Fault::kZ7EarlyReturnSkipsUpcast,
};
constexpr std::array<std::string_view, kFaultCount> kNames = {
    "z1_no_per_step_fallback",      "z2_ignore_act_scale_order", "z3_no_preshuffle_guard",
    "z4_relayout_directly_read",    "z5_shift_e8m0_upcast",      "z6_per_step_rematerialize",
    "z7_early_return_skips_upcast",
};

}  // namespace

std::span<const Fault> all_faults() { return kAll; }

std::string_view to_string(Fault f) { return kNames[static_cast<std::size_t>(f)]; }

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

}  // namespace mxgate::dispatch
