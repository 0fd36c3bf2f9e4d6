/* mxgate's reference as a C ABI (libmxgate.so), version 1: what the Python package `mxgate`
 * (python/) calls through ctypes, usable from any language with a C FFI.
 *
 * One entry point runs a verb of the CLI on arrays in memory instead of .npy files:
 *
 *   mxgate_api_run("gemm", options, arrays, &result)  ~  mxgate gemm --scheme mx --a A.npy ...
 *
 * Options are the CLI's, by name without "--" ("scheme" = "mx"; a flag has a NULL value); each
 * input array stands for the CLI option of its name ("a", "a-scales", "in", "c", ...). The verb
 * runs the same validation as the CLI (verbs/tensor_ops.h, verbs/value_ops.h), so an error message
 * is the CLI's text (for an input array, the CLI's message without the file name). Nothing is
 * written anywhere except the heatmap file check-gemm draws on request.
 *
 * Verbs, inputs -> outputs (docs/python.md §4.1; their options are the CLI verbs'):
 *   encode      values (float32 / float64, any shape) -> codes (uint8; uint16 for bf16, fp16)
 *   decode      codes (uint8 / uint16, any shape) -> values (float32)
 *   quantize    in (M, K) -> data, scales (nvfp4: and global, float32 (1,))
 *   dequantize  data, scales (nvfp4: and global) -> out
 *   gemm        a, a-scales, b, b-scales (nvfp4: and a-global, b-global) -> out (the exact oracle)
 *   check-gemm  gemm's inputs and c -> a verdict (mxgate_api_result_verdict) and text
 *   formats, conventions, accumulators  (no inputs) -> text: one name per line; accumulators
 *               with the flag "json": `mxgate accumulators --json` (each model's parameters)
 *
 * Guarantees: every C++ exception is caught and turned into a status and a message; no input
 * (null pointers, sizes that disagree with shapes, unknown dtypes) crashes the caller. Arrays are
 * C-contiguous and little-endian; the library copies what it reads, so the caller's buffers need
 * only live for the call. Functions are thread-safe; messages are per thread.
 * Compatibility: fields of structs are only ever appended; mxgate_api_verdict starts with
 * struct_size, which the caller sets to the size it knows.
 */
#ifndef MXGATE_API_H_
#define MXGATE_API_H_

#include <stddef.h>
#include <stdint.h>

#include "mxgate/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MXGATE_API_VERSION 1u

#if defined(_WIN32)
#define MXGATE_API_EXPORT __declspec(dllexport)
#else
#define MXGATE_API_EXPORT __attribute__((visibility("default")))
#endif

/* Statuses. INPUT is the CLI's exit code 2 (usage or input error: Python raises ValueError). */
typedef enum mxgate_api_status {
  MXGATE_API_OK = 0,
  MXGATE_API_ERROR_INPUT = 2,   /* bad option, dtype, shape, value: the message names it */
  MXGATE_API_ERROR_MEMORY = 4,  /* an allocation failed */
  MXGATE_API_ERROR_RUNTIME = 5, /* anything else (a heatmap file that could not be written) */
  MXGATE_API_ERROR_INTERNAL = 6 /* a non-standard exception: a bug in mxgate */
} mxgate_api_status;

/* An array. Inputs: the caller fills every field. Outputs (mxgate_api_result_array): pointers
 * into the result, valid until mxgate_api_result_free. */
typedef struct mxgate_api_array {
  const char* name;      /* input: the CLI option it stands for; output: its role ("out") */
  const char* descr;     /* NumPy's dtype.str: "|u1", "<u2", "<f4", "<f8"; others are rejected
                            with the CLI's message for a .npy file of that dtype */
  uint32_t rank;         /* number of dimensions (0: a scalar) */
  uint32_t reserved;     /* 0 */
  const uint64_t* shape; /* rank extents */
  const void* data;      /* C order; NULL only when nbytes is 0 */
  uint64_t nbytes;       /* must equal the element count times the item size */
} mxgate_api_array;

/* One located element of a check-gemm verdict. Bits are fp32 patterns, or 16-bit bf16 patterns.
 * `expected` is the exact result rounded once to C's format; `ulp` the ordered-integer distance
 * of reference/verdict.h (UINT64_MAX: NaN vs a number). Bound mode adds `exact` (the exact
 * result rounded to double), `bound` (the allowed |actual - exact|) and `excess`; they are NaN in
 * exact mode. */
typedef struct mxgate_api_element {
  uint64_t row, col;
  uint32_t expected_bits, actual_bits;
  uint64_t ulp;
  double expected, actual;
  double exact, bound, excess;
} mxgate_api_element;

typedef struct mxgate_api_verdict {
  uint32_t struct_size; /* set by the caller: sizeof(mxgate_api_verdict) */
  uint32_t ok;          /* 1: C passes */
  uint32_t mode;        /* 0 exact, 1 bound */
  uint32_t output;      /* C's format: 0 fp32, 1 bf16 */
  uint64_t rows, cols;  /* M, N */
  uint64_t mismatches;  /* exact: elements whose bits differ; bound: elements outside */
  uint32_t has_first, has_worst;
  mxgate_api_element first; /* row-major first mismatch */
  mxgate_api_element worst; /* exact: largest ulp; bound: largest excess */
} mxgate_api_verdict;

typedef struct mxgate_api_result mxgate_api_result;

/* MXGATE_API_VERSION of the library. */
MXGATE_API_EXPORT uint32_t mxgate_api_version(void);

