// The `host` backend: always available; memory is host memory, kernels are the host models.
#pragma once

#include <memory>

#include "gpu/backend.h"

namespace mxgate::gpu {

class HostBackend final : public Backend {
 public:
  ~HostBackend() override { release_all(); }
  std::string_view name() const override { return "host"; }
  bool available() const override { return true; }
  bool supports(Kernel) const override { return true; }
  contract::Memory memory() const override { return contract::Memory::kHost; }

 protected:
  void* device_alloc(std::size_t bytes) override;
  void device_free(void* p) noexcept override;
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override;
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override;
  void device_fill(void* dst, uint8_t byte, std::size_t bytes) override;
  void device_sync() override {}
  void launch_kernel(const Launch& launch) override;
};

std::unique_ptr<Backend> make_host_backend();

}  // namespace mxgate::gpu
