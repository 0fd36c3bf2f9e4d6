#include "dispatch/negotiation.h"

namespace mxgate::dispatch {

ActScaleOrder negotiate_act_scale_order(std::span<const ActScaleOrder> consumers) {
  if (consumers.empty()) return ActScaleOrder::kNone;
  const ActScaleOrder first = consumers.front();
  for (ActScaleOrder o : consumers) {
    if (o == ActScaleOrder::kNone || o != first) return ActScaleOrder::kNone;
  }
  return first;
}

}  // namespace mxgate::dispatch
