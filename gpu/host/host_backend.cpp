#include "gpu/host/host_backend.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "gpu/host/models.h"

namespace mxgate::gpu {
namespace {

template <class T>
const T& args_of(const Launch& l) {
  return std::get<T>(l.args);  // launch_outputs already checked the variant
}

}  // namespace

void* HostBackend::device_alloc(std::size_t bytes) {
  void* p = std::malloc(bytes);
  if (p == nullptr) throw GpuError("host: malloc of " + std::to_string(bytes) + " bytes failed");
  return p;
}

void HostBackend::device_free(void* p) noexcept { std::free(p); }

void HostBackend::copy_to_device(void* dst, const void* src, std::size_t bytes) {
  std::memcpy(dst, src, bytes);
}

void HostBackend::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  std::memcpy(dst, src, bytes);
}

void HostBackend::device_fill(void* dst, uint8_t byte, std::size_t bytes) {
  std::memset(dst, byte, bytes);
}

void HostBackend::launch_kernel(const Launch& l) {
  auto u8 = [this](BufferId id) { return static_cast<uint8_t*>(ptr(id)); };
  auto f32 = [this](BufferId id) { return static_cast<float*>(ptr(id)); };
  switch (l.kernel) {
    case Kernel::kQuantizeMx:
    case Kernel::kQuantizeMxHw: {
      const auto& a = args_of<QuantizeArgs>(l);
      (l.kernel == Kernel::kQuantizeMx ? host::quantize_mx : host::quantize_mx_hw)(
          a.p, ptr(a.in), u8(a.codes), u8(a.scales));
      return;
    }
    case Kernel::kDequantMxToBf16: {
      const auto& a = args_of<DequantArgs>(l);
      host::dequant_mx_to_bf16(a.p, u8(a.codes), u8(a.scales), static_cast<uint16_t*>(ptr(a.out)));
      return;
    }
    case Kernel::kUpcastE8m0: {
      const auto& a = args_of<UpcastArgs>(l);
      host::upcast_e8m0(a.p, u8(a.in), f32(a.out));
      return;
    }
    case Kernel::kPreshuffleWeight: {
      const auto& a = args_of<PreshuffleArgs>(l);
      host::preshuffle_weight(a.p, u8(a.in), u8(a.out));
      return;
    }
    case Kernel::kGemmMxDotScaled:
    case Kernel::kGemmMxDequant: {
      const auto& a = args_of<GemmArgs>(l);
      (l.kernel == Kernel::kGemmMxDotScaled ? host::gemm_mx_dot_scaled : host::gemm_mx_dequant)(
          a.p, u8(a.a), u8(a.a_scale), u8(a.b), u8(a.b_scale), ptr(a.out));
      return;
    }
    case Kernel::kGemmBlockscale:
    case Kernel::kGemmBlockscaleBpreshuffle: {
      const auto& a = args_of<GemmArgs>(l);
      (l.kernel == Kernel::kGemmBlockscale ? host::gemm_blockscale
                                           : host::gemm_blockscale_bpreshuffle)(
          a.p, u8(a.a), f32(a.a_scale), u8(a.b), f32(a.b_scale), ptr(a.out));
      return;
    }
    case Kernel::kGemmBf16: {
      const auto& a = args_of<GemmArgs>(l);
      host::gemm_bf16(a.p, static_cast<const uint16_t*>(ptr(a.a)),
                      static_cast<const uint16_t*>(ptr(a.b)), ptr(a.out));
      return;
    }
    case Kernel::kFaultWritePastEnd:
      host::fault_write_past_end(args_of<FaultArgs>(l).p, f32(args_of<FaultArgs>(l).out));
      return;
    case Kernel::kFaultSkipElement:
      host::fault_skip_element(args_of<FaultArgs>(l).p, f32(args_of<FaultArgs>(l).out));
      return;
  }
  throw GpuError("host: unknown kernel");
}

std::unique_ptr<Backend> make_host_backend() { return std::make_unique<HostBackend>(); }

}  // namespace mxgate::gpu
