// gemm_blockscale_ue8m0: one thread per output element, row-major As, plain B, scales consumed as
// UE8M0 (order and scale rule: kernels/gemm.h).
#include "gpu/kernels/gemm.h"
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"

namespace mxgate::gpu::device {

__global__ void gemm_blockscale_ue8m0_kernel(GemmParams p, const uint8_t* a, const float* as,
                                             const uint8_t* b, const float* bs, void* out) {
  const uint64_t i = thread_index();
  if (i >= p.m * p.n) return;
  store_output(p, out, i, gemm_blockscale_element<false, true>(p, a, as, b, bs, i / p.n, i % p.n));
}

int launch_gemm_blockscale_ue8m0(const GemmParams& p, const uint8_t* a, const float* as,
                                 const uint8_t* b, const float* bs, void* out) {
  const uint64_t items = p.m * p.n;
  if (items == 0) return 0;
  hipLaunchKernelGGL(gemm_blockscale_ue8m0_kernel, grid_for(items), dim3(kThreads), 0, 0, p, a, as,
                     b, bs, out);
  return launch_status();
}

}  // namespace mxgate::gpu::device
