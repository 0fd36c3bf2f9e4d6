/* Test plugin: a bf16 GEMM that lists E4M3FN output. FP8 GEMM output (plugin.h revision 4) is for
 * gemm_mx and gemm_block, whose calls carry out_scale, so mxgate must refuse the description,
 * naming the op and the field. */
#include "test_plugin.h"

static const mxgate_op kOps[] = {TEST_PLUGIN_HOST_OP(
    "gemm_bf16_fp8_out", MXGATE_OP_GEMM_BF16, test_plugin_error, 0,
    .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_BF16),
    .b_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_BF16),
    .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32) | MXGATE_DTYPE_BIT(MXGATE_DTYPE_E4M3FN))};
static const mxgate_impl kImpls[] = {{"bad_fp8_out", "a bf16 GEMM with FP8 output", 1, kOps}};
TEST_PLUGIN_EXPORT("bad_fp8_out", 0, 1, kImpls)
