// Host-side launchers of the device kernels (one per gpu/kernels/*.hip file, or one per variant
// of a templated kernel: gemm_blockscale.hip), with the entry
// signatures of gpu/kernel.h. Pointers are device addresses; each returns the launch status as
// a hipError_t value cast to int (0 = success). Asynchronous faults surface at the backend's
// synchronize.
//
// The kernel table (gpu/kernel_table.cpp) refers to these from every build. It defines
// MXGATE_DEVICE_ENTRY as a weak declaration before including this header: in a build without
// device kernels the references resolve to null; a hip / cuda build links every kernel object
// (gpu/device/CMakeLists.txt) and they resolve to the launchers. The .hip files see the plain
// declarations.
#pragma once

#include <stdint.h>

#include "gpu/kernels/params.h"

#ifndef MXGATE_DEVICE_ENTRY
#define MXGATE_DEVICE_ENTRY
#endif

namespace mxgate::gpu::device {

MXGATE_DEVICE_ENTRY int launch_quantize_mx(const QuantizeParams& p, const void* in, uint8_t* codes,
                                           uint8_t* scales);
// NVIDIA sm_89+ only (cvt.rn.satfinite.e4m3x2.f32); elsewhere returns a nonzero status.
MXGATE_DEVICE_ENTRY int launch_quantize_mx_hw(const QuantizeParams& p, const void* in,
                                              uint8_t* codes, uint8_t* scales);
// Whether launch_quantize_mx_hw runs here: compiled for sm_89+ and the current device is one.
MXGATE_DEVICE_ENTRY bool quantize_mx_hw_available();
MXGATE_DEVICE_ENTRY int launch_dequant_mx_to_bf16(const DequantParams& p, const uint8_t* codes,
                                                  const uint8_t* scales, uint16_t* out);
MXGATE_DEVICE_ENTRY int launch_upcast_e8m0(const UpcastParams& p, const uint8_t* in, float* out);
MXGATE_DEVICE_ENTRY int launch_preshuffle_weight(const PreshuffleParams& p, const uint8_t* in,
                                                 uint8_t* out);
MXGATE_DEVICE_ENTRY int launch_gemm_mx_dot_scaled(const GemmParams& p, const uint8_t* a,
                                                  const uint8_t* sa, const uint8_t* b,
                                                  const uint8_t* sb, void* out);
MXGATE_DEVICE_ENTRY int launch_gemm_mx_dequant(const GemmParams& p, const uint8_t* a,
                                               const uint8_t* sa, const uint8_t* b,
                                               const uint8_t* sb, void* out);
MXGATE_DEVICE_ENTRY int launch_gemm_blockscale(const GemmParams& p, const uint8_t* a,
                                               const float* as, const uint8_t* b, const float* bs,
                                               void* out);
MXGATE_DEVICE_ENTRY int launch_gemm_blockscale_bpreshuffle(const GemmParams& p, const uint8_t* a,
                                                           const float* as, const uint8_t* b,
                                                           const float* bs, void* out);
MXGATE_DEVICE_ENTRY int launch_gemm_blockscale_fnuz(const GemmParams& p, const uint8_t* a,
                                                    const float* as, const uint8_t* b,
                                                    const float* bs, void* out);
MXGATE_DEVICE_ENTRY int launch_gemm_blockscale_fnuz_bpreshuffle(const GemmParams& p,
                                                                const uint8_t* a, const float* as,
                                                                const uint8_t* b, const float* bs,
                                                                void* out);
MXGATE_DEVICE_ENTRY int launch_gemm_bf16(const GemmParams& p, const uint16_t* a, const uint16_t* b,
                                         void* out);
// The FP4 kernels (gpu/kernels/fp4_*.h).
MXGATE_DEVICE_ENTRY int launch_quantize_mxfp4(const Fp4QuantizeParams& p, const void* in,
                                              const void* global, uint8_t* codes, uint8_t* scales);
MXGATE_DEVICE_ENTRY int launch_quantize_nvfp4(const Fp4QuantizeParams& p, const void* in,
                                              const void* global, uint8_t* codes, uint8_t* scales);
MXGATE_DEVICE_ENTRY int launch_dequant_mxfp4(const Fp4DequantParams& p, const uint8_t* codes,
                                             const uint8_t* scales, const float* global, void* out);
MXGATE_DEVICE_ENTRY int launch_dequant_nvfp4(const Fp4DequantParams& p, const uint8_t* codes,
                                             const uint8_t* scales, const float* global, void* out);
MXGATE_DEVICE_ENTRY int launch_gemm_mxfp4(const Fp4GemmParams& p, const uint8_t* a,
                                          const uint8_t* sa, const uint8_t* b, const uint8_t* sb,
                                          const float* ga, const float* gb, void* out);
MXGATE_DEVICE_ENTRY int launch_gemm_nvfp4(const Fp4GemmParams& p, const uint8_t* a,
                                          const uint8_t* sa, const uint8_t* b, const uint8_t* sb,
                                          const float* ga, const float* gb, void* out);
MXGATE_DEVICE_ENTRY int launch_fault_write_past_end(const FaultParams& p, float* out);
MXGATE_DEVICE_ENTRY int launch_fault_skip_element(const FaultParams& p, float* out);
// Detection work (docs/bug_classes.md §2: Z21, Z22).
MXGATE_DEVICE_ENTRY int launch_quantize_act1x128_ue8m0(const QuantizeBlockParams& p, const void* in,
                                                       uint8_t* codes, float* scales);
MXGATE_DEVICE_ENTRY int launch_gemm_blockscale_ue8m0(const GemmParams& p, const uint8_t* a,
                                                     const float* as, const uint8_t* b,
                                                     const float* bs, void* out);
// The grouped GEMMs (gpu/kernels/grouped_gemm.h): offsets in device memory.
MXGATE_DEVICE_ENTRY int launch_grouped_gemm_block(const GroupedGemmParams& p, const uint8_t* a,
                                                  const float* as, const uint8_t* b,
                                                  const float* bs, const uint32_t* offsets,
                                                  void* out);
MXGATE_DEVICE_ENTRY int launch_grouped_gemm_mx(const GroupedGemmParams& p, const uint8_t* a,
                                               const uint8_t* sa, const uint8_t* b,
                                               const uint8_t* sb, const uint32_t* offsets,
                                               void* out);

}  // namespace mxgate::gpu::device
