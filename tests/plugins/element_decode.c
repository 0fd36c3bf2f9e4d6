/* Test plugin: element decoders with one planted fault per end-of-range code class, the plants
 * of the element extremes that properties.coverage requires (properties/extreme_scales.h):
 * an FP8 dequantizer (E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ codes x e8m0 1x32 scales), a packed-E2M1
 * one (MXFP4) and an MXFP4 x MXFP4 GEMM (e8m0 1x32 scales, row-major, fp32 sums), all three
 * decoding elements through one function written from the format definitions (OCP MX v1.0
 * §5.3.3, OCP FP8, the FNUZ rule: 0x80 alone is NaN), not from mxgate's code. Implementation
 * `element_decode` is correct; each `element_decode_faulty_CLASS` decodes one class wrongly:
 *   max         the largest finite magnitude read as Inf (a saturation bound one code low)
 *   min_normal  exponent field 1 decoded by the subnormal rule (no implicit 1): it reads 0
 *   subnormal   exponent field 0 with a nonzero mantissa flushed to zero (denormals-are-zero)
 *   zero        exponent field 0 decoded as a normal (no subnormal branch): +-0 reads +-2^-bias
 *   neg_zero    -0 read as +0 (the sign of a zero dropped)
 * The NaN and Inf codes have zoo plants of the built-in dequantizer (Z24, Z25, Z26). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "test_plugin.h"

typedef enum fault {
  FAULT_NONE,
  FAULT_MAX,
  FAULT_MIN_NORMAL,
  FAULT_SUBNORMAL,
  FAULT_ZERO,
  FAULT_NEG_ZERO
} fault;

/* How a format spells its specials. */
typedef enum special { SPECIAL_NONE, SPECIAL_FN, SPECIAL_IEEE, SPECIAL_FNUZ } special;

typedef struct format {
  int exp_bits, man_bits, bias;
  special style;
} format;

static const format kE2m1 = {2, 1, 1, SPECIAL_NONE};

static int format_of(uint32_t dtype, format* f) {
  switch (dtype) {
    case MXGATE_DTYPE_E4M3FN:
      *f = (format){4, 3, 7, SPECIAL_FN};
      return 1;
    case MXGATE_DTYPE_E5M2:
      *f = (format){5, 2, 15, SPECIAL_IEEE};
      return 1;
    case MXGATE_DTYPE_E4M3FNUZ:
      *f = (format){4, 3, 8, SPECIAL_FNUZ};
      return 1;
    case MXGATE_DTYPE_E5M2FNUZ:
      *f = (format){5, 2, 16, SPECIAL_FNUZ};
      return 1;
    case MXGATE_DTYPE_E2M1:
      *f = kE2m1;
      return 1;
    default:
      return 0;
  }
}

/* The magnitude of the finite code with exponent field e and mantissa m (subnormal when e = 0). */
static float magnitude(const format* f, uint32_t e, uint32_t m) {
  if (e == 0) return ldexpf((float)m, 1 - f->bias - f->man_bits);
  return ldexpf((float)((1u << f->man_bits) + m), (int)e - f->bias - f->man_bits);
}

/* The largest finite magnitude of f. */
static float max_magnitude(const format* f) {
  const uint32_t emax = (1u << f->exp_bits) - 1, mmax = (1u << f->man_bits) - 1;
  switch (f->style) {
    case SPECIAL_FN:
      return magnitude(f, emax, mmax - 1);
    case SPECIAL_IEEE:
      return magnitude(f, emax - 1, mmax);
    default:
      return magnitude(f, emax, mmax);
  }
}

