// The operand layouts the dispatch framework hands a built-in GEMM, in its own terms (the
// activation-scale order it negotiates, the weight layout load processing leaves), and what a
// kernel's contract (gpu/kernel_table.cpp) reads in those terms. The contract itself is checked
// once, where every call is launched (impl/harness.cpp, contract::check_call).
#pragma once

#include <cstdint>
#include <string_view>

#include "gpu/kernel.h"

namespace mxgate::dispatch {

// Activation-scale order in memory (docs/layouts.md §2.1): As[m, kb] at m*Kb + kb or kb*M + m.
enum class ActScaleOrder : uint8_t { kNone, kRowMajor, kColMajor };
// Weight layout: row-major (N, K) or AITER shuffle_weight (16,16) (docs/layouts.md §1).
enum class WeightLayout : uint8_t { kNone, kPlain, kAiterPreshuffled };

std::string_view to_string(ActScaleOrder o);
std::string_view to_string(WeightLayout w);

// What the kernel's contract reads, in these terms (kNone where it reads no such operand).
ActScaleOrder act_scale_order(gpu::Kernel k);
WeightLayout weight_layout(gpu::Kernel k);

}  // namespace mxgate::dispatch
