// NVFP4: E2M1 elements in blocks of 16 along K, one E4M3 block scale per block (used as unsigned:
// scales are never negative), and one fp32 per-tensor ("global") scale. The recipes below are the
// reference implementations' arithmetic step by step, every fp32 rounding explicit
// (docs/fp4.md §6 cites each line):
//   global encode  ge = 448 * 6 / amax(tensor)      (maps the block scales into E4M3)
//   block scale    s  = E4M3(amax(block) / 6 * ge)  (RNE, saturating at 448)
//   element        q  = E2M1(x * 1 / (s * (1 / ge)))
// and how zero blocks, a zero tensor and NaN come out. Dequantize: code * s * global_decode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/blocks.h"
#include "reference/convention.h"
#include "reference/fp_encode.h"

namespace mxgate {

enum class NvFp4Recipe : uint8_t {
  kTeReference,        // TE custom_recipes/reference_nvfp4.py _quantize_blockwise_reference
  kTorchao,            // torchao nvfp4_tensor.py nvfp4_quantize (two-level with a global scale)
  kFlashInferPrecise,  // FlashInfer cvt_warp_fp16_to_fp4, DISABLE_FP4_QUANT_FAST_MATH: IEEE divides
  kFlashInferFast,     // the default: rcp.approx.ftz reciprocals (RN + FTZ, docs/fp4.md §6.4)
};

struct NvFp4Policy {
  NvFp4Recipe recipe = NvFp4Recipe::kTeReference;
  bool tile_16x16 = false;   // TE 2D quantization (weights): one amax per 16x16 tile
  bool pow2_scales = false;  // TE pow_2_scales: 2^ceil(log2(amax/6)) as E8M0, no global scale
  bool global_scale = true;  // torchao without per_tensor_scale: single-level, ge = 1
  EncodePolicy element;      // the E2M1 cast (the convention's sub_byte policy)
  bool truncate_below_one_to_2m23 = false;
};

std::string_view name(NvFp4Recipe r);

// The NVFP4 recipe of a convention (te_nvfp4_ref, torchao_nvfp4, flashinfer_nvfp4), or nullopt.
std::optional<NvFp4Policy> nvfp4_policy(const Convention& c);

struct NvFp4Quantized {
  std::size_t rows = 0;
  std::size_t cols = 0;
  bool pow2_scales = false;     // scales are E8M0 bytes (TE pow_2_scales) instead of E4M3
  std::vector<uint8_t> data;    // rows x cols E2M1 codes, one per byte (fp4_pack.h packs them)
  std::vector<uint8_t> scales;  // rows x ceil(cols/16) E4M3 (or E8M0) bytes, logical row-major
  float global_encode = 1.0f;   // what the quantizer multiplied the block scales by
  float global_decode = 1.0f;   // what dequantization (and the GEMM alpha) multiplies by
  std::size_t scale_cols() const { return ceil_div(cols, kNvfp4Block); }
};

// Quantizes row-major rows x cols fp32 `x`. `global_amax`: the calibrated tensor amax; absent, the
// amax of `x` (NaN-propagating, as torch.max). A short last block is padded with zeros. Throws
// std::invalid_argument on a shape mismatch, UndefinedEncoding where the recipe's element cast has
// no defined output (a NaN reaching FlashInfer's unmeasured cvt).
NvFp4Quantized quantize_nvfp4(std::span<const float> x, std::size_t rows, std::size_t cols,
                              const NvFp4Policy& policy,
                              std::optional<float> global_amax = std::nullopt);

// decode(code) * decode(scale) exactly (the product of an E2M1 and an E4M3 value is exact in fp32),
// times global_decode, rounded once to fp32.
std::vector<float> dequantize_nvfp4(const NvFp4Quantized& q);
std::vector<uint16_t> dequantize_nvfp4_bf16(const NvFp4Quantized& q);

// The decoded block-scale value of one byte: E4M3 read as a plain e4m3fn code (a subnormal byte is
// a subnormal value, 0x7F is NaN), or E8M0 (OCP rule) when pow2_scales.
float nvfp4_scale_value(uint8_t byte, bool pow2_scales);

}  // namespace mxgate
