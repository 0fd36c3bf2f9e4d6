// Host models of the element-wise kernels: quantize, dequantize, upcast, preshuffle, faults.
#include "gpu/host/models.h"
#include "gpu/kernels/dequant_mx.h"
#include "gpu/kernels/preshuffle.h"
#include "gpu/kernels/quantize_mx.h"

namespace mxgate::gpu::host {
namespace {

struct SatfiniteE4m3 {
  uint8_t operator()(float x) const { return bits::encode_e4m3fn(x, false, false); }
};

template <class Encode>
void quantize_all(const QuantizeParams& p, const void* in, uint8_t* codes, uint8_t* scales,
                  Encode encode) {
  const uint64_t blocks = (p.cols + 31) / 32;
  for (uint64_t r = 0; r < p.rows; ++r) {
    for (uint64_t b = 0; b < blocks; ++b) quantize_mx_block(p, in, codes, scales, r, b, encode);
  }
}

}  // namespace

int quantize_mx(const QuantizeParams& p, const void* in, uint8_t* codes, uint8_t* scales) {
  quantize_all(p, in, codes, scales, SoftwareE4m3{p.convention});
  return 0;
}

int quantize_mx_hw(const QuantizeParams& p, const void* in, uint8_t* codes, uint8_t* scales) {
  quantize_all(p, in, codes, scales, SatfiniteE4m3{});
  return 0;
}

int dequant_mx_to_bf16(const DequantParams& p, const uint8_t* codes, const uint8_t* scales,
                       uint16_t* out) {
  for (uint64_t i = 0; i < p.rows * p.cols; ++i) dequant_mx_element(p, codes, scales, out, i);
  return 0;
}

int upcast_e8m0(const UpcastParams& p, const uint8_t* in, float* out) {
  for (uint64_t i = 0; i < p.count; ++i) upcast_e8m0_element(p, in, out, i);
  return 0;
}

int preshuffle_weight(const PreshuffleParams& p, const uint8_t* in, uint8_t* out) {
  for (uint64_t i = 0; i < p.n * p.k; ++i) preshuffle_element(p, in, out, i);
  return 0;
}

int fault_write_past_end(const FaultParams& p, float* out) {
  for (uint64_t i = 0; i <= p.count; ++i) out[i] = 1.0f;  // one element too many
  return 0;
}

int fault_skip_element(const FaultParams& p, float* out) {
  for (uint64_t i = 0; i < p.count; ++i) {
    if (i != p.skip) out[i] = 1.0f;
  }
  return 0;
}

}  // namespace mxgate::gpu::host
