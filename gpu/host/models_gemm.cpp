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

int gemm_bf16(const GemmParams& p, const uint16_t* a, const uint16_t* b, void* out) {
  // The launch count the planted Z30 reads, kept as the device launcher keeps it.
  static std::atomic<uint64_t> launches{0};
  GemmParams q = p;
  q.launch_index = launches++;
  for_each_output(q, out, [&](uint64_t m, uint64_t n) { return gemm_bf16_element(q, a, b, m, n); });
  return 0;
}

}  // namespace mxgate::gpu::host
