// quantize_mx: one thread per (row, 32-block), software E4M3FN cast (kernels/quantize_mx.h).
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"
#include "gpu/kernels/quantize_mx.h"

namespace mxgate::gpu::device {

__global__ void quantize_mx_kernel(QuantizeParams p, const void* in, uint8_t* codes,
                                   uint8_t* scales) {
  const uint64_t blocks = ceil_div(p.cols, kMxBlock);
  const uint64_t i = thread_index();
  if (i >= p.rows * blocks) return;
  quantize_mx_block(p, in, codes, scales, i / blocks, i % blocks, SoftwareE4m3{p.convention});
}

int launch_quantize_mx(const QuantizeParams& p, const void* in, uint8_t* codes, uint8_t* scales) {
  const uint64_t items = p.rows * ceil_div(p.cols, kMxBlock);
  if (items == 0) return 0;
  hipLaunchKernelGGL(quantize_mx_kernel, grid_for(items), dim3(kThreads), 0, 0, p, in, codes,
                     scales);
  return launch_status();
}

}  // namespace mxgate::gpu::device
