#include "tools/mxgate/impl_select.h"

#include "impl/plugin.h"
#include "impl/registry.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/backend_select.h"

namespace mxgate::cli {

std::vector<const impl::Implementation*> impls_option(const std::optional<std::string>& specs,
                                                      bool call_init) {
  try {
    return impl::resolve_list(specs.value_or("builtin"), call_init);
  } catch (const impl::PluginError& e) {
    if (e.kind() == impl::PluginError::Kind::kEnvironment) throw EnvironmentError(e.what());
    throw UsageError(e.what());
  }
}

const impl::Implementation& one_impl(const std::string& spec) {
  const std::vector<const impl::Implementation*> all = impls_option(spec);
  if (all.size() != 1) {
    throw UsageError("--impl " + spec + " names " + std::to_string(all.size()) +
                     " implementations; name one (PATH.so:NAME, PLUGIN:NAME)");
  }
  return *all.front();
}

}  // namespace mxgate::cli
