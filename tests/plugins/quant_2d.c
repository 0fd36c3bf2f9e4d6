/* Test plugin: 2D MXFP8 quantizers in C (family QUANTIZE_MX with a 32 x 32 scale block, one E8M0
 * scale per tile, the grid ceil(M/32) x ceil(K/32) row-major; docs/layouts.md §9), claiming the
 * transformer_engine convention. Implementation `quant_2d` follows TransformerEngine's rule as its
 * kernel source states it (quantize_mxfp8.cuh, kIs2DBlockScaling): tile amax by fmaxf (NaN
 * skipped), byte = ceil of fl32(amax * fl32(1/448)) on the exponent field saturating at 254,
 * element = fl32(x * 2^(127 - byte)) cast to E4M3 by round-to-nearest-even with satfinite.
 * `quant_2d_faulty_column_amax` takes each column's amax over the tile's 32 rows (a 32x1 block)
 * and writes the tile's first column's byte; `quant_2d_faulty_grid_transposed` writes the grid
 * transposed. Written from the rules above, not from mxgate's code. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "test_plugin.h"

enum { kTile = 32, kCorrect = 0, kColumnAmax = 1, kGridTransposed = 2 };

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static float input_at(const mxgate_tensor* a, uint64_t r, uint64_t c) {
  const uint64_t ld = a->ld != 0 ? a->ld : a->cols;
  if (a->dtype == MXGATE_DTYPE_BF16) {
    return from_bits((uint32_t)((const uint16_t*)a->data)[r * ld + c] << 16);
  }
  return ((const float*)a->data)[r * ld + c];
}

/* float_to_e8m0 of q >= 0: ceil on the exponent field (a subnormal above 2^-127 needs 2^-126),
 * Inf and values past 2^127 saturate at 254. */
static uint8_t e8m0_ceil_sat(float q) {
  const uint32_t u = bits(q) & 0x7FFFFFFFu;
  const uint32_t e = u >> 23, m = u & 0x7FFFFFu;
  if (e == 0xFF) return 254;
  if (e == 0) return m > 0x400000u ? 1 : 0;
  const uint32_t c = e + (m != 0 ? 1u : 0u);
  return (uint8_t)(c > 254 ? 254 : c);
}

/* 2^(127 - byte) for byte <= 254 (byte 254: the subnormal 2^-127). */
static float reciprocal(uint8_t byte) {
  return byte == 254 ? from_bits(0x00400000u) : from_bits((uint32_t)(254 - byte) << 23);
}

/* fp32 -> E4M3FN, round to nearest even, |x| >= 448 (and Inf) -> 0x7E, NaN -> 0x7F. */
static uint8_t e4m3_satfinite(float x) {
  const uint32_t u = bits(x);
  const uint8_t sign = (uint8_t)((u >> 24) & 0x80);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7F;
  if (a >= 0x43E00000u) return sign | 0x7E; /* 448 */
  if (a < 0x3C800000u) {                    /* below 2^-6: subnormal steps of 2^-9 */
    const float t = from_bits(a) * 512.0f;  /* exact */
    uint32_t i = (uint32_t)t;
    const float frac = t - (float)i;
    if (frac > 0.5f || (frac == 0.5f && (i & 1u))) ++i;
    return sign | (uint8_t)i;
  }
  const uint32_t e = (a >> 23) - 127 + 7, m = a & 0x7FFFFFu;
  uint32_t keep = m >> 20;
  const uint32_t rest = m & 0xFFFFFu;
  if (rest > 0x80000u || (rest == 0x80000u && (keep & 1u))) ++keep;
  const uint32_t code = (e << 3) + keep;
  return sign | (uint8_t)(code > 0x7E ? 0x7E : code);
}

