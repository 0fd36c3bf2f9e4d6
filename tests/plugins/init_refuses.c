/* Test plugin: a valid description whose init() refuses, as a device plugin on a machine without
 * the device does (an environment error: exit code 3). */
#include "test_plugin.h"

static const char* init(void) { return "no CUDA device (test plugin)"; }

static const mxgate_op kOps[] = {
    TEST_PLUGIN_HOST_OP("upcast", MXGATE_OP_UPCAST_E8M0, test_plugin_error, 0,
                        .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E8M0),
                        .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32), .convention = "ocp_mx")};
static const mxgate_impl kImpls[] = {{"init_refuses", "refuses in init()", 1, kOps}};
TEST_PLUGIN_EXPORT("init_refuses", init, 1, kImpls)
