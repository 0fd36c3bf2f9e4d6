/* mxgate implementation plugins: the stable C ABI, version 1 (revision 4: FP8 GEMM output).
 *
 * A shared library that implements kernels mxgate did not write exports one symbol,
 * `mxgate_plugin_v1`, returning a static description: one or more implementations, each a list
 * of ops from a fixed set of families. Every op declares its contract as data (shapes, dtypes,
 * layouts, scale blocks, the convention it claims, its accumulator model) and one entry point.
 * mxgate generates cases inside the contract, allocates every buffer itself (guard bands around
 * it, outputs poisoned before the call), calls `run`, then checks the guards and compares the
 * outputs with its bit-exact reference.
 *
 *   mxgate gate --impl ./libmykernels.so          every implementation in the library
 *   mxgate gate --impl ./libmykernels.so:fast     the implementation named "fast"
 *
 * The header is C99 and backend-neutral: a CUDA, HIP or CPU library implements it the same way.
 * Compatibility rules: fields are only ever appended; every struct a caller fills starts with
 * `struct_size`, so a newer mxgate can call an older plugin and the reverse. A plugin whose
 * `abi_version` differs from MXGATE_PLUGIN_ABI_VERSION is refused with a message naming it.
 * mxgate_op embeds mxgate_contract and plugins hand over arrays of ops, so a field appended to
 * mxgate_contract changes the array's stride: mxgate reads an ops array with the stride its
 * first op's contract.struct_size implies (every op of one array must carry the same
 * struct_size), dropping fields it does not know and leaving those the plugin lacks unset.
 * mxgate_op and mxgate_impl themselves carry no struct_size and are never extended; a new field
 * for them goes into mxgate_contract or a new ABI version. (impl/plugin.cpp read_op; test
 * tests/plugins/old_header.c.)
 *
 * Units: every shape and count is in elements, every `bytes` in bytes. Matrices are described
 * logically (rows x cols) plus a physical layout; see mxgate_layout for what each layout means.
 * The docs: docs/plugins.md.
 */
#ifndef MXGATE_PLUGIN_H_
#define MXGATE_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MXGATE_PLUGIN_ABI_VERSION 1u
/* Version 1 grows by appended fields only; the revision says which a header has (a plugin may
 * test it with #if): 1 the first header, 2 NVFP4 (contract.global_dtypes, call.a_global /
 * b_global), 3 tactics (contract.tactic_count / tactics, call.tactic, MXGATE_NO_TACTIC), 4 FP8
 * GEMM output with out_scale (no new field: GEMM_MX / GEMM_BLOCK ops may list E4M3FN / E5M2 in
 * out_dtypes and then read scale_result from call.out_scale; an older mxgate never asks for FP8
 * output of a GEMM, so such an op runs there with F32 / BF16 output only). */
#define MXGATE_PLUGIN_ABI_REVISION 4u
/* The symbol mxgate looks up with dlsym. */
#define MXGATE_PLUGIN_ENTRY_SYMBOL "mxgate_plugin_v1"

#if defined(_WIN32)
#define MXGATE_PLUGIN_EXPORT __declspec(dllexport)
#else
#define MXGATE_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* What an entry point returns. */
typedef enum mxgate_status {
  MXGATE_DONE = 0,        /* every output written */
  MXGATE_UNSUPPORTED = 1, /* declined this case (shape, layout, dtype): say why in `message` */
  MXGATE_ERROR = 2,       /* failed (library error, launch failure): say why in `message` */
  /* Revision 3: the call's tactic does not exist for this case (a per-case list shorter than
   * tactic_count, e.g. cuBLASLt's heuristic returned fewer algorithms for this shape): counted
   * and listed as unsupported, never a failure. */
  MXGATE_NO_TACTIC = 3
} mxgate_status;

