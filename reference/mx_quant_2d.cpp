#include "reference/mx_quant_2d.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "reference/fp_encode.h"

namespace mxgate {

Mx2dQuantized quantize_mx_2d(std::span<const float> x, std::size_t rows, std::size_t cols,
                             Format element, const MxPolicy& policy) {
  const int bits = info(element).bits;
  if ((bits != 8 && !has_no_specials(element)) || element == Format::kE8M0) {
    throw std::invalid_argument(
        "2D MX elements must be an FP8, FP6 (e2m3, e3m2) or FP4 (e2m1) format, not " +
        std::string(info(element).name));
  }
  if ((rows != 0 && cols > x.size() / rows) || x.size() != rows * cols) {
    throw std::invalid_argument("quantize_mx_2d: input has " + std::to_string(x.size()) +
                                " values, shape needs " + std::to_string(rows) + " x " +
                                std::to_string(cols));
  }
  Mx2dQuantized q{rows, cols, element, std::vector<uint8_t>(rows * cols), {}};
  q.scales.resize(q.scale_rows() * q.scale_cols());
  for (std::size_t ti = 0; ti < q.scale_rows(); ++ti) {
    const std::size_t r0 = ti * kMx2dTile, r1 = std::min(rows, r0 + kMx2dTile);
    for (std::size_t tj = 0; tj < q.scale_cols(); ++tj) {
      const std::size_t c0 = tj * kMx2dTile, c1 = std::min(cols, c0 + kMx2dTile);
      float amax = 0.0f;
      bool saw_nan = false;
      const auto see = [&](float v) {
        if (std::isnan(v)) saw_nan = true;
        amax = nan_ignoring_max(amax, std::fabs(v));
      };
      for (std::size_t r = r0; r < r1; ++r) {
        for (std::size_t c = c0; c < c1; ++c) see(x[r * cols + c]);
      }
      // The padding of a partial tile, all pad_value: the max ignores repeats, one look suffices.
      if (r1 - r0 < kMx2dTile || c1 - c0 < kMx2dTile) see(policy.pad_value);
      const uint8_t byte = mx_block_byte(amax, saw_nan, element, policy);
      q.scales[ti * q.scale_cols() + tj] = byte;
      // The element step is quantize_mx's (mx_element_code).
      for (std::size_t r = r0; r < r1; ++r) {
        for (std::size_t c = c0; c < c1; ++c) {
          q.data[r * cols + c] = mx_element_code(x[r * cols + c], byte, element, policy);
        }
      }
    }
  }
  return q;
}

std::vector<uint8_t> rowwise_scales_of_2d(const Mx2dQuantized& q) {
  std::vector<uint8_t> out(q.rows * q.scale_cols());
  for (std::size_t r = 0; r < q.rows; ++r) {
    for (std::size_t j = 0; j < q.scale_cols(); ++j) {
      out[r * q.scale_cols() + j] = q.scales[(r / kMx2dTile) * q.scale_cols() + j];
    }
  }
  return out;
}

std::vector<uint8_t> colwise_scales_of_2d(const Mx2dQuantized& q) {
  std::vector<uint8_t> out(q.scale_rows() * q.cols);
  for (std::size_t i = 0; i < q.scale_rows(); ++i) {
    for (std::size_t c = 0; c < q.cols; ++c) {
      out[i * q.cols + c] = q.scales[i * q.scale_cols() + c / kMx2dTile];
    }
  }
  return out;
}

}  // namespace mxgate
