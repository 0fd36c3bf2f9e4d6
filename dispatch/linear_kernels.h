// The linear kernels of the dispatch framework and the layer state they act on, modelled on
// vLLM's ScaledMM / MXFP8 linear kernels (docs/architecture.md §1.1, docs/layouts.md §2, §3.3):
//   DotScaledMxfp8             gfx950; dequantizes an unaligned-K weight once at load; apply
//                              dispatches on the weight's element size, with the per-step
//                              dequantize fallback for an fp8 weight of unaligned K
//   EmulationMxfp8             any platform; dequantizes at load (or per step)
//   BlockScaledFp8             any platform; upcasts static e8m0 weight scales once at load
//   PreshuffledBlockScaledFp8  gfx942/gfx950 (AITER); preshuffles the weight at load unless the
//                              layer reads it directly; wants column-major activation scales
//   Bf16                       plain bf16 GEMM
// Every device operation goes through the gpu::Backend, so its counters (launches per kernel,
// bytes allocated) account for the hot path (I5). Apply returns an fp32 (M x N) output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/faults.h"
#include "dispatch/linear_config.h"
#include "dispatch/operand_layouts.h"
#include "gpu/backend.h"
#include "reference/gemm_oracle.h"

namespace mxgate::dispatch {

// The one alignment rule of tl.dot_scaled (BLOCK_K = 128, unmasked K tiles), shared by load
// processing (dequantize when K % kDotScaledKAlign != 0) and apply (dot_scaled only when the
// activation's K % kDotScaledKAlign == 0). Two constants that drift apart are bug Z1.
inline constexpr std::size_t kDotScaledKAlign = kBlockK;

// Thrown when a layer or activation is not usable as asked (never a silent wrong answer).
class DispatchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a linear kernel sees of a layer: its config and the device buffers of its parameters.
struct LayerState {
  LinearConfig config;
  gpu::BufferId weight = gpu::kNoBuffer;  // N x K: fp8 codes (1 byte) or bf16 bits (2 bytes)
  std::size_t weight_elem_size = 1;
  WeightLayout weight_layout = WeightLayout::kPlain;
  // mxfp8: e8m0 bytes N x ceil(K/32); fp8_block: e8m0 bytes or fp32, ceil(N/128) x ceil(K/128)
  // row-major; kNoBuffer for a bf16 weight.
  gpu::BufferId weight_scale = gpu::kNoBuffer;
  contract::Dtype weight_scale_dtype = contract::Dtype::kNone;
  int weight_relayouts = 0;  // preshuffles applied to this weight, by anyone (I2: at most 1)
  bool weights_loaded = false;
  bool load_processed = false;
  std::vector<LoadAction> load_actions;  // what load processing did, in order
  Faults faults;                         // planted bugs (faults.h); none by default
};

// A block-FP8 activation quantized by a fused producer (e.g. norm + quant): codes M x K and the
// 1x128 fp32 scales stored in `order` (row-major m*Kb + kb, or column-major kb*M + m).
struct QuantizedActivation {
  std::vector<uint8_t> codes;
  std::vector<float> scales;
  ActScaleOrder order = ActScaleOrder::kRowMajor;
};

// The input of apply: M x K bf16 bits, and optionally its fused pre-quantized form.
struct Activation {
  std::size_t m = 0;
  std::size_t k = 0;
  std::vector<uint16_t> bf16;
  std::optional<QuantizedActivation> pre_quantized;
};

struct ApplyResult {
  GemmOutput out;  // fp32 (M x N)
  ApplyPath path = ApplyPath::kBf16Gemm;
};

class LinearKernel {
 public:
  virtual ~LinearKernel() = default;
  virtual std::string_view name() const = 0;
  virtual bool supported(Platform p) const = 0;
  // nullopt when this linear kernel can run the layer; otherwise the reason it cannot.
  virtual std::optional<std::string> can_implement(const LinearConfig& c) const = 0;
  // Capability flag (vLLM #56433); the activation-scale order is act_scale_order below.
  virtual bool preshuffles_weight() const { return false; }

  // What process_weights_after_loading will do for a freshly loaded layer of config `c`, and
  // the path apply then takes (the plan `mxgate plan` prints).
  virtual std::vector<LoadAction> planned_load(const LinearConfig& c) const = 0;
  virtual ApplyPath planned_apply(const LinearConfig& c) const = 0;
  // The activation-scale order apply will want for this layer in its current state (kNone:
  // the linear kernel consumes no fp32 1x128 activation scales).
  virtual ActScaleOrder act_scale_order(const LayerState&) const { return ActScaleOrder::kNone; }

