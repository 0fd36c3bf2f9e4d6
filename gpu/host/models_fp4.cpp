// Host models of the FP4 kernels: every (row, block) and every output element through the body a
// device thread runs (gpu/kernels/fp4_quant.h, fp4_gemm.h).
#include "gpu/host/models.h"
#include "gpu/kernels/fp4_gemm.h"
#include "gpu/kernels/fp4_quant.h"

namespace mxgate::gpu::host {

int quantize_mxfp4(const Fp4QuantizeParams& p, const void* in, const void*, uint8_t* codes,
                   uint8_t* scales) {
  for (uint64_t r = 0; r < p.rows; ++r) {
    for (uint64_t b = 0; b < ceil_div(p.cols, kMxBlock); ++b) {
      quantize_mxfp4_block(p, in, codes, scales, r, b);
    }
  }
  return 0;
}

int quantize_nvfp4(const Fp4QuantizeParams& p, const void* in, const void* global, uint8_t* codes,
                   uint8_t* scales) {
  for (uint64_t r = 0; r < p.rows; ++r) {
    for (uint64_t b = 0; b < ceil_div(p.cols, kNvfp4Block); ++b) {
      quantize_nvfp4_block(p, in, global, codes, scales, r, b);
    }
  }
  return 0;
}

int dequant_mxfp4(const Fp4DequantParams& p, const uint8_t* codes, const uint8_t* scales,
                  const float* global, void* out) {
  for (uint64_t i = 0; i < p.rows * p.cols; ++i) {
    dequant_fp4_element<false>(p, codes, scales, global, out, i);
  }
  return 0;
}

int dequant_nvfp4(const Fp4DequantParams& p, const uint8_t* codes, const uint8_t* scales,
                  const float* global, void* out) {
  for (uint64_t i = 0; i < p.rows * p.cols; ++i) {
    dequant_fp4_element<true>(p, codes, scales, global, out, i);
  }
  return 0;
}

int gemm_mxfp4(const Fp4GemmParams& p, const uint8_t* a, const uint8_t* sa, const uint8_t* b,
               const uint8_t* sb, const float*, const float*, void* out) {
  for (uint64_t m = 0; m < p.m; ++m) {
    for (uint64_t n = 0; n < p.n; ++n) {
      fp4_store_output(p, out, m * p.n + n, gemm_mxfp4_element(p, a, sa, b, sb, m, n));
    }
  }
  return 0;
}

int gemm_nvfp4(const Fp4GemmParams& p, const uint8_t* a, const uint8_t* sa, const uint8_t* b,
               const uint8_t* sb, const float* ga, const float* gb, void* out) {
  for (uint64_t m = 0; m < p.m; ++m) {
    for (uint64_t n = 0; n < p.n; ++n) {
      fp4_store_output(p, out, m * p.n + n, gemm_nvfp4_element(p, a, sa, b, sb, ga, gb, m, n));
    }
  }
  return 0;
}

}  // namespace mxgate::gpu::host
