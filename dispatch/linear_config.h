// A linear layer's static description, as the linear kernel selection sees it at init (vLLM
// picks a linear kernel per layer from (N, K) only; M is unknown): the weight shape, the
// quantization scheme, the weight-scale dtype, the platform and the layer flags. Also the names of
// the load-time actions and apply paths a linear kernel can take (the vocabulary of `mxgate plan`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mxgate::dispatch {

enum class Scheme : uint8_t {
  kMxfp8,     // "mxfp8": E4M3FN weight and activation, e8m0 scale per 1x32 block
  kFp8Block,  // "fp8_block": E4M3FN, 1x128 activation groups, 128x128 weight blocks
  kBf16,      // "bf16": no quantization
};

enum class WeightScaleDtype : uint8_t { kE8m0, kFp32 };

enum class Platform : uint8_t {
  kGfx950,  // MI355X: Triton tl.dot_scaled, AITER
  kGfx942,  // MI300X: AITER, no dot_scaled MXFP8
  kSm90,    // H100/H200: no AITER, no MXFP8 tensor cores
  kHost,    // the host models: every kernel exists
};

struct LinearConfig {
  std::size_t n = 0;  // output features (weight rows)
  std::size_t k = 0;  // input features (weight columns)
  Scheme scheme = Scheme::kMxfp8;
  // mxfp8 weights always carry e8m0 scales; fp8_block weights e8m0 or fp32; bf16 ignores it.
  WeightScaleDtype weight_scale = WeightScaleDtype::kE8m0;
  Platform platform = Platform::kGfx950;
  bool is_bmm = false;                // other code reads the weight directly (DS-V4 wo_a)
  bool skip_weight_relayout = false;  // e.g. MLA kv_b_proj, read to build W_UK / W_UV
  // is_bmm || skip_weight_relayout: the weight must keep its row-major layout (I2).
  bool reads_weight_directly() const { return is_bmm || skip_weight_relayout; }
};

// Load-time actions (process_weights_after_loading).
enum class LoadAction : uint8_t {
  kDequantizeWeightToBf16,       // "dequantize_weight_to_bf16"
  kUpcastWeightScaleE8m0ToFp32,  // "upcast_weight_scale_e8m0_to_fp32"
  kPreshuffleWeight,             // "preshuffle_weight"
};

// What one apply runs.
enum class ApplyPath : uint8_t {
  kMxfp8DotScaled,            // "mxfp8_dot_scaled": gemm_mx_dot_scaled (K % 128 == 0)
  kMxfp8DequantPerStep,       // "mxfp8_dequant_per_step": weight still fp8, dequantized for the
                              // step, then gemm_bf16 on the plain activation
  kBf16Gemm,                  // "bf16_gemm": gemm_bf16 on a bf16 weight
  kFp8Blockscale,             // "fp8_blockscale": gemm_blockscale, row-major As, plain B
  kFp8BlockscaleBpreshuffle,  // "fp8_blockscale_bpreshuffle": column-major As, preshuffled B
};

std::string_view to_string(Scheme s);
std::string_view to_string(WeightScaleDtype d);
std::string_view to_string(Platform p);
std::string_view to_string(LoadAction a);
std::string_view to_string(ApplyPath p);
std::optional<Scheme> parse_scheme(std::string_view s);
std::optional<WeightScaleDtype> parse_weight_scale_dtype(std::string_view s);
std::optional<Platform> parse_platform(std::string_view s);

// "gfx950 mxfp8 N=5120 K=576 weight_scale=e8m0 flags=is_bmm"
std::string describe(const LinearConfig& c);

}  // namespace mxgate::dispatch
