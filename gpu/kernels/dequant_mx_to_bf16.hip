// dequant_mx_to_bf16: one thread per element (kernels/dequant_mx.h).
#include "gpu/kernels/dequant_mx.h"
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"

namespace mxgate::gpu::device {

__global__ void dequant_mx_to_bf16_kernel(DequantParams p, const uint8_t* codes,
                                          const uint8_t* scales, uint16_t* out) {
  const uint64_t i = thread_index();
  if (i < p.rows * p.cols) dequant_mx_element(p, codes, scales, out, i);
}

int launch_dequant_mx_to_bf16(const DequantParams& p, const uint8_t* codes, const uint8_t* scales,
                              uint16_t* out) {
  const uint64_t items = p.rows * p.cols;
  if (items == 0) return 0;
  hipLaunchKernelGGL(dequant_mx_to_bf16_kernel, grid_for(items), dim3(kThreads), 0, 0, p, codes,
                     scales, out);
  return launch_status();
}

}  // namespace mxgate::gpu::device
