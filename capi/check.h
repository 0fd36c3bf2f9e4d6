// mxgate_api_check (include/mxgate/api.h): a property of properties/ run against an
// implementation built in memory by the caller (an mxgate_impl whose ops' run functions are the
// caller's callbacks: the Python package's ctypes adapters, docs/python.md §9), with the CLI
// property runner's generators, contracts and shrinking, on a host backend. The result is JSON
// (schema mxgate-check/1).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mxgate/plugin.h"

namespace mxgate::capi {

using NamedOptions = std::vector<std::pair<std::string, std::optional<std::string>>>;

// property nullptr: the property list ([{"name", "families", "guards"}]). Options: seed, cases,
// max-size, case (one case's text: replayed without its generator), no-shrink (a flag). Throws
// verbs::UsageError on bad input (an unknown property or option, a malformed implementation or
// case).
std::string check_json(const char* property, const NamedOptions& options, const mxgate_impl* impl);

}  // namespace mxgate::capi
