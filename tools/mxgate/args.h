// The CLI's option parsing is the API layer's (api/args.h): the verbs use it unqualified.
#pragma once

#include "api/args.h"

namespace mxgate::cli {

using api::Args;
using api::parse_code;
using api::parse_value;
using api::UsageError;

}  // namespace mxgate::cli
