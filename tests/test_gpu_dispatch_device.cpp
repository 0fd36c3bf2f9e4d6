// Covers dispatch/ on the device backend (HIP on AMD, CUDA on NVIDIA): the registry's decisions
// (the plan equals what load processing and apply do) and the invariants I1 (dot_scaled never
// reached with K % 128 != 0, a spy on its launch count), I2 (a weight is preshuffled at most once,
// never when it is read directly), I3 (a mismatched pre-quantized activation-scale order is
// refused, the unfused path is right) and I5 (no per-step re-materialization after load
// processing, counted), all with the kernels running on the GPU; and the zoo's kernel faults
// (Z8-Z16) giving on the device the bytes the host models give. I4 over random lifecycles is the
// dispatch.end_to_end property (test_gpu_device). Every test SKIPS (not passes) when no GPU is
// present, and when the program is built without MXGATE_DEVICE_TEST (no device library linked).
// Label `gpu`. Does not cover: the minimal case of each fault against the reference
// (tests/test_dispatch_faults.cpp), bound-mode data, speed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "common/blocks.h"
#include "dispatch/layer.h"
#include "dispatch/registry.h"
#include "gpu/backend.h"
#include "gpu/host/host_backend.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/quant_conventions.h"
#include "tests/dispatch_test_support.h"
#if defined(MXGATE_DEVICE_TEST)
#include "gpu/device/device_backend.h"
#endif

