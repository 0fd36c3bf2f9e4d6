// The lifecycle of one linear layer on a gpu::Backend: create (the registry picks the linear
// kernel, or a test names it), load weights (float weights quantized by the reference quantizer of
// the scheme, or given codes + scales), optional model-side preparation (the model's own shuffle,
// guarded by weight_already_preshuffled), optional load processing, apply any number of times.
// Tests may skip or reorder any step; apply must stay correct (I4). Each apply records the path
// it took and the backend counters it moved (launches per kernel, bytes allocated: I5).
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "dispatch/linear_kernels.h"

namespace mxgate::dispatch {

// A weight as loaded from a checkpoint: N x K row-major.
struct QuantizedWeight {
  // mxfp8 / fp8_block: E4M3FN codes; bf16: bf16 bits, 2 bytes per element (little endian).
  std::vector<uint8_t> data;
  // mxfp8: e8m0 bytes N x ceil(K/32); fp8_block: ceil(N/128) x ceil(K/128) e8m0 bytes or fp32
  // (4 bytes each), per the config's weight-scale dtype; bf16: empty. Logical row-major.
  std::vector<uint8_t> scales;
};

struct ApplyStats {
  ApplyPath path = ApplyPath::kBf16Gemm;
  gpu::Counters delta;  // what this one apply launched and allocated
};

class LinearLayer {
 public:
  // The registry picks the linear kernel; throws DispatchError when none fits.
  LinearLayer(gpu::Backend& be, const LinearConfig& config,
              const std::set<std::string>& disabled = {});
  // A named linear kernel; throws DispatchError when it is not supported on the config's
  // platform or cannot implement the config. It must outlive the layer.
  LinearLayer(gpu::Backend& be, const LinearConfig& config, const LinearKernel& linear_kernel);
  ~LinearLayer();
  LinearLayer(const LinearLayer&) = delete;
  LinearLayer& operator=(const LinearLayer&) = delete;

  const LinearKernel& linear_kernel() const { return *linear_kernel_; }
  const LayerState& state() const { return state_; }
  // Plants bugs from the zoo (faults.h) into this layer; none by default.
  void set_faults(const Faults& faults) { state_.faults = faults; }
  const LinearConfig& config() const { return state_.config; }

  // Quantizes an N x K float weight with the scheme's reference quantizer (mxfp8: ocp_mx;
  // fp8_block: vllm_group_quant 128x128, power-of-two scales when they are e8m0; bf16: RNE),
  // loads it and returns what was loaded.
  QuantizedWeight load_float_weights(std::span<const float> weight);
  void load_weights(const QuantizedWeight& weight);

  // The model's own preshuffle of this layer's weight (DS-V4 prepare_*_preshuffle). Shuffles
  // only for a linear kernel that preshuffles, a layer that does not read its weight directly, and
  // a weight not already preshuffled (the model-side guard). Returns whether it shuffled.
  bool model_preshuffle();
  void process_weights_after_loading();
  // The activation-scale order apply would want now (negotiation input).
  ActScaleOrder act_scale_order() const { return linear_kernel_->act_scale_order(state_); }
  ApplyResult apply(const Activation& x);
  const ApplyStats& last_apply() const { return last_; }

 private:
  gpu::Backend& be_;
  const LinearKernel* linear_kernel_;
  LayerState state_;
  ApplyStats last_;
};

// An M x K activation of bf16 bits from float values (RNE, reference bf16_of).
Activation make_activation(std::span<const float> values, std::size_t m, std::size_t k);

}  // namespace mxgate::dispatch
