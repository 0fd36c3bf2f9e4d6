#include "reference/mx_quant.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace mxgate {
namespace {

constexpr uint32_t kInfBits = 0x7F800000u;

// floor(log2 a) for finite a > 0, on bits (subnormals through their leading bit).
int floor_log2_bits(uint32_t a) {
  const uint32_t exp = a >> 23;
  if (exp != 0) return static_cast<int>(exp) - 127;
  return static_cast<int>(std::bit_width(a & 0x7FFFFFu)) - 1 - 149;
}

uint8_t biased(int s, int lo, int hi) { return static_cast<uint8_t>(std::clamp(s, lo, hi) + 127); }

}  // namespace

int element_emax(Format element) { return floor_log2_bits(bits_of(max_finite(element))); }

uint8_t mx_block_byte(float amax, bool saw_nan, Format element, const MxPolicy& policy) {
  if (saw_nan && policy.amax_nan == AmaxNan::kPropagate) {
    amax = std::numeric_limits<float>::quiet_NaN();
  } else {
    amax = nan_ignoring_max(amax, policy.amax_floor);
  }
  return mx_scale_byte(amax, element, policy);
}

uint8_t mx_element_code(float x, uint8_t byte, Format element, const MxPolicy& policy) {
  // kExactPow2: exact reciprocal of the final scale, 2^(127 - byte). A NaN scale (0xFF) makes
  // every element NaN; the sign and payload of x * NaN are not defined by IEEE, so we name them:
  // the positive quiet NaN 0x7FC00000 (x86 CPUs quiet torchao's 0x7F800001 to 0x7FC00001, which
  // every NaN policy here encodes alike), then the element's NaN policy.
  if (byte == 0xFF && policy.nan_block_code) return *policy.nan_block_code;
  const bool zero_rcp =
      policy.reciprocal == MxReciprocal::kZeroForZeroByte && (byte == 0 || byte == 0xFF);
  const float rcp = zero_rcp ? 0.0f : std::ldexp(1.0f, 127 - static_cast<int>(byte));
  float scaled = byte == 0xFF && !zero_rcp ? std::numeric_limits<float>::quiet_NaN() : x * rcp;
  if (policy.truncate_below_one_to_2m23) scaled = truncate_below_one_to_2m23(scaled);
  return static_cast<uint8_t>(encode(element, scaled, policy.element));
}

uint8_t mx_scale_byte(float amax, Format element, const MxPolicy& policy) {
  const uint32_t a = bits_of(amax) & 0x7FFFFFFFu;
  const bool nan = a > kInfBits;
  const bool inf = a == kInfBits;
  const int emax = element_emax(element);
  if (policy.zero_block_byte && a == 0) return *policy.zero_block_byte;
  switch (policy.rule) {
    case MxScaleRule::kFloor:
      // torchao: s = (E - 127) - emax clamped to [-127, 127]; non-finite amax -> 0xFF. A zero or
      // subnormal amax lands below -127 and clamps to byte 0.
      if (nan || inf) return 0xFF;
      if (a == 0) return 0;
      return biased(floor_log2_bits(a) - emax, -127, 127);
    case MxScaleRule::kCeil: {
      if (nan || inf) return 0xFF;
      const int e = static_cast<int>(a >> 23) - 127 + ((a & 0x7FFFFFu) != 0 ? 1 : 0);
      return biased(e - emax, -127, 127);
    }
    case MxScaleRule::kEven: {
      // torchao adds 1 << (23 - mbits - 1) (its val_to_add): 0x80000 for E4M3 / E2M3, 0x100000
      // for E5M2 / E3M2, 0x200000 for E2M1, so the exponent bumps iff the significand rounds up
      // to 2 at the element's precision (docs/conventions.md §2.28).
      if (nan || inf) return 0xFF;
      const uint32_t bumped = (a + (1u << (22 - info(element).man_bits))) & 0xFF800000u;
      if (bumped >= kInfBits) return 0xFF;
      if (bumped == 0) return 0;
      return biased(static_cast<int>(bumped >> 23) - 127 - emax, -127, 127);
    }
    case MxScaleRule::kRceil: {
      const float rcp = 1.0f / max_finite(element);  // fl32(1/max), TE max_norm_rcp
      return encode_e8m0(amax * rcp, policy.rceil_encode);
    }
    case MxScaleRule::kAiterTriton: {
      // Bits + 0x200000 can carry a NaN payload into the sign: -0.0 -> log2 = -inf -> byte 0.
      const uint32_t t = (a + 0x200000u) & 0xFF800000u;
      if (t == 0 || t == 0x80000000u) return 0;
      if ((t >> 23) == 0xFF) return 254;  // log2(inf) = inf, clamped to 127
      return biased(static_cast<int>(t >> 23) - 127 - emax, -127, 127);
    }
    case MxScaleRule::kNoOffset:
      // floor(log2 amax) + 127 clamped to [0, 254]; NaN has no defined byte in the source
      // (NaN cast to uint8): we name it 0xFF.
      if (nan) return 0xFF;
      if (inf) return 254;
      if (a == 0) return 0;
      return biased(floor_log2_bits(a), -127, 127);
    case MxScaleRule::kRceilLog2f: {
      if (nan) return 0xFF;
      const float y = amax / max_finite(element);  // torch true division
      const uint8_t b = encode_e8m0(y, E8m0Encode::kCeilViaLog2f);
      return b == 0xFF ? 254 : b;  // clamp(0, 254)
    }
    case MxScaleRule::kCeilOfQuotient:
    case MxScaleRule::kFloorOfQuotient: {
      // The byte is the exponent field of the rounded fp32 quotient, wrapping as uint32 does: a
      // NaN quotient plus 0x7FFFFF carries into the sign bit and leaves field 0 (byte 0).
      const uint32_t q = bits_of(amax / max_finite(element)) & 0x7FFFFFFFu;
      const uint32_t up = policy.rule == MxScaleRule::kCeilOfQuotient ? 0x007FFFFFu : 0u;
      return static_cast<uint8_t>(((q + up) & 0x7F800000u) >> 23);
    }
  }
  return 0xFF;
}

