// Loading implementations from a plugin: a shared library implementing the C ABI of
// include/mxgate/plugin.h, opened with dlopen. The library is checked (the entry symbol, the ABI
// version, the struct sizes, every name, family, memory, dtype and layout bit, convention and
// accumulator name) before any of its ops can run, and each problem is a PluginError naming the
// plugin and the symbol or field. A library stays loaded for the rest of the process; loading it
// again returns the same implementations and does not call init() twice. docs/plugins.md §5.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "impl/op.h"

namespace mxgate::impl {

class PluginError : public std::runtime_error {
 public:
  // kInput: a missing file, a missing symbol, a wrong ABI version, a malformed description
  // (exit code 2); kEnvironment: the plugin's init() refused (e.g. no device, exit code 3).
  enum class Kind { kInput, kEnvironment };
  PluginError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Every implementation in the plugin at `path`, in the plugin's order. `call_init`: run the
// plugin's init() (once per process) before returning; `mxgate impls` lists without it.
std::vector<Implementation> load_plugin(const std::string& path, bool call_init = true);

// The implementations of a plugin description already in memory, checked as load_plugin checks
// a library's (names, families, memory, dtype and layout bits, conventions, accumulator names):
// the Python routes build one (capi/property_check.cpp from ctypes, impl/python.cpp from a worker's
// handshake). `origin` names it in messages and in Implementation::origin. Throws PluginError
// (kInput) naming the field.
std::vector<Implementation> implementations_of(const std::string& origin, const mxgate_plugin& p);

}  // namespace mxgate::impl
