// The device backend: HIP on AMD (hipcc) or, through gpu/compat/hip_compat.h, CUDA on NVIDIA
// (nvcc) -- one source, named "hip" or "cuda" by the build. Every runtime call is checked.
#pragma once

#include <memory>

#include "gpu/backend.h"

namespace mxgate::gpu {

// nullptr-safe: returns a backend whose available() is false when no device is present.
std::unique_ptr<Backend> make_device_backend();

}  // namespace mxgate::gpu