MxQuantized quantize_mx(std::span<const float> x, std::size_t rows, std::size_t cols,
                        Format element, const MxPolicy& policy) {
  const int bits = info(element).bits;
  if ((bits != 8 && !has_no_specials(element)) || element == Format::kE8M0) {
    throw std::invalid_argument(
        "MX elements must be an FP8, FP6 (e2m3, e3m2), FP4 (e2m1) or MXINT8 format, not " +
        std::string(info(element).name));
  }
  if (rows != 0 && cols > x.size() / rows) {
    throw std::invalid_argument("quantize_mx: input has " + std::to_string(x.size()) +
                                " values, shape needs " + std::to_string(rows) + " x " +
                                std::to_string(cols));
  }
  if (x.size() != rows * cols) {
    throw std::invalid_argument("quantize_mx: input has " + std::to_string(x.size()) +
                                " values, shape needs " + std::to_string(rows * cols));
  }
  MxQuantized q{rows, cols, element, std::vector<uint8_t>(rows * cols), {}};
  q.scales.resize(rows * q.scale_cols());
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t g = 0; g < q.scale_cols(); ++g) {
      const std::size_t k0 = g * kMxBlock;
      const std::size_t k1 = std::min(cols, k0 + kMxBlock);
      float amax = 0.0f;
      bool saw_nan = false;
      for (std::size_t k = k0; k < k0 + kMxBlock; ++k) {
        const float v = k < k1 ? x[r * cols + k] : policy.pad_value;
        if (std::isnan(v)) saw_nan = true;
        amax = nan_ignoring_max(amax, std::fabs(v));
      }
      const uint8_t byte = mx_block_byte(amax, saw_nan, element, policy);
      q.scales[r * q.scale_cols() + g] = byte;
      for (std::size_t k = k0; k < k1; ++k) {
        q.data[r * cols + k] = mx_element_code(x[r * cols + k], byte, element, policy);
      }
    }
  }
  return q;
}

std::string_view name(MxScaleRule r) {
  switch (r) {
    case MxScaleRule::kFloor:
      return "floor";
    case MxScaleRule::kRceil:
      return "rceil";
    case MxScaleRule::kCeil:
      return "ceil";
    case MxScaleRule::kEven:
      return "even";
    case MxScaleRule::kAiterTriton:
      return "aiter_triton";
    case MxScaleRule::kNoOffset:
      return "no_offset";
    case MxScaleRule::kRceilLog2f:
      return "rceil_log2f";
    case MxScaleRule::kCeilOfQuotient:
      return "ceil_of_quotient";
    case MxScaleRule::kFloorOfQuotient:
      return "floor_of_quotient";
  }
  return "?";
}

}  // namespace mxgate