/* The op families. The comment of each says what the call's tensors hold. */
typedef enum mxgate_op_family {
  /* Elementwise fp32 -> codes: a = fp32 input (1 x count), out = codes of out.dtype
   * (1 byte per code for 8-bit formats, 2 for bf16 / fp16). */
  MXGATE_OP_CAST = 1,
  /* MX quantization: a = fp32 or bf16 (rows x cols); out = codes (rows x cols); out_scale = e8m0,
   * per a_block 1x32: rows x ceil(cols/32), 32x32 (TE 2D): ceil(rows/32) x ceil(cols/32). */
  MXGATE_OP_QUANTIZE_MX = 2,
  /* Block quantization with fp32 scales: a = fp32 or bf16 (rows x cols); out = fp8 codes;
   * out_scale = fp32 scales, one per contract a_block_rows x a_block_cols block (1x128 for
   * activations, 128x128 for weights), in out_scale.layout. */
  MXGATE_OP_QUANTIZE_BLOCK = 3,
  /* MX dequantization: a = codes (rows x cols), a_scale = e8m0 (rows x ceil(cols/32));
   * out = bf16 or fp32 (rows x cols). */
  MXGATE_OP_DEQUANTIZE = 4,
  /* e8m0 -> fp32: a = e8m0 bytes (1 x count), out = fp32 (1 x count). */
  MXGATE_OP_UPCAST_E8M0 = 5,
  /* Weight relayout: a = row-major N x K bytes, out = the same bytes in out.layout
   * (MXGATE_LAYOUT_AITER_SHUFFLE_16X16). */
  MXGATE_OP_PRESHUFFLE = 6,
  /* C (m x n) = A (m x k) . B (n x k)^T with MX scales: a, b = element codes; a_scale (m x
   * ceil(k/32)) and b_scale (n x ceil(k/32)) = e8m0 bytes; out = fp32 or bf16 (m x n).
   * Revision 4, FP8 output (this family and GEMM_BLOCK): an op whose out_dtypes lists E4M3FN
   * and / or E5M2 may be called with out of that dtype (m x n codes, one per byte); out_scale is
   * then a 1 x 1 F32 tensor in the op's memory holding scale_result, and
   *   out[i, j] = cast(fl32(v[i, j] * scale_result))
   * where v is the fp32 value the fp32-output call would write (fl32 of the epilogue) and cast
   * the element cast of the op's convention (contract.convention; NULL: "cuda_satfinite", RNE
   * with finite overflow and Inf saturating to +-max, the cuBLASLt D-scale / torch._scaled_mm
   * scale_result rule). A call with FP8 out and no 1 x 1 F32 out_scale is outside the contract;
   * an op that drops scale_result writes cast(v) (pytorch/pytorch#190449). */
  MXGATE_OP_GEMM_MX = 7,
  /* The same with fp32 (or e8m0) scales of the contract's block shapes: a_scale covers
   * a_block_rows x a_block_cols of A, b_scale b_block_rows x b_block_cols of B (0 = the whole
   * dimension: per-tensor {0,0}, rowwise {1,0}, DeepSeek {1,128} x {128,128}); FP8 output with
   * out_scale as GEMM_MX (revision 4). */
  MXGATE_OP_GEMM_BLOCK = 8,
  /* C = A . B^T on bf16 operands; no scales. */
  MXGATE_OP_GEMM_BF16 = 9,
  /* Appended for NVFP4 (E2M1 elements in blocks of 16 along cols, one E4M3 block scale per block
   * used as unsigned, one per-tensor fp32 global scale; docs/fp4.md §6, §12). The global scales
   * are 1 x 1 tensors of a dtype in contract.global_dtypes, in the op's memory (real kernels read
   * them from device memory: FlashInfer's global_scale, cuBLASLt's alpha pointer). */
  /* NVFP4 quantization: a = fp32 or bf16 (rows x cols); a_global = the tensor's global amax (the
   * calibrated amax every recipe derives its global scale from: TE and FlashInfer 448*6/amax,
   * torchao amax/(448*6)); out = packed E2M1 (rows x cols); out_scale = E4M3 (rows x
   * ceil(cols/16)) in out_scale.layout. */
  MXGATE_OP_QUANTIZE_NVFP4 = 10,
  /* NVFP4 dequantization: a = packed E2M1 (rows x cols), a_scale = E4M3 (rows x ceil(cols/16)),
   * a_global = the global decode scale; out = bf16 or fp32 (rows x cols): fl32(fl32(code *
   * scale) * global), bf16 rounding that once more. */
  MXGATE_OP_DEQUANTIZE_NVFP4 = 11,
  /* NVFP4 GEMM: a (m x k), b (n x k) = packed E2M1; a_scale (m x ceil(k/16)), b_scale (n x
   * ceil(k/16)) = E4M3; a_global, b_global = the global decode scales. out = fp32 or bf16:
   * C = out(fl32(alpha * acc)), alpha = fl32(a_global * b_global), acc the fp32 accumulator (the
   * cuBLASLt / CUTLASS epilogue). */
  MXGATE_OP_GEMM_NVFP4 = 12,
  /* Reserved for the built-in grouped (mixture-of-experts) GEMMs: one call multiplies the row
   * groups of A by the stacked expert weights B ((E * N) x K) under per-group offsets or valid-row
   * counts (docs/grouped.md). mxgate_call carries no offsets yet, so a plugin op of these families
   * is refused at load. */
  MXGATE_OP_GROUPED_GEMM_BLOCK = 13,
  MXGATE_OP_GROUPED_GEMM_MX = 14
} mxgate_op_family;

