// Covers the dispatch bug zoo (dispatch/faults.h): fault names, and for each fault Z1-Z7 its
// minimal case from BUG_CLASSES.md run twice on the host backend, clean and with the fault, showing
// that the fault changes behaviour and that the check the suite relies on (spy counts, relayout
// counts, counted launches, equality with the reference) sees it. Does not cover: Z8-Z16 (quantizer
// and GEMM-kernel classes, not dispatch faults), the property suites that must find these faults
// on their own (they come later), GPU backends.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "dispatch/layer.h"
#include "gpu/host/host_backend.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/quant_conventions.h"

namespace mxgate::dispatch {
namespace {

using gpu::ActScaleOrder;
using gpu::Kernel;

LinearConfig config(Scheme s, std::size_t n, std::size_t k,
                    WeightScaleDtype ws = WeightScaleDtype::kE8m0) {
  LinearConfig c;
  c.platform = Platform::kGfx950;
  c.scheme = s;
  c.n = n;
  c.k = k;
  c.weight_scale = ws;
  return c;
}

// Integers in [-8, 8] (exact in MXFP8 and bf16; every fp32 sum of products exact).
std::vector<float> ints(std::size_t count, int seed) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    v[i] = static_cast<float>(static_cast<int>((i * 7 + seed * 3) % 17) - 8);
  }
  return v;
}

GemmOutput reference(const LinearConfig& c, const QuantizedWeight& w, const Activation& x) {
  std::vector<float> xf;
  for (uint16_t h : x.bf16) xf.push_back(float_of(static_cast<uint32_t>(h) << 16));
  if (c.scheme == Scheme::kMxfp8) {
    const MxQuantized qa =
        quantize_mx(xf, x.m, x.k, Format::kE4M3FN, *mx_policy(*find_convention("ocp_mx")));
    const MxQuantized qw{c.n, c.k, Format::kE4M3FN, w.data, w.scales};
    return exact_gemm(mx_gemm_problem(qa, qw, E8m0Decode::kOcp), OutputFormat::kFp32);
  }
  const QuantizedActivation q = quantize_activation_1x128(x);
  const BlockQuantized qa{x.m, x.k, 1, kBlockK, Format::kE4M3FN, q.codes, q.scales};
  BlockQuantized qw{c.n, c.k, kBlockK, kBlockK, Format::kE4M3FN, w.data, {}};
  if (c.weight_scale == WeightScaleDtype::kE8m0) {
    for (uint8_t b : w.scales) qw.scales.push_back(decode_e8m0(b, E8m0Decode::kOcp));
  } else {
    qw.scales.resize(w.scales.size() / 4);
    std::memcpy(qw.scales.data(), w.scales.data(), w.scales.size());
  }
  return ordered_gemm(block_gemm_problem(qa, qw),
                      {kBlockK, ScaleApplication::kPerPartial, OutputFormat::kFp32});
}

bool same(const GemmOutput& a, const GemmOutput& b) {
  if (a.fp32.size() != b.fp32.size()) return false;
  for (std::size_t i = 0; i < a.fp32.size(); ++i) {
    if (bits_of(a.fp32[i]) != bits_of(b.fp32[i])) return false;
  }
  return true;
}

// A fault name that does not round-trip cannot be selected at run time.
TEST(DispatchFaults, NamesAndParsing) {
  EXPECT_EQ(all_faults().size(), kFaultCount);
  for (Fault f : all_faults()) {
    EXPECT_EQ(parse_fault(to_string(f)), f);
    EXPECT_TRUE(to_string(f).starts_with("z"));
  }
  EXPECT_TRUE(Faults{}.none());
  const Faults two = parse_faults("z1_no_per_step_fallback,z5_shift_e8m0_upcast");
  EXPECT_TRUE(two.has(Fault::kZ1NoPerStepFallback));
  EXPECT_TRUE(two.has(Fault::kZ5ShiftE8m0Upcast));
  EXPECT_FALSE(two.has(Fault::kZ2IgnoreActScaleOrder));
  EXPECT_TRUE(parse_faults("").none());
  EXPECT_THROW(parse_faults("z1_no_per_step_fallback,z99"), std::invalid_argument);
}

// Z1 minimal: MXFP8, K=160, M=1, N=1, load processing skipped: dot_scaled is reached.
TEST(DispatchFaults, Z1UnalignedKReachesDotScaled) {
  const LinearConfig c = config(Scheme::kMxfp8, 1, 160);
  const Activation x = make_activation(ints(160, 2), 1, 160);
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    gpu::HostBackend be;
    const DotScaledMxfp8 kernel;
    LinearLayer layer(be, c, kernel);
    if (faulty) layer.set_faults({Fault::kZ1NoPerStepFallback});
    const QuantizedWeight w = layer.load_float_weights(ints(160, 1));
    const ApplyResult r = layer.apply(x);
    EXPECT_EQ(layer.last_apply().delta.launches_of(Kernel::kGemmMxDotScaled), faulty ? 1u : 0u);
    EXPECT_EQ(same(reference(c, w, x), r.out), !faulty);
  }
}

// Z2 minimal: M=2, K=256, N=1: column-major scales handed to the row-major consumer.
TEST(DispatchFaults, Z2ActScaleOrderMismatch) {
  const LinearConfig c = config(Scheme::kFp8Block, 1, 256, WeightScaleDtype::kFp32);
  std::vector<float> xs(2 * 256);
  for (std::size_t i = 0; i < xs.size(); ++i)
    xs[i] = 0.25f * static_cast<float>(1 + i % 13 + 9 * (i / 128));
  Activation x = make_activation(xs, 2, 256);
  x.pre_quantized = quantize_activation_1x128(x, ActScaleOrder::kColMajor);
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    gpu::HostBackend be;
    const BlockScaledFp8 kernel;
    LinearLayer layer(be, c, kernel);
    if (faulty) layer.set_faults({Fault::kZ2IgnoreActScaleOrder});
    const QuantizedWeight w = layer.load_float_weights(ints(256, 3));
    layer.process_weights_after_loading();
    if (!faulty) {
      EXPECT_THROW(layer.apply(x), DispatchError);
    } else {
      EXPECT_FALSE(same(reference(c, w, x), layer.apply(x).out));
    }
  }
}

