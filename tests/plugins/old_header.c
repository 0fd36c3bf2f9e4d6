/* Test plugin: built against an older revision of include/mxgate/plugin.h whose mxgate_contract
 * ended at `notes` (before the scale leading-dimension alignments were appended). mxgate_op
 * embeds the contract, so this plugin's ops array has a smaller stride than the current header's:
 * mxgate must read it with the stride contract.struct_size implies (both ops intact). */
#include <stdint.h>

#include "test_plugin.h"

typedef struct old_contract {
  uint32_t struct_size;
  uint32_t reserved0;
  uint64_t m_align, n_align, k_align;
  uint64_t m_min, n_min, k_min;
  uint64_t m_max, n_max, k_max;
  uint64_t a_dtypes, b_dtypes, out_dtypes;
  uint32_t a_scale_layouts, b_scale_layouts, b_layouts, scale_dtype;
  uint32_t a_block_rows, a_block_cols, b_block_rows, b_block_cols;
  const char* convention;
  const char* accumulator;
  const char* notes;
} old_contract;

typedef struct old_op {
  const char* name;
  uint32_t family;
  uint32_t memory;
  old_contract contract;
  mxgate_run_fn run;
  void* state;
} old_op;

typedef struct old_impl {
  const char* name;
  const char* description;
  uint32_t op_count;
  const old_op* ops;
} old_impl;

static const old_op kOps[] = {
    {"first",
     MXGATE_OP_UPCAST_E8M0,
     MXGATE_MEMORY_HOST,
     {.struct_size = sizeof(old_contract),
      .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E8M0),
      .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32),
      .convention = "ocp_mx"},
     test_plugin_e8m0_upcast,
     0},
    {"second",
     MXGATE_OP_UPCAST_E8M0,
     MXGATE_MEMORY_HOST,
     {.struct_size = sizeof(old_contract),
      .k_max = 64,
      .a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E8M0),
      .out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32),
      .convention = "ocp_mx",
      .notes = "the second op"},
     test_plugin_e8m0_upcast,
     0},
};
static const old_impl kImpls[] = {{"old_header", "an older header revision", 2, kOps}};
/* The plugin table itself is the current one; it points at the old-layout implementations. */
TEST_PLUGIN_EXPORT("old_header", 0, 1, (const mxgate_impl*)(const void*)kImpls)
