/* Test plugin: FP4 dequantizers in C through the FP4 additions of the ABI (docs/fp4.md §12.1):
 * packed E2M1 input (element 2i in the low nibble), an MXFP4 op of family DEQUANTIZE (e8m0 1x32
 * scales) and an NVFP4 op of family DEQUANTIZE_NVFP4 (E4M3 1x16 scales, a 1 x 1 global decode
 * scale of dtype F32 or BF16). Implementation `fp4_ops` is correct; `fp4_ops_faulty_nibble`
 * reads element 2i from the high nibble. Written from the format definitions (OCP MX v1.0
 * §5.3.3, §6.3), not from mxgate's code. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "test_plugin.h"

static float f32_from(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* E2M1 s.ee.m: 0 0.5 1 1.5 2 3 4 6. */
static float e2m1(uint8_t c) {
  static const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  return (c & 8) ? -mag[c & 7] : mag[c & 7];
}

/* E8M0: 2^(b - 127), 0xFF NaN. */
static float e8m0(uint8_t b) {
  if (b == 0xFF) return f32_from(0x7FC00000u);
  if (b == 0) return f32_from(0x00400000u);
  return f32_from((uint32_t)b << 23);
}

/* E4M3FN: bias 7, S.1111.111 NaN, exponent 0 subnormal m * 2^-9. */
static float e4m3(uint8_t b) {
  const uint32_t e = (b >> 3) & 0xF, m = b & 7, sign = (uint32_t)(b & 0x80) << 24;
  if (e == 15 && m == 7) return f32_from(0x7FC00000u);
  if (e == 0) return f32_from(sign | f32_bits((float)m * 0.001953125f)); /* m * 2^-9 */
  return f32_from(sign | ((e - 7 + 127) << 23) | (m << 20));
}

static uint16_t bf16_rne(float x) {
  const uint32_t u = f32_bits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static uint8_t code_at(const mxgate_tensor* t, uint64_t r, uint64_t c, int high_first) {
  const uint8_t* row = (const uint8_t*)t->data + r * ((t->cols + 1) / 2);
  const uint8_t b = row[c / 2];
  const int high = (c & 1) != 0;
  return (uint8_t)((high != high_first) ? (b >> 4) : (b & 0xF));
}

static void store(const mxgate_tensor* out, uint64_t i, float y) {
  if (out->dtype == MXGATE_DTYPE_BF16) {
    ((uint16_t*)out->data)[i] = bf16_rne(y);
  } else {
    ((float*)out->data)[i] = y;
  }
}

static mxgate_status dequantize(void* state, const mxgate_call* call, char* msg, size_t size) {
  const int high_first = state != 0;
  (void)msg;
  (void)size;
  const int nv = call->family == MXGATE_OP_DEQUANTIZE_NVFP4;
  if (nv && call->struct_size < offsetof(mxgate_call, b_global)) return MXGATE_ERROR;
  const uint64_t block = nv ? 16 : 32;
  const uint64_t ld = call->a_scale.ld != 0 ? call->a_scale.ld : (call->k + block - 1) / block;
  float global = 1.0f;
  if (nv) {
    if (call->a_global.dtype == MXGATE_DTYPE_BF16) {
      global = f32_from((uint32_t)(*(const uint16_t*)call->a_global.data) << 16);
    } else {
      memcpy(&global, call->a_global.data, 4);
    }
  }
  for (uint64_t r = 0; r < call->m; ++r) {
    for (uint64_t c = 0; c < call->k; ++c) {
      const uint8_t s = ((const uint8_t*)call->a_scale.data)[r * ld + c / block];
      const float x = e2m1(code_at(&call->a, r, c, high_first));
      const float y = nv ? (x * e4m3(s)) * global : x * e8m0(s);
      store(&call->out, r * call->k + c, y);
    }
  }
  return MXGATE_DONE;
}

#define OUT_DTYPES (MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32) | MXGATE_DTYPE_BIT(MXGATE_DTYPE_BF16))
/* A row-major 1 x BLOCK packed-E2M1 dequantizer; NVFP4 adds the global decode scale's dtypes. */
#define FP4_OP(NAME, FAMILY, SCALE_DTYPE, BLOCK, CONVENTION, GLOBAL_DTYPES, STATE)               \
  TEST_PLUGIN_HOST_OP(NAME, FAMILY, dequantize, STATE,                                           \
                      .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E2M1), .out_dtypes = OUT_DTYPES, \
                      .a_scale_layouts = MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_ROW_MAJOR),             \
                      .scale_dtype = SCALE_DTYPE, .a_block_rows = 1, .a_block_cols = BLOCK,      \
                      .convention = CONVENTION, .global_dtypes = GLOBAL_DTYPES)
#define OPS(STATE)                                                                               \
  {                                                                                              \
    FP4_OP("dequantize_mxfp4", MXGATE_OP_DEQUANTIZE, MXGATE_DTYPE_E8M0, 32, "ocp_mx", 0, STATE), \
        FP4_OP("dequantize_nvfp4", MXGATE_OP_DEQUANTIZE_NVFP4, MXGATE_DTYPE_E4M3FN, 16,          \
               "te_nvfp4_ref", OUT_DTYPES, STATE)                                                \
  }

static int kHighFirst = 1;
static const mxgate_op kOps[] = OPS(0);
static const mxgate_op kFaultyOps[] = OPS(&kHighFirst);
static const mxgate_impl kImpls[] = {
    {"fp4_ops", "FP4 dequantizers from the format definitions", 2, kOps},
    {"fp4_ops_faulty_nibble", "planted fault: element 2i read from the high nibble", 2,
     kFaultyOps}};
TEST_PLUGIN_EXPORT("fp4_ops", 0, 2, kImpls)
