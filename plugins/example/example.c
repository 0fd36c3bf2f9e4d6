/* The example plugin: CPU ops with host pointers, written against include/mxgate/plugin.h and
 * the format specifications (fp8.h), independently of mxgate's reference; tensor.h reads a
 * call's tensors (offsets in each layout, the checks of each tensor). It ships one correct
 * implementation, `example`, and planted-fault implementations, one per family, each wrong in
 * one way a real kernel has been wrong; `mxgate gate --impl example` passes and the gate catches
 * every `example_faulty_*` with a shrunk counterexample (tests/property_plugins.cpp).
 * docs/plugins.md §7 walks through it.
 *
 *   family        op                    what it does
 *   cast          cast_satfinite        fp32 -> e4m3fn / e5m2 (RNE, satfinite, NaN 0x7F),
 *                                       e8m0 (round up, satfinite): convention cuda_satfinite
 *   quantize_mx   quantize_mx_ocp       OCP MX: scale 2^(floor(log2 amax) - 8), elements RNE,
 *                                       normals saturated, a NaN / Inf block all NaN
 *   quantize_block quantize_1x128       vLLM per-token group quant: fp32 scale max(amax, 1e-10)
 *                                       / 448 per 1 x 128, x / s clamped to +-448 (NaN -> -448)
 *   dequantize    dequantize_mx         code * 2^(e - 127) in fp32, bf16 by one RNE
 *   upcast_e8m0   upcast_e8m0           byte -> 2^(e - 127), 0xFF -> NaN
 *   preshuffle    preshuffle_weight     AITER shuffle_weight (16, 16) of an N x K byte weight
 *   gemm_mx       gemm_mx               MXFP8 GEMM, scales row-major or 128x4-swizzled
 *   gemm_block    gemm_block_deepseek   fp32 scales 1x128 (A) x 128x128 (B)
 *                 gemm_block_tensor     one fp32 scale per tensor
 *                 gemm_block_rowwise    one fp32 scale per row of A and of B
 *
 * `example_tactics` is the gemm_mx with three tactics (rows, cols, tile4x4: one result, three
 * visiting orders; docs/plugins.md §3.6), and `example_faulty_tactic` the same with a fault in
 * tactic 2 alone: the gate runs every property over every tactic and names the one that fails.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp8.h"
#include "mxgate/plugin.h"
#include "tensor.h"

/* ---- faults and op state ------------------------------------------------------------------ */

typedef enum fault {
  FAULT_NONE,
  FAULT_CAST_TIES_AWAY,        /* ties rounded away from zero (microxcaling's "nearest") */
  FAULT_QUANTIZE_NOSAT,        /* elements cast without satfinite: overflow becomes NaN */
  FAULT_DEQUANTIZE_SHIFT,      /* e8m0 decoded as byte << 23: 0x00 -> 0, 0xFF -> Inf */
  FAULT_UPCAST_SHIFT,          /* the same in the upcast */
  FAULT_GEMM_MX_B_SCALES_T,    /* B's scale grid read transposed (kb * N + n) */
  FAULT_GEMM_BLOCK_DROP_TAIL,  /* K walked in whole blocks of 128: a partial last block lost */
  FAULT_QUANTIZE_BLOCK_NO_EPS, /* amax without its 1e-10 floor: a zero block's scale is 0 */
  FAULT_TACTIC_TILE_TAIL,      /* gemm_mx tactic 2 (tile4x4) skips a partial last tile of M */
  FAULT_PRESHUFFLE_16X32       /* shuffle_weight with 32-byte K chunks: layout (16, 32) */
} fault;

typedef struct op_state {
  fault fault;
  /* gemm_block: the scale block shapes (0 = the whole dimension) */
  uint32_t a_block_rows, a_block_cols, b_block_rows, b_block_cols;
} op_state;

/* ---- cast ---------------------------------------------------------------------------------- */

static mxgate_status cast_run(void* state, const mxgate_call* call, char* msg, size_t size) {
  const op_state* st = (const op_state*)state;
  const uint64_t rows = call->m, cols = call->k;
  CHECK(&call->a, "a", rows, cols, MXGATE_DTYPE_F32, kRow, 4);
  const uint32_t to = call->out.dtype;
  if (to != MXGATE_DTYPE_E4M3FN && to != MXGATE_DTYPE_E5M2 && to != MXGATE_DTYPE_E8M0) {
    return fail(msg, size, MXGATE_UNSUPPORTED, "casts to e4m3fn, e5m2 and e8m0 only");
  }
  CHECK(&call->out, "out", rows, cols, to, kRow, 1);
  const rounding rnd = st->fault == FAULT_CAST_TIES_AWAY ? ROUND_NEAREST_AWAY : ROUND_NEAREST_EVEN;
  uint8_t* out = (uint8_t*)call->out.data;
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < cols; ++c) {
      const float x = f32_at(&call->a, r, c);
      uint8_t code;
      if (to == MXGATE_DTYPE_E8M0) {
        code = e8m0_encode_ceil_sat(x);
      } else {
        code =
            fp8_encode(x, to == MXGATE_DTYPE_E4M3FN ? &kE4m3 : &kE5m2, rnd, OVERFLOW_SATURATE, 1);
      }
      out[offset(&call->out, r, c)] = code;
    }
  }
  return MXGATE_DONE;
}

