// The CLI's option parsing is the verbs library's (verbs/args.h): the verbs use it unqualified.
#pragma once

#include "verbs/args.h"

namespace mxgate::cli {

using verbs::Args;
using verbs::parse_code;
using verbs::parse_value;
using verbs::UsageError;

}  // namespace mxgate::cli
