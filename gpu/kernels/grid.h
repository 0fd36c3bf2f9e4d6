// One thread per work item: a 1-D grid of 256-thread blocks, and the global thread index.
#pragma once

#include <stdint.h>

#include "common/blocks.h"
#include "gpu/compat/hip_compat.h"

namespace mxgate::gpu::device {

inline constexpr unsigned kThreads = 256;

inline dim3 grid_for(uint64_t items) {
  return dim3(static_cast<unsigned>(ceil_div(items, kThreads)));
}

__device__ inline uint64_t thread_index() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// Launch status after a kernel launch (an empty grid launches nothing).
inline int launch_status() { return static_cast<int>(hipGetLastError()); }

}  // namespace mxgate::gpu::device
