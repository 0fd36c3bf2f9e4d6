#include "tools/mxgate/backend_select.h"

#include "gpu/host/host_backend.h"
#include "tools/mxgate/args.h"
#ifdef MXGATE_HAVE_DEVICE_BACKEND
#include "gpu/device/device_backend.h"
#endif

namespace mxgate::cli {

std::string device_backend_kind() {
#if defined(MXGATE_HAVE_DEVICE_BACKEND) && defined(MXGATE_USE_CUDA)
  return "cuda";
#elif defined(MXGATE_HAVE_DEVICE_BACKEND)
  return "hip";
#else
  return "";
#endif
}

std::unique_ptr<gpu::Backend> make_backend(const std::string& name) {
  if (name == "host") return gpu::make_host_backend();
  if (name != "auto" && name != "hip" && name != "cuda") {
    throw UsageError("--backend must be auto, host, hip or cuda, not '" + name + "'");
  }
  const std::string kind = device_backend_kind();
  if (name != "auto" && kind != name) {
    throw EnvironmentError("backend '" + name + "' is not in this build" +
                           (kind.empty() ? std::string(" (configure with --preset ") + name + ")"
                                         : " (it has " + kind + ")"));
  }
#ifdef MXGATE_HAVE_DEVICE_BACKEND
  std::unique_ptr<gpu::Backend> be = gpu::make_device_backend();
  if (be != nullptr && be->available()) return be;
  if (name != "auto") throw EnvironmentError("backend '" + name + "': no GPU is present");
#endif
  return gpu::make_host_backend();
}

}  // namespace mxgate::cli
