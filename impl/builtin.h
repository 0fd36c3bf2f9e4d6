// The built-in implementation `builtin`: one op per row of the kernel table that has a family
// (gpu/kernel_table.cpp), named as the kernel, with the row's contract. Its ops use the memory
// of the backend under test (Memory::kBackend) and run the kernel there through Backend::run
// (host models, HIP or CUDA), with the zoo's kernel faults of the run (impl::RunContext, which
// the harness hands over as Call::kernel_faults).
#pragma once

#include "impl/op.h"

namespace mxgate::impl {

const Implementation& builtin();

}  // namespace mxgate::impl
