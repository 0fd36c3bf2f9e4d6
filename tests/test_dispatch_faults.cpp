// Covers the bug zoo (dispatch/faults.h): fault names, and for each fault Z1-Z16 its minimal case
// from docs/bug_classes.md run twice on the host backend, clean and with the fault, showing that
// the fault changes behaviour and that the check the suite relies on (spy counts, relayout counts,
// counted launches, equality with the reference) sees it. Dispatch faults (Z1-Z7, Z9) run through
// a LinearLayer; kernel faults whose operand layout the dispatch framework never builds (TMA-
// aligned or swizzled scales, TP shards, RCEIL and fp32-input quantization) launch the kernel
// under test directly with the fault's kernel_fault bits. Does not cover: the property suites that
// must find these faults on their own (tests/property_zoo.cpp), GPU backends.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/blocks.h"
#include "dispatch/layer.h"
#include "gpu/host/host_backend.h"
#include "properties/dispatch_apply_oracle.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/quant_conventions.h"
#include "reference/scale_layout.h"
#include "tests/shell.h"

namespace mxgate::dispatch {
namespace {

using dispatch::ActScaleOrder;
using gpu::Kernel;

// Every fault's layer runs on gfx950, where all five linear kernels are supported.
LinearConfig config(Scheme s, std::size_t n, std::size_t k,
                    WeightScaleDtype ws = WeightScaleDtype::kE8m0) {
  return test_support::config(Platform::kGfx950, s, n, k, ws);
}

// Integers in [-8, 8] (exact in MXFP8 and bf16; every fp32 sum of products exact).
std::vector<float> ints(std::size_t count, int seed) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    v[i] = static_cast<float>(static_cast<int>((i * 7 + seed * 3) % 17) - 8);
  }
  return v;
}

using test_support::reference;

// Bit equality of two fp32 outputs.
bool same(const GemmOutput& a, const GemmOutput& b) {
  return test_support::first_difference(a, b) < 0;
}

// Guards against a fault missing from all_faults() or listed twice (every loop over the zoo
// walks that list): each fault id 0 .. kFaultCount-1 appears exactly once, no other id appears,
// and the name of id i is "z<N>_..." with N increasing with i, starting at 1 (the class numbers
// of docs/bug_classes.md §2; a range of numbers may be absent, Z31 follows Z16 here).
TEST(DispatchFaults, EveryFaultIdAppearsExactlyOnce) {
  std::map<int, int> seen;
  for (Fault f : all_faults()) ++seen[static_cast<int>(f)];
  int previous = 0;
  for (int id = 0; id < static_cast<int>(kFaultCount); ++id) {
    EXPECT_EQ(seen[id], 1) << "fault id " << id;
    const std::string name(to_string(static_cast<Fault>(id)));
    const int number = fault_number(static_cast<Fault>(id));
    EXPECT_TRUE(name.starts_with("z" + std::to_string(number) + "_")) << name;
    EXPECT_GT(number, previous) << "fault id " << id << " is named " << name;
    if (id == 0) {
      EXPECT_EQ(number, 1) << name;
    }
    previous = number;
  }
  EXPECT_EQ(seen.size(), kFaultCount) << "an id outside 0 .. kFaultCount-1";
}

