// quantize_mx_hw: as quantize_mx (torchao RCEIL scales), but every element is cast by the
// hardware `cvt.rn.satfinite.e4m3x2.f32` (NVIDIA sm_89+, docs/formats.md §1.2.1), to compare the
// hardware conversion with the software one. Not built for AMD.
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"
#include "gpu/kernels/quantize_mx.h"

namespace mxgate::gpu::device {

#if defined(MXGATE_USE_CUDA)

struct HardwareE4m3 {
  __device__ uint8_t operator()(float x) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    unsigned short pair;
    // d = {hi: cvt(a), lo: cvt(b)}; x goes to the low byte.
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(x));
    return static_cast<uint8_t>(pair & 0xFFu);
#else
    return 0xFFu;  // unreachable: the backend only launches this on sm_89+
#endif
  }
};

__global__ void quantize_mx_hw_kernel(QuantizeParams p, const void* in, uint8_t* codes,
                                      uint8_t* scales) {
  const uint64_t blocks = ceil_div(p.cols, kMxBlock);
  const uint64_t i = thread_index();
  if (i >= p.rows * blocks) return;
  quantize_mx_block(p, in, codes, scales, i / blocks, i % blocks, HardwareE4m3{});
}

bool quantize_mx_hw_available() {
  int device = 0;
  hipDeviceProp_t prop;
  if (hipGetDevice(&device) != hipSuccess || hipGetDeviceProperties(&prop, device) != hipSuccess) {
    (void)hipGetLastError();
    return false;
  }
  return prop.major * 10 + prop.minor >= 89;
}

int launch_quantize_mx_hw(const QuantizeParams& p, const void* in, uint8_t* codes,
                          uint8_t* scales) {
  const uint64_t items = p.rows * ceil_div(p.cols, kMxBlock);
  if (items == 0) return 0;
  hipLaunchKernelGGL(quantize_mx_hw_kernel, grid_for(items), dim3(kThreads), 0, 0, p, in, codes,
                     scales);
  return launch_status();
}

#else

bool quantize_mx_hw_available() { return false; }

int launch_quantize_mx_hw(const QuantizeParams&, const void*, uint8_t*, uint8_t*) { return -1; }

#endif

}  // namespace mxgate::gpu::device