/* ---- quantize_mx (OCP MX v1.0 §6.3) -------------------------------------------------------- */

/* floor(log2 x) of a positive finite fp32 value, from its bits. */
static int floor_log2(float x) {
  const uint32_t a = f32_bits(x) & 0x7FFFFFFFu;
  if ((a >> 23) != 0) return (int)(a >> 23) - 127;
  int e = -127;
  for (uint32_t m = a & 0x7FFFFFu; m < 0x400000u; m <<= 1) --e;
  return e;
}

static mxgate_status quantize_run(void* state, const mxgate_call* call, char* msg, size_t size) {
  const op_state* st = (const op_state*)state;
  const uint64_t rows = call->m, cols = call->k, blocks = (cols + 31) / 32;
  const uint32_t in = call->a.dtype;
  if (in != MXGATE_DTYPE_F32 && in != MXGATE_DTYPE_BF16) {
    return fail(msg, size, MXGATE_UNSUPPORTED, "input must be f32 or bf16");
  }
  CHECK(&call->a, "a", rows, cols, in, kRow, in == MXGATE_DTYPE_F32 ? 4 : 2);
  CHECK(&call->out, "out", rows, cols, MXGATE_DTYPE_E4M3FN, kRow, 1);
  CHECK(&call->out_scale, "out_scale", rows, blocks, MXGATE_DTYPE_E8M0, kRow, 1);
  const overflow ov = st->fault == FAULT_QUANTIZE_NOSAT ? OVERFLOW_NAN : OVERFLOW_SATURATE_INF_NAN;
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t b = 0; b < blocks; ++b) {
      const uint64_t c0 = b * 32, c1 = c0 + 32 < cols ? c0 + 32 : cols;
      float amax = 0.0f;
      int special = 0; /* a NaN or an infinity: the shared exponent is NaN */
      for (uint64_t c = c0; c < c1; ++c) {
        const float x = in == MXGATE_DTYPE_F32
                            ? f32_at(&call->a, r, c)
                            : bf16_decode(((const uint16_t*)call->a.data)[offset(&call->a, r, c)]);
        const float ax = fabsf(x);
        if (!isfinite(ax)) special = 1;
        if (ax > amax) amax = ax;
      }
      uint8_t byte;
      if (special) {
        byte = 0xFF;
      } else if (amax == 0.0f) {
        byte = 0; /* 2^-127: every element is a zero */
      } else {
        int e = floor_log2(amax) - 8; /* emax of E4M3 = 8 */
        if (e < -127) e = -127;
        if (e > 127) e = 127;
        byte = (uint8_t)(e + 127);
      }
      ((uint8_t*)call->out_scale.data)[offset(&call->out_scale, r, b)] = byte;
      const float inv = ldexpf(1.0f, 127 - (int)byte);
      for (uint64_t c = c0; c < c1; ++c) {
        const float x = in == MXGATE_DTYPE_F32
                            ? f32_at(&call->a, r, c)
                            : bf16_decode(((const uint16_t*)call->a.data)[offset(&call->a, r, c)]);
        const uint8_t code =
            byte == 0xFF ? 0x7F : fp8_encode(x * inv, &kE4m3, ROUND_NEAREST_EVEN, ov, 0);
        ((uint8_t*)call->out.data)[offset(&call->out, r, c)] = code;
      }
    }
  }
  return MXGATE_DONE;
}

/* ---- quantize_block (vLLM per_token_group_quant_fp8) ---------------------------------------- */

/* Per block of the op's a_block_rows x a_block_cols: amax = fmaxf(max |x| (NaN ignored by fmaxf),
 * 1e-10), s = amax / 448, q = fminf(fmaxf(x / s, -448), 448) (NaN -> -448), then RNE to E4M3. */
