/* Test plugin: a contract with a flag bit mxgate does not know (1 << 7). */
#include "test_plugin.h"

static const mxgate_op kOps[] = {TEST_PLUGIN_HOST_OP(
    "e8m0_rz_satfinite", MXGATE_OP_CAST, test_plugin_e8m0_rz_satfinite, 0,
    .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32),
    .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E8M0), .flags = 1u << 7)};
static const mxgate_impl kImpls[] = {{"bad_flags", "an unknown contract flag", 1, kOps}};
TEST_PLUGIN_EXPORT("bad_flags", 0, 1, kImpls)
