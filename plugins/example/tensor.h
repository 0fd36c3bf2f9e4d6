/* Reading the tensors of a call for the example plugin (example.c), written against
 * include/mxgate/plugin.h alone: the element offset of (row, col) in each layout the ABI names,
 * the check that a tensor holds what the op expects (shape, dtype, a layout it accepts, enough
 * bytes), and the error message a failing op returns.
 */
#ifndef MXGATE_EXAMPLE_TENSOR_H_
#define MXGATE_EXAMPLE_TENSOR_H_

#include <stdint.h>
#include <stdio.h>

#include "mxgate/plugin.h"

/* Writes `what` as the call's message and returns `s`. */
static mxgate_status fail(char* msg, size_t size, mxgate_status s, const char* what) {
  snprintf(msg, size, "%s", what);
  return s;
}

/* Element offset of (r, c) in a rows x cols matrix stored in `layout` (plugin.h). */
static uint64_t offset(const mxgate_tensor* t, uint64_t r, uint64_t c) {
  switch (t->layout) {
    case MXGATE_LAYOUT_ROW_MAJOR:
      return r * (t->ld ? t->ld : t->cols) + c;
    case MXGATE_LAYOUT_COL_MAJOR:
      return c * (t->ld ? t->ld : t->rows) + r;
    case MXGATE_LAYOUT_TMA_COL_MAJOR:
      return c * (t->ld ? t->ld : (t->rows + 3) / 4 * 4) + r;
    case MXGATE_LAYOUT_NV_SWIZZLE_128X4: {
      const uint64_t tiles_per_row = (t->cols + 3) / 4;
      const uint64_t tile = (r / 128) * tiles_per_row + c / 4;
      return tile * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4;
    }
    default:
      return UINT64_MAX;
  }
}

/* Elements the storage spans (for the bounds check). */
static uint64_t span(const mxgate_tensor* t) {
  if (t->rows == 0 || t->cols == 0) return 0;
  if (t->layout == MXGATE_LAYOUT_NV_SWIZZLE_128X4) {
    return (t->rows + 127) / 128 * 128 * ((t->cols + 3) / 4 * 4);
  }
  return offset(t, t->rows - 1, t->cols - 1) + 1;
}

/* NULL when `t` holds rows x cols elements of `dtype` in a layout of `layouts`, else why not. */
static const char* check_tensor(const mxgate_tensor* t, const char* role, uint64_t rows,
                                uint64_t cols, uint32_t dtype, uint32_t layouts, size_t elem) {
  static char why[160];
  if (t->data == NULL) {
    snprintf(why, sizeof why, "%s is missing", role);
    return why;
  }
  if (t->rows != rows || t->cols != cols || t->dtype != dtype ||
      (MXGATE_LAYOUT_BIT(t->layout) & layouts) == 0) {
    snprintf(why, sizeof why, "%s is %llux%llu dtype %u layout %u, expected %llux%llu dtype %u",
             role, (unsigned long long)t->rows, (unsigned long long)t->cols, t->dtype, t->layout,
             (unsigned long long)rows, (unsigned long long)cols, dtype);
    return why;
  }
  if (span(t) * elem > t->bytes) {
    snprintf(why, sizeof why, "%s needs %llu bytes, has %llu", role,
             (unsigned long long)(span(t) * elem), (unsigned long long)t->bytes);
    return why;
  }
  return NULL;
}

/* Returns MXGATE_ERROR from the op (its `msg` and `size` in scope) when `t` is not as expected. */
#define CHECK(t, role, rows, cols, dtype, layouts, elem)                                      \
  do {                                                                                        \
    const char* why_ = check_tensor((t), (role), (rows), (cols), (dtype), (layouts), (elem)); \
    if (why_ != NULL) return fail(msg, size, MXGATE_ERROR, why_);                             \
  } while (0)

static const uint32_t kRow = MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_ROW_MAJOR);
static const uint32_t kAnyScale = MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_ROW_MAJOR) |
                                  MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_COL_MAJOR) |
                                  MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_TMA_COL_MAJOR) |
                                  MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_NV_SWIZZLE_128X4);

static float f32_at(const mxgate_tensor* t, uint64_t r, uint64_t c) {
  return ((const float*)t->data)[offset(t, r, c)];
}
static uint8_t u8_at(const mxgate_tensor* t, uint64_t r, uint64_t c) {
  return ((const uint8_t*)t->data)[offset(t, r, c)];
}

#endif /* MXGATE_EXAMPLE_TENSOR_H_ */
