// Picks the backend a verb runs on: `host` (the CPU models, always built), `hip` / `cuda` (the
// device backend of a hip or cuda build), `auto` (the device when this build has one and a GPU
// is present, else host). Asking for a device this build or machine lacks is an
// EnvironmentError (exit code 3), never a silent fallback.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "gpu/backend.h"

namespace mxgate::cli {

struct EnvironmentError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::unique_ptr<gpu::Backend> make_backend(const std::string& name);

// "hip", "cuda" or "" (no device backend in this build).
std::string device_backend_kind();

}  // namespace mxgate::cli
