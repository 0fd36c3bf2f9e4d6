#include "reference/aiter_fp4_layout.h"

#include <stdexcept>
#include <string>

namespace mxgate {
namespace {

void check(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

void check_scale_shape(std::size_t rows, std::size_t cols) {
  check(rows % 32 == 0 && cols % 8 == 0 && rows > 0 && cols > 0,
        "aiter a16w4 scale shuffle: needs rows % 32 == 0 and cols % 8 == 0, got " +
            std::to_string(rows) + " x " + std::to_string(cols));
}

}  // namespace

std::size_t aiter_a16w4_scale_offset(std::size_t rows, std::size_t cols, std::size_t r,
                                     std::size_t c, bool gate_up) {
  check_scale_shape(rows, cols);
  check(r < rows && c < cols, "aiter a16w4 scale shuffle: (" + std::to_string(r) + ", " +
                                  std::to_string(c) + ") outside " + std::to_string(rows) + " x " +
                                  std::to_string(cols));
  std::size_t n1, n_pack, n_lane;
  if (gate_up) {
    const std::size_t half = rows / 2;
    n_pack = r / half;
    n1 = (r % half) / 16;
    n_lane = (r % half) % 16;
  } else {
    n1 = r / 32;
    n_pack = (r % 32) / 16;
    n_lane = r % 16;
  }
  const std::size_t k1 = c / 8, k_pack = (c % 8) / 4, k_lane = c % 4;
  return n1 * (cols / 8 * 256) + k1 * 256 + k_lane * 64 + n_lane * 4 + k_pack * 2 + n_pack;
}

std::pair<std::size_t, std::size_t> aiter_a16w4_scale_inverse(std::size_t rows, std::size_t cols,
                                                              std::size_t offset, bool gate_up) {
  check_scale_shape(rows, cols);
  check(offset < rows * cols, "aiter a16w4 scale shuffle: offset " + std::to_string(offset) +
                                  " outside " + std::to_string(rows * cols) + " slots");
  const std::size_t band = offset / (cols / 8 * 256);
  const std::size_t w = offset % (cols / 8 * 256);
  const std::size_t k1 = w / 256, q = w % 256;
  const std::size_t k_lane = q / 64, n_lane = (q % 64) / 4, k_pack = (q % 4) / 2, n_pack = q % 2;
  const std::size_t c = k1 * 8 + k_pack * 4 + k_lane;
  const std::size_t r =
      gate_up ? n_pack * (rows / 2) + band * 16 + n_lane : band * 32 + n_pack * 16 + n_lane;
  return {r, c};
}

std::size_t aiter_a16w4_weight_offset(std::size_t n, std::size_t k_bytes, std::size_t r,
                                      std::size_t b, bool gate_up) {
  check(n > 0 && n % (gate_up ? 32 : 16) == 0 && k_bytes > 0 && k_bytes % 64 == 0,
        "aiter a16w4 weight shuffle: needs n % " + std::string(gate_up ? "32" : "16") +
            " == 0 and k_bytes % 64 == 0, got " + std::to_string(n) + " x " +
            std::to_string(k_bytes));
  check(r < n && b < k_bytes, "aiter a16w4 weight shuffle: (" + std::to_string(r) + ", " +
                                  std::to_string(b) + ") outside " + std::to_string(n) + " x " +
                                  std::to_string(k_bytes));
  // quant_mxfp4.cu: group y = b / 16 of 32 elements, K0 = y >> 2, KLane = y & 3, byte b % 16.
  const std::size_t y = b / 16, k0 = y >> 2, k_lane = y & 3, i = b % 16;
  if (!gate_up) return (r >> 4) * 16 * k_bytes + (r & 15) * 16 + k0 * 1024 + k_lane * 256 + i;
  const std::size_t half = n / 2, n_pack = r / half, rem = r % half, k0_size = k_bytes >> 6;
  return (rem >> 4) * (2 * k0_size * 1024) + n_pack * (k0_size * 1024) + k0 * 1024 + k_lane * 256 +
         (rem & 15) * 16 + i;
}

}  // namespace mxgate
