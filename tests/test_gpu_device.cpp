// Covers the device backend (HIP on AMD, CUDA on NVIDIA; gpu/device, gpu/kernels/*.hip): the
// checks of test_gpu_checks.h and test_gpu_checks_fp4.h -- every kernel (the FP4 ones too)
// against the reference bit for bit, declared orders, contracts, guard bands, poison, accounting
// -- plus the hardware satfinite quantize
// on NVIDIA sm_89+, and every property suite of properties/ (tests/property_suite.h) on the
// device. Every device test SKIPS (not passes) when no GPU is present; the check that every
// kernel-table row has its device launcher in this build runs without one. Label `gpu`; built only
// in the hip / cuda presets. Does not cover: the host models (test_gpu_host.cpp,
// property_host.cpp), speed.
#include <variant>

#include "gpu/device/device_backend.h"
#include "tests/property_suite.h"
#include "tests/test_gpu_checks.h"
#include "tests/test_gpu_checks_fp4.h"

namespace mxgate::gpu {

std::unique_ptr<Backend> make_backend_under_test() { return make_device_backend(); }

namespace {

// Guards against a device build whose kernel table lost its launchers: the table refers to them
// weakly (gpu/kernels/launch.h), so a kernel object the link dropped would leave a null entry
// and the kernel would report "not built for this platform" on every GPU. Runs without a GPU.
TEST(DeviceKernelTable, EveryRowHasItsDeviceLauncher) {
  for (const KernelDef& k : all_kernels()) {
    EXPECT_TRUE(std::visit([](auto fn) { return fn != nullptr; }, k.device)) << k.name;
  }
}

}  // namespace
}  // namespace mxgate::gpu
