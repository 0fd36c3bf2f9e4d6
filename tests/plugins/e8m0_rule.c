/* Test plugin: a cast to e8m0 claiming a rule no convention holds, "e8m0:floor_sat" (CUDA's
 * round-to-zero SATFINITE e8m0 conversion: the exponent field, Inf -> 0xFE, NaN -> 0xFF). */
#include "test_plugin.h"

static const mxgate_op kOps[] = {TEST_PLUGIN_E8M0_CAST_OP("e8m0:floor_sat")};
static const mxgate_impl kImpls[] = {{"e8m0_rule", "an e8m0:RULE claim", 1, kOps}};
TEST_PLUGIN_EXPORT("e8m0_rule", 0, 1, kImpls)
