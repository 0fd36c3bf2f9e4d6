// `--impl SPEC[,SPEC...]` of the verbs: the implementations under test (impl/registry.h; default
// builtin). A plugin that cannot be loaded is a UsageError naming it and the symbol or field
// (exit code 2), one whose init() refuses an EnvironmentError (exit code 3).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "impl/op.h"

namespace mxgate::cli {

std::vector<const impl::Implementation*> impls_option(const std::optional<std::string>& specs,
                                                      bool call_init = true);
// Exactly one implementation (repro, --save).
const impl::Implementation& one_impl(const std::string& spec);

}  // namespace mxgate::cli
