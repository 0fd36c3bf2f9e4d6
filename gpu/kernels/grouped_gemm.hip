// The grouped GEMMs (kernels/grouped_gemm.h): one thread per output element of all M rows (the
// k-grouped block GEMM: E * M rows, one M x N slice per group); a thread whose row belongs to no
// group writes nothing. The same bodies as the host models.
#include "gpu/kernels/grid.h"
#include "gpu/kernels/grouped_gemm.h"
#include "gpu/kernels/launch.h"

namespace mxgate::gpu::device {

__global__ void grouped_gemm_block_kernel(GroupedGemmParams p, const uint8_t* a, const float* as,
                                          const uint8_t* b, const float* bs,
                                          const uint32_t* offsets, void* out) {
  const uint64_t i = thread_index();
  if (i >= grouped_out_rows(p) * p.g.n) return;
  float v = 0.0f;
  if (grouped_block_element(p, a, as, b, bs, offsets, i / p.g.n, i % p.g.n, &v)) {
    store_output(p.g, out, i, v);
  }
}

__global__ void grouped_gemm_mx_kernel(GroupedGemmParams p, const uint8_t* a, const uint8_t* sa,
                                       const uint8_t* b, const uint8_t* sb, const uint32_t* offsets,
                                       void* out) {
  const uint64_t i = thread_index();
  if (i >= p.g.m * p.g.n) return;
  float v = 0.0f;
  if (grouped_mx_element(p, a, sa, b, sb, offsets, i / p.g.n, i % p.g.n, &v)) {
    store_output(p.g, out, i, v);
  }
}

int launch_grouped_gemm_block(const GroupedGemmParams& p, const uint8_t* a, const float* as,
                              const uint8_t* b, const float* bs, const uint32_t* offsets,
                              void* out) {
  const uint64_t items = grouped_out_rows(p) * p.g.n;
  if (items == 0) return 0;
  hipLaunchKernelGGL(grouped_gemm_block_kernel, grid_for(items), dim3(kThreads), 0, 0, p, a, as, b,
                     bs, offsets, out);
  return launch_status();
}

int launch_grouped_gemm_mx(const GroupedGemmParams& p, const uint8_t* a, const uint8_t* sa,
                           const uint8_t* b, const uint8_t* sb, const uint32_t* offsets,
                           void* out) {
  const uint64_t items = p.g.m * p.g.n;
  if (items == 0) return 0;
  hipLaunchKernelGGL(grouped_gemm_mx_kernel, grid_for(items), dim3(kThreads), 0, 0, p, a, sa, b, sb,
                     offsets, out);
  return launch_status();
}

}  // namespace mxgate::gpu::device
