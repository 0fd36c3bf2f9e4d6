/* Shared pieces of the test plugins in this folder: run functions that ignore their call and
 * answer one status, the CUDA-style e8m0 cast that two plugins declare under different rules, a
 * host op with the current contract, and the plugin table with its entry point. Each plugin file
 * keeps what it tests (the description it gets wrong or the behaviour it plants). */
#ifndef MXGATE_TESTS_PLUGINS_TEST_PLUGIN_H
#define MXGATE_TESTS_PLUGINS_TEST_PLUGIN_H

#include <stdint.h>
#include <string.h>

#include "mxgate/plugin.h"

/* A run function for ops that must never do work: mxgate refuses their description, or init()
 * refuses first. */
static inline mxgate_status test_plugin_error(void* state, const mxgate_call* call, char* msg,
                                              size_t size) {
  (void)state;
  (void)call;
  (void)msg;
  (void)size;
  return MXGATE_ERROR;
}

/* f32 -> e8m0 as CUDA's round-to-zero SATFINITE conversion: the exponent field, Inf -> 0xFE,
 * NaN -> 0xFF. */
static inline mxgate_status test_plugin_e8m0_rz_satfinite(void* state, const mxgate_call* call,
                                                          char* msg, size_t size) {
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

/* e8m0 -> f32 (OCP MX): 2^(b - 127), 0x00 the subnormal 2^-127, 0xFF NaN. */
static inline mxgate_status test_plugin_e8m0_upcast(void* state, const mxgate_call* call, char* msg,
                                                    size_t size) {
  (void)state;
  (void)msg;
  (void)size;
  const uint8_t* in = (const uint8_t*)call->a.data;
  float* out = (float*)call->out.data;
  for (uint64_t i = 0; i < call->m * call->k; ++i) {
    const uint32_t u = in[i] == 0xFF ? 0x7FC00000u
                       : in[i] == 0  ? 0x00400000u
                                     : (uint32_t)in[i] << 23;
    memcpy(&out[i], &u, 4);
  }
  return MXGATE_DONE;
}

/* One host-memory op with the current header's contract; the varargs are the contract's fields
 * after struct_size (designated initializers). */
#define TEST_PLUGIN_HOST_OP(NAME, FAMILY, RUN, STATE, ...)                                        \
  {                                                                                               \
    NAME, FAMILY, MXGATE_MEMORY_HOST, {.struct_size = sizeof(mxgate_contract), __VA_ARGS__}, RUN, \
        STATE                                                                                     \
  }

/* The e8m0 cast op claiming CONVENTION: what it claims is the plugin's test. */
#define TEST_PLUGIN_E8M0_CAST_OP(CONVENTION)                                                 \
  TEST_PLUGIN_HOST_OP("e8m0_rz_satfinite", MXGATE_OP_CAST, test_plugin_e8m0_rz_satfinite, 0, \
                      .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32),                        \
                      .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E8M0), .convention = CONVENTION)

/* The plugin description of NAME and its entry point mxgate_plugin_v1. */
#define TEST_PLUGIN_EXPORT(NAME, INIT, IMPL_COUNT, IMPLS)                               \
  static const mxgate_plugin kPlugin = {                                                \
      MXGATE_PLUGIN_ABI_VERSION, sizeof(mxgate_plugin), NAME, INIT, IMPL_COUNT, IMPLS}; \
  MXGATE_PLUGIN_EXPORT const mxgate_plugin* mxgate_plugin_v1(void) { return &kPlugin; }

#endif
