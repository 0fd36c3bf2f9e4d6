// The property suites on the host backend (the contract-faithful CPU models of every kernel):
// ctest label `property`, one ctest entry per property. See tests/property_suite.h.
#include <memory>

#include "gpu/host/host_backend.h"
#include "tests/property_suite.h"

namespace mxgate::gpu {
std::unique_ptr<Backend> make_backend_under_test() { return std::make_unique<HostBackend>(); }
}  // namespace mxgate::gpu
