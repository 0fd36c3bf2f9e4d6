// The example plugin's device variant: the same ABI (include/mxgate/plugin.h) with device
// pointers and a stream. Built by the hip preset as libmxgate_example_hip.so (HIP memory, AMD
// gfx90a / gfx940) and by the cuda preset as libmxgate_example_cuda.so (the same source with the
// few runtime names it uses mapped to CUDA below, CUDA memory). Like every plugin it includes
// nothing of mxgate but the C ABI header. Two ops, one thread per element:
//   cast_e4m3fn_satfinite  cast    fp32 -> e4m3fn, RNE, satfinite, NaN -> 0x7F (cuda_satfinite)
//   upcast_e8m0            upcast  byte -> 2^(e - 127), 0xFF -> NaN (ocp_mx)
// init() refuses when no device is present: mxgate reports an environment error (exit 3).
#include <stdio.h>

#include "mxgate/plugin.h"

#if defined(MXGATE_USE_CUDA)
#include <cuda_runtime.h>
using hipError_t = cudaError_t;
using hipStream_t = cudaStream_t;
#define hipSuccess cudaSuccess
#define hipGetLastError cudaGetLastError
#define hipGetErrorString cudaGetErrorString
#define hipGetDeviceCount cudaGetDeviceCount
#define hipLaunchKernelGGL(kernel, grid, block, shmem, stream, ...) \
  kernel<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)
#else
#include <hip/hip_runtime.h>
#endif

// fp8.h's conversions run on the device too.
#define FP8_FN static inline __host__ __device__
#include "fp8.h"  // NOLINT(build/include_subdir): the plugin's own header, beside it

namespace {

#if defined(MXGATE_USE_CUDA)
constexpr uint32_t kMemory = MXGATE_MEMORY_CUDA;
constexpr const char* kImplName = "example_cuda";
#else
constexpr uint32_t kMemory = MXGATE_MEMORY_HIP;
constexpr const char* kImplName = "example_hip";
#endif

constexpr unsigned kThreads = 256;

__global__ void cast_kernel(const float* in, uint8_t* out, uint64_t count) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const fp8_format e4m3 = {3, 7, 0, 0x7E, 0, 0x7F};
  out[i] = fp8_encode(in[i], &e4m3, ROUND_NEAREST_EVEN, OVERFLOW_SATURATE, 1);
}

__global__ void upcast_kernel(const uint8_t* in, float* out, uint64_t count) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) out[i] = e8m0_decode(in[i]);
}

mxgate_status fail(char* msg, size_t size, mxgate_status s, const char* what) {
  snprintf(msg, size, "%s", what);
  return s;
}

// Packed row-major 1 x count tensors of the given dtypes, large enough.
const char* check(const mxgate_call* c, uint32_t in, size_t in_bytes, uint32_t out,
                  size_t out_bytes) {
  const uint64_t count = c->m * c->k;
  if (c->a.data == nullptr || c->out.data == nullptr) return "a or out missing";
  if (c->a.dtype != in || c->out.dtype != out) return "unexpected dtype";
  if (c->a.layout != MXGATE_LAYOUT_ROW_MAJOR || c->out.layout != MXGATE_LAYOUT_ROW_MAJOR) {
    return "row-major tensors only";
  }
  if ((c->a.ld != 0 && c->a.ld != c->k) || (c->out.ld != 0 && c->out.ld != c->k)) {
    return "packed tensors only";
  }
  if (c->a.bytes < count * in_bytes || c->out.bytes < count * out_bytes) return "buffer too small";
  return nullptr;
}

mxgate_status launch_status(char* msg, size_t size) {
  const hipError_t e = hipGetLastError();
  if (e != hipSuccess) return fail(msg, size, MXGATE_ERROR, hipGetErrorString(e));
  return MXGATE_DONE;
}

mxgate_status cast_run(void*, const mxgate_call* c, char* msg, size_t size) {
  if (const char* why = check(c, MXGATE_DTYPE_F32, 4, MXGATE_DTYPE_E4M3FN, 1)) {
    return fail(msg, size, MXGATE_ERROR, why);
  }
  const uint64_t count = c->m * c->k;
  if (count == 0) return MXGATE_DONE;
  hipLaunchKernelGGL(cast_kernel, dim3(static_cast<unsigned>((count + kThreads - 1) / kThreads)),
                     dim3(kThreads), 0, static_cast<hipStream_t>(c->stream),
                     static_cast<const float*>(c->a.data), static_cast<uint8_t*>(c->out.data),
                     count);
  return launch_status(msg, size);
}

mxgate_status upcast_run(void*, const mxgate_call* c, char* msg, size_t size) {
  if (const char* why = check(c, MXGATE_DTYPE_E8M0, 1, MXGATE_DTYPE_F32, 4)) {
    return fail(msg, size, MXGATE_ERROR, why);
  }
  const uint64_t count = c->m * c->k;
  if (count == 0) return MXGATE_DONE;
  hipLaunchKernelGGL(upcast_kernel, dim3(static_cast<unsigned>((count + kThreads - 1) / kThreads)),
                     dim3(kThreads), 0, static_cast<hipStream_t>(c->stream),
                     static_cast<const uint8_t*>(c->a.data), static_cast<float*>(c->out.data),
                     count);
  return launch_status(msg, size);
}

const char* init() {
  int count = 0;
  if (hipGetDeviceCount(&count) != hipSuccess || count == 0) {
    (void)hipGetLastError();
#if defined(MXGATE_USE_CUDA)
    return "no CUDA device";
#else
    return "no HIP device";
#endif
  }
  return nullptr;
}

mxgate_contract cast_contract() {
  mxgate_contract c{};
  c.struct_size = sizeof(mxgate_contract);
  c.a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32);
  c.out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E4M3FN);
  c.convention = "cuda_satfinite";
  c.notes = "one thread per element: RNE, satfinite, NaN -> 0x7F";
  return c;
}

mxgate_contract upcast_contract() {
  mxgate_contract c{};
  c.struct_size = sizeof(mxgate_contract);
  c.a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_E8M0);
  c.out_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32);
  c.convention = "ocp_mx";
  c.notes = "one thread per byte: 2^(e - 127), 0xFF -> NaN";
  return c;
}

const mxgate_op kOps[] = {
    {"cast_e4m3fn_satfinite", MXGATE_OP_CAST, kMemory, cast_contract(), cast_run, nullptr},
    {"upcast_e8m0", MXGATE_OP_UPCAST_E8M0, kMemory, upcast_contract(), upcast_run, nullptr},
};

const mxgate_impl kImpls[] = {
    {kImplName, "the example plugin's device ops (one thread per element)", 2, kOps}};

const mxgate_plugin kPlugin = {
    MXGATE_PLUGIN_ABI_VERSION, sizeof(mxgate_plugin), kImplName, init, 1, kImpls};

}  // namespace

MXGATE_PLUGIN_EXPORT const mxgate_plugin* mxgate_plugin_v1(void) { return &kPlugin; }
