// The block sizes of the scaled formats and ceil_div, one definition for host code, the device
// kernels and the reference: constexpr, no standard library, callable from device code. These
// are constants of the formats themselves (docs/architecture.md §5.1), not layout code.
#pragma once

#include "common/host_device.h"

namespace mxgate {

// std::size_t without <cstddef>.
using block_size_t = decltype(sizeof(0));

// OCP MX: 32 elements along K share one E8M0 scale (docs/formats.md §3).
inline constexpr block_size_t kMxBlock = 32;
// DeepSeek-style block FP8: 1x128 activation groups and 128x128 weight blocks (docs/formats.md
// §5); also the K tile of tl.dot_scaled in vLLM's ROCm MXFP8 kernel (docs/formats.md §4).
inline constexpr block_size_t kBlockK = 128;
// NVFP4: 16 elements share one E4M3 scale (cuBLAS VEC16_UE4M3, docs/layouts.md §6).
inline constexpr block_size_t kNvfp4Block = 16;

// ceil(a / b) for b > 0, in the type of `a`.
template <class A, class B>
MXGATE_HD constexpr A ceil_div(A a, B b) {
  return (a + static_cast<A>(b) - 1) / static_cast<A>(b);
}

}  // namespace mxgate
