#include "capi/in_memory_impl.h"

#include <vector>

#include "impl/plugin.h"
#include "verbs/args.h"

namespace mxgate::capi {

impl::Implementation in_memory_implementation(const mxgate_impl* mi) {
  if (mi == nullptr) throw verbs::UsageError("impl is NULL");
  const mxgate_plugin plugin{
      MXGATE_PLUGIN_ABI_VERSION, sizeof(mxgate_plugin), "python", nullptr, 1, mi};
  std::vector<impl::Implementation> impls;
  try {
    impls = impl::implementations_of("python (in-process)", plugin);
  } catch (const impl::PluginError& e) {
    throw verbs::UsageError(e.what());
  }
  return std::move(impls.front());
}

}  // namespace mxgate::capi
