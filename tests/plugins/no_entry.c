/* Test plugin: a shared library without the entry symbol mxgate_plugin_v1. */
#include "mxgate/plugin.h"

MXGATE_PLUGIN_EXPORT int not_an_mxgate_plugin(void) { return 1; }
