// One interface for every backend (host models, HIP on AMD, the same sources on NVIDIA):
// guarded allocations, copies, kernel launches, guard checks and hot-path accounting.
//
// Every allocation carries kGuardBytes of a known pattern before and after the user region.
// run() NaN-poisons every output buffer (0xFF bytes: NaN in E4M3FN, E8M0, bf16 and fp32) before
// the launch, so an element the kernel never writes stays NaN; after the launch it synchronizes
// and checks every guard, so a write outside a buffer is an error naming the kernel, the buffer
// and the byte offset. Every failure is a GpuError whose message names the kernel.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/kernel.h"

namespace mxgate::gpu {

class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A guard byte that differs from its pattern. `offset` is relative to the start of the user
// region: negative in the front guard, >= the buffer size in the back guard.
struct GuardDamage {
  BufferId buffer = kNoBuffer;
  std::string label;
  std::ptrdiff_t offset = 0;
  uint8_t expected = 0;
  uint8_t actual = 0;
  std::string describe() const;
};

// Hot-path accounting: launches per kernel (by name; kernels never launched are absent) and
// bytes allocated (user bytes, cumulative).
struct Counters {
  std::map<std::string_view, uint64_t> launches;
  uint64_t allocations = 0;
  uint64_t bytes_allocated = 0;
  uint64_t launches_of(Kernel k) const;
  // What happened after `before` was taken (every counter is cumulative).
  Counters since(const Counters& before) const;
};

// The byte at position i of every guard band (position-dependent, so a kernel storing a
// constant cannot reproduce it by accident).
uint8_t guard_byte(std::size_t i);

inline constexpr uint8_t kPoisonByte = 0xFF;

// Called by Backend::run with the kernel's name just before each launch, on every backend; one
// per process, nullptr for none. `mxgate gate` uses it to name the kernel a hung check was
// running. The observer must be cheap and must not throw.
using LaunchObserver = void (*)(std::string_view kernel_name);
void set_launch_observer(LaunchObserver observer);
// Tells the observer about a launch that does not go through Backend::run (a plugin op called
// by the harness, impl/harness.h).
void observe_launch(std::string_view name);

class Backend {
 public:
  // Bigger than any over-read a contract violation produces (a 128-wide K tile reads < 128
  // bytes past a row), so over-reads stay inside the allocation.
  static constexpr std::size_t kGuardBytes = 256;

  virtual ~Backend() = default;
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  virtual std::string_view name() const = 0;
  // False when the backend is built but no device is present (tests then GTEST_SKIP).
  virtual bool available() const = 0;
  // Whether this backend implements `k` (quantize_mx_hw needs NVIDIA sm_89+ or the host model).
  virtual bool supports(Kernel k) const = 0;
  // The memory its buffers live in (contract::Memory::kHost, kCuda or kHip).
  virtual contract::Memory memory() const = 0;
  // The stream a plugin's device op launches on (a hipStream_t / cudaStream_t); nullptr on the
  // host. synchronize() waits for it.
  virtual void* stream() { return nullptr; }

  BufferId allocate(std::size_t bytes, std::string_view label);
  // Storage the caller owns, in this backend's memory, registered as a buffer so an op can be
  // handed it: no guard bands (the caller guards it: the host cast survey's resident inputs are
  // write-protected pages), no poison, never freed here. `rebase` moves it to other storage of
  // the same size (a survey's next chunk of its resident inputs).
  BufferId adopt(void* storage, std::size_t bytes, std::string_view label);
  void rebase(BufferId id, void* storage);
  void release(BufferId id);
  // `bytes` must be exactly the buffer's size.
  void upload(BufferId id, std::span<const uint8_t> bytes);
  std::vector<uint8_t> download(BufferId id);
  // Fills the buffer's user region with kPoisonByte again, as allocate() left it.
  void poison(BufferId id);

