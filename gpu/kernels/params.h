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

// Planted kernel bugs of the zoo (docs/bug_classes.md §2, Z8-Z16; dispatch/faults.h names them
// and maps each dispatch Fault to one bit here). 0 = the kernel as written; each bit re-creates
// one class.
namespace kernel_fault {
inline constexpr uint32_t kLog2Ceil = 1u << 0;           // Z8: RCEIL exponent via ceilf(log2f(y))
inline constexpr uint32_t kDropTailBlock = 1u << 1;      // Z9: K loop over floor(K/128) blocks
inline constexpr uint32_t kReadScalePadding = 1u << 2;   // Z10: padded swizzle columns applied
inline constexpr uint32_t kFnuzMax = 1u << 3;            // Z11: elements clamped to +-240 (FNUZ)
inline constexpr uint32_t kIgnoreAsStride = 1u << 4;     // Z12: column-major As read with stride M
inline constexpr uint32_t kSwizzleReadLinear = 1u << 5;  // Z13: swizzled scales read row-major
inline constexpr uint32_t kUnroundedScalePayload = 1u << 6;  // Z14: payload x * 448/amax
inline constexpr uint32_t kBf16Amax = 1u << 7;               // Z15: amax rounded to bf16 first
inline constexpr uint32_t kShardBlockIndex = 1u << 8;  // Z16: weight block of local row n is n/128
}  // namespace kernel_fault

// (rows x cols) row-major input; codes rows x cols, scales rows x ceil(cols/32) row-major.
struct QuantizeParams {
  uint64_t rows = 0;
  uint64_t cols = 0;
  InputDtype input = InputDtype::kFp32;
  QuantConvention convention = QuantConvention::kOcpMx;
  uint32_t faults = 0;  // kernel_fault bits (Z8, Z11, Z14, Z15)
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
// Optional operand layouts (all default to the plain layouts of each kernel's contract):
//   mx_scales_swizzled  MX GEMMs: sa and sb in the NVIDIA 128x4 swizzle (rows padded to 128,
//                       scale columns to 4; docs/layouts.md §4) instead of row-major
//   as_ld               gemm_blockscale_bpreshuffle: leading dimension of the column-major As
//                       (0 = M; align4(M) for DeepGEMM's TMA-aligned As, docs/layouts.md §3.2)
//   n_offset            blockscale GEMMs on a TP shard: global row of local row 0; bs then holds
//                       the 128-row weight blocks from n_offset/128 on
struct GemmParams {
  uint64_t m = 0;
  uint64_t n = 0;
  uint64_t k = 0;
  OutDtype out = OutDtype::kFp32;
  uint32_t faults = 0;  // kernel_fault bits (Z9, Z10, Z12, Z13, Z16)
  bool mx_scales_swizzled = false;
  uint64_t as_ld = 0;
  uint64_t n_offset = 0;
};

// Planted faults for testing the harness: fp32 output of `count` elements.
struct FaultParams {
  uint64_t count = 0;
  uint64_t skip = 0;  // the element the skip fault leaves unwritten
};

}  // namespace mxgate::gpu