/* Where the buffers live (the op's `memory`); device ops get a stream in the call. */
typedef enum mxgate_memory {
  MXGATE_MEMORY_HOST = 0, /* malloc'ed host memory */
  MXGATE_MEMORY_CUDA = 1, /* cudaMalloc'ed device memory, current device, `stream` a cudaStream_t */
  MXGATE_MEMORY_HIP = 2   /* hipMalloc'ed device memory, current device, `stream` a hipStream_t */
} mxgate_memory;

/* Element and scale types. Contracts use bit masks MXGATE_DTYPE_BIT(x). Codes are stored one
 * per byte (8-bit formats, and the 6-bit E2M3 / E3M2 in the low bits of a byte) or as 16-bit
 * words (bf16, fp16), little endian. E2M1 (FP4) is packed two per byte: element 2i of a row in
 * the low nibble (bits 0-3), element 2i+1 in the high nibble (torchao pack_uint4, Triton, TE,
 * FlashInfer, AITER: docs/fp4.md §5.1). A tensor's rows / cols / ld count ELEMENTS; a packed row
 * of `cols` elements occupies ceil(cols / 2) bytes and every row starts on a byte (row r at byte
 * r * ceil(ld / 2), ld = cols unless set), so an odd row ends in a padding nibble. mxgate fills
 * the padding nibble of an input with 0xF (-6: reading it changes the result) and ignores that of
 * an output. The MX families (quantize_mx, dequantize, gemm_mx) take E2M1 / E2M3 / E3M2 elements
 * as they take FP8 ones (MXFP4, MXFP6: e8m0 scales of 1 x 32); NVFP4 has its own families. */
typedef enum mxgate_dtype {
  MXGATE_DTYPE_NONE = 0,
  MXGATE_DTYPE_F32 = 1,
  MXGATE_DTYPE_BF16 = 2,
  MXGATE_DTYPE_FP16 = 3,
  MXGATE_DTYPE_E4M3FN = 4,
  MXGATE_DTYPE_E5M2 = 5,
  MXGATE_DTYPE_E4M3FNUZ = 6,
  MXGATE_DTYPE_E5M2FNUZ = 7,
  MXGATE_DTYPE_E8M0 = 8,
  MXGATE_DTYPE_E2M1 = 9,  /* FP4 1.2.1, bias 1, max 6, no Inf / NaN; packed (above) */
  MXGATE_DTYPE_E2M3 = 10, /* FP6 1.2.3, bias 1, max 7.5, no Inf / NaN; one per byte */
  MXGATE_DTYPE_E3M2 = 11, /* FP6 1.3.2, bias 3, max 28, no Inf / NaN; one per byte */
  /* ml_dtypes' other 8-bit formats (docs/formats.md §1.4): */
  MXGATE_DTYPE_E3M4 = 12,        /* 1.3.4, bias 3, max 15.5, IEEE Inf 0x70 and NaNs */
  MXGATE_DTYPE_E4M3IEEE = 13,    /* 1.4.3, bias 7, max 240, IEEE Inf 0x78 and NaNs */
  MXGATE_DTYPE_E4M3B11FNUZ = 14, /* 1.4.3, bias 11, max 30, no Inf, no -0: 0x80 is NaN */
  /* OCP MX v1.0 §5.3 MXINT8 elements (docs/formats.md §1.5): two's complement int8 with an
   * implicit scale of 2^-6, value = code / 64 in [-2, 127/64]; no Inf, no NaN, no -0. */
  MXGATE_DTYPE_MXINT8 = 15
} mxgate_dtype;
#define MXGATE_DTYPE_BIT(d) (UINT64_C(1) << (d))

/* Physical layouts of a logical rows x cols matrix. Contracts use masks MXGATE_LAYOUT_BIT(x).
 *   ROW_MAJOR        offset(r, c) = r * ld + c, ld = cols unless the tensor's ld says otherwise
 *   COL_MAJOR        offset(r, c) = c * ld + r, ld = rows unless the tensor's ld says otherwise
 *   TMA_COL_MAJOR    COL_MAJOR with ld = align4(rows) (DeepGEMM's TMA-aligned activation
 *                    scales; the padding rows exist and hold poison)
 *   NV_SWIZZLE_128X4 the cuBLAS / torchao block-scale-factor swizzle: rows padded to 128, cols
 *                    to 4; 128x4 tiles of 512 bytes, tile-row major; inside a tile,
 *                    offset = (r % 32) * 16 + ((r / 32) % 4) * 4 + c % 4
 *   AITER_SHUFFLE_16X16  AITER shuffle_weight(layout=(16, 16)) of an N x K byte matrix
 * docs/layouts.md gives each as a formula with its source. */
