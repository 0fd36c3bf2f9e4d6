// One FP8 GEMM with crafted inputs on a GEMM op of an implementation: codes and per-element scales
// rather than the op's own operands, as a measurement that designs its inputs hands them over
// (the accumulator probe, `mxgate probe-accumulator --impl`; docs/plugins.md §10). The operands
// are laid out as the op's contract asks (its scale blocks and scale dtype, a scale layout it
// takes, B row-major or AITER-preshuffled) and run through the harness (gemm_operands.h
// run_gemm_op: guarded buffers, device memory for device ops); C comes back in fp32.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpu/backend.h"
#include "impl/op.h"
#include "properties/gemm_operands.h"

namespace mxgate::properties {

struct CraftedGemm {
  std::size_t m = 0, n = 0, k = 0;
  ElementTypes types;  // any FP8 element type of the ABI
  Bytes a, b;          // M x K and N x K codes, row-major
  // The scale of A[row][kk] and of B[col][kk].
  std::function<float(std::size_t row, std::size_t kk)> a_scale, b_scale;
};

// Why `op` cannot run `g` (not an FP8 GEMM op, no fp32 output, an element type or a shape outside
// its contract, a scale not constant over one of its scale blocks, an MX scale that is not a power
// of two); nullopt when it can.
std::optional<std::string> crafted_gemm_problem(const impl::Op& op, const CraftedGemm& g);

// C (M x N, row-major) of `g` on `op`; std::invalid_argument with crafted_gemm_problem's reason,
// else what the harness throws (impl::Unsupported, impl::InvocationError).
std::vector<float> run_crafted_gemm(gpu::Backend& under_test, const impl::Op& op,
                                    const CraftedGemm& g);

}  // namespace mxgate::properties
