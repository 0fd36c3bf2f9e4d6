// Each kernel's contract as data: alignment of M/N/K, the input layouts it reads, its scale
// dtype and its declared fp32 accumulation order (so the reference's ordered_gemm and bound
// model can be configured from it). check_contract names the first violated clause.
// Invariant I1 (docs/invariants.md §2.1): no kernel is invoked outside its declared contract.
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

// A GEMM's declared summation order, in the terms of reference/gemm_oracle.h: partial sums of
// `block_k` consecutive k (0: all of K) in increasing k, scales applied per partial
// (fl(fl(part*sa)*sb), then acc += ...) or per product (fl(fl(fl(a*b)*sa)*sb)), partials added
// in increasing k. product_roundings / partial_roundings feed the bound model (AccumModel).
struct AccumOrder {
  std::size_t block_k = 0;
  bool per_partial = true;
  int product_roundings = 1;
  int partial_roundings = 2;
};

struct Contract {
  Kernel kernel;
  // Alignment of each dimension (1 = any). For non-GEMM kernels m = rows, n = 1, k = cols.
  std::size_t m_align = 1;
  std::size_t n_align = 1;
  std::size_t k_align = 1;
  ActScaleOrder act_scale = ActScaleOrder::kNone;
  WeightLayout weight = WeightLayout::kNone;
  ScaleDtype scale = ScaleDtype::kNone;
  std::optional<AccumOrder> accum;  // GEMMs only
  std::string_view why;             // where the clauses come from
};

const Contract& contract(Kernel k);

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

// nullopt when the launch is inside the contract; otherwise the violated clause, e.g.
// "gemm_mx_dot_scaled: K % 128 == 0 violated (K = 160)".
std::optional<std::string> check_contract(Kernel k, const Shape& shape, const Layouts& layouts);

}  // namespace mxgate::gpu