static mxgate_status quantize_block_run(void* state, const mxgate_call* call, char* msg,
                                        size_t size) {
  const op_state* st = (const op_state*)state;
  const uint64_t rows = call->m, cols = call->k;
  const uint64_t br = st->a_block_rows, bc = st->a_block_cols;
  const uint64_t grid_rows = (rows + br - 1) / br, grid_cols = (cols + bc - 1) / bc;
  CHECK(&call->a, "a", rows, cols, MXGATE_DTYPE_F32, kRow, 4);
  CHECK(&call->out, "out", rows, cols, MXGATE_DTYPE_E4M3FN, kRow, 1);
  CHECK(&call->out_scale, "out_scale", grid_rows, grid_cols, MXGATE_DTYPE_F32, kRow, 4);
  for (uint64_t gr = 0; gr < grid_rows; ++gr) {
    for (uint64_t gc = 0; gc < grid_cols; ++gc) {
      const uint64_t r1 = gr * br + br < rows ? gr * br + br : rows;
      const uint64_t c1 = gc * bc + bc < cols ? gc * bc + bc : cols;
      float amax = 0.0f;
      for (uint64_t r = gr * br; r < r1; ++r) {
        for (uint64_t c = gc * bc; c < c1; ++c) amax = fmaxf(amax, fabsf(f32_at(&call->a, r, c)));
      }
      if (st->fault != FAULT_QUANTIZE_BLOCK_NO_EPS) amax = fmaxf(amax, 1e-10f);
      const float s = amax / 448.0f;
      ((float*)call->out_scale.data)[offset(&call->out_scale, gr, gc)] = s;
      for (uint64_t r = gr * br; r < r1; ++r) {
        for (uint64_t c = gc * bc; c < c1; ++c) {
          const float q = fminf(fmaxf(f32_at(&call->a, r, c) / s, -448.0f), 448.0f);
          ((uint8_t*)call->out.data)[offset(&call->out, r, c)] =
              fp8_encode(q, &kE4m3, ROUND_NEAREST_EVEN, OVERFLOW_SATURATE, 1);
        }
      }
    }
  }
  return MXGATE_DONE;
}

/* ---- dequantize and upcast ----------------------------------------------------------------- */

static float scale_value(uint8_t e, int shift_fault) {
  return shift_fault ? f32_from((uint32_t)e << 23) : e8m0_decode(e);
}

static mxgate_status dequantize_run(void* state, const mxgate_call* call, char* msg, size_t size) {
  const op_state* st = (const op_state*)state;
  const uint64_t rows = call->m, cols = call->k, blocks = (cols + 31) / 32;
  const uint32_t to = call->out.dtype;
  if (to != MXGATE_DTYPE_BF16 && to != MXGATE_DTYPE_F32) {
    return fail(msg, size, MXGATE_UNSUPPORTED, "writes bf16 or f32");
  }
  CHECK(&call->a, "a", rows, cols, MXGATE_DTYPE_E4M3FN, kRow, 1);
  CHECK(&call->a_scale, "a_scale", rows, blocks, MXGATE_DTYPE_E8M0, kRow, 1);
  CHECK(&call->out, "out", rows, cols, to, kRow, to == MXGATE_DTYPE_BF16 ? 2 : 4);
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < cols; ++c) {
      const float s =
          scale_value(u8_at(&call->a_scale, r, c / 32), st->fault == FAULT_DEQUANTIZE_SHIFT);
      const float v = fp8_decode(u8_at(&call->a, r, c), &kE4m3) * s;
      if (to == MXGATE_DTYPE_BF16) {
        ((uint16_t*)call->out.data)[offset(&call->out, r, c)] = bf16_encode(v);
      } else {
        ((float*)call->out.data)[offset(&call->out, r, c)] = v;
      }
    }
  }
  return MXGATE_DONE;
}

static mxgate_status upcast_run(void* state, const mxgate_call* call, char* msg, size_t size) {
  const op_state* st = (const op_state*)state;
  CHECK(&call->a, "a", call->m, call->k, MXGATE_DTYPE_E8M0, kRow, 1);
  CHECK(&call->out, "out", call->m, call->k, MXGATE_DTYPE_F32, kRow, 4);
  for (uint64_t r = 0; r < call->m; ++r) {
    for (uint64_t c = 0; c < call->k; ++c) {
      ((float*)call->out.data)[offset(&call->out, r, c)] =
          scale_value(u8_at(&call->a, r, c), st->fault == FAULT_UPCAST_SHIFT);
    }
  }
  return MXGATE_DONE;
}

/* ---- preshuffle (AITER shuffle_weight, layout (16, 16)) ------------------------------------ */

/* Where byte (n, k) of an N x K weight goes in shuffle_weight(layout=(16, CHUNK)) for 1-byte
 * elements (docs/layouts.md §1.1): stripes of 16 rows, and inside a stripe the 16 x (K / CHUNK)
 * matrix of CHUNK-byte pieces stored piece-major. The contract claims CHUNK = 16. */
static uint64_t shuffled_offset(uint64_t k_dim, uint64_t n, uint64_t k, uint64_t chunk) {
  return 16 * k_dim * (n / 16) + 16 * chunk * (k / chunk) + chunk * (n % 16) + k % chunk;
}

