// gemm_mx_dequant: one thread per output element, per-product scales, K masked (order:
// kernels/gemm.h).
#include "gpu/kernels/gemm.h"
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"

namespace mxgate::gpu::device {

__global__ void gemm_mx_dequant_kernel(GemmParams p, const uint8_t* a, const uint8_t* sa,
                                       const uint8_t* b, const uint8_t* sb, void* out) {
  const uint64_t i = thread_index();
  if (i >= p.m * p.n) return;
  store_output(p, out, i, gemm_mx_dequant_element(p, a, sa, b, sb, i / p.n, i % p.n));
}

int launch_gemm_mx_dequant(const GemmParams& p, const uint8_t* a, const uint8_t* sa,
                           const uint8_t* b, const uint8_t* sb, void* out) {
  const uint64_t items = p.m * p.n;
  if (items == 0) return 0;
  hipLaunchKernelGGL(gemm_mx_dequant_kernel, grid_for(items), dim3(kThreads), 0, 0, p, a, sa, b, sb,
                     out);
  return launch_status();
}

}  // namespace mxgate::gpu::device