  template <class T>
  void upload_as(BufferId id, std::span<const T> values) {
    upload(id, {reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes()});
  }
  template <class T>
  std::vector<T> download_as(BufferId id) {
    const std::vector<uint8_t> raw = download(id);
    std::vector<T> out(raw.size() / sizeof(T));
    std::memcpy(out.data(), raw.data(), out.size() * sizeof(T));
    return out;
  }
  // allocate + upload.
  template <class T>
  BufferId make_buffer(std::span<const T> values, std::string_view label) {
    const BufferId id = allocate(values.size_bytes(), label);
    upload_as<T>(id, values);
    return id;
  }

  // Poisons the outputs, launches, synchronizes, checks every guard. Throws GpuError naming the
  // kernel on a bad argument, an API or launch error, or a damaged guard.
  void run(const Launch& launch);
  void synchronize();
  std::vector<GuardDamage> check_guards();

  std::size_t size(BufferId id) const;
  std::string_view label(BufferId id) const;
  // Address of the user region of `id` in this backend's memory, for a plugin op's call
  // (impl/harness.h); nullptr for kNoBuffer.
  void* address(BufferId id) const { return ptr(id); }
  const Counters& counters() const { return counters_; }
  void reset_counters() { counters_ = {}; }

 protected:
  // Device primitives; each throws GpuError naming the API call that failed.
  virtual void* device_alloc(std::size_t bytes) = 0;
  virtual void device_free(void* p) noexcept = 0;
  virtual void copy_to_device(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void device_fill(void* dst, uint8_t byte, std::size_t bytes) = 0;
  virtual void device_sync() = 0;
  // Launches `launch` (buffers resolved with ptr()); asynchronous errors surface in device_sync.
  virtual void launch_kernel(const Launch& launch) = 0;
  // Calls `entry` (the launch's kernel's host or device entry point) with the launch's
  // arguments and buffer addresses; returns the entry's status. One call per kind of kernel
  // (gpu/kernel.h KernelEntry), none per kernel.
  int call_entry(const KernelEntry& entry, const Launch& launch) const;

  // Device address of the user region of `id`; nullptr for kNoBuffer.
  void* ptr(BufferId id) const;
  // Frees every buffer; derived destructors call it (device_free is virtual).
  void release_all() noexcept;

 private:
  struct Allocation {
    void* base = nullptr;  // start of the front guard (adopted: of the caller's storage)
    std::size_t bytes = 0;
    std::string label;
    bool adopted = false;  // the caller's storage: no guards, not freed
  };
  const Allocation& find(BufferId id) const;
  void check_guard_band(BufferId id, const Allocation& a, std::vector<GuardDamage>& out);

  std::map<BufferId, Allocation> buffers_;
  BufferId next_id_ = 1;
  Counters counters_;
};

// Buffers released together when the scope ends, on an exception too: the temporaries of one
// launch, one apply or one test case. The ids stay valid until then; do not release them
// yourself.
class ScopedBuffers {
 public:
  explicit ScopedBuffers(Backend& be) : be_(be) {}
  ~ScopedBuffers() {
    for (BufferId id : ids_) be_.release(id);
  }
  ScopedBuffers(const ScopedBuffers&) = delete;
  ScopedBuffers& operator=(const ScopedBuffers&) = delete;

  BufferId allocate(std::size_t bytes, std::string_view label) {
    ids_.push_back(be_.allocate(bytes, label));
    return ids_.back();
  }
  BufferId adopt(void* storage, std::size_t bytes, std::string_view label) {
    ids_.push_back(be_.adopt(storage, bytes, label));
    return ids_.back();
  }
  template <class T>
  BufferId make(const std::vector<T>& values, std::string_view label) {
    ids_.push_back(be_.make_buffer(std::span<const T>(values.data(), values.size()), label));
    return ids_.back();
  }

 private:
  Backend& be_;
  std::vector<BufferId> ids_;
};

}  // namespace mxgate::gpu