typedef enum mxgate_layout {
  MXGATE_LAYOUT_ROW_MAJOR = 0,
  MXGATE_LAYOUT_COL_MAJOR = 1,
  MXGATE_LAYOUT_TMA_COL_MAJOR = 2,
  MXGATE_LAYOUT_NV_SWIZZLE_128X4 = 3,
  MXGATE_LAYOUT_AITER_SHUFFLE_16X16 = 4
} mxgate_layout;
#define MXGATE_LAYOUT_BIT(l) (UINT32_C(1) << (l))

/* Revision 3: one tactic of an op. A library's GEMM is often many kernels for one call (cuBLASLt's
 * heuristic list, Triton autotune configurations, CK instances, a tuned-shape table) and a bug
 * lives in one of them; an op that declares N tactics is checked N times, every property over
 * every tactic, mxgate passing the index in mxgate_call.tactic. docs/plugins.md §3.6. */
typedef struct mxgate_tactic {
  const char* name;        /* [a-z0-9_.]+, unique in its op; NULL: the index in decimal */
  const char* accumulator; /* GEMMs: this tactic's accumulator model; NULL: the op's */
  const char* notes;       /* free text shown by `mxgate impls`; may be NULL */
} mxgate_tactic;

/* What an op requires. Generators only produce cases inside it; a case inside it that the op
 * declines (MXGATE_UNSUPPORTED) is reported as a contract mismatch. For non-GEMM ops m = rows,
 * k = cols, n is unused (1). */
typedef struct mxgate_contract {
  uint32_t struct_size; /* sizeof(mxgate_contract) */
  uint32_t reserved0;
  uint64_t m_align, n_align, k_align;  /* each dimension a multiple of this (0 or 1: any) */
  uint64_t m_min, n_min, k_min;        /* 0: 1 */
  uint64_t m_max, n_max, k_max;        /* 0: unbounded */
  uint64_t a_dtypes;                   /* MXGATE_DTYPE_BIT mask: accepted A (input) element types */
  uint64_t b_dtypes;                   /* the same for B (GEMMs) */
  uint64_t out_dtypes;                 /* outputs it can write (cast: target formats) */
  uint32_t a_scale_layouts;            /* MXGATE_LAYOUT_BIT mask for a_scale / out_scale */
  uint32_t b_scale_layouts;            /* for b_scale */
  uint32_t b_layouts;                  /* for B (weights): ROW_MAJOR and / or AITER_SHUFFLE_16X16 */
  uint32_t scale_dtype;                /* E8M0, F32, E4M3FN (NVFP4); NONE if unscaled */
  uint32_t a_block_rows, a_block_cols; /* scale block of A (0 = whole dimension) */
  uint32_t b_block_rows, b_block_cols; /* scale block of B (0 = whole dimension) */
  /* The convention it claims (`mxgate conventions`), e.g. "cuda_satfinite"; NULL: none (a GEMM
   * with FP8 output: cuda_satfinite's element cast, revision 4). */
  const char* convention;
  /* Its accumulator model (`mxgate accumulators`), e.g. "sm90_fp8_mma"; NULL: "fp32_rn". */
  const char* accumulator;
  /* Free text shown by `mxgate impls`: where the clauses come from. May be NULL. */
  const char* notes;
  /* Leading dimension of a ROW_MAJOR / COL_MAJOR a_scale (out_scale) / b_scale: rounded up to a
   * multiple of this (0 or 1: packed). mxgate allocates the padding and fills it with poison,
   * e.g. cuBLASLt's 128x128 weight scales want a row stride that is a multiple of 4. */
  uint32_t a_scale_ld_align;
  uint32_t b_scale_ld_align;
  /* Appended (NVFP4). MXGATE_DTYPE_BIT mask of the dtypes the op reads its 1 x 1 global scales
   * a_global / b_global in (F32 and / or BF16); 0: the op takes none. Required by the NVFP4
   * families, whose scale_dtype is MXGATE_DTYPE_E4M3FN (block scales of 1 x 16). */
  uint64_t global_dtypes;
  /* Appended (revision 3, tactics). 0 or 1: one tactic (every op of an older plugin); N > 1: the
   * op runs N kernels, tactic i of each call being mxgate_call.tactic = i. `tactics`: N entries,
   * or NULL (tactics named "0".."N-1", each with the op's accumulator). */
  uint32_t tactic_count;
  /* MXGATE_CONTRACT_* bits (revision 3; 0 in a plugin built before them: none set). */
  uint32_t flags;
  const mxgate_tactic* tactics;
} mxgate_contract;

