// mxgate plugin `cuda_fp8`: the conversions of CUDA's cuda_fp8.h as MXGATE_OP_CAST device ops
// (include/mxgate/plugin.h). One op per intrinsic and mode, each claiming the reference rule it
// should match; what the exhaustive sweep finds is in docs/nvidia.md §5.
//
// On sm_90 __nv_cvt_float_to_fp8 with __NV_SATFINITE is the hardware cvt.rn.satfinite.e4m3x2 /
// e5m2x2; __NV_NOSAT and every __nv_cvt_float_to_e8m0 mode are the header's software paths (the
// ue8m0 cvt needs sm_100). The ops call the intrinsics exactly as a kernel author would.
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "mxgate/plugin.h"

namespace {

enum class Cast {
  kE4m3Sat,
  kE4m3NoSat,
  kE5m2Sat,
  kE5m2NoSat,
  kE8m0RzSat,
  kE8m0RzNoSat,
  kE8m0RpSat,
  kE8m0RpNoSat,
};

template <Cast C>
__device__ __forceinline__ uint8_t convert(float x) {
  if constexpr (C == Cast::kE4m3Sat) return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  if constexpr (C == Cast::kE4m3NoSat) return __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3);
  if constexpr (C == Cast::kE5m2Sat) return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
  if constexpr (C == Cast::kE5m2NoSat) return __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2);
  if constexpr (C == Cast::kE8m0RzSat) {
    return __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero);
  }
  if constexpr (C == Cast::kE8m0RzNoSat)
    return __nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundZero);
  if constexpr (C == Cast::kE8m0RpSat) {
    return __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf);
  }
  if constexpr (C == Cast::kE8m0RpNoSat) {
    return __nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundPosInf);
  }
  return 0;
}

constexpr unsigned kThreads = 256;
constexpr unsigned kMaxBlocks = 1u << 20;

// 16 inputs per thread: four 16-byte loads, one 16-byte store (both pointers 16-byte aligned).
template <Cast C>
__global__ void cast_vec16_kernel(const float4* in, uint4* out, uint64_t groups) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t g = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; g < groups; g += stride) {
    uint32_t w[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const float4 v = in[g * 4 + q];
      w[q] = uint32_t{convert<C>(v.x)} | (uint32_t{convert<C>(v.y)} << 8) |
             (uint32_t{convert<C>(v.z)} << 16) | (uint32_t{convert<C>(v.w)} << 24);
    }
    out[g] = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

template <Cast C>
__global__ void cast_scalar_kernel(const float* in, uint8_t* out, uint64_t begin, uint64_t count) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = begin + uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    out[i] = convert<C>(in[i]);
  }
}

unsigned blocks_for(uint64_t items) {
  const uint64_t b = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b == 0 ? 1 : (b < kMaxBlocks ? b : kMaxBlocks));
}

template <Cast C>
cudaError_t launch(const float* in, uint8_t* out, uint64_t count, cudaStream_t stream) {
  uint64_t vec_items = 0;
  if (reinterpret_cast<uintptr_t>(in) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0) {
    const uint64_t groups = count / 16;
    if (groups > 0) {
      cast_vec16_kernel<C><<<blocks_for(groups), kThreads, 0, stream>>>(
          reinterpret_cast<const float4*>(in), reinterpret_cast<uint4*>(out), groups);
    }
    vec_items = groups * 16;
  }
  if (vec_items < count) {
    cast_scalar_kernel<C>
        <<<blocks_for(count - vec_items), kThreads, 0, stream>>>(in, out, vec_items, count);
  }
  return cudaGetLastError();
}

struct CastState {
  mxgate_dtype out;
  cudaError_t (*launch)(const float*, uint8_t*, uint64_t, cudaStream_t);
};

void say(char* message, size_t size, const char* text) {
  if (message != nullptr && size > 0) std::snprintf(message, size, "%s", text);
}

mxgate_status run_cast(void* state, const mxgate_call* call, char* message, size_t message_size) {
  const CastState& s = *static_cast<const CastState*>(state);
  if (call == nullptr || call->struct_size < sizeof(mxgate_call) ||
      call->family != MXGATE_OP_CAST) {
    say(message, message_size, "cuda_fp8: not a cast call (family or struct_size)");
    return MXGATE_ERROR;
  }
  if (call->a.dtype != MXGATE_DTYPE_F32 || call->out.dtype != static_cast<uint32_t>(s.out)) {
    say(message, message_size, "cuda_fp8: this op casts fp32 to its own output dtype only");
    return MXGATE_UNSUPPORTED;
  }
  const uint64_t count = call->a.rows * call->a.cols;
  if (call->out.rows * call->out.cols != count || call->a.bytes < count * sizeof(float) ||
      call->out.bytes < count ||
      (count > 0 && (call->a.data == nullptr || call->out.data == nullptr))) {
    say(message, message_size, "cuda_fp8: input / output shapes or sizes disagree");
    return MXGATE_ERROR;
  }
  if (count == 0) return MXGATE_DONE;
  const cudaError_t e =
      s.launch(static_cast<const float*>(call->a.data), static_cast<uint8_t*>(call->out.data),
               count, static_cast<cudaStream_t>(call->stream));
  if (e != cudaSuccess) {
    std::snprintf(message, message_size, "cuda_fp8: launch failed: %s", cudaGetErrorString(e));
    return MXGATE_ERROR;
  }
  return MXGATE_DONE;
}

