// Naming implementations on the command line (--impl SPEC) and in regression files:
//   builtin          the built-in implementation
//   PATH             a plugin file (a SPEC with a '/' or ending in .so): every implementation in it
//   PATH:NAME        the implementation NAME of that plugin
//   NAME             a shipped plugin, NAME/libmxgate_NAME.so (or libmxgate_NAME.so) in a plugin
//                    folder: its implementation
//                    NAME when it has one (`example`), else every implementation in it
//   NAME:IMPL        the implementation IMPL of shipped plugin NAME (`example:example_faulty_x`)
//   NAME:all         every implementation of shipped plugin NAME
//   py:MODULE:OBJECT a Python adapter, run in a worker process (impl/python.h)
// Plugin folders, searched in order: $MXGATE_PLUGIN_DIR (':'-separated), the build tree's
// plugins/ found from the running program (../../plugins from tools/mxgate/mxgate, ../plugins
// from tests/), and the folder this build wrote its plugins to. docs/plugins.md §6.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/op.h"
#include "impl/plugin.h"

namespace mxgate::impl {

// The implementations SPEC names (process lifetime). Throws PluginError: kInput when SPEC names
// nothing (the message lists what exists), else as load_plugin.
std::vector<const Implementation*> resolve(std::string_view spec, bool call_init = true);
// A comma-separated list of SPECs, in order, without repeats.
std::vector<const Implementation*> resolve_list(std::string_view specs, bool call_init = true);

std::vector<std::string> plugin_dirs();
std::optional<std::string> shipped_plugin_path(std::string_view name);
// The NAMEs of every libmxgate_NAME.so in the plugin folders, sorted.
std::vector<std::string> shipped_plugin_names();

}  // namespace mxgate::impl