static mxgate_status preshuffle_run(void* state, const mxgate_call* call, char* msg, size_t size) {
  const op_state* st = (const op_state*)state;
  const uint64_t n = call->m, k = call->k;
  const uint64_t chunk = st->fault == FAULT_PRESHUFFLE_16X32 ? 32 : 16;
  if (n % 16 != 0 || k % 32 != 0) {
    return fail(msg, size, MXGATE_UNSUPPORTED, "shuffle_weight needs N % 16 == 0, K % 32 == 0");
  }
  CHECK(&call->a, "a", n, k, call->a.dtype, kRow, 1);
  const mxgate_tensor* out = &call->out;
  if (out->data == NULL || out->rows != n || out->cols != k || out->dtype != call->a.dtype ||
      out->layout != MXGATE_LAYOUT_AITER_SHUFFLE_16X16 || out->bytes < n * k) {
    return fail(msg, size, MXGATE_ERROR, "out is not an N x K shuffle_weight (16, 16) tensor");
  }
  for (uint64_t r = 0; r < n; ++r) {
    for (uint64_t c = 0; c < k; ++c) {
      ((uint8_t*)out->data)[shuffled_offset(k, r, c, chunk)] = u8_at(&call->a, r, c);
    }
  }
  return MXGATE_DONE;
}

/* ---- GEMMs --------------------------------------------------------------------------------- */

static mxgate_status store(const mxgate_call* call, uint64_t i, uint64_t j, float acc) {
  if (call->out.dtype == MXGATE_DTYPE_BF16) {
    ((uint16_t*)call->out.data)[offset(&call->out, i, j)] = bf16_encode(acc);
  } else {
    ((float*)call->out.data)[offset(&call->out, i, j)] = acc;
  }
  return MXGATE_DONE;
}

static mxgate_status check_gemm_out(const mxgate_call* call, char* msg, size_t size) {
  const uint32_t to = call->out.dtype;
  if (to != MXGATE_DTYPE_F32 && to != MXGATE_DTYPE_BF16) {
    return fail(msg, size, MXGATE_UNSUPPORTED, "writes f32 or bf16");
  }
  CHECK(&call->out, "out", call->m, call->n, to, kRow, to == MXGATE_DTYPE_BF16 ? 2 : 4);
  return MXGATE_DONE;
}

/* A (rows x cols of E4M3 codes) decoded to fp32, row-major; NULL when out of memory. */
static float* decode_matrix(const mxgate_tensor* t, uint64_t rows, uint64_t cols) {
  float table[256];
  for (int c = 0; c < 256; ++c) table[c] = fp8_decode((uint8_t)c, &kE4m3);
  float* out = (float*)malloc((size_t)(rows * cols + 1) * sizeof(float));
  if (out == NULL) return NULL;
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < cols; ++c) out[r * cols + c] = table[u8_at(t, r, c)];
  }
  return out;
}

/* C = A B^T with e8m0 scales per 32 along K: for each 32-block, part = sum of fl(a*b) in
 * increasing k, then acc = fl(acc + fl(fl(part*sa)*sb)). */
static mxgate_status gemm_mx_run(void* state, const mxgate_call* call, char* msg, size_t size) {
  const op_state* st = (const op_state*)state;
  const uint64_t m = call->m, n = call->n, k = call->k, kb = (k + 31) / 32;
  CHECK(&call->a, "a", m, k, MXGATE_DTYPE_E4M3FN, kRow, 1);
  CHECK(&call->b, "b", n, k, MXGATE_DTYPE_E4M3FN, kRow, 1);
  CHECK(&call->a_scale, "a_scale", m, kb, MXGATE_DTYPE_E8M0, kAnyScale, 1);
  CHECK(&call->b_scale, "b_scale", n, kb, MXGATE_DTYPE_E8M0, kAnyScale, 1);
  if (check_gemm_out(call, msg, size) != MXGATE_DONE) return check_gemm_out(call, msg, size);
  float* a = decode_matrix(&call->a, m, k);
  float* b = decode_matrix(&call->b, n, k);
  if (a == NULL || b == NULL) {
    free(a);
    free(b);
    return fail(msg, size, MXGATE_ERROR, "out of memory");
  }
  /* The tactic (plugin.h revision 3; 0 from an older mxgate). Every tactic computes each element
   * the same way; they differ in the order the elements are visited: 0 row by row, 1 column by
   * column, 2 in 4x4 tiles. */
  const uint32_t tactic = call->struct_size >= offsetof(mxgate_call, reserved1) ? call->tactic : 0;
  const uint64_t tile = tactic == 2 ? 4 : 1;
  /* The planted fault: tile4x4 walks whole tiles of M only, a partial last one is never written. */
  const uint64_t m_end = tactic == 2 && st->fault == FAULT_TACTIC_TILE_TAIL ? m / 4 * 4 : m;
  for (uint64_t i0 = 0; i0 < m_end; i0 += tile) {
    for (uint64_t j0 = 0; j0 < n; j0 += tile) {
      for (uint64_t t = 0; t < tile * tile; ++t) {
        uint64_t i = i0 + t / tile, j = j0 + t % tile;
        if (tactic == 1) { /* column by column: (i0, j0) enumerates (j, i) */
          i = (i0 * n + j0) % m;
          j = (i0 * n + j0) / m;
        }
        if (i >= m_end || j >= n) continue;
        float acc = 0.0f;
        for (uint64_t blk = 0; blk < kb; ++blk) {
          float part = 0.0f;
          const uint64_t k1 = blk * 32 + 32 < k ? blk * 32 + 32 : k;
          for (uint64_t kk = blk * 32; kk < k1; ++kk) part += a[i * k + kk] * b[j * k + kk];
          const float sa = e8m0_decode(u8_at(&call->a_scale, i, blk));
          uint8_t sb_byte;
          if (st->fault == FAULT_GEMM_MX_B_SCALES_T) {
            /* the grid read as if it were kb x n row-major */
            const uint64_t flat = blk * n + j;
            sb_byte = u8_at(&call->b_scale, flat / kb, flat % kb);
          } else {
            sb_byte = u8_at(&call->b_scale, j, blk);
          }
          const float scaled = part * sa;
          acc += scaled * e8m0_decode(sb_byte);
        }
        store(call, i, j, acc);
      }
    }
  }
  free(a);
  free(b);
  return MXGATE_DONE;
}

