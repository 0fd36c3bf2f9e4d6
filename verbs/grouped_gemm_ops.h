// check-gemm on grouped dumps (verbs/tensor_ops.h GroupedCheckSpec): the option checks. Internal
// to verbs/.
#pragma once

#include <optional>

#include "verbs/args.h"
#include "verbs/tensor_ops.h"

namespace mxgate::verbs {

// --offsets / --offsets-kind / --offsets-alignment / --masked-counts / --c-before; none when the
// dump is dense (and then none of them may be given).
std::optional<GroupedCheckSpec> grouped_check_spec(const Args& a);

}  // namespace mxgate::verbs
