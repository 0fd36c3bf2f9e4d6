// The vocabulary of the decision model (docs/dispatch_model.md §1): its own small types for a
// linear layer, a platform, the environment of a selection and the state of a layer's weight.
// Nothing here is shared with dispatch/: the test and property glue converts between the two.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mxgate::model {

// docs/dispatch_model.md §2.1.
enum class Platform : uint8_t { kGfx950, kGfx942, kSm90, kHost };
inline constexpr std::size_t kPlatformCount = 4;

// The quantization scheme of a layer's checkpoint weight (§2.2).
enum class Scheme : uint8_t { kMxfp8, kFp8Block, kBf16 };
inline constexpr std::size_t kSchemeCount = 3;

// The dtype of a checkpoint's weight scales (MXFP8: e8m0 by the OCP MX spec; block FP8: e8m0 or
// fp32; bf16: ignored).
enum class ScaleDtype : uint8_t { kE8m0, kFp32 };

// A linear layer as linear kernel selection and load processing see it: weight N x K, scheme,
// scale dtype and the two layer flags that mean "other code reads this weight in its checkpoint
// layout" (§4.4). N and K are positive (a layer of no elements is not a layer).
struct LayerSpec {
  uint64_t n = 0;
  uint64_t k = 0;
  Scheme scheme = Scheme::kMxfp8;
  ScaleDtype weight_scale = ScaleDtype::kE8m0;
  bool is_bmm = false;
  bool skip_weight_relayout = false;
  bool reads_weight_directly() const { return is_bmm || skip_weight_relayout; }
};

// The linear kernels the model knows (§2.2), named as vLLM names them.
enum class LinearKernel : uint8_t {
  kDotScaledMxfp8,
  kEmulationMxfp8,
  kPreshuffledBlockScaledFp8,
  kBlockScaledFp8,
  kBf16,
};
inline constexpr std::size_t kLinearKernelCount = 5;
std::string_view name(LinearKernel k);

// What a selection runs under besides the layer (§3.1): linear kernels disabled by name
// (VLLM_DISABLED_KERNELS) and the emulation linear kernel's load-time choice
// (VLLM_MXFP8_EMULATION_DEQUANT_AT_LOAD, on by default: §4.2).
struct Environment {
  uint8_t disabled = 0;  // bit i: LinearKernel i is disabled
  bool emulation_dequantizes_at_load = true;
  bool is_disabled(LinearKernel k) const { return (disabled >> static_cast<unsigned>(k)) & 1u; }
  Environment& disable(LinearKernel k) {
    disabled = static_cast<uint8_t>(disabled | (1u << static_cast<unsigned>(k)));
    return *this;
  }
};

// Why a candidate linear kernel was passed over (§3.3, §3.4); kNone: it can run the layer.
enum class Reject : uint8_t {
  kNone,
  kDisabled,          // named in the disabled set
  kUnsupported,       // not supported on the platform
  kScheme,            // implements another scheme
  kMxKAlign,          // MXFP8 with K % 32 != 0
  kMxScaleDtype,      // MXFP8 with fp32 weight scales
  kPreshuffleN128,    // preshuffled block linear kernel, N % 128 != 0
  kPreshuffleShuffle  // the same, N % 16 != 0 or K % 32 != 0 (the shuffle tile)
};
std::string_view name(Reject r);

// Load-time actions (§4) and apply paths (§5), in the vocabulary of `mxgate plan`.
enum class LoadAction : uint8_t {
  kDequantizeWeightToBf16,
  kUpcastWeightScaleToFp32,
  kPreshuffleWeight,
};
enum class ApplyPath : uint8_t {
  kBf16Gemm,
  kMxfp8DotScaled,
  kMxfp8DequantPerStep,
  kFp8Blockscale,
  kFp8BlockscaleBpreshuffle,
};
std::string_view name(LoadAction a);
std::string_view name(ApplyPath p);

// The order a consumer reads a 1x128 activation's fp32 scales in (§5.4); kNone: it reads none.
enum class ScaleOrder : uint8_t { kNone, kRowMajor, kColMajor };
std::string_view name(ScaleOrder o);

// What the layer's weight is after loading and each later step (§4).
enum class Element : uint8_t { kFp8, kBf16 };
enum class Layout : uint8_t { kPlain, kPreshuffled };
enum class WeightScale : uint8_t { kNone, kE8m0, kFp32 };
struct WeightState {
  Element element = Element::kFp8;
  Layout layout = Layout::kPlain;
  WeightScale scale = WeightScale::kE8m0;
  int relayouts = 0;  // preshuffles applied to this weight by anyone
  bool operator==(const WeightState&) const = default;
};

// Up to three load actions in the order they run (no allocation: the fuzzer calls this per
// input).
struct Actions {
  LoadAction at[3] = {};
  uint8_t count = 0;
  void push(LoadAction a) { at[count++] = a; }
  const LoadAction* begin() const { return at; }
  const LoadAction* end() const { return at + count; }
  bool operator==(const Actions& o) const {
    if (count != o.count) return false;
    for (uint8_t i = 0; i < count; ++i) {
      if (at[i] != o.at[i]) return false;
    }
    return true;
  }
};

}  // namespace mxgate::model
