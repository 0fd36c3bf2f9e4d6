// upcast_e8m0: one thread per byte (kernels/dequant_mx.h).
#include "gpu/kernels/dequant_mx.h"
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"

namespace mxgate::gpu::device {

__global__ void upcast_e8m0_kernel(UpcastParams p, const uint8_t* in, float* out) {
  const uint64_t i = thread_index();
  if (i < p.count) upcast_e8m0_element(p, in, out, i);
}

int launch_upcast_e8m0(const UpcastParams& p, const uint8_t* in, float* out) {
  if (p.count == 0) return 0;
  hipLaunchKernelGGL(upcast_e8m0_kernel, grid_for(p.count), dim3(kThreads), 0, 0, p, in, out);
  return launch_status();
}

}  // namespace mxgate::gpu::device
