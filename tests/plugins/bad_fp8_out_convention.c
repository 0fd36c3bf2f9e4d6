/* Test plugin: a block GEMM that lists E5M2 output under the convention aiter_hip, which casts to
 * E4M3FN and E4M3FNUZ only: the FP8 output cast (plugin.h revision 4) is undefined, so mxgate
 * must refuse the description, naming the dtype and the convention. */
#include "test_plugin.h"

static const mxgate_op kOps[] = {TEST_PLUGIN_HOST_OP(
    "gemm_block_e5m2_out", MXGATE_OP_GEMM_BLOCK, test_plugin_error, 0,
    .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E4M3FN),
    .b_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E4M3FN),
    .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32) | MXGATE_DTYPE_BIT(MXGATE_DTYPE_E5M2),
    .a_scale_layouts = MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_ROW_MAJOR),
    .b_scale_layouts = MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_ROW_MAJOR),
    .b_layouts = MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_ROW_MAJOR), .scale_dtype = MXGATE_DTYPE_F32,
    .convention = "aiter_hip")};
static const mxgate_impl kImpls[] = {
    {"bad_fp8_out_convention", "E5M2 output its convention does not define", 1, kOps}};
TEST_PLUGIN_EXPORT("bad_fp8_out_convention", 0, 1, kImpls)
