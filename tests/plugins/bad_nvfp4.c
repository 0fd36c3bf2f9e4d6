/* Test plugin: an NVFP4 op whose contract names e8m0 block scales; NVFP4's block scales are E4M3
 * (docs/fp4.md §12.1), so mxgate must refuse the description, naming the op and the field. */
#include "test_plugin.h"

static const mxgate_op kOps[] = {TEST_PLUGIN_HOST_OP(
    "gemm_nvfp4_e8m0", MXGATE_OP_GEMM_NVFP4, test_plugin_error, 0,
    .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E2M1),
    .b_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E2M1),
    .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32), .scale_dtype = MXGATE_DTYPE_E8M0,
    .a_block_rows = 1, .a_block_cols = 16, .b_block_rows = 1, .b_block_cols = 16,
    .global_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32))};
static const mxgate_impl kImpls[] = {{"bad_nvfp4", "an NVFP4 op with e8m0 scales", 1, kOps}};
TEST_PLUGIN_EXPORT("bad_nvfp4", 0, 1, kImpls)
