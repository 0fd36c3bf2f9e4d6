// fuzz_dispatch: one linear layer on the host backend, config and lifecycle decoded from the
// input, checked against the invariants of tests/test_dispatch.cpp after every step:
//   I1  dot_scaled is never launched for K % 128 != 0 (a spy on its launch count);
//   I2  a weight is preshuffled at most once, never when the layer reads it directly;
//   I3  a fused (pre-quantized) activation is accepted only in the order the layer declares,
//       and accepted when it is that order;
//   I4  every apply equals the reference bit for bit (tests/dispatch_reference.h);
//   I5  after load processing, apply re-materializes nothing (no dequantize / upcast /
//       preshuffle / per-step dequantize GEMM launch; activation-sized allocations only).
// DispatchError is allowed only where the lifecycle asks for it (a step before load, a second
// load, a layer no kernel can run, a fused order the layer does not read). MXGATE_FAULTS is
// honoured: the layer reads it when created.
//
// Input (FuzzedDataProvider: each field is ONE byte, taken from the END of the input backwards;
// value = min + byte % (max - min + 1); missing bytes read as 0):
//   platform 0..3 (gfx950 gfx942 sm90 host), scheme 0..2 (mxfp8 fp8_block bf16), N 1..48,
//   K/32 1..10, flags 0..3 (bit 0 is_bmm, bit 1 skip_weight_relayout), weight-scale 0..1 (e8m0
//   fp32), kernel 0..6 (registry, DotScaledMxfp8, EmulationMxfp8 at load, EmulationMxfp8 per
//   step, BlockScaledFp8, PreshuffledBlockScaledFp8, Bf16), M 1..4, data seed 0..255,
//   steps 1..8, then one byte per step 0..6 (load, model_preshuffle, process, apply,
//   apply fused in the negotiated order, apply fused row-major, apply fused col-major).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "dispatch/layer.h"
#include "dispatch/negotiation.h"
#include "dispatch/registry.h"
#include "gpu/host/host_backend.h"
#include "tests/dispatch_reference.h"

using namespace mxgate;
using namespace mxgate::dispatch;
using gpu::ActScaleOrder;
using gpu::Kernel;

