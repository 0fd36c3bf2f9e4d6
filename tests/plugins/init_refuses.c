/* Test plugin: a valid description whose init() refuses, as a device plugin on a machine without
 * the device does (an environment error: exit code 3). */
#include <string.h>

#include "mxgate/plugin.h"

static mxgate_status run(void* state, const mxgate_call* call, char* msg, size_t size) {
  (void)state;
  (void)call;
  (void)msg;
  (void)size;
  return MXGATE_ERROR;
}

static const char* init(void) { return "no CUDA device (test plugin)"; }

static const mxgate_op kOps[] = {{"upcast",
                                  MXGATE_OP_UPCAST_E8M0,
                                  MXGATE_MEMORY_HOST,
                                  {.struct_size = sizeof(mxgate_contract),
                                   .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E8M0),
                                   .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32),
                                   .convention = "ocp_mx"},
                                  run,
                                  0}};
static const mxgate_impl kImpls[] = {{"init_refuses", "refuses in init()", 1, kOps}};
static const mxgate_plugin kPlugin = {
    MXGATE_PLUGIN_ABI_VERSION, sizeof(mxgate_plugin), "init_refuses", init, 1, kImpls};

MXGATE_PLUGIN_EXPORT const mxgate_plugin* mxgate_plugin_v1(void) { return &kPlugin; }
