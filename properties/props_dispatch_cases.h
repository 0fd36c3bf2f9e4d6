// The dispatch property's cases, on the property side (props_dispatch.cpp; it reaches the model
// through dispatch_model_bridge.h): generators that reach every branch of the model (production N x
// K and its TP shards, disabled linear kernels, other consumers of the activation), the case fields
// they add, and the other consumers themselves: small layers sharing the activation, negotiated and
// applied with the model's checks (docs/dispatch_model.md §6, §8).
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/layer.h"
#include "properties/dispatch_model_bridge.h"
#include "properties/property.h"

namespace mxgate::properties {

// Coverage tags of the glue go to the context's coverage.
decision::Tagger tagger(const Context& ctx);

// (N, K) of one layer: 3 cases in 4 the small shapes the dispatch property always drew (N from
// a few values around the preshuffle tile, K = 128 x kb + r with every K % 128 residue of the
// MX block), 1 in 4 a per-rank N x K of the production catalog, its TP shards included, small
// enough for the host models (N x K <= 2^18). Shrinks toward the small shapes.
rc::Gen<std::pair<std::size_t, std::size_t>> gen_dispatch_nk();
// The largest M a case of this N x K runs (host-model cost: M x N x K multiply-adds, twice
// with the reference): unbounded for small layers, 8 or 2 for the larger ones.
std::size_t dispatch_m_cap(std::size_t n, std::size_t k);

// decision::check_static for the case's N x K under every scheme and weight-scale dtype with
// its flags: the static decisions of every linear kernel and the registry's on every platform.
std::optional<std::string> check_static_decisions(const dispatch::LinearConfig& c,
                                                  const std::set<std::string>& disabled,
                                                  const decision::Tagger& tag);

// The value half of an upcast load action: after load processing turned the layer's e8m0 weight
// scales into fp32 (docs/dispatch_model.md §4.3), the fp32 scales it holds are the checkpoint's
// bytes decoded by the OCP rule (0x00 = 2^-127, 0xFF = NaN), bit for bit.
std::optional<Failure> check_upcast_scales(gpu::Backend& be, const dispatch::LinearConfig& c,
                                           const dispatch::LayerState& st,
                                           const dispatch::QuantizedWeight& loaded);

// Case field "disabled": linear kernels skipped by name in a registry pick (and in the static
// checks of every case), "none" or names joined by ','; most cases disable nothing.
rc::Gen<std::string> gen_disabled();
std::set<std::string> disabled_field(const Case& c);  // missing field: none

// Case field "consumers": the other consumers of the layer's activation, "none" or kinds
// joined by ','. Kinds: row (BlockScaledFp8: row-major As), col (PreshuffledBlockScaledFp8,
// processed: column-major), model_col (the same, shuffled by the model first), plain (the same
// unprocessed: row-major), direct (the same with is_bmm, processed: row-major), bf16 (Bf16: reads
// no scales), same (the layer's own linear kernel, flags and steps: it declares what the layer
// does). A case with consumers ends its lifecycle with a fused apply.
rc::Gen<std::string> gen_consumers();

class Consumers {
 public:
  // Throws CaseError on an unknown kind. `layer` / `linear_kernel`: the case's layer (K, scale
  // dtype, and what a `same` consumer copies); `seed`: the consumers' weights.
  Consumers(gpu::Backend& be, const std::string& field, const dispatch::LinearConfig& layer,
            const dispatch::LinearKernel& linear_kernel, bool emulation_at_load, uint64_t seed,
            const Context& ctx);
  ~Consumers();
  Consumers(const Consumers&) = delete;
  Consumers& operator=(const Consumers&) = delete;

  // A violation found while creating them.
  const std::optional<Failure>& failure() const { return failure_; }
  // The layer's process / model_preshuffle step, repeated on its `same` consumers.
  std::optional<Failure> mirror(const std::string& step);

  // One fused activation for the main layer and these consumers: every order declared (the
  // main layer's, dispatch's and the model's, given), dispatch's negotiation checked against the
  // model's, then `x` applied to each consumer, pre-quantized in the agreed order or plain, and
  // checked against the model and the reference. `order` receives what the main layer gets
  // (kNone: the plain activation).
  std::optional<Failure> negotiate_and_apply(dispatch::ActScaleOrder main_declared,
                                             model::ScaleOrder main_model_declared,
                                             const dispatch::Activation& x,
                                             dispatch::ActScaleOrder* order);

 private:
  struct One;
  std::optional<Failure> step(One& one, const std::string& step);  // process / model_preshuffle
  gpu::Backend& be_;
  const Context& ctx_;
  std::vector<std::unique_ptr<One>> all_;
  std::optional<Failure> failure_;
};

}  // namespace mxgate::properties
