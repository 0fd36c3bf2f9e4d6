#include "gpu/device/device_backend.h"

#include <variant>

#include "gpu/compat/hip_compat.h"

namespace mxgate::gpu {
namespace {

#if defined(MXGATE_USE_CUDA)
constexpr std::string_view kName = "cuda";
#else
constexpr std::string_view kName = "hip";
#endif

void check(hipError_t e, const char* call) {
  if (e != hipSuccess) {
    throw GpuError(std::string(kName) + ": " + call + " failed: " + hipGetErrorString(e));
  }
}

// Whether the row has a device launcher in this build (the table's references are weak).
bool has_device_entry(Kernel k) {
  return std::visit([](auto fn) { return fn != nullptr; }, k->device);
}

class DeviceBackend final : public Backend {
 public:
  DeviceBackend() {
    int count = 0;
    if (hipGetDeviceCount(&count) != hipSuccess || count == 0) {
      (void)hipGetLastError();  // clear the sticky "no device" error
      return;
    }
    hipDeviceProp_t prop;
    if (hipGetDeviceProperties(&prop, 0) != hipSuccess) return;
    available_ = true;
    // Plugin ops get a stream of their own (impl/harness.h); built-in kernels use stream 0.
    if (hipStreamCreate(&stream_) != hipSuccess) {
      (void)hipGetLastError();
      stream_ = nullptr;
    }
  }
  ~DeviceBackend() override {
    release_all();
    if (stream_ != nullptr) (void)hipStreamDestroy(stream_);
  }

  std::string_view name() const override { return kName; }
  bool available() const override { return available_; }
  bool supports(Kernel k) const override {
    return available_ && has_device_entry(k) &&
           (k->device_available == nullptr || k->device_available());
  }
#if defined(MXGATE_USE_CUDA)
  contract::Memory memory() const override { return contract::Memory::kCuda; }
#else
  contract::Memory memory() const override { return contract::Memory::kHip; }
#endif
  void* stream() override { return stream_; }

 protected:
  void* device_alloc(std::size_t bytes) override {
    void* p = nullptr;
    check(hipMalloc(&p, bytes), "hipMalloc");
    return p;
  }
  void device_free(void* p) noexcept override { (void)hipFree(p); }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override {
    check(hipMemcpy(dst, src, bytes, hipMemcpyHostToDevice), "hipMemcpy (to device)");
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    check(hipMemcpy(dst, src, bytes, hipMemcpyDeviceToHost), "hipMemcpy (to host)");
  }
  void device_fill(void* dst, uint8_t byte, std::size_t bytes) override {
    check(hipMemset(dst, byte, bytes), "hipMemset");
  }
  void device_sync() override { check(hipDeviceSynchronize(), "hipDeviceSynchronize"); }
  // The row's device launcher (gpu/kernels/NAME.hip).
  void launch_kernel(const Launch& l) override {
    const int status = call_entry(l.kernel->device, l);
    if (status != 0) {
      throw GpuError(std::string("launch failed: ") +
                     (status < 0 ? "kernel not built for this platform"
                                 : hipGetErrorString(static_cast<hipError_t>(status))));
    }
  }

 private:
  bool available_ = false;
  hipStream_t stream_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> make_device_backend() { return std::make_unique<DeviceBackend>(); }

}  // namespace mxgate::gpu
