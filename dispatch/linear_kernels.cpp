#include "dispatch/linear_kernels.h"

#include <cstring>
#include <span>

#include "reference/block_quant.h"
#include "reference/convention.h"
#include "reference/format.h"
#include "reference/mx_quant.h"
#include "reference/quant_conventions.h"
#include "reference/scale_layout.h"
#include "reference/weight_shuffle.h"
#if defined(MXGATE_FUZZ_QUANTIZE_MEMO)
#include "dispatch/quantize_memo.h"  // fuzz_dispatch's copy of dispatch/ only
#endif

namespace mxgate::dispatch {
namespace {

using gpu::Backend;
using gpu::BufferId;
using gpu::Kernel;
using gpu::kNoBuffer;

void check_apply_input(const LayerState& layer, const Activation& x,
                       std::string_view linear_kernel) {
  const auto who = [linear_kernel] { return std::string(linear_kernel); };  // on an error only
  if (!layer.weights_loaded) throw DispatchError(who() + ": apply before the weights were loaded");
  if (x.m == 0) throw DispatchError(who() + ": activation has M = 0");
  if (x.k != layer.config.k) {
    throw DispatchError(who() + ": activation K = " + std::to_string(x.k) +
                        " but the layer's K = " + std::to_string(layer.config.k));
  }
  if (x.bf16.size() != x.m * x.k) {
    throw DispatchError(who() + ": activation holds " + std::to_string(x.bf16.size()) +
                        " values, expected M*K = " + std::to_string(x.m * x.k));
  }
}

// Runs one GEMM into a fresh fp32 output, downloads it.
// The layer's kernel faults (Z8-Z16) go into every launch.
GemmOutput run_gemm(Backend& be, gpu::ScopedBuffers& t, Kernel k, gpu::GemmArgs args, std::size_t m,
                    std::size_t n, std::size_t kk, const Faults& faults) {
  args.p = {m, n, kk, gpu::OutDtype::kFp32};
  args.p.faults = kernel_fault_bits(faults);
  args.out = t.allocate(m * n * sizeof(float), "C");
  be.run({k, args});
  GemmOutput out;
  out.rows = m;
  out.cols = n;
  out.format = OutputFormat::kFp32;
  out.fp32 = be.download_as<float>(args.out);
  return out;
}

void replace_weight(LayerState& layer, Backend& be, BufferId id) {
  be.release(layer.weight);
  layer.weight = id;
}

// One dequant_mx_to_bf16 launch of the layer's fp8 MX weight into `out` (N x K bf16).
void launch_weight_dequant(const LayerState& layer, Backend& be, BufferId out) {
  gpu::DequantArgs d;
  d.codes = layer.weight;
  d.scales = layer.weight_scale;
  d.out = out;
  d.p = {layer.config.n, layer.config.k, gpu::E8m0Upcast::kCorrect};
  d.p.faults = kernel_fault_bits(layer.faults);
  be.run({gpu::kernel("dequant_mx_to_bf16"), d});
}

// Dequantizes the fp8 MX weight to bf16 on the device; drops the fp8 weight and its scales.
void dequantize_weight_to_bf16(LayerState& layer, Backend& be) {
  const LinearConfig& c = layer.config;
  const BufferId out = be.allocate(c.n * c.k * 2, "weight_bf16");
  launch_weight_dequant(layer, be, out);
  replace_weight(layer, be, out);
  be.release(layer.weight_scale);
  layer.weight_scale = kNoBuffer;
  layer.weight_scale_dtype = contract::Dtype::kNone;
  layer.weight_elem_size = 2;
  layer.load_actions.push_back(LoadAction::kDequantizeWeightToBf16);
}

std::size_t block_scale_count(const LinearConfig& c) {
  return ceil_div(c.n, kBlockK) * ceil_div(c.k, kBlockK);
}

// Upcasts e8m0 weight-scale bytes to fp32 into `out` (one upcast_e8m0 launch).
// Z5 swaps the correct rule for the shift.
void upcast_scales(const LayerState& layer, Backend& be, BufferId in, BufferId out,
                   std::size_t count) {
  gpu::UpcastArgs u;
  u.in = in;
  u.out = out;
  u.p = {count, layer.faults.has(Fault::kZ5ShiftE8m0Upcast) ? gpu::E8m0Upcast::kShift
                                                            : gpu::E8m0Upcast::kCorrect};
  u.p.faults = kernel_fault_bits(layer.faults);
  be.run({gpu::kernel("upcast_e8m0"), u});
}

// Whether the layer's weight scales take the e8m0 upcast. Z19 (planted): fp32 scales taken for
// packed UE8M0 too, so their bytes are read as exponents (vLLM #53680: float32 scale factors
// kept in the float layout and read by a kernel that reads packed UE8M0 only; DeepGEMM #419).
bool scales_need_upcast(const LayerState& layer) {
  return layer.weight_scale_dtype == contract::Dtype::kE8m0 ||
         (layer.weight_scale_dtype == contract::Dtype::kF32 &&
          layer.faults.has(Fault::kZ19Fp32ScaleAsUe8m0));
}

void upcast_weight_scale_once(LayerState& layer, Backend& be) {
  if (!scales_need_upcast(layer)) return;
  const std::size_t count = block_scale_count(layer.config);
  const BufferId out = be.allocate(count * sizeof(float), "weight_scale_fp32");
  upcast_scales(layer, be, layer.weight_scale, out, count);
  be.release(layer.weight_scale);
  layer.weight_scale = out;
  layer.weight_scale_dtype = contract::Dtype::kF32;
  layer.load_actions.push_back(LoadAction::kUpcastWeightScaleE8m0ToFp32);
}

// Activation quantized on the device by quantize_mx (ocp_mx), then one MX GEMM.
ApplyResult mx_gemm(LayerState& layer, const Activation& x, Backend& be, Kernel k, ApplyPath path) {
  gpu::ScopedBuffers t(be);  // buffers that live for one apply
  gpu::QuantizeArgs q;
  q.in = t.make(x.bf16, "x_bf16");
  q.codes = t.allocate(x.m * x.k, "x_codes");
  q.scales = t.allocate(x.m * ceil_div(x.k, kMxBlock), "x_scales");
  q.p = {x.m, x.k, gpu::InputDtype::kBf16, gpu::QuantConvention::kOcpMx};
  q.p.faults = kernel_fault_bits(layer.faults);
  be.run({gpu::kernel("quantize_mx"), q});
  gpu::GemmArgs g;
  g.a = q.codes;
  g.a_scale = q.scales;
  g.b = layer.weight;
  g.b_scale = layer.weight_scale;
  return {run_gemm(be, t, k, g, x.m, layer.config.n, x.k, layer.faults), path};
}

// The per-step fallback of an fp8 MXFP8 weight (vLLM #56560's third branch, EmulationMxfp8 per
// step; docs/dispatch_model.md §5.1): the weight dequantized to bf16 for this step, then a bf16
// linear on the plain activation, which gives the processed path's numbers (I4). It rebuilds a
// constant on every apply: right only while load processing has not run (Z6 is that path after
// processing).
ApplyResult per_step_dequant_bf16_gemm(LayerState& layer, const Activation& x, Backend& be) {
  const LinearConfig& c = layer.config;
  gpu::ScopedBuffers t(be);  // buffers that live for one apply
  const BufferId weight_bf16 = t.allocate(c.n * c.k * 2, "weight_bf16_step");
  launch_weight_dequant(layer, be, weight_bf16);
  gpu::GemmArgs g;
  g.a = t.make(x.bf16, "x_bf16");
  g.b = weight_bf16;
  return {run_gemm(be, t, gpu::kernel("gemm_bf16"), g, x.m, c.n, x.k, layer.faults),
          ApplyPath::kMxfp8DequantPerStep};
}

ApplyResult bf16_gemm(LayerState& layer, const Activation& x, Backend& be) {
  gpu::ScopedBuffers t(be);  // buffers that live for one apply
  gpu::GemmArgs g;
  g.a = t.make(x.bf16, "x_bf16");
  g.b = layer.weight;
  return {run_gemm(be, t, gpu::kernel("gemm_bf16"), g, x.m, layer.config.n, x.k, layer.faults),
          ApplyPath::kBf16Gemm};
}

void check_mx_weight(const LayerState& layer, std::string_view linear_kernel) {
  if (layer.weight_elem_size == 1 && layer.weight_scale_dtype != contract::Dtype::kE8m0) {
    throw DispatchError(std::string(linear_kernel) + ": an fp8 MXFP8 weight needs e8m0 scales");
  }
}

std::optional<std::string> mx_can_implement(const LinearConfig& c, std::string_view linear_kernel) {
  if (c.scheme != Scheme::kMxfp8) {
    return std::string(linear_kernel) + " implements mxfp8 only (scheme " +
           std::string(to_string(c.scheme)) + ")";
  }
  if (c.n == 0 || c.k == 0) return std::string("N and K must be > 0");
  if (c.weight_scale != WeightScaleDtype::kE8m0) {
    return std::string("MXFP8 weight scales are e8m0 (got fp32)");
  }
  if (c.k % kMxBlock != 0) {
    return "MXFP8 needs K % 32 == 0 (K = " + std::to_string(c.k) + ")";
  }
  return std::nullopt;
}

std::optional<std::string> block_can_implement(const LinearConfig& c,
                                               std::string_view linear_kernel) {
  if (c.scheme != Scheme::kFp8Block) {
    return std::string(linear_kernel) + " implements fp8_block only (scheme " +
           std::string(to_string(c.scheme)) + ")";
  }
  if (c.n == 0 || c.k == 0) return std::string("N and K must be > 0");
  return std::nullopt;
}

// The block-FP8 GEMM on the layer's current weight: preshuffled -> bpreshuffle with
// column-major As; plain -> blockscale with row-major As. Weight scales still e8m0 (load
// processing skipped) are upcast for this step only: correct, but counted (I5).
ApplyResult block_apply(LayerState& layer, const Activation& x, Backend& be,
                        std::string_view linear_kernel) {
  check_apply_input(layer, x, linear_kernel);
  const bool shuffled = layer.weight_layout == WeightLayout::kAiterPreshuffled;
  const ActScaleOrder want = shuffled ? ActScaleOrder::kColMajor : ActScaleOrder::kRowMajor;
  gpu::ScopedBuffers t(be);  // buffers that live for one apply
  QuantizedActivation q;
  if (x.pre_quantized) {
    if (x.pre_quantized->order != want && !layer.faults.has(Fault::kZ2IgnoreActScaleOrder)) {
      throw DispatchError(std::string(linear_kernel) + ": pre-quantized activation scales are " +
                          std::string(to_string(x.pre_quantized->order)) + ", this GEMM reads " +
                          std::string(to_string(want)) +
                          " (negotiate the order or take the unfused path)");
    }
    q = *x.pre_quantized;
  } else {
    q = quantize_activation_1x128(x, want);
  }
  const std::size_t kb = ceil_div(x.k, kBlockK);
  if (q.codes.size() != x.m * x.k || q.scales.size() != x.m * kb) {
    throw DispatchError(std::string(linear_kernel) +
                        ": pre-quantized activation has the wrong size");
  }
  gpu::GemmArgs g;
  g.a = t.make(q.codes, "x_codes");
  g.a_scale = t.make(q.scales, "x_scales");
  g.b = layer.weight;
  g.b_scale = layer.weight_scale;
  if (scales_need_upcast(layer) && !layer.faults.has(Fault::kZ7EarlyReturnSkipsUpcast)) {
    const std::size_t count = block_scale_count(layer.config);
    g.b_scale = t.allocate(count * sizeof(float), "weight_scale_fp32_step");
    upcast_scales(layer, be, layer.weight_scale, g.b_scale, count);
  }
  if (shuffled) {
    return {run_gemm(be, t, gpu::kernel("gemm_blockscale_bpreshuffle"), g, x.m, layer.config.n, x.k,
                     layer.faults),
            ApplyPath::kFp8BlockscaleBpreshuffle};
  }
  return {
      run_gemm(be, t, gpu::kernel("gemm_blockscale"), g, x.m, layer.config.n, x.k, layer.faults),
      ApplyPath::kFp8Blockscale};
}

}  // namespace

// ---- DotScaledMxfp8 ------------------------------------------------------------------------

bool DotScaledMxfp8::supported(Platform p) const {
  return p == Platform::kGfx950 || p == Platform::kHost;
}

std::optional<std::string> DotScaledMxfp8::can_implement(const LinearConfig& c) const {
  return mx_can_implement(c, name());
}

std::vector<LoadAction> DotScaledMxfp8::planned_load(const LinearConfig& c) const {
  if (c.k % kDotScaledKAlign != 0) return {LoadAction::kDequantizeWeightToBf16};
  return {};
}

ApplyPath DotScaledMxfp8::planned_apply(const LinearConfig& c) const {
  return c.k % kDotScaledKAlign != 0 ? ApplyPath::kBf16Gemm : ApplyPath::kMxfp8DotScaled;
}

void DotScaledMxfp8::process_weights_after_loading(LayerState& layer, Backend& be) const {
  if (!layer.weights_loaded) throw DispatchError("DotScaledMxfp8: load processing before load");
  if (layer.weight_elem_size == 1 && layer.config.k % kDotScaledKAlign != 0 &&
      !layer.faults.has(Fault::kZ6PerStepRematerialize)) {
    dequantize_weight_to_bf16(layer, be);
  }
  layer.load_processed = true;
}

ApplyResult DotScaledMxfp8::apply(LayerState& layer, const Activation& x, Backend& be) const {
  check_apply_input(layer, x, name());
  // Dispatch on what the weight IS, not on whether load processing ran (vLLM PR #56560,
  // docs/architecture.md §1.1).
  if (layer.weight_elem_size >= 2) return bf16_gemm(layer, x, be);
  check_mx_weight(layer, name());
  if (x.k % kDotScaledKAlign == 0 || layer.faults.has(Fault::kZ1NoPerStepFallback)) {
    return mx_gemm(layer, x, be, gpu::kernel("gemm_mx_dot_scaled"), ApplyPath::kMxfp8DotScaled);
  }
  // The restored third branch: an fp8 weight of unaligned K never reaches dot_scaled.
  return per_step_dequant_bf16_gemm(layer, x, be);
}

// ---- EmulationMxfp8 ------------------------------------------------------------------------

std::optional<std::string> EmulationMxfp8::can_implement(const LinearConfig& c) const {
  return mx_can_implement(c, name());
}

std::vector<LoadAction> EmulationMxfp8::planned_load(const LinearConfig&) const {
  if (at_load_) return {LoadAction::kDequantizeWeightToBf16};
  return {};
}

ApplyPath EmulationMxfp8::planned_apply(const LinearConfig&) const {
  return at_load_ ? ApplyPath::kBf16Gemm : ApplyPath::kMxfp8DequantPerStep;
}

void EmulationMxfp8::process_weights_after_loading(LayerState& layer, Backend& be) const {
  if (!layer.weights_loaded) throw DispatchError("EmulationMxfp8: load processing before load");
  if (at_load_ && layer.weight_elem_size == 1) dequantize_weight_to_bf16(layer, be);
  layer.load_processed = true;
}

ApplyResult EmulationMxfp8::apply(LayerState& layer, const Activation& x, Backend& be) const {
  check_apply_input(layer, x, name());
  if (layer.weight_elem_size >= 2) return bf16_gemm(layer, x, be);
  check_mx_weight(layer, name());
  return per_step_dequant_bf16_gemm(layer, x, be);
}

// ---- BlockScaledFp8 ------------------------------------------------------------------------

std::optional<std::string> BlockScaledFp8::can_implement(const LinearConfig& c) const {
  return block_can_implement(c, name());
}

std::vector<LoadAction> BlockScaledFp8::planned_load(const LinearConfig& c) const {
  if (c.weight_scale == WeightScaleDtype::kE8m0) return {LoadAction::kUpcastWeightScaleE8m0ToFp32};
  return {};
}

ApplyPath BlockScaledFp8::planned_apply(const LinearConfig&) const {
  return ApplyPath::kFp8Blockscale;
}

void BlockScaledFp8::process_weights_after_loading(LayerState& layer, Backend& be) const {
  if (!layer.weights_loaded) throw DispatchError("BlockScaledFp8: load processing before load");
  upcast_weight_scale_once(layer, be);
  layer.load_processed = true;
}

ApplyResult BlockScaledFp8::apply(LayerState& layer, const Activation& x, Backend& be) const {
  if (layer.weight_layout != WeightLayout::kPlain) {
    throw DispatchError("BlockScaledFp8: reads a plain weight, this one is " +
                        std::string(to_string(layer.weight_layout)));
  }
  return block_apply(layer, x, be, name());
}

// ---- PreshuffledBlockScaledFp8 -------------------------------------------------------------

bool PreshuffledBlockScaledFp8::supported(Platform p) const {
  return p == Platform::kGfx942 || p == Platform::kGfx950 || p == Platform::kHost;
}

std::optional<std::string> PreshuffledBlockScaledFp8::can_implement(const LinearConfig& c) const {
  if (auto why = block_can_implement(c, name())) return why;
  if (!c.reads_weight_directly() && (c.n % kShuffleBlockN != 0 || c.k % kShuffleBlockK != 0)) {
    return "shuffle_weight needs N % 16 == 0 and K % 32 == 0 (N = " + std::to_string(c.n) +
           ", K = " + std::to_string(c.k) + ")";
  }
  return std::nullopt;
}

std::vector<LoadAction> PreshuffledBlockScaledFp8::planned_load(const LinearConfig& c) const {
  std::vector<LoadAction> out;
  if (c.weight_scale == WeightScaleDtype::kE8m0) {
    out.push_back(LoadAction::kUpcastWeightScaleE8m0ToFp32);
  }
  if (!c.reads_weight_directly()) out.push_back(LoadAction::kPreshuffleWeight);
  return out;
}

ApplyPath PreshuffledBlockScaledFp8::planned_apply(const LinearConfig& c) const {
  return c.reads_weight_directly() ? ApplyPath::kFp8Blockscale
                                   : ApplyPath::kFp8BlockscaleBpreshuffle;
}

ActScaleOrder PreshuffledBlockScaledFp8::act_scale_order(const LayerState& layer) const {
  return weight_already_preshuffled(layer) ? ActScaleOrder::kColMajor : ActScaleOrder::kRowMajor;
}

void PreshuffledBlockScaledFp8::process_weights_after_loading(LayerState& layer,
                                                              Backend& be) const {
  if (!layer.weights_loaded) {
    throw DispatchError("PreshuffledBlockScaledFp8: load processing before load");
  }
  const bool reads_directly =
      layer.config.reads_weight_directly() && !layer.faults.has(Fault::kZ4RelayoutDirectlyRead);
  if (reads_directly && layer.faults.has(Fault::kZ7EarlyReturnSkipsUpcast)) {
    layer.load_processed = true;
    return;
  }
  // The upcast comes first: a layer that keeps its weight layout must still get it (Z7).
  upcast_weight_scale_once(layer, be);
  const bool guard =
      weight_already_preshuffled(layer) && !layer.faults.has(Fault::kZ3NoPreshuffleGuard);
  if (!reads_directly && !guard) {
    preshuffle_layer_weight(layer, be);
    layer.load_actions.push_back(LoadAction::kPreshuffleWeight);
  }
  layer.load_processed = true;
}

ApplyResult PreshuffledBlockScaledFp8::apply(LayerState& layer, const Activation& x,
                                             Backend& be) const {
  return block_apply(layer, x, be, name());
}

// ---- Bf16 ----------------------------------------------------------------------------------

std::optional<std::string> Bf16::can_implement(const LinearConfig& c) const {
  if (c.scheme != Scheme::kBf16) {
    return "Bf16 implements bf16 only (scheme " + std::string(to_string(c.scheme)) + ")";
  }
  if (c.n == 0 || c.k == 0) return std::string("N and K must be > 0");
  return std::nullopt;
}

void Bf16::process_weights_after_loading(LayerState& layer, Backend&) const {
  if (!layer.weights_loaded) throw DispatchError("Bf16: load processing before load");
  layer.load_processed = true;
}

ApplyResult Bf16::apply(LayerState& layer, const Activation& x, Backend& be) const {
  check_apply_input(layer, x, name());
  return bf16_gemm(layer, x, be);
}

// ---- shared --------------------------------------------------------------------------------

void preshuffle_layer_weight(LayerState& layer, Backend& be) {
  const LinearConfig& c = layer.config;
  if (layer.weight_elem_size != 1) throw DispatchError("preshuffle_weight: fp8 weights only");
  gpu::PreshuffleArgs p;
  p.in = layer.weight;
  p.out = be.allocate(c.n * c.k, "weight_preshuffled");
  p.p = {c.n, c.k};
  be.run({gpu::kernel("preshuffle_weight"), p});
  replace_weight(layer, be, p.out);
  layer.weight_layout = WeightLayout::kAiterPreshuffled;
  ++layer.weight_relayouts;
}

QuantizedActivation quantize_activation_1x128(const Activation& x) {
#if defined(MXGATE_FUZZ_QUANTIZE_MEMO)
  // fuzz_dispatch only: the codes and scales of an activation quantized before
  // (dispatch/quantize_memo.h).
  const fuzz::QuantizeMemo::Key key{{1, x.m, x.k, 0, 0}, x.bf16.data(), 2 * x.bf16.size()};
  if (const auto hit = fuzz::quantize_memo().get(key)) {
    QuantizedActivation out{{hit->data.begin(), hit->data.end()},
                            std::vector<float>(hit->scales.size() / 4),
                            ActScaleOrder::kRowMajor};
    if (!hit->scales.empty())
      std::memcpy(out.scales.data(), hit->scales.data(), hit->scales.size());
    return out;
  }
#endif
  std::vector<float> values(x.bf16.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = float_of_bf16(x.bf16[i]);
  }
  static const BlockPolicy policy =
      require_block_policy(require_convention("vllm_group_quant"), Format::kE4M3FN, false);
  BlockQuantized q = quantize_block(values, x.m, x.k, 1, kBlockK, Format::kE4M3FN, policy);
#if defined(MXGATE_FUZZ_QUANTIZE_MEMO)
  fuzz::quantize_memo().put(
      key, q.data, {reinterpret_cast<const uint8_t*>(q.scales.data()), 4 * q.scales.size()});
#endif
  return {std::move(q.data), std::move(q.scales), ActScaleOrder::kRowMajor};
}

QuantizedActivation quantize_activation_1x128(const Activation& x, ActScaleOrder order) {
  QuantizedActivation q = quantize_activation_1x128(x);
  if (order == ActScaleOrder::kColMajor) {
    const std::size_t kb = ceil_div(x.k, kBlockK);
    q.scales = pack_scales(ScaleLayout::kColMajor, x.m, kb,
                           std::span<const float>(q.scales.data(), q.scales.size()), 0.0f);
    q.order = ActScaleOrder::kColMajor;
  } else if (order != ActScaleOrder::kRowMajor) {
    throw DispatchError("quantize_activation_1x128: order must be row_major or col_major");
  }
  return q;
}

}  // namespace mxgate::dispatch
