// The quantizer policies of each named convention (MX 1x32 and DeepSeek block FP8), built from
// the convention's element cast plus the scale rules of docs/formats.md §3 and §5.
// Conventions without such a quantizer in their source have none (nullopt).
#pragma once

#include <optional>

#include "reference/block_quant.h"
#include "reference/convention.h"
#include "reference/mx_quant.h"

namespace mxgate {

// `element` selects the element policy (element_policy) and, for FP4 / FP6, the conventions that
// quantize those formats (docs/fp4.md §4).
std::optional<MxPolicy> mx_policy(const Convention& c, Format element = Format::kE4M3FN);
// `ue8m0`: power-of-two scales (DeepGEMM / vLLM use_ue8m0). `element` picks the quantization max
// (vLLM uses 224 for E4M3FNUZ, docs/formats.md §5.1).
std::optional<BlockPolicy> block_policy(const Convention& c, Format element, bool ue8m0);

// The same, or std::invalid_argument naming a convention that has no such quantizer.
MxPolicy require_mx_policy(const Convention& c);
BlockPolicy require_block_policy(const Convention& c, Format element, bool ue8m0);

}  // namespace mxgate