/* The vocabulary of include/mxgate/plugin.h as JSON (schema mxgate-vocabulary/1): "dtypes" (name,
 * code = mxgate_dtype, bits, exponent_bits, mantissa_bits, storage_bytes with 0 = packed two per
 * byte, element_of / scale_of = the scaled formats it belongs to), "scaled_formats" (name,
 * block), "families" (name, code = mxgate_op_family) and "layouts" (name, code = mxgate_layout).
 * Valid for the library's lifetime. The Python package numbers its dtypes from it. */
MXGATE_API_EXPORT const char* mxgate_api_vocabulary(void);

/* Runs `verb`. names[i] / values[i] are the options (values[i] NULL: a flag); arrays the inputs.
 * On MXGATE_API_OK, *result holds the outputs (free it with mxgate_api_result_free); otherwise
 * *result is NULL and mxgate_api_last_error() says why. */
MXGATE_API_EXPORT int mxgate_api_run(const char* verb, size_t option_count,
                                     const char* const* names, const char* const* values,
                                     size_t array_count, const mxgate_api_array* arrays,
                                     mxgate_api_result** result);

/* The message of this thread's last failed call ("" when none); valid until its next call. */
MXGATE_API_EXPORT const char* mxgate_api_last_error(void);

MXGATE_API_EXPORT size_t mxgate_api_result_array_count(const mxgate_api_result* result);
/* Fills *out with output array `index`; MXGATE_API_ERROR_INPUT when out of range. */
MXGATE_API_EXPORT int mxgate_api_result_array(const mxgate_api_result* result, size_t index,
                                              mxgate_api_array* out);
/* What the CLI verb prints on stdout ("" when nothing). */
MXGATE_API_EXPORT const char* mxgate_api_result_text(const mxgate_api_result* result);
/* check-gemm's verdict: fills the first min(out->struct_size, sizeof(mxgate_api_verdict)) bytes
 * (struct_size kept); MXGATE_API_ERROR_INPUT for other verbs or a struct_size below 8. */
MXGATE_API_EXPORT int mxgate_api_result_verdict(const mxgate_api_result* result,
                                                mxgate_api_verdict* out);
MXGATE_API_EXPORT void mxgate_api_result_free(mxgate_api_result* result);

/* Runs property `property` (`mxgate property --list`) against `impl`, an implementation the
 * caller built in memory (include/mxgate/plugin.h: ops of host memory whose run functions the
 * caller provides, e.g. ctypes callbacks), with the property runner's generators, the ops'
 * contracts and shrinking: `mxgate property NAME --impl ...` without a plugin file. `impl` is
 * checked as a plugin's description is (a malformed one is MXGATE_API_ERROR_INPUT). Options:
 * "seed", "cases", "max-size", "case" (the text of one case, replayed without its generator),
 * "no-shrink" (a flag). The result's text is JSON (schema mxgate-check/1: passed, cases,
 * unsupported and their reasons, the shrunk counterexample, the failure with its kind and
 * located element). property NULL: the text lists the properties as JSON. docs/python.md §9. */
MXGATE_API_EXPORT int mxgate_api_check(const char* property, size_t option_count,
                                       const char* const* names, const char* const* values,
                                       const mxgate_impl* impl, mxgate_api_result** result);

/* Hears a survey's progress: `done` of `total` inputs compared. */
typedef void (*mxgate_api_progress)(void* context, uint64_t done, uint64_t total);

/* The cast survey (`mxgate survey`'s casts, properties/cast_survey.h) of op `op_index` of
 * `impl` (an in-memory implementation as mxgate_api_check takes) to dtype `target` ("e4m3fn",
 * ...), in this process: `inputs` "all" (2^32 fp32 patterns) or "sample". A host-memory op runs
 * chunk by chunk on host buffers; a device op (MXGATE_MEMORY_CUDA, a CUDA build only) through the
 * device cast sweep (gpu/kernels/cast_sweep: inputs made on the device, its output compared there
 * with each claim's run table, guard bands and poison around its output; always all inputs).
 * The result's text is properties::survey_lines' form (a "cast" line, one "claim" line per
 * distinct expected table). `progress` may be NULL. docs/python.md §13. */
MXGATE_API_EXPORT int mxgate_api_survey_cast(const mxgate_impl* impl, uint32_t op_index,
                                             const char* target, const char* inputs,
                                             mxgate_api_progress progress, void* context,
                                             mxgate_api_result** result);
/* The same with the inputs per call of a host-memory op: `call_inputs` (0: the default, 2^22,
 * which keeps a returned array or a 4-byte temporary per input below glibc's mmap threshold). An
 * op that allocates nothing per call (writing mxgate's output in place) is faster with fewer,
 * larger calls: Python's survey gives such an op calls of 16 MiB of output. Device ops ignore
 * it (the device sweep's calls are 2^28). */
MXGATE_API_EXPORT int mxgate_api_survey_cast_calls(const mxgate_impl* impl, uint32_t op_index,
                                                   const char* target, const char* inputs,
                                                   uint64_t call_inputs,
                                                   mxgate_api_progress progress, void* context,
                                                   mxgate_api_result** result);

/* Device memory for Python device ops (docs/python.md §9): "cuda" when this library was built
 * with CUDA and a device is present, else "" (the functions below then fail). Copies are
 * synchronous (kind 0 host to device, 1 device to host, 2 device to device); sync waits for
 * `stream` (NULL: the whole device). */
MXGATE_API_EXPORT const char* mxgate_api_device_kind(void);
MXGATE_API_EXPORT int mxgate_api_device_alloc(uint64_t bytes, void** out);
MXGATE_API_EXPORT int mxgate_api_device_free(void* pointer);
MXGATE_API_EXPORT int mxgate_api_device_copy(void* dst, const void* src, uint64_t bytes,
                                             uint32_t kind);
MXGATE_API_EXPORT int mxgate_api_device_sync(void* stream);

#ifdef __cplusplus
}
#endif

#endif /* MXGATE_API_H_ */
