/* Test plugin: speaks ABI version 99 (mxgate must refuse it, naming the version and symbol). */
#include "mxgate/plugin.h"

static const mxgate_plugin kPlugin = {99u, sizeof(mxgate_plugin), "bad_abi", 0, 0, 0};

MXGATE_PLUGIN_EXPORT const mxgate_plugin* mxgate_plugin_v1(void) { return &kPlugin; }