static mxgate_status quantize(void* state, const mxgate_call* call, char* msg, size_t size) {
  const int fault = state != 0 ? *(const int*)state : kCorrect;
  (void)msg;
  (void)size;
  const uint64_t rows = call->m, cols = call->k;
  const uint64_t sr = (rows + kTile - 1) / kTile, sc = (cols + kTile - 1) / kTile;
  const uint64_t out_ld = call->out.ld != 0 ? call->out.ld : cols;
  const uint64_t s_ld = call->out_scale.ld != 0 ? call->out_scale.ld : sc;
  uint8_t* codes = (uint8_t*)call->out.data;
  uint8_t* scales = (uint8_t*)call->out_scale.data;
  const float rcp_max = 1.0f / 448.0f;
  for (uint64_t ti = 0; ti < sr; ++ti) {
    const uint64_t r0 = ti * kTile, r1 = r0 + kTile < rows ? r0 + kTile : rows;
    for (uint64_t tj = 0; tj < sc; ++tj) {
      const uint64_t c0 = tj * kTile, c1 = c0 + kTile < cols ? c0 + kTile : cols;
      float tile_amax = 0.0f;
      uint8_t column_byte[kTile];
      for (uint64_t c = c0; c < c1; ++c) {
        float col_amax = 0.0f;
        for (uint64_t r = r0; r < r1; ++r) {
          const uint32_t m = bits(input_at(&call->a, r, c)) & 0x7FFFFFFFu;
          const float v = from_bits(m);
          if (m <= 0x7F800000u && v > col_amax) col_amax = v; /* fmaxf: NaN skipped */
        }
        column_byte[c - c0] = e8m0_ceil_sat(col_amax * rcp_max);
        if (col_amax > tile_amax) tile_amax = col_amax;
      }
      const uint8_t byte = e8m0_ceil_sat(tile_amax * rcp_max);
      const uint8_t stored = fault == kColumnAmax ? column_byte[0] : byte;
      if (fault == kGridTransposed) {
        scales[tj * sr + ti] = stored; /* the fault: (tj, ti) of a sc x sr grid */
      } else {
        scales[ti * s_ld + tj] = stored;
      }
      for (uint64_t r = r0; r < r1; ++r) {
        for (uint64_t c = c0; c < c1; ++c) {
          const uint8_t b = fault == kColumnAmax ? column_byte[c - c0] : byte;
          codes[r * out_ld + c] = e4m3_satfinite(input_at(&call->a, r, c) * reciprocal(b));
        }
      }
    }
  }
  return MXGATE_DONE;
}

#define QUANT_2D_OP(STATE)                                                                  \
  TEST_PLUGIN_HOST_OP(                                                                      \
      "quantize_mx_2d", MXGATE_OP_QUANTIZE_MX, quantize, STATE,                             \
      .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32) | MXGATE_DTYPE_BIT(MXGATE_DTYPE_BF16), \
      .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E4M3FN),                                  \
      .a_scale_layouts = MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_ROW_MAJOR),                        \
      .scale_dtype = MXGATE_DTYPE_E8M0, .a_block_rows = kTile, .a_block_cols = kTile,       \
      .convention = "transformer_engine")

static int kColumn = kColumnAmax;
static int kTransposed = kGridTransposed;
static const mxgate_op kOps[] = {QUANT_2D_OP(0)};
static const mxgate_op kColumnOps[] = {QUANT_2D_OP(&kColumn)};
static const mxgate_op kTransposedOps[] = {QUANT_2D_OP(&kTransposed)};
static const mxgate_impl kImpls[] = {
    {"quant_2d", "2D MXFP8 quantizer (32 x 32 tiles), TransformerEngine's rule", 1, kOps},
    {"quant_2d_faulty_column_amax", "planted fault: amax over 32x1 (a column of the tile)", 1,
     kColumnOps},
    {"quant_2d_faulty_grid_transposed", "planted fault: the 32x32 scale grid written transposed", 1,
     kTransposedOps}};
TEST_PLUGIN_EXPORT("quant_2d", 0, 3, kImpls)
