// quantize_mxfp4: one thread per (row, 32-block), ocp_mx, packed E2M1 (kernels/fp4_quant.h).
#include "gpu/kernels/fp4_quant.h"
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"

namespace mxgate::gpu::device {

__global__ void quantize_mxfp4_kernel(Fp4QuantizeParams p, const void* in, uint8_t* codes,
                                      uint8_t* scales) {
  const uint64_t blocks = ceil_div(p.cols, kMxBlock);
  const uint64_t i = thread_index();
  if (i >= p.rows * blocks) return;
  quantize_mxfp4_block(p, in, codes, scales, i / blocks, i % blocks);
}

int launch_quantize_mxfp4(const Fp4QuantizeParams& p, const void* in, const void*, uint8_t* codes,
                          uint8_t* scales) {
  const uint64_t items = p.rows * ceil_div(p.cols, kMxBlock);
  if (items == 0) return 0;
  hipLaunchKernelGGL(quantize_mxfp4_kernel, grid_for(items), dim3(kThreads), 0, 0, p, in, codes,
                     scales);
  return launch_status();
}

}  // namespace mxgate::gpu::device
