/* Test plugin: an op of family 42, which no mxgate_op_family is (a malformed description). */
#include "test_plugin.h"

static const mxgate_op kOps[] = {TEST_PLUGIN_HOST_OP(
    "mystery", 42u, test_plugin_error, 0, .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32),
    .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32))};
static const mxgate_impl kImpls[] = {{"bad_family", "an op of no family", 1, kOps}};
TEST_PLUGIN_EXPORT("bad_family", 0, 1, kImpls)
