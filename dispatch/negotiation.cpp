#include "dispatch/negotiation.h"

namespace mxgate::dispatch {

gpu::ActScaleOrder negotiate_act_scale_order(std::span<const gpu::ActScaleOrder> consumers) {
  if (consumers.empty()) return gpu::ActScaleOrder::kNone;
  const gpu::ActScaleOrder first = consumers.front();
  for (gpu::ActScaleOrder o : consumers) {
    if (o == gpu::ActScaleOrder::kNone || o != first) return gpu::ActScaleOrder::kNone;
  }
  return first;
}

}  // namespace mxgate::dispatch
