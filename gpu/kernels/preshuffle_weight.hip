// preshuffle_weight: one thread per source byte (kernels/preshuffle.h).
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"
#include "gpu/kernels/preshuffle.h"

namespace mxgate::gpu::device {

__global__ void preshuffle_weight_kernel(PreshuffleParams p, const uint8_t* in, uint8_t* out) {
  const uint64_t i = thread_index();
  if (i < p.n * p.k) preshuffle_element(p, in, out, i);
}

int launch_preshuffle_weight(const PreshuffleParams& p, const uint8_t* in, uint8_t* out) {
  const uint64_t items = p.n * p.k;
  if (items == 0) return 0;
  hipLaunchKernelGGL(preshuffle_weight_kernel, grid_for(items), dim3(kThreads), 0, 0, p, in, out);
  return launch_status();
}

}  // namespace mxgate::gpu::device
