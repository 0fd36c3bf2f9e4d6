// Host models (the host entry points of the kernel table, gpu/kernel.h): CPU loops over the same
// per-element bodies the device kernels run (gpu/kernels/*.h), reading their inputs through the
// kernel's own layout (column-major As, preshuffled B, unmasked K tiles), so a layout or contract
// mismatch upstream gives the same wrong numbers as on a GPU. Pointers are the user regions of
// guarded host allocations.
#pragma once

#include <cstdint>

#include "gpu/kernels/gemm.h"
#include "gpu/kernels/params.h"

namespace mxgate::gpu::host {

int quantize_mx(const QuantizeParams& p, const void* in, uint8_t* codes, uint8_t* scales);
// Models cvt.rn.satfinite.e4m3x2.f32: RNE, overflow and Inf -> +-448, NaN -> 0x7F.
int quantize_mx_hw(const QuantizeParams& p, const void* in, uint8_t* codes, uint8_t* scales);
int dequant_mx_to_bf16(const DequantParams& p, const uint8_t* codes, const uint8_t* scales,
                       uint16_t* out);
int upcast_e8m0(const UpcastParams& p, const uint8_t* in, float* out);
int preshuffle_weight(const PreshuffleParams& p, const uint8_t* in, uint8_t* out);

int gemm_mx_dot_scaled(const GemmParams& p, const uint8_t* a, const uint8_t* sa, const uint8_t* b,
                       const uint8_t* sb, void* out);
int gemm_mx_dequant(const GemmParams& p, const uint8_t* a, const uint8_t* sa, const uint8_t* b,
                    const uint8_t* sb, void* out);
int gemm_bf16(const GemmParams& p, const uint16_t* a, const uint16_t* b, void* out);

// The block-scale GEMMs, one instance per kernel row of the kernels/gemm.h body's template:
// gemm_blockscale <false, false, false>, gemm_blockscale_bpreshuffle <true, false, false>,
// gemm_blockscale_ue8m0 <false, true, false> (Z22), gemm_blockscale_fnuz <false, false, true> and
// gemm_blockscale_fnuz_bpreshuffle <true, false, true> (AITER's MI300 path: FNUZ codes, the CDNA3
// MFMA accumulation).
template <bool kPreshuffled, bool kUe8m0, bool kFnuzMfma>
int blockscale_gemm(const GemmParams& p, const uint8_t* a, const float* as, const uint8_t* b,
                    const float* bs, void* out) {
  for (uint64_t m = 0; m < p.m; ++m) {
    for (uint64_t n = 0; n < p.n; ++n) {
      store_output(p, out, m * p.n + n,
                   gemm_blockscale_element<kPreshuffled, kUe8m0, kFnuzMfma>(p, a, as, b, bs, m, n));
    }
  }
  return 0;
}

// The FP4 kernels (models_fp4.cpp).
int quantize_mxfp4(const Fp4QuantizeParams& p, const void* in, const void* global, uint8_t* codes,
                   uint8_t* scales);
int quantize_nvfp4(const Fp4QuantizeParams& p, const void* in, const void* global, uint8_t* codes,
                   uint8_t* scales);
int dequant_mxfp4(const Fp4DequantParams& p, const uint8_t* codes, const uint8_t* scales,
                  const float* global, void* out);
int dequant_nvfp4(const Fp4DequantParams& p, const uint8_t* codes, const uint8_t* scales,
                  const float* global, void* out);
int gemm_mxfp4(const Fp4GemmParams& p, const uint8_t* a, const uint8_t* sa, const uint8_t* b,
               const uint8_t* sb, const float* ga, const float* gb, void* out);
int gemm_nvfp4(const Fp4GemmParams& p, const uint8_t* a, const uint8_t* sa, const uint8_t* b,
               const uint8_t* sb, const float* ga, const float* gb, void* out);

int fault_write_past_end(const FaultParams& p, float* out);
int fault_skip_element(const FaultParams& p, float* out);

// The grouped GEMMs (models_grouped.cpp; kernels/grouped_gemm.h).
int grouped_gemm_block(const GroupedGemmParams& p, const uint8_t* a, const float* as,
                       const uint8_t* b, const float* bs, const uint32_t* offsets, void* out);
int grouped_gemm_mx(const GroupedGemmParams& p, const uint8_t* a, const uint8_t* sa,
                    const uint8_t* b, const uint8_t* sb, const uint32_t* offsets, void* out);

// Detection work (docs/bug_classes.md §2: Z21; Z22 is gemm_blockscale_ue8m0 above).
int quantize_act1x128_ue8m0(const QuantizeBlockParams& p, const void* in, uint8_t* codes,
                            float* scales);

}  // namespace mxgate::gpu::host