// A fault name that does not round-trip cannot be selected at run time.
TEST(DispatchFaults, NamesAndParsing) {
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
  // Z1-Z7 and Z19 are dispatch faults; every other fault owns one distinct kernel_fault bit.
  uint64_t seen = 0;
  for (Fault f : all_faults()) {
    const uint64_t b = kernel_fault_bits({f});
    const bool dispatch_fault =
        static_cast<int>(f) < static_cast<int>(Fault::kZ8Log2ExponentCeil) ||
        f == Fault::kZ19Fp32ScaleAsUe8m0;
    EXPECT_EQ(b != 0, !dispatch_fault) << to_string(f);
    EXPECT_EQ(seen & b, 0u);
    seen |= b;
  }
  EXPECT_EQ(kernel_fault_bits({}), 0u);
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
    EXPECT_EQ(layer.last_apply().delta.launches_of(gpu::kernel("gemm_mx_dot_scaled")),
              faulty ? 1u : 0u);
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
    EXPECT_EQ(be.counters().launches_of(gpu::kernel("preshuffle_weight")), faulty ? 1u : 0u);
    EXPECT_EQ(layer.state().weight_layout,
              faulty ? dispatch::WeightLayout::kAiterPreshuffled : dispatch::WeightLayout::kPlain);
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
    EXPECT_EQ(d.launches_of(gpu::kernel("dequant_mx_to_bf16")), faulty ? 1u : 0u);
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

// ---- kernel faults (Z8-Z16) ---------------------------------------------------------------

// quantize_mx on the host backend: fp32 (rows x cols) input, with the kernel faults of `f`.
MxQuantized device_quantize(const std::vector<float>& x, std::size_t rows, std::size_t cols,
                            gpu::QuantConvention conv, const Faults& f) {
  gpu::HostBackend be;
  gpu::QuantizeArgs q;
  q.in = be.make_buffer(std::span<const float>(x), "x");
  q.codes = be.allocate(rows * cols, "codes");
  q.scales = be.allocate(rows * ceil_div(cols, kMxBlock), "scales");
  q.p = {rows, cols, gpu::InputDtype::kFp32, conv};
  q.p.faults = kernel_fault_bits(f);
  be.run({gpu::kernel("quantize_mx"), q});
  return {rows, cols, Format::kE4M3FN, be.download(q.codes), be.download(q.scales)};
}

MxQuantized reference_quantize(const std::vector<float>& x, std::size_t rows, std::size_t cols,
                               const char* convention) {
  return quantize_mx(x, rows, cols, Format::kE4M3FN,
                     require_mx_policy(require_convention(convention)));
}

bool same_quantized(const MxQuantized& a, const MxQuantized& b) {
  return a.data == b.data && a.scales == b.scales;
}

// One 32-block: `amax` at element 0, exact fractions +-amax * {0, 1/4, 1/2, 3/4} elsewhere.
std::vector<float> one_block(float amax) {
  std::vector<float> x(32);
  for (std::size_t i = 1; i < x.size(); ++i) {
    x[i] = amax * 0.25f * static_cast<float>(i % 4) * (i % 3 == 0 ? -1.0f : 1.0f);
  }
  x[0] = amax;
  return x;
}

// Runs one GEMM launch on `be` into a fresh fp32 output.
std::vector<float> launch_gemm(gpu::Backend& be, Kernel k, gpu::GemmArgs g) {
  g.out = be.allocate(g.p.m * g.p.n * sizeof(float), "C");
  be.run({k, g});
  return be.download_as<float>(g.out);
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (bits_of(a[i]) != bits_of(b[i])) return false;
  }
  return true;
}

// Z8 minimal: one block whose amax/448 is 0x1.000002p-126: log2f rounds onto -126, the ceil
// misses by one binade (scale 2^-126 instead of 2^-125).
TEST(DispatchFaults, Z8Log2ExponentCeil) {
  const float y = 0x1.000002p-126f;
  ASSERT_TRUE(log2f_rounds_to_floor(y));
  float amax = y * 448.0f;
  for (int i = 0; i < 64 && amax * (1.0f / 448.0f) != y; ++i) {
    amax = std::nextafter(amax, amax * (1.0f / 448.0f) < y ? 1.0f : 0.0f);
  }
  ASSERT_EQ(bits_of(amax * (1.0f / 448.0f)), bits_of(y));
  const std::vector<float> x = one_block(amax);
  const MxQuantized want = reference_quantize(x, 1, 32, "torchao_rceil");
  ASSERT_EQ(want.scales[0], 2);  // 2^-125
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    const Faults f = faulty ? Faults{Fault::kZ8Log2ExponentCeil} : Faults{};
    const MxQuantized got = device_quantize(x, 1, 32, gpu::QuantConvention::kTorchaoRceil, f);
    EXPECT_EQ(same_quantized(want, got), !faulty);
    EXPECT_EQ(got.scales[0], faulty ? 1 : 2);
  }
}

