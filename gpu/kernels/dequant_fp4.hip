// dequant_mxfp4, dequant_nvfp4: one thread per element (kernels/fp4_quant.h).
#include "gpu/kernels/fp4_quant.h"
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"

namespace mxgate::gpu::device {

template <bool kNvfp4>
__global__ void dequant_fp4_kernel(Fp4DequantParams p, const uint8_t* codes, const uint8_t* scales,
                                   const float* global, void* out) {
  const uint64_t i = thread_index();
  if (i < p.rows * p.cols) dequant_fp4_element<kNvfp4>(p, codes, scales, global, out, i);
}

template <bool kNvfp4>
int launch_dequant(const Fp4DequantParams& p, const uint8_t* codes, const uint8_t* scales,
                   const float* global, void* out) {
  const uint64_t items = p.rows * p.cols;
  if (items == 0) return 0;
  hipLaunchKernelGGL(dequant_fp4_kernel<kNvfp4>, grid_for(items), dim3(kThreads), 0, 0, p, codes,
                     scales, global, out);
  return launch_status();
}

int launch_dequant_mxfp4(const Fp4DequantParams& p, const uint8_t* codes, const uint8_t* scales,
                         const float* global, void* out) {
  return launch_dequant<false>(p, codes, scales, global, out);
}

int launch_dequant_nvfp4(const Fp4DequantParams& p, const uint8_t* codes, const uint8_t* scales,
                         const float* global, void* out) {
  return launch_dequant<true>(p, codes, scales, global, out);
}

}  // namespace mxgate::gpu::device
