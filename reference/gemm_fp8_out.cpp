#include "reference/gemm_fp8_out.h"

#include <stdexcept>
#include <string>

#include "reference/fp_fence.h"

namespace mxgate {

std::vector<uint8_t> fp8_scaled_output(std::span<const float> v, float scale_result, Format format,
                                       const Convention& convention) {
  if (info(format).bits != 8 || format == Format::kE8M0) {
    throw std::invalid_argument("FP8 GEMM output: " + std::string(info(format).name) +
                                " is no 8-bit element format");
  }
  std::vector<uint8_t> out;
  out.reserve(v.size());
  for (float x : v) {
    // One fp32 multiply, materialized (no excess precision, no fusion), then the element cast.
    out.push_back(static_cast<uint8_t>(encode_with(convention, format, fence(x * scale_result))));
  }
  return out;
}

}  // namespace mxgate
