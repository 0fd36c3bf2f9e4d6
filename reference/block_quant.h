// DeepSeek-style block FP8: activations in 1x128 per-token groups, weights in 128x128 blocks,
// one fp32 scale per block (optionally a power of two, "UE8M0"). docs/formats.md §5.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/blocks.h"
#include "reference/format.h"
#include "reference/fp_encode.h"
#include "reference/mx_quant.h"

namespace mxgate {

enum class Ue8m0 : uint8_t {
  kNone,           // fp32 scale amax / max
  kBitCeil,        // 2^ceil(log2 s) on bits (vLLM register path, TE, DeepGEMM device)
  kLog2fCeil,      // exp2f(ceilf(log2f(max(s, floor)))) (vLLM; docs/formats.md §5.3)
  kDeepGemmClamp,  // ceil_to_ue8m0: bit ceil, exponent clamped to [1, 254] (DeepGEMM reference)
};

enum class ElementScaling : uint8_t {
  kDivide,              // q = x / s (vLLM)
  kMultiplyReciprocal,  // q = x * fl32(1 / s) (DeepGEMM: the reciprocal is rounded first)
};

struct BlockPolicy {
  float fp8_max =
      448.0f;  // quantization max: 448 (OCP), 240 (FNUZ), 224 (vLLM on FNUZ, docs/formats.md §5.1)
  float eps = 1e-10f;                   // amax = max(eps, max|x|): vLLM 1e-10, DeepGEMM 1e-4
  AmaxNan amax_nan = AmaxNan::kIgnore;  // vLLM fmaxf ignores NaN; DeepGEMM's torch amax propagates
  Ue8m0 ue8m0 = Ue8m0::kNone;
  float ue8m0_floor = 0.0f;  // kLog2fCeil: vLLM CUDA clamps s to >= 1e-10 (2^-33); Triton does not
  ElementScaling scaling = ElementScaling::kDivide;
  bool clamp_before_cast = true;  // vLLM fminf(fmaxf(q, -max), max) (NaN -> -max)
  EncodePolicy element;
  float pad_value = 0.0f;  // fills a partial block (K or N not a multiple of 128)
};

// Scale of one block from its amax (after the eps and NaN policies).
float block_scale(float amax, const BlockPolicy& policy);

struct BlockQuantized {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t block_rows = 1;  // 1 for activations, 128 for weights
  std::size_t block_cols = kBlockK;
  Format element = Format::kE4M3FN;
  std::vector<uint8_t> data;  // rows x cols codes
  std::vector<float> scales;  // ceil(rows/block_rows) x ceil(cols/block_cols), row-major
  std::size_t scale_rows() const { return ceil_div(rows, block_rows); }
  std::size_t scale_cols() const { return ceil_div(cols, block_cols); }
};

BlockQuantized quantize_block(std::span<const float> x, std::size_t rows, std::size_t cols,
                              std::size_t block_rows, std::size_t block_cols, Format element,
                              const BlockPolicy& policy);

}  // namespace mxgate
