// MX dequantization to bf16 and the E8M0 upcast: per-element bodies shared by every backend.
#pragma once

#include "common/blocks.h"
#include "gpu/kernels/bits.h"
#include "gpu/kernels/params.h"

namespace mxgate::gpu {

// One FP8 code of `f` as fp32 (exact), with the planted decode faults Z24-Z26.
MXGATE_HD inline float decode_fp8(Fp8Format f, uint8_t c, uint64_t faults) {
  switch (f) {
    case Fp8Format::kE5m2:
      return bits::decode_e5m2(c, (faults & kernel_fault::kE5m2InfAsFinite) != 0);
    case Fp8Format::kE4m3fnuz:
      return bits::decode_fnuz(c, false, (faults & kernel_fault::kFnuzNanAsNegZero) != 0);
    case Fp8Format::kE5m2fnuz:
      return bits::decode_fnuz(c, true, (faults & kernel_fault::kFnuzNanAsNegZero) != 0);
    case Fp8Format::kE4m3fn:
      break;
  }
  return bits::decode_e4m3fn(c, (faults & kernel_fault::kE4m3NanAs480) != 0);
}

// decode(code) * decode(scale) as one fp32 multiply, then one RNE to bf16 (docs/formats.md §3.5).
// Z29 (planted): the element offset computed in 31 bits (a signed 32-bit index that wraps), so
// element i >= 2^31 reads and writes element i - 2^31 and the elements past 2^31 stay unwritten
// (AITER's 32-bit offsets; device only: the host never runs a 2^31-element case).
MXGATE_HD inline void dequant_mx_element(const DequantParams& p, const uint8_t* codes,
                                         const uint8_t* scales, uint16_t* out, uint64_t i) {
  if (p.faults & kernel_fault::kOffset32Bit) i &= 0x7FFFFFFFu;
  const uint64_t row = i / p.cols;
  const uint64_t col = i % p.cols;
  const uint64_t scale_ld = p.scales_ld != 0 ? p.scales_ld : ceil_div(p.cols, kMxBlock);
  const float s =
      bits::decode_e8m0(scales[row * scale_ld + col / kMxBlock], p.upcast == E8m0Upcast::kShift);
  out[i] = bits::bf16_rne(bits::mul(decode_fp8(p.element, codes[i], p.faults), s));
}

// Z23 (planted): the NaN sentinel tested on the decoded value, as SGLang's e8m0_to_f32 did
// (#25519): 2^(b - 127) computed first (0xFF overflows to +Inf), then "== 128.0" taken for NaN,
// so the real scale 2^7 (byte 0x86) becomes NaN and 0xFF stays +Inf.
MXGATE_HD inline float decode_e8m0_nan_on_value(uint8_t b) {
  const float v = b == 0xFFu ? bits::f32_from(0x7F800000u)
                             : (b == 0 ? bits::f32_from(0x00400000u)
                                       : bits::f32_from(static_cast<uint32_t>(b) << 23));
  return v == 128.0f ? bits::f32_from(bits::kQuietNan) : v;
}

MXGATE_HD inline void upcast_e8m0_element(const UpcastParams& p, const uint8_t* in, float* out,
                                          uint64_t i) {
  out[i] = (p.faults & kernel_fault::kE8m0NanOnValue)
               ? decode_e8m0_nan_on_value(in[i])
               : bits::decode_e8m0(in[i], p.upcast == E8m0Upcast::kShift);
}

}  // namespace mxgate::gpu
