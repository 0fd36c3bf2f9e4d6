// Covers the `host` backend (gpu/host): every kernel's CPU model against the reference bit for
// bit, the declared accumulation orders, the contracts, guard bands, poison and accounting --
// the checks of test_gpu_checks.h and, for the FP4 kernels, test_gpu_checks_fp4.h run on host
// memory. Does not cover: the HIP / CUDA kernels (test_gpu_device.cpp, label gpu), speed.
#include "gpu/host/host_backend.h"
#include "tests/test_gpu_checks.h"
#include "tests/test_gpu_checks_fp4.h"

namespace mxgate::gpu {

std::unique_ptr<Backend> make_backend_under_test() { return make_host_backend(); }

}  // namespace mxgate::gpu
