// Host models of the GEMMs: every output element through the body the device thread runs.
#include <atomic>

#include "gpu/host/models.h"
#include "gpu/kernels/gemm.h"

namespace mxgate::gpu::host {
namespace {

template <class Element>
void for_each_output(const GemmParams& p, void* out, Element element) {
  for (uint64_t m = 0; m < p.m; ++m) {
    for (uint64_t n = 0; n < p.n; ++n) store_output(p, out, m * p.n + n, element(m, n));
  }
}

// The block-scale GEMMs: one body (kernels/gemm.h gemm_blockscale_element), their variants.
template <bool kPreshuffled, bool kUe8m0, bool kFnuzMfma>
int blockscale(const GemmParams& p, const uint8_t* a, const float* as, const uint8_t* b,
               const float* bs, void* out) {
  for_each_output(p, out, [&](uint64_t m, uint64_t n) {
    return gemm_blockscale_element<kPreshuffled, kUe8m0, kFnuzMfma>(p, a, as, b, bs, m, n);
  });
  return 0;
}

}  // namespace

int gemm_mx_dot_scaled(const GemmParams& p, const uint8_t* a, const uint8_t* sa, const uint8_t* b,
                       const uint8_t* sb, void* out) {
  for_each_output(p, out, [&](uint64_t m, uint64_t n) {
    return gemm_mx_dot_scaled_element(p, a, sa, b, sb, m, n);
  });
  return 0;
}

int gemm_mx_dequant(const GemmParams& p, const uint8_t* a, const uint8_t* sa, const uint8_t* b,
                    const uint8_t* sb, void* out) {
  for_each_output(p, out, [&](uint64_t m, uint64_t n) {
    return gemm_mx_dequant_element(p, a, sa, b, sb, m, n);
  });
  return 0;
}

int gemm_blockscale(const GemmParams& p, const uint8_t* a, const float* as, const uint8_t* b,
                    const float* bs, void* out) {
  return blockscale<false, false, false>(p, a, as, b, bs, out);
}

int gemm_blockscale_bpreshuffle(const GemmParams& p, const uint8_t* a, const float* as,
                                const uint8_t* b, const float* bs, void* out) {
  return blockscale<true, false, false>(p, a, as, b, bs, out);
}

int gemm_blockscale_fnuz(const GemmParams& p, const uint8_t* a, const float* as, const uint8_t* b,
                         const float* bs, void* out) {
  return blockscale<false, false, true>(p, a, as, b, bs, out);
}

int gemm_blockscale_fnuz_bpreshuffle(const GemmParams& p, const uint8_t* a, const float* as,
                                     const uint8_t* b, const float* bs, void* out) {
  return blockscale<true, false, true>(p, a, as, b, bs, out);
}

int gemm_bf16(const GemmParams& p, const uint16_t* a, const uint16_t* b, void* out) {
  // The launch count the planted Z30 reads, kept as the device launcher keeps it.
  static std::atomic<uint64_t> launches{0};
  GemmParams q = p;
  q.launch_index = launches++;
  for_each_output(q, out, [&](uint64_t m, uint64_t n) { return gemm_bf16_element(q, a, b, m, n); });
  return 0;
}

int gemm_blockscale_ue8m0(const GemmParams& p, const uint8_t* a, const float* as, const uint8_t* b,
                          const float* bs, void* out) {
  return blockscale<false, true, false>(p, a, as, b, bs, out);
}

}  // namespace mxgate::gpu::host
