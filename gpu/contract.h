// The layouts the dispatch framework hands a built-in kernel, and the contract check it runs
// before a launch (invariant I1, docs/invariants.md §2.1: no kernel is invoked outside its
// declared contract). The contracts themselves are data in the kernel table
// (gpu/kernel_table.cpp, contract::Contract); check_contract names the first violated clause.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpu/kernel.h"

namespace mxgate::gpu {

// Activation-scale order in memory (docs/layouts.md §2.1): As[m, kb] at m*Kb + kb or kb*M + m.
enum class ActScaleOrder : uint8_t { kNone, kRowMajor, kColMajor };
// Weight layout: row-major (N, K) or AITER shuffle_weight (16,16) (docs/layouts.md §1).
enum class WeightLayout : uint8_t { kNone, kPlain, kAiterPreshuffled };
enum class ScaleDtype : uint8_t { kNone, kE8m0, kFp32 };

std::string_view to_string(ActScaleOrder o);
std::string_view to_string(WeightLayout w);
std::string_view to_string(ScaleDtype s);

struct Shape {
  std::size_t m = 0;
  std::size_t n = 0;
  std::size_t k = 0;
};

// The layouts a caller is about to hand the kernel (kNone: not applicable / not checked).
struct Layouts {
  ActScaleOrder act_scale = ActScaleOrder::kNone;
  WeightLayout weight = WeightLayout::kNone;
  ScaleDtype scale = ScaleDtype::kNone;
};

// What the kernel's contract reads, in these terms (kNone where it reads no such operand).
ActScaleOrder act_scale_order(Kernel k);
WeightLayout weight_layout(Kernel k);
ScaleDtype scale_dtype(Kernel k);

// nullopt when the launch is inside the contract; otherwise the violated clause, e.g.
// "gemm_mx_dot_scaled: K % 128 == 0 violated (K = 160)".
std::optional<std::string> check_contract(Kernel k, const Shape& shape, const Layouts& layouts);

}  // namespace mxgate::gpu