// Z9 minimal: K = 128 + 32, M = N = 1: the blockscale GEMM drops the partial last K block.
TEST(DispatchFaults, Z9TrailingPartialKBlockDropped) {
  const LinearConfig c = config(Scheme::kFp8Block, 1, 160, WeightScaleDtype::kFp32);
  const Activation x = make_activation(ints(160, 12), 1, 160);
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    gpu::HostBackend be;
    const BlockScaledFp8 kernel;
    LinearLayer layer(be, c, kernel);
    if (faulty) layer.set_faults({Fault::kZ9DropTrailingKBlock});
    const QuantizedWeight w = layer.load_float_weights(ints(160, 11));
    layer.process_weights_after_loading();
    EXPECT_EQ(same(reference(c, w, x), layer.apply(x).out), !faulty);
  }
}

// MX operands of an M x N x K GEMM whose every 32-block has its own power-of-two scale
// (integers times 2^(row + block)), so a scale read from the wrong slot changes the result.
MxQuantized fingerprint_mx(std::size_t rows, std::size_t k, int seed) {
  std::vector<float> v = ints(rows * k, seed);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = (v[i] == 0.0f ? 1.0f : v[i]) * std::ldexp(1.0f, static_cast<int>(i / k + (i % k) / 32));
  }
  return reference_quantize(v, rows, k, "ocp_mx");
}

// gemm_mx_dequant with swizzled scales (padding filled with `pad`) and the faults of `f`.
std::vector<float> swizzled_mx_gemm(const MxQuantized& a, const MxQuantized& b, uint8_t pad,
                                    const Faults& f) {
  gpu::HostBackend be;
  const std::size_t kb = a.scale_cols();
  const auto sa = pack_scales<uint8_t>(ScaleLayout::kNvSwizzle128x4, a.rows, kb, a.scales, pad);
  const auto sb = pack_scales<uint8_t>(ScaleLayout::kNvSwizzle128x4, b.rows, kb, b.scales, pad);
  gpu::GemmArgs g;
  g.a = be.make_buffer(std::span<const uint8_t>(a.data), "A");
  g.a_scale = be.make_buffer(std::span<const uint8_t>(sa), "As");
  g.b = be.make_buffer(std::span<const uint8_t>(b.data), "B");
  g.b_scale = be.make_buffer(std::span<const uint8_t>(sb), "Bs");
  g.p = {a.rows, b.rows, a.cols, gpu::OutDtype::kFp32};
  g.p.mx_scales_swizzled = true;
  g.p.faults = kernel_fault_bits(f);
  return launch_gemm(be, gpu::kernel("gemm_mx_dequant"), g);
}

// Z10 minimal: M = N = 1, K = 32 (one scale column, padded to 4 by the swizzle): the poisoned
// padding (0xFF, NaN) reaches the sum; a correct kernel gives the same output for any padding.
TEST(DispatchFaults, Z10ScalePaddingReadIntoResult) {
  const MxQuantized a = fingerprint_mx(1, 32, 13);
  const MxQuantized b = fingerprint_mx(1, 32, 14);
  const GemmOutput want = exact_gemm(mx_gemm_problem(a, b, E8m0Decode::kOcp), OutputFormat::kFp32);
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    const Faults f = faulty ? Faults{Fault::kZ10ReadScalePadding} : Faults{};
    const std::vector<float> poisoned = swizzled_mx_gemm(a, b, 0xFF, f);
    EXPECT_EQ(same_bits(want.fp32, poisoned), !faulty);
    EXPECT_EQ(std::isnan(poisoned[0]), faulty);
    EXPECT_EQ(same_bits(swizzled_mx_gemm(a, b, 0x00, f), poisoned), !faulty);  // I6
  }
}

// Z11 minimal: one block with amax 300 > 240: the element is clamped to the FNUZ max.
TEST(DispatchFaults, Z11WrongFp8Max) {
  const std::vector<float> x = one_block(300.0f);
  const MxQuantized want = reference_quantize(x, 1, 32, "ocp_mx");
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    const Faults f = faulty ? Faults{Fault::kZ11WrongFp8Max} : Faults{};
    const MxQuantized got = device_quantize(x, 1, 32, gpu::QuantConvention::kOcpMx, f);
    EXPECT_EQ(same_quantized(want, got), !faulty);
    EXPECT_EQ(decode(Format::kE4M3FN, got.data[0]), faulty ? 240.0f : 288.0f);
  }
}

