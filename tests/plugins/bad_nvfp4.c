/* Test plugin: an NVFP4 op whose contract names e8m0 block scales; NVFP4's block scales are E4M3
 * (docs/fp4.md §12.1), so mxgate must refuse the description, naming the op and the field. */
#include "mxgate/plugin.h"

static mxgate_status never(void* state, const mxgate_call* call, char* msg, size_t size) {
  (void)state;
  (void)call;
  (void)msg;
  (void)size;
  return MXGATE_ERROR;
}

static const mxgate_op kOps[] = {
    {"gemm_nvfp4_e8m0",
     MXGATE_OP_GEMM_NVFP4,
     MXGATE_MEMORY_HOST,
     {.struct_size = sizeof(mxgate_contract),
      .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E2M1),
      .b_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E2M1),
      .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32),
      .scale_dtype = MXGATE_DTYPE_E8M0,
      .a_block_rows = 1,
      .a_block_cols = 16,
      .b_block_rows = 1,
      .b_block_cols = 16,
      .global_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32)},
     never,
     0},
};
static const mxgate_impl kImpls[] = {{"bad_nvfp4", "an NVFP4 op with e8m0 scales", 1, kOps}};
static const mxgate_plugin kPlugin = {
    MXGATE_PLUGIN_ABI_VERSION, sizeof(mxgate_plugin), "bad_nvfp4", 0, 1, kImpls};

MXGATE_PLUGIN_EXPORT const mxgate_plugin* mxgate_plugin_v1(void) { return &kPlugin; }
