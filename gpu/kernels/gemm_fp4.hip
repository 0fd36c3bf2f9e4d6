// gemm_mxfp4, gemm_nvfp4: one thread per output element (orders: kernels/fp4_gemm.h).
#include "gpu/kernels/fp4_gemm.h"
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"

namespace mxgate::gpu::device {

__global__ void gemm_mxfp4_kernel(Fp4GemmParams p, const uint8_t* a, const uint8_t* sa,
                                  const uint8_t* b, const uint8_t* sb, void* out) {
  const uint64_t i = thread_index();
  if (i >= p.m * p.n) return;
  fp4_store_output(p, out, i, gemm_mxfp4_element(p, a, sa, b, sb, i / p.n, i % p.n));
}

__global__ void gemm_nvfp4_kernel(Fp4GemmParams p, const uint8_t* a, const uint8_t* sa,
                                  const uint8_t* b, const uint8_t* sb, const float* ga,
                                  const float* gb, void* out) {
  const uint64_t i = thread_index();
  if (i >= p.m * p.n) return;
  fp4_store_output(p, out, i, gemm_nvfp4_element(p, a, sa, b, sb, ga, gb, i / p.n, i % p.n));
}

int launch_gemm_mxfp4(const Fp4GemmParams& p, const uint8_t* a, const uint8_t* sa, const uint8_t* b,
                      const uint8_t* sb, const float*, const float*, void* out) {
  const uint64_t items = p.m * p.n;
  if (items == 0) return 0;
  hipLaunchKernelGGL(gemm_mxfp4_kernel, grid_for(items), dim3(kThreads), 0, 0, p, a, sa, b, sb,
                     out);
  return launch_status();
}

int launch_gemm_nvfp4(const Fp4GemmParams& p, const uint8_t* a, const uint8_t* sa, const uint8_t* b,
                      const uint8_t* sb, const float* ga, const float* gb, void* out) {
  const uint64_t items = p.m * p.n;
  if (items == 0) return 0;
  hipLaunchKernelGGL(gemm_nvfp4_kernel, grid_for(items), dim3(kThreads), 0, 0, p, a, sa, b, sb, ga,
                     gb, out);
  return launch_status();
}

}  // namespace mxgate::gpu::device
