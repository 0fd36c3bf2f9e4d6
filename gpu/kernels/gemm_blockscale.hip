// gemm_blockscale and gemm_blockscale_fnuz: one thread per output element, row-major As, plain B
// (order and the FNUZ variant's MFMA steps: kernels/gemm.h).
#include "gpu/kernels/gemm.h"
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"

namespace mxgate::gpu::device {

template <bool kFnuzMfma>
__global__ void gemm_blockscale_kernel(GemmParams p, const uint8_t* a, const float* as,
                                       const uint8_t* b, const float* bs, void* out) {
  const uint64_t i = thread_index();
  if (i >= p.m * p.n) return;
  store_output(p, out, i,
               gemm_blockscale_element<false, false, kFnuzMfma>(p, a, as, b, bs, i / p.n, i % p.n));
}

template <bool kFnuzMfma>
int launch_blockscale(const GemmParams& p, const uint8_t* a, const float* as, const uint8_t* b,
                      const float* bs, void* out) {
  const uint64_t items = p.m * p.n;
  if (items == 0) return 0;
  hipLaunchKernelGGL(gemm_blockscale_kernel<kFnuzMfma>, grid_for(items), dim3(kThreads), 0, 0, p, a,
                     as, b, bs, out);
  return launch_status();
}

int launch_gemm_blockscale(const GemmParams& p, const uint8_t* a, const float* as, const uint8_t* b,
                           const float* bs, void* out) {
  return launch_blockscale<false>(p, a, as, b, bs, out);
}

int launch_gemm_blockscale_fnuz(const GemmParams& p, const uint8_t* a, const float* as,
                                const uint8_t* b, const float* bs, void* out) {
  return launch_blockscale<true>(p, a, as, b, bs, out);
}

}  // namespace mxgate::gpu::device
