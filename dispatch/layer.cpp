#include "dispatch/layer.h"

#include <cstring>
#include <utility>

#include "dispatch/faults.h"
#include "dispatch/registry.h"
#include "reference/block_quant.h"
#include "reference/convention.h"
#include "reference/format.h"
#include "reference/mx_quant.h"
#include "reference/quant_conventions.h"
#if defined(MXGATE_FUZZ_QUANTIZE_MEMO)
#include "dispatch/quantize_memo.h"  // fuzz_dispatch's copy of dispatch/ only
#endif

namespace mxgate::dispatch {
namespace {

const LinearKernel& chosen(const LinearConfig& config, const std::set<std::string>& disabled) {
  const Selection s = choose_linear_kernel(config, disabled);
  if (s.linear_kernel == nullptr) {
    std::string msg = "no linear kernel can run " + describe(config);
    for (const std::string& r : s.rejected) msg += "; " + r;
    throw DispatchError(msg);
  }
  return *s.linear_kernel;
}

}  // namespace

Activation make_activation(std::span<const float> values, std::size_t m, std::size_t k) {
  if (values.size() != m * k) throw DispatchError("make_activation: values.size() != M*K");
  Activation x;
  x.m = m;
  x.k = k;
  x.bf16.resize(values.size());  // one allocation (the fuzzer builds one per input)
#if defined(MXGATE_FUZZ_QUANTIZE_MEMO)
  // fuzz_dispatch only: the bf16 bits of values converted before (dispatch/quantize_memo.h).
  const fuzz::QuantizeMemo::Key key{{2, m, k, 0, 0}, values.data(), 4 * values.size()};
  if (const auto hit = fuzz::quantize_memo().get(key)) {
    if (!hit->data.empty()) std::memcpy(x.bf16.data(), hit->data.data(), hit->data.size());
    return x;
  }
#endif
  for (std::size_t i = 0; i < values.size(); ++i) x.bf16[i] = bf16_of(values[i]);
#if defined(MXGATE_FUZZ_QUANTIZE_MEMO)
  fuzz::quantize_memo().put(
      key, {reinterpret_cast<const uint8_t*>(x.bf16.data()), 2 * x.bf16.size()}, {});
#endif
  return x;
}

LinearLayer::LinearLayer(gpu::Backend& be, const LinearConfig& config,
                         const std::set<std::string>& disabled)
    : LinearLayer(be, config, chosen(config, disabled)) {}

LinearLayer::LinearLayer(gpu::Backend& be, const LinearConfig& config,
                         const LinearKernel& linear_kernel)
    : be_(be), linear_kernel_(&linear_kernel) {
  if (!linear_kernel.supported(config.platform)) {
    throw DispatchError(std::string(linear_kernel.name()) + " is not supported on " +
                        std::string(to_string(config.platform)));
  }
  if (auto why = linear_kernel.can_implement(config)) {
    throw DispatchError(std::string(linear_kernel.name()) + " cannot run " + describe(config) +
                        ": " + *why);
  }
  state_.config = config;
  state_.faults = faults_from_environment();  // none unless MXGATE_FAULTS is set
}

LinearLayer::~LinearLayer() {
  if (state_.weight != gpu::kNoBuffer) be_.release(state_.weight);
  if (state_.weight_scale != gpu::kNoBuffer) be_.release(state_.weight_scale);
}

QuantizedWeight LinearLayer::load_float_weights(std::span<const float> w) {
  const LinearConfig& c = state_.config;
  if (w.size() != c.n * c.k) throw DispatchError("load_float_weights: weight size != N*K");
  // load_weights refuses a second load: refused here first, before quantizing for nothing.
  if (state_.weights_loaded) throw DispatchError("load_weights: weights already loaded");
  QuantizedWeight q;
#if defined(MXGATE_FUZZ_QUANTIZE_MEMO)
  // fuzz_dispatch only: the codes and scales of a weight quantized before
  // (dispatch/quantize_memo.h).
  const fuzz::QuantizeMemo::Key key{
      {0, static_cast<uint64_t>(c.scheme), static_cast<uint64_t>(c.weight_scale), c.n, c.k},
      w.data(),
      4 * w.size()};
  if (const auto hit = fuzz::quantize_memo().get(key)) {
    q.data.assign(hit->data.begin(), hit->data.end());
    q.scales.assign(hit->scales.begin(), hit->scales.end());
    load_weights(q);
    return q;
  }
#endif
  switch (c.scheme) {
    case Scheme::kMxfp8: {
      MxQuantized m = quantize_mx(w, c.n, c.k, Format::kE4M3FN,
                                  require_mx_policy(require_convention("ocp_mx")));
      q.data = std::move(m.data);
      q.scales = std::move(m.scales);
      break;
    }
    case Scheme::kFp8Block: {
      const bool e8m0 = c.weight_scale == WeightScaleDtype::kE8m0;
      const BlockPolicy policy =
          require_block_policy(require_convention("vllm_group_quant"), Format::kE4M3FN, e8m0);
      BlockQuantized b = quantize_block(w, c.n, c.k, kBlockK, kBlockK, Format::kE4M3FN, policy);
      q.data = std::move(b.data);
      for (float s : b.scales) {
        const uint32_t bits = bits_of(s);
        if (e8m0) {
          if ((bits & 0x807FFFFFu) != 0) throw DispatchError("e8m0 weight scale not a power of 2");
          q.scales.push_back(static_cast<uint8_t>(bits >> 23));
        } else {
          const std::size_t at = q.scales.size();
          q.scales.resize(at + 4);
          std::memcpy(q.scales.data() + at, &s, 4);
        }
      }
      break;
    }
    case Scheme::kBf16:
      q.data.resize(w.size() * 2);
      for (std::size_t i = 0; i < w.size(); ++i) {
        const uint16_t h = bf16_of(w[i]);
        std::memcpy(q.data.data() + 2 * i, &h, 2);
      }
      break;
  }
#if defined(MXGATE_FUZZ_QUANTIZE_MEMO)
  fuzz::quantize_memo().put(key, q.data, q.scales);
#endif
  load_weights(q);
  return q;
}

void LinearLayer::load_weights(const QuantizedWeight& w) {
  const LinearConfig& c = state_.config;
  if (state_.weights_loaded) throw DispatchError("load_weights: weights already loaded");
  const std::size_t elem = c.scheme == Scheme::kBf16 ? 2 : 1;
  std::size_t scale_bytes = 0;
  contract::Dtype dtype = contract::Dtype::kNone;
  if (c.scheme == Scheme::kMxfp8) {
    scale_bytes = c.n * ceil_div(c.k, kMxBlock);
    dtype = contract::Dtype::kE8m0;
  } else if (c.scheme == Scheme::kFp8Block) {
    const bool e8m0 = c.weight_scale == WeightScaleDtype::kE8m0;
    scale_bytes = ceil_div(c.n, kBlockK) * ceil_div(c.k, kBlockK) * (e8m0 ? 1 : 4);
    dtype = e8m0 ? contract::Dtype::kE8m0 : contract::Dtype::kF32;
  }
  if (w.data.size() != c.n * c.k * elem) {
    throw DispatchError("load_weights: weight has " + std::to_string(w.data.size()) +
                        " bytes, expected " + std::to_string(c.n * c.k * elem));
  }
  if (w.scales.size() != scale_bytes) {
    throw DispatchError("load_weights: weight scales have " + std::to_string(w.scales.size()) +
                        " bytes, expected " + std::to_string(scale_bytes));
  }
  state_.weight = be_.make_buffer(std::span<const uint8_t>(w.data), "weight");
  if (scale_bytes != 0) {
    state_.weight_scale = be_.make_buffer(std::span<const uint8_t>(w.scales), "weight_scale");
  }
  state_.weight_elem_size = elem;
  state_.weight_scale_dtype = dtype;
  state_.weight_layout = WeightLayout::kPlain;
  state_.weights_loaded = true;
}

bool LinearLayer::model_preshuffle() {
  if (!state_.weights_loaded) throw DispatchError("model_preshuffle: weights not loaded");
  const Faults& f = state_.faults;
  if (!linear_kernel_->preshuffles_weight() || state_.weight_elem_size != 1 ||
      (state_.config.reads_weight_directly() && !f.has(Fault::kZ4RelayoutDirectlyRead)) ||
      (weight_already_preshuffled(state_) && !f.has(Fault::kZ3NoPreshuffleGuard))) {
    return false;
  }
  preshuffle_layer_weight(state_, be_);
  return true;
}

void LinearLayer::process_weights_after_loading() {
  linear_kernel_->process_weights_after_loading(state_, be_);
}

ApplyResult LinearLayer::apply(const Activation& x) {
  const gpu::Counters before = be_.counters();
  ApplyResult r = linear_kernel_->apply(state_, x, be_);
  const gpu::Counters& after = be_.counters();
  last_.path = r.path;
  last_.delta = after.since(before);
  return r;
}

}  // namespace mxgate::dispatch