/* C = A B^T with fp32 scales of the op's block shapes; every product scaled on its own:
 * acc = fl(acc + fl(fl(fl(a*b)*sa)*sb)) in increasing k. */
static mxgate_status gemm_block_run(void* state, const mxgate_call* call, char* msg, size_t size) {
  const op_state* st = (const op_state*)state;
  const uint64_t m = call->m, n = call->n, k = call->k;
  const uint64_t abr = st->a_block_rows ? st->a_block_rows : m;
  const uint64_t abc = st->a_block_cols ? st->a_block_cols : k;
  const uint64_t bbr = st->b_block_rows ? st->b_block_rows : n;
  const uint64_t bbc = st->b_block_cols ? st->b_block_cols : k;
  CHECK(&call->a, "a", m, k, MXGATE_DTYPE_E4M3FN, kRow, 1);
  CHECK(&call->b, "b", n, k, MXGATE_DTYPE_E4M3FN, kRow, 1);
  CHECK(&call->a_scale, "a_scale", (m + abr - 1) / abr, (k + abc - 1) / abc, MXGATE_DTYPE_F32,
        kAnyScale, 4);
  CHECK(&call->b_scale, "b_scale", (n + bbr - 1) / bbr, (k + bbc - 1) / bbc, MXGATE_DTYPE_F32,
        kAnyScale, 4);
  if (check_gemm_out(call, msg, size) != MXGATE_DONE) return check_gemm_out(call, msg, size);
  float* a = decode_matrix(&call->a, m, k);
  float* b = decode_matrix(&call->b, n, k);
  if (a == NULL || b == NULL) {
    free(a);
    free(b);
    return fail(msg, size, MXGATE_ERROR, "out of memory");
  }
  const uint64_t k_end = st->fault == FAULT_GEMM_BLOCK_DROP_TAIL ? k / 128 * 128 : k;
  for (uint64_t i = 0; i < m; ++i) {
    for (uint64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      /* Segments of K on which both scales are constant. */
      for (uint64_t s0 = 0; s0 < k_end;) {
        uint64_t s1 = (s0 / abc + 1) * abc;
        const uint64_t sb_end = (s0 / bbc + 1) * bbc;
        if (sb_end < s1) s1 = sb_end;
        if (k_end < s1) s1 = k_end;
        const float sa = f32_at(&call->a_scale, i / abr, s0 / abc);
        const float sb = f32_at(&call->b_scale, j / bbr, s0 / bbc);
        for (uint64_t kk = s0; kk < s1; ++kk) {
          const float pa = a[i * k + kk] * b[j * k + kk] * sa;
          acc += pa * sb;
        }
        s0 = s1;
      }
      store(call, i, j, acc);
    }
  }
  free(a);
  free(b);
  return MXGATE_DONE;
}

/* ---- the description ----------------------------------------------------------------------- */

#define COUNT(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))
#define DT(x) MXGATE_DTYPE_BIT(MXGATE_DTYPE_##x)
#define LT(x) MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_##x)