// Z12 minimal: M = 3, K = 256: TMA-aligned column-major As (stride align4(3) = 4) read with
// stride 3 by the bpreshuffle GEMM (N = 16, the preshuffle's smallest N).
TEST(DispatchFaults, Z12ColumnMajorScaleStrideIgnored) {
  const LinearConfig c = config(Scheme::kFp8Block, 16, 256, WeightScaleDtype::kFp32);
  std::vector<float> xs(3 * 256);
  for (std::size_t i = 0; i < xs.size(); ++i)
    xs[i] = 0.25f * static_cast<float>(1 + i % 13 + 9 * (i / 128));
  const Activation x = make_activation(xs, 3, 256);
  const QuantizedActivation q = quantize_activation_1x128(x);
  const std::vector<float> as_tma =
      pack_scales<float>(ScaleLayout::kTmaColMajor, 3, 2, q.scales, 0.0f);
  ASSERT_EQ(as_tma.size(), 8u);
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    gpu::HostBackend be;
    const PreshuffledBlockScaledFp8 kernel;
    LinearLayer layer(be, c, kernel);
    const QuantizedWeight w = layer.load_float_weights(ints(16 * 256, 15));
    ASSERT_TRUE(layer.model_preshuffle());
    gpu::GemmArgs g;
    g.a = be.make_buffer(std::span<const uint8_t>(q.codes), "A");
    g.a_scale = be.make_buffer(std::span<const float>(as_tma), "As_tma");
    g.b = layer.state().weight;
    g.b_scale = layer.state().weight_scale;
    g.p = {3, 16, 256, gpu::OutDtype::kFp32};
    g.p.as_ld = 4;
    g.p.faults = kernel_fault_bits(faulty ? Faults{Fault::kZ12IgnoreAsStride} : Faults{});
    const std::vector<float> got = launch_gemm(be, gpu::kernel("gemm_blockscale_bpreshuffle"), g);
    EXPECT_EQ(same_bits(reference(c, w, x).fp32, got), !faulty);
  }
}

// Z13 minimal: M = 2, K = 64 (N = 1): 128x4-swizzled scales read as row-major (row 1 of A reads
// swizzle padding).
TEST(DispatchFaults, Z13SwizzledScalesReadLinearly) {
  const MxQuantized a = fingerprint_mx(2, 64, 16);
  const MxQuantized b = fingerprint_mx(1, 64, 17);
  const GemmOutput want = exact_gemm(mx_gemm_problem(a, b, E8m0Decode::kOcp), OutputFormat::kFp32);
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    const Faults f = faulty ? Faults{Fault::kZ13SwizzleReadLinear} : Faults{};
    EXPECT_EQ(same_bits(want.fp32, swizzled_mx_gemm(a, b, 0x7F, f)), !faulty);
  }
}

// Z14 minimal: one block with amax 300 (amax/448 not a power of two): the payload is scaled by
// 448/300 while the stored scale is 2^0.
TEST(DispatchFaults, Z14ScaleRoundedAfterQuantizing) {
  const std::vector<float> x = one_block(300.0f);
  const MxQuantized want = reference_quantize(x, 1, 32, "torchao_rceil");
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    const Faults f = faulty ? Faults{Fault::kZ14UnroundedScalePayload} : Faults{};
    const MxQuantized got = device_quantize(x, 1, 32, gpu::QuantConvention::kTorchaoRceil, f);
    EXPECT_EQ(got.scales, want.scales);  // the scale is right: only the payload is not
    EXPECT_EQ(same_quantized(want, got), !faulty);
  }
}

// Z15 minimal: one block with amax 511.5, just below the bf16 rounding boundary 512: rounded to
// bf16 first, the FLOOR scale moves up one binade.
TEST(DispatchFaults, Z15Bf16DoubleRoundingOfAmax) {
  const std::vector<float> x = one_block(511.5f);
  const MxQuantized want = reference_quantize(x, 1, 32, "ocp_mx");
  ASSERT_EQ(want.scales[0], 127);
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    const Faults f = faulty ? Faults{Fault::kZ15Bf16AmaxDoubleRound} : Faults{};
    const MxQuantized got = device_quantize(x, 1, 32, gpu::QuantConvention::kOcpMx, f);
    EXPECT_EQ(same_quantized(want, got), !faulty);
    EXPECT_EQ(got.scales[0], faulty ? 128 : 127);
  }
}

