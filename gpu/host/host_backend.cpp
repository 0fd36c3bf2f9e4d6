#include "gpu/host/host_backend.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace mxgate::gpu {

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

// The row's host model (gpu/host/models.h).
void HostBackend::launch_kernel(const Launch& l) { (void)call_entry(l.kernel->host, l); }

std::unique_ptr<Backend> make_host_backend() { return std::make_unique<HostBackend>(); }

}  // namespace mxgate::gpu