/* contract.flags: the op reads a_scale / b_scale (out_scale) only at the leading dimension their
 * ld_align gives (a library that takes no scale stride: cuBLASLt); mxgate then draws no scale
 * grid that is a view into a wider tensor, and a call with another ld is outside the contract. */
#define MXGATE_CONTRACT_PACKED_SCALES 1u

/* One operand or result. `data` is host or device memory per the op's `memory`; `bytes` is the
 * size of the region mxgate allocated (writing past it damages a guard band). */
typedef struct mxgate_tensor {
  void* data;
  uint64_t bytes;
  uint64_t rows, cols; /* logical shape */
  uint64_t ld;         /* leading dimension of ROW_MAJOR / COL_MAJOR (elements); 0: packed */
  uint32_t dtype;      /* mxgate_dtype */
  uint32_t layout;     /* mxgate_layout */
} mxgate_tensor;

/* One call. Tensors a family does not use have data == NULL. */
typedef struct mxgate_call {
  uint32_t struct_size; /* sizeof(mxgate_call) as the caller compiled it */
  uint32_t family;      /* mxgate_op_family, the op's own */
  uint64_t m, n, k;     /* GEMM: C is m x n, inner dimension k; others: rows m, cols k, n = 1 */
  mxgate_tensor a, a_scale, b, b_scale;
  mxgate_tensor out, out_scale;
  void* stream; /* device ops: the stream to launch on (mxgate synchronizes after the call) */
  /* Appended (NVFP4): the 1 x 1 global scales of A and B (families QUANTIZE_NVFP4: a_global;
   * DEQUANTIZE_NVFP4: a_global; GEMM_NVFP4: both), each one element of its dtype, in the op's
   * memory. A plugin compiled before them sees a smaller struct_size and no NVFP4 family. */
  mxgate_tensor a_global, b_global;
  /* Appended (revision 3): the tactic to run, 0 <= tactic < max(1, contract.tactic_count). A
   * plugin reads it only when struct_size >= offsetof(mxgate_call, reserved1) (an older mxgate
   * passes none: tactic 0). */
  uint32_t tactic;
  uint32_t reserved1;
} mxgate_call;

/* `message` points at `message_size` bytes (at least 256) for a NUL-terminated reason; `state`
 * is the op's own pointer. The entry point must not keep pointers to the call's buffers. */
typedef mxgate_status (*mxgate_run_fn)(void* state, const mxgate_call* call, char* message,
                                       size_t message_size);

typedef struct mxgate_op {
  const char* name; /* unique inside its implementation, [a-z0-9_.]+ */
  uint32_t family;  /* mxgate_op_family */
  uint32_t memory;  /* mxgate_memory */
  mxgate_contract contract;
  mxgate_run_fn run;
  void* state;
} mxgate_op;

/* An implementation that is wrong on purpose (a planted fault, the proof that the gate catches
 * it) says so by starting its description with this prefix; `mxgate zoo --impl` then requires it
 * to be detected, and every other implementation to pass (docs/plugins.md). */
#define MXGATE_PLANTED_FAULT_PREFIX "planted fault:"

typedef struct mxgate_impl {
  const char* name;        /* [a-z0-9_]+, the NAME of --impl PATH.so:NAME */
  const char* description; /* one line; MXGATE_PLANTED_FAULT_PREFIX... for a planted fault */
  uint32_t op_count;
  const mxgate_op* ops;
} mxgate_impl;

typedef struct mxgate_plugin {
  uint32_t abi_version; /* MXGATE_PLUGIN_ABI_VERSION */
  uint32_t struct_size; /* sizeof(mxgate_plugin) */
  const char* name;     /* the library's name, e.g. "cublaslt" */
  /* Called once after loading, before any op: NULL when ready, else a message (e.g. "no CUDA
   * device"), which mxgate reports as an environment error (exit 3). May itself be NULL. */
  const char* (*init)(void);
  uint32_t impl_count;
  const mxgate_impl* impls;
} mxgate_plugin;

/* The entry point every plugin exports. */
typedef const mxgate_plugin* (*mxgate_plugin_entry_fn)(void);
MXGATE_PLUGIN_EXPORT const mxgate_plugin* mxgate_plugin_v1(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MXGATE_PLUGIN_H_ */
