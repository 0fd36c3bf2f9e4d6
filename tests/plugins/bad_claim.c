/* Test plugin: claims "e8m0:no_such_rule", a rule reference/e8m0.h does not have. */
#include "test_plugin.h"

static const mxgate_op kOps[] = {TEST_PLUGIN_E8M0_CAST_OP("e8m0:no_such_rule")};
static const mxgate_impl kImpls[] = {{"bad_claim", "a claim of no rule", 1, kOps}};
TEST_PLUGIN_EXPORT("bad_claim", 0, 1, kImpls)
