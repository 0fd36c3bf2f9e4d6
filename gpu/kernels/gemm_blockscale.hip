// The block-scale GEMMs (kernels/gemm.h gemm_blockscale_element: orders, layouts, the FNUZ
// variants' MFMA steps): one thread per output element, one template, a launcher per variant.
#include "gpu/kernels/gemm.h"
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"

namespace mxgate::gpu::device {

template <bool kPreshuffled, bool kUe8m0, bool kFnuzMfma>
__global__ void gemm_blockscale_kernel(GemmParams p, const uint8_t* a, const float* as,
                                       const uint8_t* b, const float* bs, void* out) {
  const uint64_t i = thread_index();
  if (i >= p.m * p.n) return;
  store_output(
      p, out, i,
      gemm_blockscale_element<kPreshuffled, kUe8m0, kFnuzMfma>(p, a, as, b, bs, i / p.n, i % p.n));
}

template <bool kPreshuffled, bool kUe8m0, bool kFnuzMfma>
int launch_blockscale(const GemmParams& p, const uint8_t* a, const float* as, const uint8_t* b,
                      const float* bs, void* out) {
  const uint64_t items = p.m * p.n;
  if (items == 0) return 0;
  // Through a pointer: a template-id's commas would split the launch macro's arguments.
  auto* const kernel = &gemm_blockscale_kernel<kPreshuffled, kUe8m0, kFnuzMfma>;
  hipLaunchKernelGGL(kernel, grid_for(items), dim3(kThreads), 0, 0, p, a, as, b, bs, out);
  return launch_status();
}

// Row-major As and plain B; scales as fp32.
int launch_gemm_blockscale(const GemmParams& p, const uint8_t* a, const float* as, const uint8_t* b,
                           const float* bs, void* out) {
  return launch_blockscale<false, false, false>(p, a, as, b, bs, out);
}

// Column-major As, AITER (16,16) preshuffled B.
int launch_gemm_blockscale_bpreshuffle(const GemmParams& p, const uint8_t* a, const float* as,
                                       const uint8_t* b, const float* bs, void* out) {
  return launch_blockscale<true, false, false>(p, a, as, b, bs, out);
}

// As gemm_blockscale, scales consumed as UE8M0.
int launch_gemm_blockscale_ue8m0(const GemmParams& p, const uint8_t* a, const float* as,
                                 const uint8_t* b, const float* bs, void* out) {
  return launch_blockscale<false, true, false>(p, a, as, b, bs, out);
}

// The FNUZ kernels (AITER's MI300 path): plain B, and column-major As with preshuffled B.
int launch_gemm_blockscale_fnuz(const GemmParams& p, const uint8_t* a, const float* as,
                                const uint8_t* b, const float* bs, void* out) {
  return launch_blockscale<false, false, true>(p, a, as, b, bs, out);
}

int launch_gemm_blockscale_fnuz_bpreshuffle(const GemmParams& p, const uint8_t* a, const float* as,
                                            const uint8_t* b, const float* bs, void* out) {
  return launch_blockscale<true, false, true>(p, a, as, b, bs, out);
}

}  // namespace mxgate::gpu::device