  virtual void process_weights_after_loading(LayerState& layer, gpu::Backend& be) const = 0;
  virtual ApplyResult apply(LayerState& layer, const Activation& x, gpu::Backend& be) const = 0;
};

class DotScaledMxfp8 final : public LinearKernel {
 public:
  std::string_view name() const override { return "DotScaledMxfp8"; }
  bool supported(Platform p) const override;
  std::optional<std::string> can_implement(const LinearConfig& c) const override;
  std::vector<LoadAction> planned_load(const LinearConfig& c) const override;
  ApplyPath planned_apply(const LinearConfig& c) const override;
  void process_weights_after_loading(LayerState& layer, gpu::Backend& be) const override;
  ApplyResult apply(LayerState& layer, const Activation& x, gpu::Backend& be) const override;
};

class EmulationMxfp8 final : public LinearKernel {
 public:
  // dequantize_at_load: bf16 copy at load (bf16_gemm); otherwise every apply runs the
  // per-step dequantize GEMM.
  explicit EmulationMxfp8(bool dequantize_at_load = true) : at_load_(dequantize_at_load) {}
  std::string_view name() const override { return "EmulationMxfp8"; }
  bool supported(Platform) const override { return true; }
  std::optional<std::string> can_implement(const LinearConfig& c) const override;
  std::vector<LoadAction> planned_load(const LinearConfig& c) const override;
  ApplyPath planned_apply(const LinearConfig& c) const override;
  void process_weights_after_loading(LayerState& layer, gpu::Backend& be) const override;
  ApplyResult apply(LayerState& layer, const Activation& x, gpu::Backend& be) const override;

 private:
  bool at_load_;
};

class BlockScaledFp8 final : public LinearKernel {
 public:
  std::string_view name() const override { return "BlockScaledFp8"; }
  bool supported(Platform) const override { return true; }
  std::optional<std::string> can_implement(const LinearConfig& c) const override;
  std::vector<LoadAction> planned_load(const LinearConfig& c) const override;
  ApplyPath planned_apply(const LinearConfig& c) const override;
  ActScaleOrder act_scale_order(const LayerState&) const override {
    return ActScaleOrder::kRowMajor;
  }
  void process_weights_after_loading(LayerState& layer, gpu::Backend& be) const override;
  ApplyResult apply(LayerState& layer, const Activation& x, gpu::Backend& be) const override;
};

class PreshuffledBlockScaledFp8 final : public LinearKernel {
 public:
  std::string_view name() const override { return "PreshuffledBlockScaledFp8"; }
  bool supported(Platform p) const override;
  std::optional<std::string> can_implement(const LinearConfig& c) const override;
  bool preshuffles_weight() const override { return true; }
  std::vector<LoadAction> planned_load(const LinearConfig& c) const override;
  ApplyPath planned_apply(const LinearConfig& c) const override;
  // Column-major once the weight is preshuffled; row-major for a weight kept plain.
  ActScaleOrder act_scale_order(const LayerState& layer) const override;
  void process_weights_after_loading(LayerState& layer, gpu::Backend& be) const override;
  ApplyResult apply(LayerState& layer, const Activation& x, gpu::Backend& be) const override;
};

class Bf16 final : public LinearKernel {
 public:
  std::string_view name() const override { return "Bf16"; }
  bool supported(Platform) const override { return true; }
  std::optional<std::string> can_implement(const LinearConfig& c) const override;
  std::vector<LoadAction> planned_load(const LinearConfig&) const override { return {}; }
  ApplyPath planned_apply(const LinearConfig&) const override { return ApplyPath::kBf16Gemm; }
  void process_weights_after_loading(LayerState& layer, gpu::Backend& be) const override;
  ApplyResult apply(LayerState& layer, const Activation& x, gpu::Backend& be) const override;
};

// Shared steps, also used by the layer's model-side preparation.
// Preshuffles the layer's fp8 weight in place on the device (one preshuffle_weight launch).
void preshuffle_layer_weight(LayerState& layer, gpu::Backend& be);
// The model-side guard (vLLM `weight_already_preshuffled`).
inline bool weight_already_preshuffled(const LayerState& layer) {
  return layer.weight_layout == WeightLayout::kAiterPreshuffled;
}

// The block-FP8 activation quantizer the linear kernels use when no pre-quantized form is given
// (1x128 groups, fp32 scales, convention vllm_group_quant on E4M3FN), with its scales in the
// logical row-major order.
QuantizedActivation quantize_activation_1x128(const Activation& x);
// The same, stored in `order` (what a fused producer emits after negotiation).
QuantizedActivation quantize_activation_1x128(const Activation& x, ActScaleOrder order);

}  // namespace mxgate::dispatch
