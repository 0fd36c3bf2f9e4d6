// Activation-scale order negotiation (I3, vLLM #56433): the consumers of one quantized
// activation each declare the order they read its 1x128 scales in. If all agree, a fused
// producer may emit that order; if they disagree (or a consumer declares none, or there is no
// consumer), the result is kNone and the caller must take the unfused path: pass the plain
// activation and let each consumer quantize it in its own order.
#pragma once

#include <span>

#include "dispatch/operand_layouts.h"

namespace mxgate::dispatch {

ActScaleOrder negotiate_act_scale_order(std::span<const ActScaleOrder> consumers);

}  // namespace mxgate::dispatch
