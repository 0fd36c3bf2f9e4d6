// Launch parameters of every kernel: plain structs that compile as host and device code (no
// std types), shared by the Backend API, the host models and the .hip kernels.
#pragma once

#include <stdint.h>

namespace mxgate::gpu {

enum class InputDtype : uint8_t { kFp32, kBf16 };
enum class OutDtype : uint8_t { kFp32, kBf16 };

// The MX quantizer conventions implemented (reference/quant_conventions.cpp names them):
// ocp_mx = FLOOR scale, elements RNE, finite overflow -> +-448, Inf -> NaN, NaN keeps its sign;
// torchao_rceil = RCEIL scale without satfinite, elements RNE saturating (Inf -> +-448).
enum class QuantConvention : uint8_t { kOcpMx, kTorchaoRceil };

// E8M0 -> fp32: correct (0x00 = 2^-127, 0xFF = NaN) or the shift (byte << 23).
enum class E8m0Upcast : uint8_t { kCorrect, kShift };

// (rows x cols) row-major input; codes rows x cols, scales rows x ceil(cols/32) row-major.
struct QuantizeParams {
  uint64_t rows = 0;
  uint64_t cols = 0;
  InputDtype input = InputDtype::kFp32;
  QuantConvention convention = QuantConvention::kOcpMx;
};

// codes rows x cols + scales rows x ceil(cols/32) -> bf16 rows x cols.
struct DequantParams {
  uint64_t rows = 0;
  uint64_t cols = 0;
  E8m0Upcast upcast = E8m0Upcast::kCorrect;
};

struct UpcastParams {
  uint64_t count = 0;
  E8m0Upcast upcast = E8m0Upcast::kCorrect;
};

// Row-major n x k bytes -> AITER shuffle_weight(layout=(16,16)) bytes.
struct PreshuffleParams {
  uint64_t n = 0;
  uint64_t k = 0;
};

// C (m x n) = A (m x k) * B (n x k)^T; operand layouts are the kernel's contract (contract.h).
struct GemmParams {
  uint64_t m = 0;
  uint64_t n = 0;
  uint64_t k = 0;
  OutDtype out = OutDtype::kFp32;
};

// Planted faults for testing the harness: fp32 output of `count` elements.
struct FaultParams {
  uint64_t count = 0;
  uint64_t skip = 0;  // the element the skip fault leaves unwritten
};

}  // namespace mxgate::gpu
