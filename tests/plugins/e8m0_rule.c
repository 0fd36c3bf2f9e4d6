/* Test plugin: a cast to e8m0 claiming a rule no convention holds, "e8m0:floor_sat" (CUDA's
 * round-to-zero SATFINITE e8m0 conversion: the exponent field, Inf -> 0xFE, NaN -> 0xFF). */
#include <stdint.h>
#include <string.h>

#include "mxgate/plugin.h"

static mxgate_status cast(void* state, const mxgate_call* call, char* msg, size_t size) {
  (void)state;
  (void)msg;
  (void)size;
  const float* in = (const float*)call->a.data;
  uint8_t* out = (uint8_t*)call->out.data;
  for (uint64_t i = 0; i < call->m * call->k; ++i) {
    uint32_t u;
    memcpy(&u, &in[i], 4);
    const uint32_t a = u & 0x7FFFFFFFu;
    out[i] = a == 0x7F800000u ? 0xFE : (uint8_t)(a >> 23);
  }
  return MXGATE_DONE;
}

static const mxgate_op kOps[] = {{"e8m0_rz_satfinite",
                                  MXGATE_OP_CAST,
                                  MXGATE_MEMORY_HOST,
                                  {.struct_size = sizeof(mxgate_contract),
                                   .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32),
                                   .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E8M0),
                                   .convention = "e8m0:floor_sat"},
                                  cast,
                                  0}};
static const mxgate_impl kImpls[] = {{"e8m0_rule", "an e8m0:RULE claim", 1, kOps}};
static const mxgate_plugin kPlugin = {
    MXGATE_PLUGIN_ABI_VERSION, sizeof(mxgate_plugin), "e8m0_rule", 0, 1, kImpls};

MXGATE_PLUGIN_EXPORT const mxgate_plugin* mxgate_plugin_v1(void) { return &kPlugin; }
