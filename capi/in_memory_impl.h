// The implementation a caller of libmxgate.so builds in memory (an mxgate_impl whose ops' run
// functions are its callbacks: the Python package's ctypes adapters, docs/python.md §9), seen as
// a loaded plugin: one place for mxgate_api_check (property_check.cpp) and mxgate_api_survey_cast
// (cast_survey_api.cpp).
#pragma once

#include "impl/op.h"
#include "mxgate/plugin.h"

namespace mxgate::capi {

// `mi` through the plugin loader's checks (impl/plugin.h implementations_of), as a plugin named
// "python" would be. Throws verbs::UsageError for a null `mi` and for a malformed one (the
// loader's message, naming the field).
impl::Implementation in_memory_implementation(const mxgate_impl* mi);

}  // namespace mxgate::capi