// Z3 minimal: N=16, K=64: the model shuffles, then load processing shuffles again.
TEST(DispatchFaults, Z3DoublePreshuffle) {
  const LinearConfig c = config(Scheme::kFp8Block, 16, 64, WeightScaleDtype::kFp32);
  const Activation x = make_activation(ints(2 * 64, 5), 2, 64);
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    gpu::HostBackend be;
    const PreshuffledBlockScaledFp8 kernel;
    LinearLayer layer(be, c, kernel);
    if (faulty) layer.set_faults({Fault::kZ3NoPreshuffleGuard});
    const QuantizedWeight w = layer.load_float_weights(ints(16 * 64, 4));
    EXPECT_TRUE(layer.model_preshuffle());
    layer.process_weights_after_loading();
    EXPECT_EQ(layer.state().weight_relayouts, faulty ? 2 : 1);
    EXPECT_EQ(same(reference(c, w, x), layer.apply(x).out), !faulty);
  }
}

// Z4 minimal: one is_bmm layer, N=16, K=64: its directly-read weight gets preshuffled.
TEST(DispatchFaults, Z4RelayoutOfDirectlyReadWeight) {
  LinearConfig c = config(Scheme::kFp8Block, 16, 64, WeightScaleDtype::kFp32);
  c.is_bmm = true;
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    gpu::HostBackend be;
    const PreshuffledBlockScaledFp8 kernel;
    LinearLayer layer(be, c, kernel);
    if (faulty) layer.set_faults({Fault::kZ4RelayoutDirectlyRead});
    layer.load_float_weights(ints(16 * 64, 6));
    layer.model_preshuffle();
    layer.process_weights_after_loading();
    EXPECT_EQ(be.counters().launches_of(Kernel::kPreshuffleWeight), faulty ? 1u : 0u);
    EXPECT_EQ(layer.state().weight_layout,
              faulty ? gpu::WeightLayout::kAiterPreshuffled : gpu::WeightLayout::kPlain);
  }
}

// Z5 minimal: one block whose e8m0 weight scale byte is 0x00 (2^-127; the shift gives 0).
TEST(DispatchFaults, Z5ShiftE8m0Upcast) {
  const LinearConfig c = config(Scheme::kFp8Block, 1, 128, WeightScaleDtype::kE8m0);
  const QuantizedWeight w{std::vector<uint8_t>(128, 0x38), {0x00}};  // E4M3FN 0x38 = 1.0
  const Activation x = make_activation(std::vector<float>(128, 1.0f), 1, 128);
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    gpu::HostBackend be;
    const BlockScaledFp8 kernel;
    LinearLayer layer(be, c, kernel);
    if (faulty) layer.set_faults({Fault::kZ5ShiftE8m0Upcast});
    layer.load_weights(w);
    layer.process_weights_after_loading();
    const GemmOutput want = reference(c, w, x);
    ASSERT_NE(want.fp32[0], 0.0f);
    EXPECT_EQ(same(want, layer.apply(x).out), !faulty);
  }
}

// Z6 minimal: any unaligned-K MXFP8 layer, one apply: the weight is dequantized per step.
TEST(DispatchFaults, Z6PerStepRematerialization) {
  const LinearConfig c = config(Scheme::kMxfp8, 16, 160);
  const Activation x = make_activation(ints(160, 8), 1, 160);
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    gpu::HostBackend be;
    const DotScaledMxfp8 kernel;
    LinearLayer layer(be, c, kernel);
    if (faulty) layer.set_faults({Fault::kZ6PerStepRematerialize});
    const QuantizedWeight w = layer.load_float_weights(ints(16 * 160, 7));
    layer.process_weights_after_loading();
    const ApplyResult r = layer.apply(x);
    EXPECT_TRUE(same(reference(c, w, x), r.out));  // right numbers: only counting sees it
    const gpu::Counters& d = layer.last_apply().delta;
    EXPECT_EQ(d.launches_of(Kernel::kDequantMxToBf16), faulty ? 1u : 0u);
    EXPECT_EQ(d.bytes_allocated >= c.n * c.k * 2, faulty);
  }
}

// Z7 minimal: one directly-read layer with e8m0 weight scales returns before the upcast.
TEST(DispatchFaults, Z7EarlyReturnSkipsUpcast) {
  LinearConfig c = config(Scheme::kFp8Block, 16, 64, WeightScaleDtype::kE8m0);
  c.skip_weight_relayout = true;
  const Activation x = make_activation(ints(2 * 64, 10), 2, 64);
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    gpu::HostBackend be;
    const PreshuffledBlockScaledFp8 kernel;
    LinearLayer layer(be, c, kernel);
    if (faulty) layer.set_faults({Fault::kZ7EarlyReturnSkipsUpcast});
    const QuantizedWeight w = layer.load_float_weights(ints(16 * 64, 9));
    layer.process_weights_after_loading();
    EXPECT_EQ(layer.state().load_actions.empty(), faulty);
    EXPECT_EQ(same(reference(c, w, x), layer.apply(x).out), !faulty);
  }
}

}  // namespace
}  // namespace mxgate::dispatch