// Z16 minimal: N = 192 under TP = 2, rank 1 (local N = 96, rows 96..191, M = 1, K = 128): local
// rows 32..95 are global block 1 but the faulty kernel takes block 32/128 = 0.
TEST(DispatchFaults, Z16ShardedWeightBlockIndex) {
  const LinearConfig global = config(Scheme::kFp8Block, 192, 128, WeightScaleDtype::kFp32);
  std::vector<float> wf = ints(192 * 128, 18);
  for (std::size_t i = 128 * 128; i < wf.size(); ++i) wf[i] *= 4.0f;  // block 1: its own scale
  const Activation x = make_activation(ints(128, 19), 1, 128);
  for (bool faulty : {false, true}) {
    SCOPED_TRACE(faulty ? "fault" : "clean");
    gpu::HostBackend be;
    const BlockScaledFp8 kernel;
    LinearLayer whole(be, global, kernel);
    const QuantizedWeight w = whole.load_float_weights(wf);
    const GemmOutput want = reference(global, w, x);
    const QuantizedActivation q = quantize_activation_1x128(x);
    gpu::GemmArgs g;
    g.a = be.make_buffer(std::span<const uint8_t>(q.codes), "A");
    g.a_scale = be.make_buffer(std::span<const float>(q.scales), "As");
    g.b = be.make_buffer(std::span<const uint8_t>(w.data.data() + 96 * 128, 96 * 128), "B_rank1");
    // Blocks 0 and 1 (both touched by rows 96..191): the rank's two fp32 scales.
    g.b_scale = be.make_buffer(std::span<const uint8_t>(w.scales.data(), 8), "Bs_rank1");
    g.p = {1, 96, 128, gpu::OutDtype::kFp32};
    g.p.n_offset = 96;
    g.p.faults = kernel_fault_bits(faulty ? Faults{Fault::kZ16ShardBlockIndex} : Faults{});
    const std::vector<float> got = launch_gemm(be, gpu::kernel("gemm_blockscale"), g);
    EXPECT_EQ(same_bits(std::span<const float>(want.fp32).subspan(96), got), !faulty);
  }
}

// Faults must be selectable at run time without recompiling (MXGATE_FAULTS), off when unset, and
// a misspelled fault must be an error naming it, never silently ignored.
TEST(FaultsEnvironment, ParsedFromMxgateFaults) {
  ::unsetenv(kFaultsEnv);
  EXPECT_TRUE(faults_from_environment().none());
  ::setenv(kFaultsEnv, "z1_no_per_step_fallback,z9_drop_trailing_k_block", 1);
  const Faults f = faults_from_environment();
  EXPECT_TRUE(f.has(Fault::kZ1NoPerStepFallback));
  EXPECT_TRUE(f.has(Fault::kZ9DropTrailingKBlock));
  EXPECT_FALSE(f.has(Fault::kZ3NoPreshuffleGuard));
  ::setenv(kFaultsEnv, "z99_typo", 1);
  try {
    faults_from_environment();
    ADD_FAILURE() << "unknown fault accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("MXGATE_FAULTS: unknown fault 'z99_typo'"),
              std::string::npos)
        << e.what();
  }
  ::unsetenv(kFaultsEnv);
}

// `mxgate gate` certifies the system without planted bugs: with a fault on it must refuse
// (exit 2, naming the variable) rather than run and report a pass or a failure.
TEST(FaultsEnvironment, GateRefusesToRunWithFaultsOn) {
  const std::string cmd = std::string("MXGATE_FAULTS=z3_no_preshuffle_guard ") + MXGATE_CLI +
                          " gate --only measured 2>&1";
  const mxgate::test_support::ShellResult r = mxgate::test_support::run_shell(cmd);
  const std::string& out = r.out;
  EXPECT_EQ(r.exit_code, 2) << out;
  EXPECT_NE(out.find("refusing to run with faults on (MXGATE_FAULTS=z3_no_preshuffle_guard)"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace mxgate::dispatch