CastState kStates[] = {
    {MXGATE_DTYPE_E4M3FN, &launch<Cast::kE4m3Sat>},
    {MXGATE_DTYPE_E4M3FN, &launch<Cast::kE4m3NoSat>},
    {MXGATE_DTYPE_E5M2, &launch<Cast::kE5m2Sat>},
    {MXGATE_DTYPE_E5M2, &launch<Cast::kE5m2NoSat>},
    {MXGATE_DTYPE_E8M0, &launch<Cast::kE8m0RzSat>},
    {MXGATE_DTYPE_E8M0, &launch<Cast::kE8m0RzNoSat>},
    {MXGATE_DTYPE_E8M0, &launch<Cast::kE8m0RpSat>},
    {MXGATE_DTYPE_E8M0, &launch<Cast::kE8m0RpNoSat>},
};

// Elementwise: any count (rows = 1, cols = count), fp32 in, one code byte out.
mxgate_contract cast_contract(mxgate_dtype out, const char* convention, const char* notes) {
  mxgate_contract c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof(mxgate_contract);
  c.a_dtypes = MXGATE_DTYPE_BIT(MXGATE_DTYPE_F32);
  c.out_dtypes = MXGATE_DTYPE_BIT(out);
  c.scale_dtype = MXGATE_DTYPE_NONE;
  c.convention = convention;
  c.notes = notes;
  return c;
}

mxgate_op make_op(const char* name, int i, const char* convention, const char* notes) {
  mxgate_op op;
  std::memset(&op, 0, sizeof op);
  op.name = name;
  op.family = MXGATE_OP_CAST;
  op.memory = MXGATE_MEMORY_CUDA;
  op.contract = cast_contract(kStates[i].out, convention, notes);
  op.run = &run_cast;
  op.state = &kStates[i];
  return op;
}

// Claims: a convention name (`mxgate conventions`) where one holds the intrinsic's documented
// policy, else "e8m0:RULE" (reference/e8m0.h). Sources: cuda_fp8.h / cuda_fp8.hpp (CUDA 13.0).
const mxgate_op kOps[] = {
    make_op(
        "e4m3_satfinite", 0, "cuda_satfinite",
        "__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3); sm_90: cvt.rn.satfinite.e4m3x2.f32"),
    make_op("e4m3_nosat", 1, "cuda_nosat",
            "__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3); software path via double"),
    make_op(
        "e5m2_satfinite", 2, "cuda_satfinite",
        "__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2); sm_90: cvt.rn.satfinite.e5m2x2.f32"),
    make_op("e5m2_nosat", 3, "cuda_nosat",
            "__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2); software path via double"),
    make_op("e8m0_rz_satfinite", 4, "e8m0:floor_sat",
            "__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero); sm_90: software path via "
            "bf16 (no convention holds this rule)"),
    make_op("e8m0_rz_nosat", 5, "e8m0:floor",
            "__nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundZero); sm_90: software path via bf16"),
    make_op("e8m0_rp_satfinite", 6, "cuda_satfinite",
            "__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf) (the __nv_fp8_e8m0 "
            "constructor's mode); sm_90: software path via bf16"),
    make_op(
        "e8m0_rp_nosat", 7, "cuda_nosat",
        "__nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundPosInf); sm_90: software path via bf16"),
};

const mxgate_impl kImpls[] = {
    {"cuda_fp8", "cuda_fp8.h conversions (CUDA 13.0) as device cast ops, sm_90",
     static_cast<uint32_t>(sizeof(kOps) / sizeof(kOps[0])), kOps},
};

const char* init_plugin() {
  static char why[256];
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    std::snprintf(why, sizeof why, "cuda_fp8: no CUDA device (%s)",
                  e == cudaSuccess ? "count 0" : cudaGetErrorString(e));
    return why;
  }
  int dev = 0;
  cudaDeviceProp p;
  if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
      (e = cudaGetDeviceProperties(&p, dev)) != cudaSuccess) {
    std::snprintf(why, sizeof why, "cuda_fp8: cannot query the device (%s)", cudaGetErrorString(e));
    return why;
  }
  if (p.major < 9) {
    std::snprintf(why, sizeof why, "cuda_fp8: built for sm_90, device is sm_%d%d", p.major,
                  p.minor);
    return why;
  }
  return nullptr;
}

const mxgate_plugin kPlugin = {
    MXGATE_PLUGIN_ABI_VERSION, sizeof(mxgate_plugin), "cuda_fp8", &init_plugin, 1, kImpls};

}  // namespace

extern "C" MXGATE_PLUGIN_EXPORT const mxgate_plugin* mxgate_plugin_v1(void) { return &kPlugin; }