static op_state kCorrect = {FAULT_NONE, 0, 0, 0, 0};
static op_state kDeepSeek = {FAULT_NONE, 1, 128, 128, 128};
static op_state kTensor = {FAULT_NONE, 0, 0, 0, 0};
static op_state kRowwise = {FAULT_NONE, 1, 0, 1, 0};
static op_state kCastTies = {FAULT_CAST_TIES_AWAY, 0, 0, 0, 0};
static op_state kQuantNosat = {FAULT_QUANTIZE_NOSAT, 0, 0, 0, 0};
static op_state kDequantShift = {FAULT_DEQUANTIZE_SHIFT, 0, 0, 0, 0};
static op_state kUpcastShift = {FAULT_UPCAST_SHIFT, 0, 0, 0, 0};
static op_state kMxScalesT = {FAULT_GEMM_MX_B_SCALES_T, 0, 0, 0, 0};
static op_state kTileTail = {FAULT_TACTIC_TILE_TAIL, 0, 0, 0, 0};
static op_state kDropTail = {FAULT_GEMM_BLOCK_DROP_TAIL, 1, 128, 128, 128};
static op_state kGroup = {FAULT_NONE, 1, 128, 0, 0};
static op_state kGroupNoEps = {FAULT_QUANTIZE_BLOCK_NO_EPS, 1, 128, 0, 0};
static op_state kShuffle16x32 = {FAULT_PRESHUFFLE_16X32, 0, 0, 0, 0};

/* Every op's contract starts from this: sizes from the header, everything else "none". */
#define CONTRACT_BASE .struct_size = sizeof(mxgate_contract)

#define CAST_OP(state)                                                                       \
  {                                                                                          \
    "cast_satfinite", MXGATE_OP_CAST, MXGATE_MEMORY_HOST,                                    \
        {CONTRACT_BASE, .a_dtypes = DT(F32), .out_dtypes = DT(E4M3FN) | DT(E5M2) | DT(E8M0), \
         .convention = "cuda_satfinite",                                                     \
         .notes = "RNE, finite overflow and Inf -> max, NaN -> 0x7F; e8m0 rounds up"},       \
        cast_run, &(state)                                                                   \
  }

#define QUANTIZE_OP(state)                                          \
  {                                                                 \
    "quantize_mx_ocp", MXGATE_OP_QUANTIZE_MX, MXGATE_MEMORY_HOST,   \
        {CONTRACT_BASE,                                             \
         .a_dtypes = DT(F32) | DT(BF16),                            \
         .out_dtypes = DT(E4M3FN),                                  \
         .a_scale_layouts = LT(ROW_MAJOR),                          \
         .scale_dtype = MXGATE_DTYPE_E8M0,                          \
         .a_block_rows = 1,                                         \
         .a_block_cols = 32,                                        \
         .convention = "ocp_mx",                                    \
         .notes = "OCP MX v1.0 section 6.3: floor(log2 amax) - 8"}, \
        quantize_run, &(state)                                      \
  }

#define QUANTIZE_BLOCK_OP(state)                                                               \
  {                                                                                            \
    "quantize_1x128", MXGATE_OP_QUANTIZE_BLOCK, MXGATE_MEMORY_HOST,                            \
        {CONTRACT_BASE,                                                                        \
         .a_dtypes = DT(F32),                                                                  \
         .out_dtypes = DT(E4M3FN),                                                             \
         .a_scale_layouts = LT(ROW_MAJOR),                                                     \
         .scale_dtype = MXGATE_DTYPE_F32,                                                      \
         .a_block_rows = 1,                                                                    \
         .a_block_cols = 128,                                                                  \
         .convention = "vllm_group_quant",                                                     \
         .notes = "fp32 scale max(amax, 1e-10) / 448 per 1x128, x / s clamped (NaN -> -448)"}, \
        quantize_block_run, &(state)                                                           \
  }

#define DEQUANTIZE_OP(state)                                   \
  {                                                            \
    "dequantize_mx", MXGATE_OP_DEQUANTIZE, MXGATE_MEMORY_HOST, \
        {CONTRACT_BASE,                                        \
         .a_dtypes = DT(E4M3FN),                               \
         .out_dtypes = DT(BF16) | DT(F32),                     \
         .a_scale_layouts = LT(ROW_MAJOR),                     \
         .scale_dtype = MXGATE_DTYPE_E8M0,                     \
         .a_block_rows = 1,                                    \
         .a_block_cols = 32,                                   \
         .convention = "ocp_mx",                               \
         .notes = "one fp32 multiply, bf16 by one RNE"},       \
        dequantize_run, &(state)                               \
  }

#define UPCAST_OP(state)                                                                     \
  {                                                                                          \
    "upcast_e8m0", MXGATE_OP_UPCAST_E8M0, MXGATE_MEMORY_HOST,                                \
        {CONTRACT_BASE, .a_dtypes = DT(E8M0), .out_dtypes = DT(F32), .convention = "ocp_mx", \
         .notes = "2^(e - 127), 0xFF -> NaN"},                                               \
        upcast_run, &(state)                                                                 \
  }

