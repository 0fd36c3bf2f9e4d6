#include "gpu/device/device_backend.h"

#include "gpu/compat/hip_compat.h"
#include "gpu/kernels/launch.h"

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
#if defined(MXGATE_USE_CUDA)
    hw_fp8_ = prop.major * 10 + prop.minor >= 89 && device::quantize_mx_hw_compiled();
#endif
  }
  ~DeviceBackend() override { release_all(); }

  std::string_view name() const override { return kName; }
  bool available() const override { return available_; }
  bool supports(Kernel k) const override { return k != Kernel::kQuantizeMxHw || hw_fp8_; }

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
  void launch_kernel(const Launch& l) override;

 private:
  bool available_ = false;
  bool hw_fp8_ = false;
};

void DeviceBackend::launch_kernel(const Launch& l) {
  auto u8 = [this](BufferId id) { return static_cast<uint8_t*>(ptr(id)); };
  auto f32 = [this](BufferId id) { return static_cast<float*>(ptr(id)); };
  int status = 0;
  switch (l.kernel) {
    case Kernel::kQuantizeMx:
    case Kernel::kQuantizeMxHw: {
      const auto& a = std::get<QuantizeArgs>(l.args);
      status = (l.kernel == Kernel::kQuantizeMx
                    ? device::launch_quantize_mx
                    : device::launch_quantize_mx_hw)(a.p, ptr(a.in), u8(a.codes), u8(a.scales));
      break;
    }
    case Kernel::kDequantMxToBf16: {
      const auto& a = std::get<DequantArgs>(l.args);
      status = device::launch_dequant_mx_to_bf16(a.p, u8(a.codes), u8(a.scales),
                                                 static_cast<uint16_t*>(ptr(a.out)));
      break;
    }
    case Kernel::kUpcastE8m0: {
      const auto& a = std::get<UpcastArgs>(l.args);
      status = device::launch_upcast_e8m0(a.p, u8(a.in), f32(a.out));
      break;
    }
    case Kernel::kPreshuffleWeight: {
      const auto& a = std::get<PreshuffleArgs>(l.args);
      status = device::launch_preshuffle_weight(a.p, u8(a.in), u8(a.out));
      break;
    }
    case Kernel::kGemmMxDotScaled:
    case Kernel::kGemmMxDequant: {
      const auto& a = std::get<GemmArgs>(l.args);
      status = (l.kernel == Kernel::kGemmMxDotScaled ? device::launch_gemm_mx_dot_scaled
                                                     : device::launch_gemm_mx_dequant)(
          a.p, u8(a.a), u8(a.a_scale), u8(a.b), u8(a.b_scale), ptr(a.out));
      break;
    }
    case Kernel::kGemmBlockscale:
    case Kernel::kGemmBlockscaleBpreshuffle: {
      const auto& a = std::get<GemmArgs>(l.args);
      status = (l.kernel == Kernel::kGemmBlockscale ? device::launch_gemm_blockscale
                                                    : device::launch_gemm_blockscale_bpreshuffle)(
          a.p, u8(a.a), f32(a.a_scale), u8(a.b), f32(a.b_scale), ptr(a.out));
      break;
    }
    case Kernel::kGemmBf16: {
      const auto& a = std::get<GemmArgs>(l.args);
      status = device::launch_gemm_bf16(a.p, static_cast<const uint16_t*>(ptr(a.a)),
                                        static_cast<const uint16_t*>(ptr(a.b)), ptr(a.out));
      break;
    }
    case Kernel::kFaultWritePastEnd: {
      const auto& a = std::get<FaultArgs>(l.args);
      status = device::launch_fault_write_past_end(a.p, f32(a.out));
      break;
    }
    case Kernel::kFaultSkipElement: {
      const auto& a = std::get<FaultArgs>(l.args);
      status = device::launch_fault_skip_element(a.p, f32(a.out));
      break;
    }
  }
  if (status != 0) {
    throw GpuError(std::string("launch failed: ") +
                   (status < 0 ? "kernel not built for this platform"
                               : hipGetErrorString(static_cast<hipError_t>(status))));
  }
}

}  // namespace

std::unique_ptr<Backend> make_device_backend() { return std::make_unique<DeviceBackend>(); }

}  // namespace mxgate::gpu
