// quantize_nvfp4: one thread per (row, 16-block), TE's reference recipe 1x16, packed E2M1, E4M3
// scales row-major or swizzled (kernels/fp4_quant.h).
#include "gpu/kernels/fp4_quant.h"
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"

namespace mxgate::gpu::device {

__global__ void quantize_nvfp4_kernel(Fp4QuantizeParams p, const void* in, const void* global,
                                      uint8_t* codes, uint8_t* scales) {
  const uint64_t blocks = ceil_div(p.cols, kNvfp4Block);
  const uint64_t i = thread_index();
  if (i >= p.rows * blocks) return;
  quantize_nvfp4_block(p, in, global, codes, scales, i / blocks, i % blocks);
}

int launch_quantize_nvfp4(const Fp4QuantizeParams& p, const void* in, const void* global,
                          uint8_t* codes, uint8_t* scales) {
  const uint64_t items = p.rows * ceil_div(p.cols, kNvfp4Block);
  if (items == 0) return 0;
  hipLaunchKernelGGL(quantize_nvfp4_kernel, grid_for(items), dim3(kThreads), 0, 0, p, in, global,
                     codes, scales);
  return launch_status();
}

}  // namespace mxgate::gpu::device
