// Host models of the grouped GEMMs: every output element through the body a device thread runs
// (kernels/grouped_gemm.h), which runs the dense GEMM body on its group's rows; an element that
// body does not write keeps the poison the backend filled the output with.
#include "gpu/host/models.h"
#include "gpu/kernels/grouped_gemm.h"

namespace mxgate::gpu::host {

int grouped_gemm_block(const GroupedGemmParams& p, const uint8_t* a, const float* as,
                       const uint8_t* b, const float* bs, const uint32_t* offsets, void* out) {
  for (uint64_t r = 0; r < grouped_out_rows(p); ++r) {
    for (uint64_t n = 0; n < p.g.n; ++n) {
      float v = 0.0f;
      if (grouped_block_element(p, a, as, b, bs, offsets, r, n, &v)) {
        store_output(p.g, out, r * p.g.n + n, v);
      }
    }
  }
  return 0;
}

int grouped_gemm_mx(const GroupedGemmParams& p, const uint8_t* a, const uint8_t* sa,
                    const uint8_t* b, const uint8_t* sb, const uint32_t* offsets, void* out) {
  for (uint64_t r = 0; r < p.g.m; ++r) {
    for (uint64_t n = 0; n < p.g.n; ++n) {
      float v = 0.0f;
      if (grouped_mx_element(p, a, sa, b, sb, offsets, r, n, &v)) {
        store_output(p.g, out, r * p.g.n + n, v);
      }
    }
  }
  return 0;
}

}  // namespace mxgate::gpu::host
