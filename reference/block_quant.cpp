#include "reference/block_quant.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "reference/e8m0.h"

namespace mxgate {

float block_scale(float amax, const BlockPolicy& policy) {
  const float s = amax / policy.fp8_max;  // IEEE division, as every implementation does
  switch (policy.ue8m0) {
    case Ue8m0::kNone:
      return s;
    case Ue8m0::kBitCeil: {
      if (std::isnan(s)) return s;
      const uint8_t b = encode_e8m0(s, E8m0Encode::kCeilNoSat);
      if (b == 0xFF) return std::numeric_limits<float>::infinity();
      return b == 0 ? (s == 0.0f ? 0.0f : decode(Format::kE8M0, 0)) : decode(Format::kE8M0, b);
    }
    case Ue8m0::kLog2fCeil: {
      const float y = nan_ignoring_max(std::fabs(s), policy.ue8m0_floor);
      if (std::isnan(y) || std::isinf(y)) return std::fabs(y);
      if (y == 0.0f) return 0.0f;  // exp2f(ceilf(-inf)) = 0
      // ceil of fl32(log2f(y)): bit ceil, except where log2f rounds onto floor(log2 y).
      const uint32_t a = bits_of(y);
      const int exp = static_cast<int>(a >> 23);
      const int k = exp != 0 ? exp - 127 : static_cast<int>(std::bit_width(a)) - 1 - 149;
      const bool pow2 = std::ldexp(1.0f, k) == y;
      const int c = (pow2 || log2f_rounds_to_floor(y)) ? k : k + 1;
      return std::ldexp(1.0f, c);  // exp2f of an integer: exact, or 0 / Inf outside fp32
    }
    case Ue8m0::kDeepGemmClamp:
      return float_of(static_cast<uint32_t>(encode_e8m0(s, E8m0Encode::kDeepGemmClamp)) << 23);
  }
  return s;
}

BlockQuantized quantize_block(std::span<const float> x, std::size_t rows, std::size_t cols,
                              std::size_t block_rows, std::size_t block_cols, Format element,
                              const BlockPolicy& policy) {
  if (info(element).bits != 8 || element == Format::kE8M0) {
    throw std::invalid_argument("block FP8 elements must be an FP8 format, not " +
                                std::string(info(element).name));
  }
  if (block_rows == 0 || block_cols == 0) {
    throw std::invalid_argument("quantize_block: block sizes must be positive");
  }
  if (rows != 0 && cols > x.size() / rows) {
    throw std::invalid_argument("quantize_block: input too small for the shape");
  }
  if (x.size() != rows * cols) {
    throw std::invalid_argument("quantize_block: input has " + std::to_string(x.size()) +
                                " values, shape needs " + std::to_string(rows * cols));
  }
  BlockQuantized q{rows, cols, block_rows, block_cols, element, std::vector<uint8_t>(rows * cols),
                   {}};
  q.scales.resize(q.scale_rows() * q.scale_cols());
  for (std::size_t br = 0; br < q.scale_rows(); ++br) {
    for (std::size_t bc = 0; bc < q.scale_cols(); ++bc) {
      float amax = 0.0f;
      bool saw_nan = false;
      const auto see = [&](float v) {
        if (std::isnan(v)) saw_nan = true;
        amax = nan_ignoring_max(amax, std::fabs(v));
      };
      // The block as the source sees it: padding counts in amax (zero padding never changes it).
      // The max ignores order and repeats, so the padding, all pad_value, is seen once.
      const std::size_t r_end = std::min(rows, (br + 1) * block_rows);
      const std::size_t c_end = std::min(cols, (bc + 1) * block_cols);
      for (std::size_t r = br * block_rows; r < r_end; ++r) {
        for (std::size_t c = bc * block_cols; c < c_end; ++c) see(x[r * cols + c]);
      }
      if (r_end - br * block_rows < block_rows || c_end - bc * block_cols < block_cols) {
        see(policy.pad_value);
      }
      amax = (saw_nan && policy.amax_nan == AmaxNan::kPropagate)
                 ? std::numeric_limits<float>::quiet_NaN()
                 : nan_ignoring_max(amax, policy.eps);
      const float s = block_scale(amax, policy);
      q.scales[br * q.scale_cols() + bc] = s;
      const float rcp = 1.0f / s;  // rounded reciprocal (DeepGEMM's `1.0 / sf`)
      for (std::size_t r = br * block_rows; r < std::min(rows, (br + 1) * block_rows); ++r) {
        for (std::size_t c = bc * block_cols; c < std::min(cols, (bc + 1) * block_cols); ++c) {
          float v = policy.scaling == ElementScaling::kDivide ? x[r * cols + c] / s
                                                              : x[r * cols + c] * rcp;
          if (policy.clamp_before_cast) {
            v = clamp_nan_to_low(v, policy.fp8_max);  // NaN -> -max
          }
          q.data[r * cols + c] = static_cast<uint8_t>(encode(element, v, policy.element));
        }
      }
    }
  }
  return q;
}

}  // namespace mxgate
