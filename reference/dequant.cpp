#include "reference/dequant.h"

#include <array>
#include <stdexcept>
#include <string>

namespace mxgate {
namespace {

std::vector<uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    out[i] = bf16_of(v[i]);
  }
  return out;
}

void check_sizes(std::size_t have, std::size_t want, const char* what) {
  if (have != want) {
    throw std::invalid_argument(std::string(what) + ": have " + std::to_string(have) +
                                " values, shape needs " + std::to_string(want));
  }
}

// Every code of an 8-bit format decoded once: the GEMM problems decode millions of codes.
std::vector<float> decode_all(Format f, const std::vector<uint8_t>& codes) {
  std::array<float, 256> table;
  for (uint32_t c = 0; c < 256; ++c) table[c] = decode(f, c);
  std::vector<float> out(codes.size());
  for (std::size_t i = 0; i < codes.size(); ++i) out[i] = table[codes[i]];
  return out;
}

}  // namespace

std::vector<float> dequantize_mx(const MxQuantized& q, E8m0Decode scale_decode) {
  check_sizes(q.data.size(), q.rows * q.cols, "MX data");
  check_sizes(q.scales.size(), q.rows * q.scale_cols(), "MX scales");
  std::vector<float> out(q.data.size());
  for (std::size_t r = 0; r < q.rows; ++r) {
    for (std::size_t k = 0; k < q.cols; ++k) {
      const float s = decode_e8m0(q.scales[r * q.scale_cols() + k / kMxBlock], scale_decode);
      out[r * q.cols + k] = decode(q.element, q.data[r * q.cols + k]) * s;
    }
  }
  return out;
}

std::vector<uint16_t> dequantize_mx_bf16(const MxQuantized& q, E8m0Decode scale_decode) {
  return to_bf16(dequantize_mx(q, scale_decode));
}

std::vector<float> dequantize_block(const BlockQuantized& q) {
  check_sizes(q.data.size(), q.rows * q.cols, "block data");
  check_sizes(q.scales.size(), q.scale_rows() * q.scale_cols(), "block scales");
  std::vector<float> out(q.data.size());
  for (std::size_t r = 0; r < q.rows; ++r) {
    for (std::size_t c = 0; c < q.cols; ++c) {
      const float s = q.scales[(r / q.block_rows) * q.scale_cols() + c / q.block_cols];
      out[r * q.cols + c] = decode(q.element, q.data[r * q.cols + c]) * s;
    }
  }
  return out;
}

std::vector<uint16_t> dequantize_block_bf16(const BlockQuantized& q) {
  return to_bf16(dequantize_block(q));
}

GemmProblem mx_gemm_problem(const MxQuantized& a, const MxQuantized& b, E8m0Decode scale_decode) {
  if (a.cols != b.cols) {
    throw std::invalid_argument("MX GEMM: A has K=" + std::to_string(a.cols) +
                                ", B has K=" + std::to_string(b.cols));
  }
  check_sizes(a.data.size(), a.rows * a.cols, "A data");
  check_sizes(b.data.size(), b.rows * b.cols, "B data");
  check_sizes(a.scales.size(), a.rows * a.scale_cols(), "A scales");
  check_sizes(b.scales.size(), b.rows * b.scale_cols(), "B scales");
  GemmProblem p;
  p.m = a.rows;
  p.n = b.rows;
  p.k = a.cols;
  p.blocks = kMxfp8Blocks;
  p.a = decode_all(a.element, a.data);
  p.b = decode_all(b.element, b.data);
  for (uint8_t s : a.scales) p.a_scale.push_back(decode_e8m0(s, scale_decode));
  for (uint8_t s : b.scales) p.b_scale.push_back(decode_e8m0(s, scale_decode));
  return p;
}

GemmProblem block_gemm_problem(const BlockQuantized& a, const BlockQuantized& b) {
  if (a.cols != b.cols) {
    throw std::invalid_argument("block GEMM: A has K=" + std::to_string(a.cols) +
                                ", B has K=" + std::to_string(b.cols));
  }
  GemmProblem p;
  p.m = a.rows;
  p.n = b.rows;
  p.k = a.cols;
  p.blocks = {a.block_rows, a.block_cols, b.block_rows, b.block_cols};
  p.a = decode_all(a.element, a.data);
  p.b = decode_all(b.element, b.data);
  p.a_scale = a.scales;
  p.b_scale = b.scales;
  validate_gemm_problem(p);
  return p;
}

GemmProblem bf16_gemm_problem(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                              std::size_t m, std::size_t n, std::size_t k) {
  check_sizes(a.size(), m * k, "bf16 A");
  check_sizes(b.size(), n * k, "bf16 B");
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.blocks = {1, k == 0 ? 1 : k, 1, k == 0 ? 1 : k};
  for (uint16_t v : a) p.a.push_back(float_of_bf16(v));
  for (uint16_t v : b) p.b.push_back(float_of_bf16(v));
  return p;
}

}  // namespace mxgate
