// quantize_act1x128_ue8m0: one thread per (row, 128-group) (kernels/quantize_block.h).
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"
#include "gpu/kernels/quantize_block.h"

namespace mxgate::gpu::device {

__global__ void quantize_act1x128_ue8m0_kernel(QuantizeBlockParams p, const void* in,
                                               uint8_t* codes, float* scales) {
  const uint64_t groups = ceil_div(p.cols, kBlockK);
  const uint64_t i = thread_index();
  if (i < p.rows * groups) quantize_block_group(p, in, codes, scales, i / groups, i % groups);
}

int launch_quantize_act1x128_ue8m0(const QuantizeBlockParams& p, const void* in, uint8_t* codes,
                                   float* scales) {
  const uint64_t items = p.rows * ceil_div(p.cols, kBlockK);
  if (items == 0) return 0;
  hipLaunchKernelGGL(quantize_act1x128_ue8m0_kernel, grid_for(items), dim3(kThreads), 0, 0, p, in,
                     codes, scales);
  return launch_status();
}

}  // namespace mxgate::gpu::device
