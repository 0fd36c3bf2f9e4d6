// Shared by the test_gpu_plugins_*.cpp files, which build one program (test_gpu_plugins, cuda
// preset): the shipped NVIDIA plugins loaded through dlopen and seen through the plugin C ABI only
// (MXGATE_PLUGIN_DIR, else the build tree next to the binary), the fixture whose tests SKIP when
// no CUDA device is present (decided by cudaGetDeviceCount alone), device buffers with guard
// bands, the seed (MXGATE_SEED) and a cast op's output dtype.
#pragma once

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/kernels/cast_sweep/cast_sweep.h"
#include "mxgate/plugin.h"

namespace mxgate::plugin_test {

inline uint64_t base_seed() {
  const char* s = std::getenv("MXGATE_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 1;
}

// ---- Loading the plugins ----------------------------------------------------------------------

inline std::string exe_dir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string p(buf);
  return p.substr(0, p.rfind('/'));
}

// MXGATE_PLUGIN_DIR/libmxgate_<name>.so, else the build tree next to this binary.
inline std::string plugin_path(const std::string& name) {
  if (const char* dir = std::getenv("MXGATE_PLUGIN_DIR")) {
    return std::string(dir) + "/libmxgate_" + name + ".so";
  }
  return exe_dir() + "/../plugins/" + name + "/libmxgate_" + name + ".so";
}

struct Loaded {
  std::string path;
  std::string error;
  const mxgate_plugin* plugin = nullptr;
  bool init_done = false;
  std::string init_error;
};

inline Loaded& load(const std::string& name) {
  static std::map<std::string, Loaded> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  Loaded& l = cache[name];
  l.path = plugin_path(name);
  void* h = dlopen(l.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    l.error = std::string("dlopen: ") + dlerror();
    return l;
  }
  auto entry = reinterpret_cast<mxgate_plugin_entry_fn>(dlsym(h, MXGATE_PLUGIN_ENTRY_SYMBOL));
  if (entry == nullptr) {
    l.error = std::string("dlsym ") + MXGATE_PLUGIN_ENTRY_SYMBOL + ": " + dlerror();
    return l;
  }
  l.plugin = entry();
  if (l.plugin == nullptr) l.error = "entry point returned NULL";
  return l;
}

// The plugin after init(); empty error string when ready.
inline const mxgate_plugin* ready(const std::string& name, std::string* error) {
  Loaded& l = load(name);
  if (!l.error.empty()) {
    *error = l.path + ": " + l.error;
    return nullptr;
  }
  if (!l.init_done) {
    l.init_done = true;
    const char* why = l.plugin->init ? l.plugin->init() : nullptr;
    if (why != nullptr) l.init_error = why;
  }
  if (!l.init_error.empty()) {
    *error = l.init_error;
    return nullptr;
  }
  return l.plugin;
}

inline std::vector<const mxgate_op*> ops_of(const mxgate_plugin* p) {
  std::vector<const mxgate_op*> out;
  for (uint32_t i = 0; i < p->impl_count; ++i) {
    for (uint32_t j = 0; j < p->impls[i].op_count; ++j) out.push_back(&p->impls[i].ops[j]);
  }
  return out;
}

inline bool device_present() { return sweep::CastSweeper::device_present(); }

class GpuPlugins : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device_present()) GTEST_SKIP() << "no CUDA device";
  }
  const mxgate_plugin* plugin(const std::string& name) {
    std::string error;
    const mxgate_plugin* p = ready(name, &error);
    EXPECT_NE(p, nullptr) << name << ": " << error;
    return p;
  }
};

// ---- Device buffers with guard bands -----------------------------------------------------------

inline constexpr size_t kGuard = 256;  // keeps the payload 16-byte aligned

inline uint8_t guard_byte(size_t j) { return static_cast<uint8_t>(0x5Au ^ (j * 13u)); }

class DeviceBuffer {
 public:
  DeviceBuffer(size_t bytes, uint8_t poison) : bytes_(bytes) {
    const size_t payload = (bytes + 15) / 16 * 16;
    total_ = payload + 2 * kGuard;
    if (cudaMalloc(&base_, total_) != cudaSuccess) throw std::runtime_error("cudaMalloc");
    std::vector<uint8_t> host(total_, poison);
    for (size_t j = 0; j < kGuard; ++j) {
      host[j] = guard_byte(j);
      host[total_ - kGuard + j] = guard_byte(j + kGuard);
    }
    cudaMemcpy(base_, host.data(), total_, cudaMemcpyHostToDevice);
  }
  ~DeviceBuffer() { cudaFree(base_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return static_cast<uint8_t*>(base_) + kGuard; }
  size_t bytes() const { return bytes_; }
  void upload(const void* src, size_t n) { cudaMemcpy(data(), src, n, cudaMemcpyHostToDevice); }
  void download(void* dst, size_t n) const { cudaMemcpy(dst, data(), n, cudaMemcpyDeviceToHost); }
  bool guards_intact() const {
    std::vector<uint8_t> host(total_);
    cudaMemcpy(host.data(), base_, total_, cudaMemcpyDeviceToHost);
    for (size_t j = 0; j < kGuard; ++j) {
      if (host[j] != guard_byte(j) || host[total_ - kGuard + j] != guard_byte(j + kGuard)) {
        return false;
      }
    }
    return true;
  }

 private:
  void* base_ = nullptr;
  size_t bytes_;
  size_t total_;
};

// The dtype a cast op writes: the lowest of its output dtypes.
inline mxgate_dtype cast_target(const mxgate_op& op) {
  for (uint32_t d = 1; d < 64; ++d) {
    if (op.contract.out_dtypes & MXGATE_DTYPE_BIT(d)) return static_cast<mxgate_dtype>(d);
  }
  return MXGATE_DTYPE_NONE;
}

}  // namespace mxgate::plugin_test
