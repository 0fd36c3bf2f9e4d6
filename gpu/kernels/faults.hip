// Planted faults that test the harness itself: one writes an element past its output (the
// guard check must fire), one leaves an element unwritten (the poison must survive).
#include "gpu/kernels/grid.h"
#include "gpu/kernels/launch.h"

namespace mxgate::gpu::device {

__global__ void fault_write_past_end_kernel(FaultParams p, float* out) {
  const uint64_t i = thread_index();
  if (i <= p.count) out[i] = 1.0f;  // one element too many
}

__global__ void fault_skip_element_kernel(FaultParams p, float* out) {
  const uint64_t i = thread_index();
  if (i < p.count && i != p.skip) out[i] = 1.0f;
}

int launch_fault_write_past_end(const FaultParams& p, float* out) {
  hipLaunchKernelGGL(fault_write_past_end_kernel, grid_for(p.count + 1), dim3(kThreads), 0, 0, p,
                     out);
  return launch_status();
}

int launch_fault_skip_element(const FaultParams& p, float* out) {
  if (p.count == 0) return 0;
  hipLaunchKernelGGL(fault_skip_element_kernel, grid_for(p.count), dim3(kThreads), 0, 0, p, out);
  return launch_status();
}

}  // namespace mxgate::gpu::device
