/* Test plugin: an op of family 42, which no mxgate_op_family is (a malformed description). */
#include "mxgate/plugin.h"

static mxgate_status run(void* state, const mxgate_call* call, char* msg, size_t size) {
  (void)state;
  (void)call;
  (void)msg;
  (void)size;
  return MXGATE_DONE;
}

static const mxgate_op kOps[] = {{"mystery",
                                  42u,
                                  MXGATE_MEMORY_HOST,
                                  {.struct_size = sizeof(mxgate_contract),
                                   .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32),
                                   .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32)},
                                  run,
                                  0}};
static const mxgate_impl kImpls[] = {{"bad_family", "an op of no family", 1, kOps}};
static const mxgate_plugin kPlugin = {
    MXGATE_PLUGIN_ABI_VERSION, sizeof(mxgate_plugin), "bad_family", 0, 1, kImpls};

MXGATE_PLUGIN_EXPORT const mxgate_plugin* mxgate_plugin_v1(void) { return &kPlugin; }