namespace {

enum class Step : uint8_t {
  kLoad,
  kModelPreshuffle,
  kProcess,
  kApply,
  kApplyNegotiated,
  kApplyRowMajor,
  kApplyColMajor
};

std::string g_trace;  // config and steps so far, printed with a violation

[[noreturn]] void violation(const char* invariant, const std::string& what) {
  std::fprintf(stderr, "fuzz_dispatch: %s violated: %s\n  case: %s\n", invariant, what.c_str(),
               g_trace.c_str());
  __builtin_trap();
}

std::vector<float> values(std::size_t count, bool block, std::mt19937& rng) {
  std::vector<float> v(count);
  if (block) {
    std::uniform_real_distribution<float> d(-3.0f, 3.0f);
    for (float& x : v) x = d(rng);
  } else {
    // Integers in [-8, 8]: every correct MXFP8 / bf16 path equals exact_gemm.
    for (float& x : v) x = static_cast<float>(static_cast<int>(rng() % 17) - 8);
  }
  return v;
}

const LinearKernel* named_kernel(unsigned i) {
  static const DotScaledMxfp8 dot;
  static const EmulationMxfp8 emu_load(true), emu_step(false);
  static const BlockScaledFp8 block;
  static const PreshuffledBlockScaledFp8 pre;
  static const Bf16 bf16;
  static const LinearKernel* const kernels[] = {&dot, &emu_load, &emu_step, &block, &pre, &bf16};
  return kernels[i - 1];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  LinearConfig c;
  c.platform = static_cast<Platform>(in.ConsumeIntegralInRange<uint8_t>(0, 3));
  c.scheme = static_cast<Scheme>(in.ConsumeIntegralInRange<uint8_t>(0, 2));
  c.n = in.ConsumeIntegralInRange<uint8_t>(1, 48);
  c.k = 32u * in.ConsumeIntegralInRange<uint8_t>(1, 10);
  const unsigned flags = in.ConsumeIntegralInRange<uint8_t>(0, 3);
  c.is_bmm = (flags & 1u) != 0;
  c.skip_weight_relayout = (flags & 2u) != 0;
  c.weight_scale = static_cast<WeightScaleDtype>(in.ConsumeIntegralInRange<uint8_t>(0, 1));
  const unsigned kernel_choice = in.ConsumeIntegralInRange<uint8_t>(0, 6);
  const std::size_t m = in.ConsumeIntegralInRange<uint8_t>(1, 4);
  const unsigned seed = in.ConsumeIntegral<uint8_t>();
  const unsigned steps = in.ConsumeIntegralInRange<uint8_t>(1, 8);

  g_trace = describe(c) + " kernel_choice=" + std::to_string(kernel_choice) +
            " M=" + std::to_string(m) + " seed=" + std::to_string(seed) + " steps:";

  gpu::HostBackend be;
  std::unique_ptr<LinearLayer> layer;
  try {
    layer = kernel_choice == 0 ? std::make_unique<LinearLayer>(be, c)
                               : std::make_unique<LinearLayer>(be, c, *named_kernel(kernel_choice));
  } catch (const DispatchError&) {
    return 0;  // no kernel can run this config: a loud, named refusal
  }
  const bool block = c.scheme == Scheme::kFp8Block;
  const bool per_step_kernel =
      layer->kernel().name() == "EmulationMxfp8" && layer->kernel().planned_load(c).empty();
  std::mt19937 rng(seed);
  const std::vector<float> weight = values(c.n * c.k, block, rng);
  const Activation x = make_activation(values(m * c.k, block, rng), m, c.k);
  std::optional<QuantizedWeight> w;
  std::optional<GemmOutput> want;

  for (unsigned s = 0; s < steps; ++s) {
    const auto step = static_cast<Step>(in.ConsumeIntegralInRange<uint8_t>(0, 6));
    g_trace += " " + std::to_string(static_cast<unsigned>(step));
    try {
      switch (step) {
        case Step::kLoad:
          try {
            w = layer->load_float_weights(weight);
            want = test_support::reference(c, *w, x);
          } catch (const DispatchError&) {
            if (!w) violation("load", "the first load of a valid weight threw");
          }
          break;
        case Step::kModelPreshuffle:
          try {
            layer->model_preshuffle();
          } catch (const DispatchError&) {
            if (w) violation("load", "model_preshuffle threw on a loaded layer");
          }
          break;
        case Step::kProcess:
          try {
            layer->process_weights_after_loading();
          } catch (const DispatchError&) {
            if (w) violation("load", "process_weights_after_loading threw on a loaded layer");
          }
          break;
        case Step::kApply:
        case Step::kApplyNegotiated:
        case Step::kApplyRowMajor:
        case Step::kApplyColMajor: {
          const ActScaleOrder declared = layer->act_scale_order();
          Activation xa = x;
          ActScaleOrder order = ActScaleOrder::kNone;  // unfused
          if (step == Step::kApplyNegotiated) {
            const ActScaleOrder consumers[] = {declared};
            order = negotiate_act_scale_order(consumers);
          } else if (step == Step::kApplyRowMajor) {
            order = ActScaleOrder::kRowMajor;
          } else if (step == Step::kApplyColMajor) {
            order = ActScaleOrder::kColMajor;
          }
          if (order != ActScaleOrder::kNone) xa.pre_quantized = quantize_activation_1x128(x, order);
          const bool mismatch = order != ActScaleOrder::kNone && declared != ActScaleOrder::kNone &&
                                order != declared;
          const bool processed = layer->state().load_processed;
          ApplyResult r;
          try {
            r = layer->apply(xa);
          } catch (const DispatchError& e) {
            if (w && !mismatch) violation("I4", std::string("apply threw: ") + e.what());
            break;
          }
          if (!w) violation("I4", "apply succeeded before the weights were loaded");
          if (mismatch) {
            violation("I3", "a " + std::string(gpu::to_string(order)) +
                                " pre-quantized activation was accepted by a layer that reads " +
                                std::string(gpu::to_string(declared)));
          }
          const gpu::Counters& d = layer->last_apply().delta;
          if (c.k % kDotScaledKAlign != 0 && d.launches_of(Kernel::kGemmMxDotScaled) != 0) {
            violation("I1", "dot_scaled launched with K = " + std::to_string(c.k));
          }
          const long bad = test_support::first_difference(*want, r.out);
          if (bad >= 0) {
            violation("I4", "apply differs from the reference at element " + std::to_string(bad) +
                                " (path " + std::string(to_string(r.path)) + ")");
          }
          if (processed) {
            for (Kernel k : {Kernel::kDequantMxToBf16, Kernel::kUpcastE8m0,
                             Kernel::kPreshuffleWeight, Kernel::kGemmMxDequant}) {
              if (k == Kernel::kGemmMxDequant && per_step_kernel) continue;
              if (d.launches_of(k) != 0) {
                violation("I5", "per-step " + std::string(gpu::kernel_name(k)) +
                                    " after load processing");
              }
            }
            const std::size_t bound = m * (c.k * 2 + c.k + c.k * 4 + c.n * 4) + 256;
            if (!per_step_kernel && d.bytes_allocated > bound) {
              violation("I5", std::to_string(d.bytes_allocated) +
                                  " bytes allocated in one apply after load processing");
            }
          }
          break;
        }
      }
    } catch (const std::exception& e) {
      // Anything but the DispatchErrors allowed above: a guard band or contract check of the
      // backend, an allocation, ... is a bug of the layer, never an acceptable answer.
      violation("contract", e.what());
    }
    const LayerState& st = layer->state();
    if (st.weight_relayouts > 1) {
      violation("I2", "weight preshuffled " + std::to_string(st.weight_relayouts) + " times");
    }
    if (c.reads_weight_directly() && st.weight_relayouts != 0) {
      violation("I2", "a weight read directly (is_bmm / skip_weight_relayout) was preshuffled");
    }
  }
  return 0;
}