namespace mxgate::dispatch {
namespace {

using dispatch::ActScaleOrder;
using gpu::Kernel;

std::unique_ptr<gpu::Backend> device_backend() {
#if defined(MXGATE_DEVICE_TEST)
  return gpu::make_device_backend();
#else
  return nullptr;
#endif
}

class DeviceDispatch : public testing::Test {
 protected:
  void SetUp() override {
    be_ = device_backend();
    if (be_ == nullptr || !be_->available()) GTEST_SKIP() << "no device for this backend";
  }
  gpu::Backend& be() { return *be_; }
  std::unique_ptr<gpu::Backend> be_;
};

using test_support::config;
using test_support::general_values;
using test_support::problem;
using test_support::Problem;
using test_support::reference;
using test_support::same;

// A plan that lies about the device run hides the path that actually runs on the GPU.
TEST_F(DeviceDispatch, PlanMatchesWhatLoadAndApplyDo) {
  for (Platform pf : {Platform::kGfx950, Platform::kGfx942, Platform::kSm90}) {
    for (std::size_t k : {160, 256}) {
      std::vector<LinearConfig> configs = {config(pf, Scheme::kMxfp8, 32, k)};
      for (auto ws : {WeightScaleDtype::kE8m0, WeightScaleDtype::kFp32}) {
        LinearConfig c = config(pf, Scheme::kFp8Block, 32, k, ws);
        configs.push_back(c);
        c.is_bmm = true;
        configs.push_back(c);
      }
      configs.push_back(config(pf, Scheme::kBf16, 8, k));
      for (const LinearConfig& c : configs) {
        SCOPED_TRACE(describe(c));
        const Plan want = plan(c);
        Problem p = problem(c, 2, 7);
        LinearLayer layer(be(), c);
        EXPECT_EQ(layer.linear_kernel().name(), want.linear_kernel);
        const QuantizedWeight w = layer.load_float_weights(p.weight);
        layer.process_weights_after_loading();
        EXPECT_EQ(layer.state().load_actions, want.load);
        const ApplyResult r = layer.apply(p.x);
        EXPECT_EQ(layer.last_apply().path, want.apply);
        EXPECT_TRUE(same(reference(c, w, p.x), r.out));
      }
    }
  }
}

// I1 (Z1): an unaligned fp8 MXFP8 weight must never reach the unmasked dot_scaled kernel on the
// device, whether or not load processing ran (production shapes of docs/architecture.md §1.1).
TEST_F(DeviceDispatch, UnalignedFp8WeightNeverReachesDotScaled) {
  const DotScaledMxfp8 kernel;
  for (auto [n, k] : test_support::dot_scaled_shapes()) {
    for (bool processed : {false, true}) {
      SCOPED_TRACE("N=" + std::to_string(n) + " K=" + std::to_string(k) +
                   (processed ? " processed" : " unprocessed"));
      const LinearConfig c = config(Platform::kGfx950, Scheme::kMxfp8, n, k);
      Problem p = problem(c, 1, n + k);
      LinearLayer layer(be(), c, kernel);
      const QuantizedWeight w = layer.load_float_weights(p.weight);
      if (processed) layer.process_weights_after_loading();
      const ApplyResult r = layer.apply(p.x);
      const bool aligned = k % kDotScaledKAlign == 0;
      EXPECT_EQ(layer.last_apply().delta.launches_of(gpu::kernel("gemm_mx_dot_scaled")),
                aligned ? 1u : 0u);
      EXPECT_TRUE(same(reference(c, w, p.x), r.out));
    }
  }
}

// I2 (Z3, Z4): a weight relaid out twice, or relaid out though other code reads it directly,
// gives wrong numbers on the device as on the host.
TEST_F(DeviceDispatch, PreshuffleAtMostOnceAndNeverForDirectlyReadWeights) {
  for (int flags = 0; flags < 3; ++flags) {
    for (int order = 0; order < 2; ++order) {
      LinearConfig c = config(Platform::kGfx942, Scheme::kFp8Block, 16, 64);
      c.is_bmm = flags == 1;
      c.skip_weight_relayout = flags == 2;
      SCOPED_TRACE(describe(c) + " order " + std::to_string(order));
      Problem p = problem(c, 2, 9);
      const uint64_t before = be().counters().launches_of(gpu::kernel("preshuffle_weight"));
      LinearLayer layer(be(), c);
      const QuantizedWeight w = layer.load_float_weights(p.weight);
      if (order == 0) {
        layer.model_preshuffle();
        layer.process_weights_after_loading();
      } else {
        layer.process_weights_after_loading();
        EXPECT_FALSE(layer.model_preshuffle());
      }
      EXPECT_EQ(be().counters().launches_of(gpu::kernel("preshuffle_weight")) - before,
                flags == 0 ? 1u : 0u);
      EXPECT_EQ(layer.state().weight_relayouts, flags == 0 ? 1 : 0);
      EXPECT_TRUE(same(reference(c, w, p.x), layer.apply(p.x).out));
    }
  }
}

// I3 (Z2): pre-quantized activation scales in the other order must be refused, never consumed;
// the unfused path and the agreeing fused form are right on the device.
TEST_F(DeviceDispatch, ActScaleOrderMismatchIsRefused) {
  const LinearConfig c = config(Platform::kGfx942, Scheme::kFp8Block, 16, 256);
  Problem p = problem(c, 2, 21);
  LinearLayer layer(be(), c);  // PreshuffledBlockScaledFp8: column-major once preshuffled
  const QuantizedWeight w = layer.load_float_weights(p.weight);
  layer.process_weights_after_loading();
  ASSERT_EQ(layer.act_scale_order(), ActScaleOrder::kColMajor);
  const GemmOutput want = reference(c, w, p.x);
  EXPECT_TRUE(same(want, layer.apply(p.x).out));
  Activation fused = p.x;
  fused.pre_quantized = quantize_activation_1x128(p.x, ActScaleOrder::kRowMajor);
  EXPECT_THROW(layer.apply(fused), DispatchError);
  fused.pre_quantized = quantize_activation_1x128(p.x, ActScaleOrder::kColMajor);
  EXPECT_TRUE(same(want, layer.apply(fused).out));
}

enum class Step { kModelPreshuffle, kProcess, kApply };

// I4 (apply equals the reference for every lifecycle) on the device is the property
// dispatch.end_to_end (properties/props_dispatch.cpp), run by test_gpu_device over random
// configs and lifecycles; the fixed table of named lifecycles is in test_dispatch.cpp (host).

// I5 (Z6): after load processing the device hot path launches no dequantize, upcast or
// preshuffle and allocates only activation-sized buffers; skipped processing is counted.
TEST_F(DeviceDispatch, NoRematerializationAfterLoadProcessing) {
  for (const LinearConfig& c : test_support::hot_path_configs()) {
    SCOPED_TRACE(describe(c));
    Problem p = problem(c, 1, 3);
    LinearLayer layer(be(), c);
    layer.load_float_weights(p.weight);
    layer.apply(p.x);  // before load processing: the per-step work is visible to the counters
    const gpu::Counters& first = layer.last_apply().delta;
    EXPECT_GE(first.launches_of(gpu::kernel("upcast_e8m0")) +
                  first.launches_of(gpu::kernel("dequant_mx_to_bf16")) +
                  first.launches_of(gpu::kernel("gemm_mx_dot_scaled")),
              1u);
    layer.process_weights_after_loading();
    for (int step = 0; step < 3; ++step) {
      layer.apply(p.x);
      test_support::expect_no_rematerialization(layer.last_apply().delta, c);
    }
  }
}

// ---- the zoo's kernel faults on the device ------------------------------------------------

// quantize_mx of fp32 (rows x cols) on `be`: codes then scales.
std::vector<uint8_t> quantize_on(gpu::Backend& be, const std::vector<float>& x, std::size_t rows,
                                 std::size_t cols, gpu::QuantConvention conv, uint64_t faults) {
  gpu::QuantizeArgs q;
  q.in = be.make_buffer(std::span<const float>(x), "x");
  q.codes = be.allocate(rows * cols, "codes");
  q.scales = be.allocate(rows * ceil_div(cols, kMxBlock), "scales");
  q.p = {rows, cols, gpu::InputDtype::kFp32, conv};
  q.p.faults = faults;
  be.run({gpu::kernel("quantize_mx"), q});
  std::vector<uint8_t> out = be.download(q.codes);
  const std::vector<uint8_t> sc = be.download(q.scales);
  out.insert(out.end(), sc.begin(), sc.end());
  for (gpu::BufferId id : {q.in, q.codes, q.scales}) be.release(id);
  return out;
}

// One GEMM launch on `be` from raw operand bytes.
std::vector<float> gemm_on(gpu::Backend& be, Kernel k, const std::vector<uint8_t>& a,
                           const std::vector<uint8_t>& as, const std::vector<uint8_t>& b,
                           const std::vector<uint8_t>& bs, const gpu::GemmParams& p) {
  gpu::GemmArgs g;
  g.a = be.make_buffer(std::span<const uint8_t>(a), "A");
  g.a_scale = be.make_buffer(std::span<const uint8_t>(as), "As");
  g.b = be.make_buffer(std::span<const uint8_t>(b), "B");
  g.b_scale = be.make_buffer(std::span<const uint8_t>(bs), "Bs");
  g.out = be.allocate(p.m * p.n * sizeof(float), "C");
  g.p = p;
  be.run({k, g});
  std::vector<float> out = be.download_as<float>(g.out);
  for (gpu::BufferId id : {g.a, g.a_scale, g.b, g.b_scale, g.out}) be.release(id);
  return out;
}

// Equal bits, any NaN equal to any NaN (NaN payloads differ between CPU and GPU arithmetic).
::testing::AssertionResult same_floats(const std::vector<float>& want,
                                       const std::vector<float>& got) {
  if (want.size() != got.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i]) && std::isnan(got[i])) continue;
    if (bits_of(want[i]) != bits_of(got[i])) {
      return ::testing::AssertionFailure()
             << "C[" << i << "]: host " << want[i] << " device " << got[i];
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<uint8_t> random_bytes(std::size_t count, uint8_t lo, uint8_t hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(count);
  for (uint8_t& b : v) b = static_cast<uint8_t>(lo + rng() % (hi - lo + 1));
  return v;
}

std::vector<uint8_t> fp8_codes(std::size_t count, uint64_t seed) {  // finite E4M3FN, |x| <= 15
  std::vector<uint8_t> v = random_bytes(count, 0, 0x57, seed);
  for (std::size_t i = 0; i < v.size(); i += 3) v[i] |= 0x80;
  return v;
}

std::vector<uint8_t> fp32_scales(std::size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(0.01f, 2.0f);
  std::vector<uint8_t> v(count * 4);
  for (std::size_t i = 0; i < count; ++i) {
    const float s = d(rng);
    std::memcpy(v.data() + 4 * i, &s, 4);
  }
  return v;
}

// A zoo fault that re-creates its bug only on the host models would make the suite's verdict on
// a GPU meaningless: every kernel fault must give the device the host model's exact bytes.
TEST_F(DeviceDispatch, KernelFaultsMatchHostModels) {
  gpu::HostBackend host;
  // Quantizer faults (Z8, Z11, Z14, Z15): blocks with the minimal amaxes and random ones.
  std::vector<float> x = general_values(4 * 64, 31);
  x[0] = 0x1.c0000ep-118f;  // amax/448 near 0x1.000002p-126 (Z8)
  for (std::size_t i = 1; i < 32; ++i) x[i] = x[0] * 0.25f * static_cast<float>(i % 4);
  x[64] = 300.0f;   // Z11, Z14
  x[128] = 511.5f;  // Z15
  for (uint64_t f : {uint64_t{0}, gpu::kernel_fault::kLog2Ceil, gpu::kernel_fault::kFnuzMax,
                     gpu::kernel_fault::kUnroundedScalePayload, gpu::kernel_fault::kBf16Amax}) {
    for (auto conv : {gpu::QuantConvention::kOcpMx, gpu::QuantConvention::kTorchaoRceil}) {
      SCOPED_TRACE("quantize_mx faults " + std::to_string(f));
      EXPECT_EQ(quantize_on(host, x, 4, 64, conv, f), quantize_on(be(), x, 4, 64, conv, f));
    }
  }
  // Blockscale GEMMs (Z9, Z12, Z16): M = 3, a 64-row shard from global row 96, K = 160.
  const std::size_t m = 3, n = 64, k = 160, kb = 2;
  const std::vector<uint8_t> a = fp8_codes(m * k, 32), b = fp8_codes(n * k, 33);
  const std::vector<uint8_t> as_row = fp32_scales(m * kb, 34), as_tma = fp32_scales(4 * kb, 35);
  const std::vector<uint8_t> bs = fp32_scales(2 * kb, 36);
  for (uint64_t f : {uint64_t{0}, gpu::kernel_fault::kDropTailBlock,
                     gpu::kernel_fault::kIgnoreAsStride, gpu::kernel_fault::kShardBlockIndex}) {
    SCOPED_TRACE("blockscale faults " + std::to_string(f));
    gpu::GemmParams p{m, n, k, gpu::OutDtype::kFp32};
    p.faults = f;
    p.n_offset = 96;
    EXPECT_TRUE(same_floats(gemm_on(host, gpu::kernel("gemm_blockscale"), a, as_row, b, bs, p),
                            gemm_on(be(), gpu::kernel("gemm_blockscale"), a, as_row, b, bs, p)));
    p.n_offset = 0;
    p.as_ld = 4;
    const std::vector<uint8_t> bs1 = fp32_scales(kb, 37);
    EXPECT_TRUE(same_floats(
        gemm_on(host, gpu::kernel("gemm_blockscale_bpreshuffle"), a, as_tma, b, bs1, p),
        gemm_on(be(), gpu::kernel("gemm_blockscale_bpreshuffle"), a, as_tma, b, bs1, p)));
  }
  // MX GEMMs on 128x4-swizzled scales, padding 0xFF (Z10, Z13): K = 64 (dequant), 128 (both).
  for (std::size_t kk : {64, 128}) {
    const std::vector<uint8_t> ma = fp8_codes(2 * kk, 40), mb = fp8_codes(3 * kk, 41);
    std::vector<uint8_t> sa(512, 0xFF), sb(512, 0xFF);
    const std::vector<uint8_t> live = random_bytes(2 * 512, 120, 134, 42);
    for (std::size_t i = 0; i < 512; ++i) {  // every in-bounds slot of rows < 32, columns < 4
      if (i % 16 < 4 && i / 16 < 3) {
        sa[i] = live[i];
        sb[i] = live[512 + i];
      }
    }
    for (uint64_t f : {uint64_t{0}, gpu::kernel_fault::kReadScalePadding,
                       gpu::kernel_fault::kSwizzleReadLinear}) {
      SCOPED_TRACE("mx faults " + std::to_string(f) + " K=" + std::to_string(kk));
      gpu::GemmParams p{2, 3, kk, gpu::OutDtype::kFp32};
      p.faults = f;
      p.mx_scales_swizzled = true;
      for (Kernel kern : {gpu::kernel("gemm_mx_dequant"), gpu::kernel("gemm_mx_dot_scaled")}) {
        if (kern == gpu::kernel("gemm_mx_dot_scaled") && kk % 128 != 0) continue;
        EXPECT_TRUE(same_floats(gemm_on(host, kern, ma, sa, mb, sb, p),
                                gemm_on(be(), kern, ma, sa, mb, sb, p)));
      }
    }
  }
}

}  // namespace
}  // namespace mxgate::dispatch