static float decode(const format* f, uint32_t code, fault flt) {
  const int width = 1 + f->exp_bits + f->man_bits;
  const uint32_t sign = (code >> (width - 1)) & 1;
  const uint32_t e = (code >> f->man_bits) & ((1u << f->exp_bits) - 1);
  const uint32_t m = code & ((1u << f->man_bits) - 1);
  const uint32_t emax = (1u << f->exp_bits) - 1, mmax = (1u << f->man_bits) - 1;
  if (f->style == SPECIAL_FNUZ && code == (1u << (width - 1))) return NAN;
  if (f->style == SPECIAL_FN && e == emax && m == mmax) return NAN;
  if (f->style == SPECIAL_IEEE && e == emax) return m != 0 ? NAN : (sign ? -INFINITY : INFINITY);
  float v = magnitude(f, e, m);
  if (flt == FAULT_MAX && v == max_magnitude(f)) v = INFINITY;
  if (flt == FAULT_MIN_NORMAL && e == 1) v = ldexpf((float)m, 1 - f->bias - f->man_bits);
  if (flt == FAULT_SUBNORMAL && e == 0) v = 0.0f;
  if (flt == FAULT_ZERO && e == 0 && m == 0) v = ldexpf(1.0f, -f->bias);
  if (flt == FAULT_NEG_ZERO && e == 0 && m == 0) return 0.0f;
  return sign ? -v : v;
}

/* E8M0: 2^(b - 127), 0xFF NaN (0x00 the fp32 subnormal 2^-127). */
static float e8m0(uint8_t b) {
  if (b == 0xFF) return NAN;
  return ldexpf(1.0f, (int)b - 127);
}