#define PRESHUFFLE_OP(state)                                                           \
  {                                                                                    \
    "preshuffle_weight", MXGATE_OP_PRESHUFFLE, MXGATE_MEMORY_HOST,                     \
        {CONTRACT_BASE,                                                                \
         .m_align = 16,                                                                \
         .k_align = 32,                                                                \
         .a_dtypes = DT(E4M3FN) | DT(E5M2),                                            \
         .out_dtypes = DT(E4M3FN) | DT(E5M2),                                          \
         .notes = "AITER shuffle_weight (16, 16) of an N x K byte weight (rows = N)"}, \
        preshuffle_run, &(state)                                                       \
  }

#define GEMM_MX_OP(state)                                            \
  {                                                                  \
    "gemm_mx", MXGATE_OP_GEMM_MX, MXGATE_MEMORY_HOST,                \
        {CONTRACT_BASE,                                              \
         .a_dtypes = DT(E4M3FN),                                     \
         .b_dtypes = DT(E4M3FN),                                     \
         .out_dtypes = DT(F32) | DT(BF16),                           \
         .a_scale_layouts = LT(ROW_MAJOR) | LT(NV_SWIZZLE_128X4),    \
         .b_scale_layouts = LT(ROW_MAJOR) | LT(NV_SWIZZLE_128X4),    \
         .b_layouts = LT(ROW_MAJOR),                                 \
         .scale_dtype = MXGATE_DTYPE_E8M0,                           \
         .a_block_rows = 1,                                          \
         .a_block_cols = 32,                                         \
         .b_block_rows = 1,                                          \
         .b_block_cols = 32,                                         \
         .convention = "ocp_mx",                                     \
         .accumulator = "fp32_rn",                                   \
         .notes = "fp32 partials per 32-block, scaled per partial"}, \
        gemm_mx_run, &(state)                                        \
  }

#define GEMM_BLOCK_OP(name, state, abr, abc, bbr, bbc, a_layouts, b_ld_align, text) \
  {                                                                                 \
    name, MXGATE_OP_GEMM_BLOCK, MXGATE_MEMORY_HOST,                                 \
        {CONTRACT_BASE,                                                             \
         .a_dtypes = DT(E4M3FN),                                                    \
         .b_dtypes = DT(E4M3FN),                                                    \
         .out_dtypes = DT(F32) | DT(BF16),                                          \
         .a_scale_layouts = (a_layouts),                                            \
         .b_scale_layouts = LT(ROW_MAJOR),                                          \
         .b_layouts = LT(ROW_MAJOR),                                                \
         .scale_dtype = MXGATE_DTYPE_F32,                                           \
         .a_block_rows = (abr),                                                     \
         .a_block_cols = (abc),                                                     \
         .b_block_rows = (bbr),                                                     \
         .b_block_cols = (bbc),                                                     \
         .accumulator = "fp32_rn",                                                  \
         .notes = (text),                                                           \
         .b_scale_ld_align = (b_ld_align)},                                         \
        gemm_block_run, &(state)                                                    \
  }

/* Three tactics of one gemm_mx (docs/plugins.md §3.6): the same numbers, elements visited in
 * another order; each declares the op's accumulator (NULL). */
static const mxgate_tactic kMxTactics[] = {
    {"rows", NULL, "element by element, row by row"},
    {"cols", NULL, "element by element, column by column"},
    {"tile4x4", NULL, "4x4 output tiles"},
};

#define GEMM_MX_TACTICS_OP(state)                                                  \
  {                                                                                \
    "gemm_mx", MXGATE_OP_GEMM_MX, MXGATE_MEMORY_HOST,                              \
        {CONTRACT_BASE,                                                            \
         .a_dtypes = DT(E4M3FN),                                                   \
         .b_dtypes = DT(E4M3FN),                                                   \
         .out_dtypes = DT(F32) | DT(BF16),                                         \
         .a_scale_layouts = LT(ROW_MAJOR) | LT(NV_SWIZZLE_128X4),                  \
         .b_scale_layouts = LT(ROW_MAJOR) | LT(NV_SWIZZLE_128X4),                  \
         .b_layouts = LT(ROW_MAJOR),                                               \
         .scale_dtype = MXGATE_DTYPE_E8M0,                                         \
         .a_block_rows = 1,                                                        \
         .a_block_cols = 32,                                                       \
         .b_block_rows = 1,                                                        \
         .b_block_cols = 32,                                                       \
         .convention = "ocp_mx",                                                   \
         .accumulator = "fp32_rn",                                                 \
         .notes = "fp32 partials per 32-block, scaled per partial; three tactics", \
         .tactic_count = COUNT(kMxTactics),                                        \
         .tactics = kMxTactics},                                                   \
        gemm_mx_run, &(state)                                                      \
  }

