/* Test plugin: e8m0 upcasts (family upcast_e8m0, host memory) that misbehave in every way the
 * harness must name, one implementation each:
 *   declines   MXGATE_UNSUPPORTED for more than 7 elements although its contract takes any
 *              count: a contract mismatch (a failure)
 *   errors     MXGATE_ERROR with a message
 *   overruns   writes one float past its output: guard damage (an error)
 *   crashes    dereferences NULL (the gate's watchdog reports the signal)
 *   hangs      never returns (the gate's watchdog kills it and names the op)
 *   device     a correct op declared in CUDA memory: unsupported on the host backend
 *   narrow     correct, contract K <= 16: cases beyond it are never generated */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "mxgate/plugin.h"

enum mode { DECLINES, ERRORS, OVERRUNS, CRASHES, HANGS, CORRECT };

static float decode(uint8_t e) {
  uint32_t u = e == 0xFF ? 0x7FC00000u : e == 0 ? 0x00400000u : (uint32_t)e << 23;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static mxgate_status run(void* state, const mxgate_call* call, char* msg, size_t size) {
  const enum mode m = (enum mode)(intptr_t)state;
  const uint64_t count = call->m * call->k;
  const uint8_t* in = (const uint8_t*)call->a.data;
  float* out = (float*)call->out.data;
  switch (m) {
    case DECLINES:
      if (count > 7) {
        strncpy(msg, "more than 7 elements", size - 1);
        return MXGATE_UNSUPPORTED;
      }
      break;
    case ERRORS:
      strncpy(msg, "the test plugin's library error", size - 1);
      return MXGATE_ERROR;
    case CRASHES:
      *(volatile int*)0 = 1;
      break;
    case HANGS:
      for (;;) pause();
    default:
      break;
  }
  for (uint64_t i = 0; i < count; ++i) out[i] = decode(in[i]);
  if (m == OVERRUNS) out[count] = 1.0f;
  return MXGATE_DONE;
}

#define UPCAST(mem, kmax, mode)                            \
  {                                                        \
    "upcast", MXGATE_OP_UPCAST_E8M0, (mem),                \
        {.struct_size = sizeof(mxgate_contract),           \
         .k_max = (kmax),                                  \
         .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E8M0),  \
         .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32), \
         .convention = "ocp_mx"},                          \
        run, (void*)(intptr_t)(mode)                       \
  }

static const mxgate_op kDeclines[] = {UPCAST(MXGATE_MEMORY_HOST, 0, DECLINES)};
static const mxgate_op kErrors[] = {UPCAST(MXGATE_MEMORY_HOST, 0, ERRORS)};
static const mxgate_op kOverruns[] = {UPCAST(MXGATE_MEMORY_HOST, 0, OVERRUNS)};
static const mxgate_op kCrashes[] = {UPCAST(MXGATE_MEMORY_HOST, 0, CRASHES)};
static const mxgate_op kHangs[] = {UPCAST(MXGATE_MEMORY_HOST, 0, HANGS)};
static const mxgate_op kDevice[] = {UPCAST(MXGATE_MEMORY_CUDA, 0, CORRECT)};
static const mxgate_op kNarrow[] = {UPCAST(MXGATE_MEMORY_HOST, 16, CORRECT)};

static const mxgate_impl kImpls[] = {
    {"declines", "declines inside its contract", 1, kDeclines},
    {"errors", "returns MXGATE_ERROR", 1, kErrors},
    {"overruns", "writes past its output", 1, kOverruns},
    {"crashes", "dereferences NULL", 1, kCrashes},
    {"hangs", "never returns", 1, kHangs},
    {"device", "a CUDA-memory op", 1, kDevice},
    {"narrow", "correct, K <= 16", 1, kNarrow},
};
static const mxgate_plugin kPlugin = {
    MXGATE_PLUGIN_ABI_VERSION, sizeof(mxgate_plugin), "misbehaving", 0, 7, kImpls};

MXGATE_PLUGIN_EXPORT const mxgate_plugin* mxgate_plugin_v1(void) { return &kPlugin; }