static uint16_t bf16_rne(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static void store(const mxgate_tensor* out, uint64_t i, float y) {
  if (out->dtype == MXGATE_DTYPE_BF16) {
    ((uint16_t*)out->data)[i] = bf16_rne(y);
  } else {
    ((float*)out->data)[i] = y;
  }
}

/* Element (r, c) of a row-major operand: one code per byte, or packed E2M1 (element 2i low). */
static uint32_t code_at(const mxgate_tensor* t, uint64_t r, uint64_t c) {
  if (t->dtype != MXGATE_DTYPE_E2M1) return ((const uint8_t*)t->data)[r * t->cols + c];
  const uint8_t b = ((const uint8_t*)t->data)[r * ((t->cols + 1) / 2) + c / 2];
  return (c & 1) ? (uint32_t)(b >> 4) : (uint32_t)(b & 0xF);
}

/* Scale (r, block) of a row-major e8m0 grid of 1x32 blocks. */
static float scale_at(const mxgate_tensor* s, uint64_t k, uint64_t r, uint64_t block) {
  const uint64_t ld = s->ld != 0 ? s->ld : (k + 31) / 32;
  return e8m0(((const uint8_t*)s->data)[r * ld + block]);
}

static fault fault_of(const void* state) {
  return state != NULL ? *(const fault*)state : FAULT_NONE;
}

static mxgate_status dequantize(void* state, const mxgate_call* call, char* msg, size_t size) {
  (void)msg;
  (void)size;
  format f;
  if (!format_of(call->a.dtype, &f)) return MXGATE_ERROR;
  for (uint64_t r = 0; r < call->m; ++r) {
    for (uint64_t c = 0; c < call->k; ++c) {
      const float x = decode(&f, code_at(&call->a, r, c), fault_of(state));
      store(&call->out, r * call->k + c, x * scale_at(&call->a_scale, call->k, r, c / 32));
    }
  }
  return MXGATE_DONE;
}

/* C = A B^T, each element x * its scale in fp32, products and the sum over K in fp32. */
static mxgate_status gemm_mxfp4(void* state, const mxgate_call* call, char* msg, size_t size) {
  (void)msg;
  (void)size;
  for (uint64_t i = 0; i < call->m; ++i) {
    for (uint64_t j = 0; j < call->n; ++j) {
      float acc = 0.0f;
      for (uint64_t k = 0; k < call->k; ++k) {
        const float a = decode(&kE2m1, code_at(&call->a, i, k), fault_of(state)) *
                        scale_at(&call->a_scale, call->k, i, k / 32);
        const float b = decode(&kE2m1, code_at(&call->b, j, k), fault_of(state)) *
                        scale_at(&call->b_scale, call->k, j, k / 32);
        acc += a * b;
      }
      store(&call->out, i * call->n + j, acc);
    }
  }
  return MXGATE_DONE;
}

#define BIT(D) MXGATE_DTYPE_BIT(MXGATE_DTYPE_##D)
#define OUT_DTYPES (BIT(F32) | BIT(BF16))
#define ROW MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_ROW_MAJOR)
#define OPS(STATE)                                                                                \
  {                                                                                               \
    TEST_PLUGIN_HOST_OP("dequantize_fp8", MXGATE_OP_DEQUANTIZE, dequantize, STATE,                \
                        .a_dtypes = BIT(E4M3FN) | BIT(E5M2) | BIT(E4M3FNUZ) | BIT(E5M2FNUZ),      \
                        .out_dtypes = OUT_DTYPES, .a_scale_layouts = ROW,                         \
                        .scale_dtype = MXGATE_DTYPE_E8M0, .a_block_rows = 1, .a_block_cols = 32,  \
                        .convention = "ocp_mx"),                                                  \
        TEST_PLUGIN_HOST_OP("dequantize_mxfp4", MXGATE_OP_DEQUANTIZE, dequantize, STATE,          \
                            .a_dtypes = BIT(E2M1), .out_dtypes = OUT_DTYPES,                      \
                            .a_scale_layouts = ROW, .scale_dtype = MXGATE_DTYPE_E8M0,             \
                            .a_block_rows = 1, .a_block_cols = 32, .convention = "ocp_mx"),       \
        TEST_PLUGIN_HOST_OP("gemm_mxfp4", MXGATE_OP_GEMM_MX, gemm_mxfp4, STATE,                   \
                            .a_dtypes = BIT(E2M1), .b_dtypes = BIT(E2M1), .out_dtypes = BIT(F32), \
                            .a_scale_layouts = ROW, .b_scale_layouts = ROW, .b_layouts = ROW,     \
                            .scale_dtype = MXGATE_DTYPE_E8M0, .a_block_rows = 1,                  \
                            .a_block_cols = 32, .b_block_rows = 1, .b_block_cols = 32,            \
                            .convention = "ocp_mx", .accumulator = "fp32_rn")                     \
  }

static fault kMax = FAULT_MAX, kMinNormal = FAULT_MIN_NORMAL, kSubnormal = FAULT_SUBNORMAL,
             kZero = FAULT_ZERO, kNegZero = FAULT_NEG_ZERO;
static const mxgate_op kOps[] = OPS(NULL);
static const mxgate_op kMaxOps[] = OPS(&kMax);
static const mxgate_op kMinNormalOps[] = OPS(&kMinNormal);
static const mxgate_op kSubnormalOps[] = OPS(&kSubnormal);
static const mxgate_op kZeroOps[] = OPS(&kZero);
static const mxgate_op kNegZeroOps[] = OPS(&kNegZero);
static const mxgate_impl kImpls[] = {
    {"element_decode", "element decoders from the format definitions", 3, kOps},
    {"element_decode_faulty_max", "planted fault: the largest finite magnitude decoded as Inf", 3,
     kMaxOps},
    {"element_decode_faulty_min_normal",
     "planted fault: exponent field 1 decoded by the subnormal rule (the smallest normal reads 0)",
     3, kMinNormalOps},
    {"element_decode_faulty_subnormal", "planted fault: subnormal codes flushed to zero", 3,
     kSubnormalOps},
    {"element_decode_faulty_zero",
     "planted fault: exponent field 0 decoded as a normal (a zero code reads 2^-bias)", 3,
     kZeroOps},
    {"element_decode_faulty_neg_zero", "planted fault: -0 decoded as +0", 3, kNegZeroOps}};
TEST_PLUGIN_EXPORT("element_decode", 0, 6, kImpls)