static const mxgate_op kExampleOps[] = {
    CAST_OP(kCorrect),
    QUANTIZE_OP(kCorrect),
    QUANTIZE_BLOCK_OP(kGroup),
    DEQUANTIZE_OP(kCorrect),
    UPCAST_OP(kCorrect),
    GEMM_MX_OP(kCorrect),
    PRESHUFFLE_OP(kCorrect),
    GEMM_BLOCK_OP("gemm_block_deepseek", kDeepSeek, 1, 128, 128, 128,
                  LT(ROW_MAJOR) | LT(COL_MAJOR) | LT(TMA_COL_MAJOR), 4,
                  "1x128 x 128x128 fp32 scales, per-product scaling; Bs rows padded to 4"),
    GEMM_BLOCK_OP("gemm_block_tensor", kTensor, 0, 0, 0, 0, LT(ROW_MAJOR), 0,
                  "one fp32 scale per tensor"),
    GEMM_BLOCK_OP("gemm_block_rowwise", kRowwise, 1, 0, 1, 0, LT(ROW_MAJOR) | LT(COL_MAJOR), 0,
                  "one fp32 scale per row of A and of B"),
};

static const mxgate_op kTacticOps[] = {GEMM_MX_TACTICS_OP(kCorrect)};
static const mxgate_op kFaultyTacticOps[] = {GEMM_MX_TACTICS_OP(kTileTail)};
static const mxgate_op kFaultyCast[] = {CAST_OP(kCastTies)};
static const mxgate_op kFaultyQuantize[] = {QUANTIZE_OP(kQuantNosat)};
static const mxgate_op kFaultyQuantizeBlock[] = {QUANTIZE_BLOCK_OP(kGroupNoEps)};
static const mxgate_op kFaultyDequantize[] = {DEQUANTIZE_OP(kDequantShift)};
static const mxgate_op kFaultyUpcast[] = {UPCAST_OP(kUpcastShift)};
static const mxgate_op kFaultyGemmMx[] = {GEMM_MX_OP(kMxScalesT)};
static const mxgate_op kFaultyPreshuffle[] = {PRESHUFFLE_OP(kShuffle16x32)};
static const mxgate_op kFaultyGemmBlock[] = {
    GEMM_BLOCK_OP("gemm_block_deepseek", kDropTail, 1, 128, 128, 128,
                  LT(ROW_MAJOR) | LT(COL_MAJOR) | LT(TMA_COL_MAJOR), 4,
                  "planted fault: K walked in whole 128-blocks")};

static const mxgate_impl kImpls[] = {
    {"example", "CPU ops written from the format specifications", COUNT(kExampleOps), kExampleOps},
    {"example_faulty_cast_ties_away", "planted fault: casts round ties away from zero",
     COUNT(kFaultyCast), kFaultyCast},
    {"example_faulty_quantize_nosat",
     "planted fault: quantized elements cast without satfinite (overflow -> NaN)",
     COUNT(kFaultyQuantize), kFaultyQuantize},
    {"example_faulty_quantize_block_no_eps",
     "planted fault: a 1x128 group's amax without its 1e-10 floor (a zero group's elements -> NaN "
     "-> -448)",
     COUNT(kFaultyQuantizeBlock), kFaultyQuantizeBlock},
    {"example_faulty_dequantize_shift",
     "planted fault: e8m0 scales decoded by byte << 23 (0x00 -> 0, 0xFF -> Inf)",
     COUNT(kFaultyDequantize), kFaultyDequantize},
    {"example_faulty_upcast_shift", "planted fault: e8m0 upcast by byte << 23",
     COUNT(kFaultyUpcast), kFaultyUpcast},
    {"example_faulty_gemm_mx_b_scales_transposed",
     "planted fault: B's MX scale grid read transposed", COUNT(kFaultyGemmMx), kFaultyGemmMx},
    {"example_faulty_gemm_block_drop_tail", "planted fault: a partial last 128-block of K dropped",
     COUNT(kFaultyGemmBlock), kFaultyGemmBlock},
    {"example_faulty_preshuffle_16x32",
     "planted fault: shuffle_weight with 32-byte K chunks (layout (16, 32)) where (16, 16) is "
     "claimed",
     COUNT(kFaultyPreshuffle), kFaultyPreshuffle},
    {"example_tactics", "gemm_mx of three tactics (rows, cols, tile4x4), every one correct",
     COUNT(kTacticOps), kTacticOps},
    {"example_faulty_tactic",
     "planted fault: gemm_mx tactic 2 (tile4x4) never writes a partial last tile of M (M % 4 != 0)",
     COUNT(kFaultyTacticOps), kFaultyTacticOps},
};

static const mxgate_plugin kPlugin = {
    MXGATE_PLUGIN_ABI_VERSION, sizeof(mxgate_plugin), "example", NULL, COUNT(kImpls), kImpls};

MXGATE_PLUGIN_EXPORT const mxgate_plugin* mxgate_plugin_v1(void) { return &kPlugin; }
