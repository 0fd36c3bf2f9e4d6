// Covers the zoo classes Z17-Z30 (docs/bug_classes.md §2, dispatch/faults.h) one by one: each
// fault's minimal case built by hand and run on the host backend clean and with the fault, the
// expected bytes beside it (from the formats' definitions, docs/formats.md §1.1, §2, §5.2), so
// the fault visibly changes what the kernel (or dispatch) does and a correct kernel gives the
// spec's answer. Z29 is shown on the element body alone (the host never runs 2^31 elements).
// Does not cover: finding the faults from generated cases (tests/property_zoo.cpp), GPU backends.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "common/blocks.h"
#include "dispatch/faults.h"
#include "dispatch/layer.h"
#include "gpu/host/host_backend.h"
#include "gpu/kernels/dequant_mx.h"
#include "reference/format.h"

namespace mxgate::dispatch {
namespace {

using gpu::Kernel;

uint32_t bits(Fault f) { return kernel_fault_bits({f}); }

std::vector<float> gemm(gpu::Backend& be, Kernel k, gpu::GemmArgs g) {
  g.out = be.allocate(g.p.m * g.p.n * sizeof(float), "C");
  be.run({k, g});
  return be.download_as<float>(g.out);
}

template <class T>
gpu::BufferId buffer(gpu::Backend& be, const std::vector<T>& v, const char* label) {
  return be.make_buffer(std::span<const T>(v), label);
}

// E4M3FN 1.0 is 0x38 (bias 7: exponent field 7); fp32 scale blocks of the block GEMMs.
constexpr uint8_t kOne = 0x38;

// A block GEMM of all-ones codes, M x N x K, with A scales `as` (M x Kb row-major or Kb x M
// column-major) and B scales `bs`.
std::vector<float> block_gemm(Kernel k, std::size_t m, std::size_t n, std::size_t kk,
                              const std::vector<float>& as, const std::vector<float>& bs,
                              uint32_t faults) {
  gpu::HostBackend be;
  gpu::GemmArgs g;
  g.a = buffer(be, std::vector<uint8_t>(m * kk, kOne), "A");
  g.b = buffer(be, std::vector<uint8_t>(n * kk, kOne), "B");  // all ones: any layout
  g.a_scale = buffer(be, as, "As");
  g.b_scale = buffer(be, bs, "Bs");
  g.p = {m, n, kk, gpu::OutDtype::kFp32};
  g.p.faults = faults;
  return gemm(be, k, g);
}

// Z17: bpreshuffle, N = 16, K = 256 (two blocks), As column-major {1, 2} per block, Bs {1, 4}:
// 128 x (1 x 1) + 128 x (2 x 4) = 1152; slice 0's scales for both slices: 128 + 128 = 256.
TEST(ZooFaultsDetect, Z17SplitKSlicesUseSliceZerosScales) {
  for (bool faulty : {false, true}) {
    const auto c = block_gemm(gpu::kernel("gemm_blockscale_bpreshuffle"), 1, 16, 256, {1, 2},
                              {1, 4}, faulty ? bits(Fault::kZ17SplitKSlice0Scales) : 0);
    EXPECT_EQ(c[0], faulty ? 256.0f : 1152.0f) << (faulty ? "fault" : "clean");
  }
}

// Z18: M = 129, N = 1, K = 32: row 128 (wave 1) has A scale 4, row 0 (wave 0) 2, B scale 1:
// 32 x 4 x 1 = 128; the previous wave's A scale once more: 32 x 4 x (1 x 2) = 256.
TEST(ZooFaultsDetect, Z18NextWaveReappliesThePreviousWavesAScale) {
  std::vector<float> as(129, 2.0f);
  as[128] = 4.0f;
  for (bool faulty : {false, true}) {
    const auto c = block_gemm(gpu::kernel("gemm_blockscale"), 129, 1, 32, as, {1.0f},
                              faulty ? bits(Fault::kZ18WaveReappliesAScale) : 0);
    EXPECT_EQ(c[0], 64.0f);
    EXPECT_EQ(c[128], faulty ? 256.0f : 128.0f) << (faulty ? "fault" : "clean");
  }
}

// Z19: a BlockScaledFp8 layer with fp32 weight scales: processing does nothing for them; with
// the fault it launches the e8m0 upcast on their bytes.
TEST(ZooFaultsDetect, Z19Fp32ScalesReadAsUe8m0) {
  LinearConfig c;
  c.platform = Platform::kHost;
  c.scheme = Scheme::kFp8Block;
  c.n = 1;
  c.k = 32;
  c.weight_scale = WeightScaleDtype::kFp32;
  for (bool faulty : {false, true}) {
    gpu::HostBackend be;
    const BlockScaledFp8 kernel;
    LinearLayer layer(be, c, kernel);
    if (faulty) layer.set_faults({Fault::kZ19Fp32ScaleAsUe8m0});
    layer.load_float_weights(std::vector<float>(32, 3.0f));
    const gpu::Counters before = be.counters();
    layer.process_weights_after_loading();
    EXPECT_EQ(be.counters().since(before).launches_of(gpu::kernel("upcast_e8m0")),
              faulty ? 1u : 0u);
  }
}

// Z20: gemm_blockscale, K = 32, A scale 1.5 (0x3FC00000), B scale 1: 32 x 1.5 = 48; the scale
// reduced to its exponent (1.0): 32.
TEST(ZooFaultsDetect, Z20ScaleTruncatedToItsExponent) {
  for (bool faulty : {false, true}) {
    const auto c = block_gemm(gpu::kernel("gemm_blockscale"), 1, 1, 32, {1.5f}, {1.0f},
                              faulty ? bits(Fault::kZ20TruncateScaleExponent) : 0);
    EXPECT_EQ(c[0], faulty ? 32.0f : 48.0f);
  }
}

// Z21: a zero 1x32 group: amax clamped to 1e-4, sf = ceil_to_ue8m0(1e-4 / 448) = 2^-22
// (1e-4 / 448 = 2.23e-7 lies in [2^-23, 2^-22)); the clamp after rounding gives 1e-4 / 448.
TEST(ZooFaultsDetect, Z21MinClampAfterPowerOfTwoRounding) {
  for (bool faulty : {false, true}) {
    gpu::HostBackend be;
    gpu::QuantizeBlockArgs q;
    q.in = buffer(be, std::vector<float>(32, 0.0f), "x");
    q.codes = be.allocate(32, "codes");
    q.scales = be.allocate(4, "scales");
    q.p = {1, 32, gpu::InputDtype::kFp32};
    q.p.faults = faulty ? bits(Fault::kZ21MinClampAfterPow2) : 0;
    be.run({gpu::kernel("quantize_act1x128_ue8m0"), q});
    const float sf = be.download_as<float>(q.scales)[0];
    EXPECT_EQ(sf, faulty ? 1e-4f / 448.0f : std::ldexp(1.0f, -22)) << (faulty ? "fault" : "clean");
  }
}

// Z22: gemm_blockscale_ue8m0, K = 256 (two scales in one word), A scales {1.5, 1.5}: the UE8M0
// value of 1.5 is 1.0 (its exponent byte 0x7F), 2 x 128 = 256; packed by shift-and-OR the
// mantissa of the second scale leaks into byte 0 (0x7F | 0xFF = 0xFF: NaN).
TEST(ZooFaultsDetect, Z22MantissaBitsLeakIntoThePackedUe8m0Word) {
  for (bool faulty : {false, true}) {
    const auto c = block_gemm(gpu::kernel("gemm_blockscale_ue8m0"), 1, 1, 256, {1.5f, 1.5f},
                              {1.0f, 1.0f}, faulty ? bits(Fault::kZ22Ue8m0PackLeak) : 0);
    if (faulty) {
      EXPECT_TRUE(std::isnan(c[0])) << c[0];
    } else {
      EXPECT_EQ(c[0], 256.0f);
    }
  }
}

// One upcast_e8m0 launch of `bytes` with the faults `f`.
std::vector<float> upcast(const std::vector<uint8_t>& bytes, uint32_t f) {
  gpu::HostBackend be;
  gpu::UpcastArgs u;
  u.in = buffer(be, bytes, "in");
  u.out = be.allocate(bytes.size() * 4, "out");
  u.p = {bytes.size(), gpu::E8m0Upcast::kCorrect};
  u.p.faults = f;
  be.run({gpu::kernel("upcast_e8m0"), u});
  return be.download_as<float>(u.out);
}

// Z23: byte 0x86 is 2^(134 - 127) = 128.0 and 0xFF is NaN (OCP MX); tested on the decoded value,
// 128.0 becomes NaN and 0xFF +Inf.
TEST(ZooFaultsDetect, Z23NanSentinelTestedOnTheDecodedValue) {
  const auto clean = upcast({0x86, 0xFF}, 0);
  EXPECT_EQ(clean[0], 128.0f);
  EXPECT_TRUE(std::isnan(clean[1]));
  const auto faulty = upcast({0x86, 0xFF}, bits(Fault::kZ23E8m0NanOnValue));
  EXPECT_TRUE(std::isnan(faulty[0]));
  EXPECT_EQ(faulty[1], std::numeric_limits<float>::infinity());
}

// One dequant_mx_to_bf16 launch of a 1 x 32 row with scale byte 127 (1.0).
std::vector<uint16_t> dequant(gpu::Fp8Format f, const std::vector<uint8_t>& codes,
                              uint32_t faults) {
  gpu::HostBackend be;
  gpu::DequantArgs d;
  d.codes = buffer(be, codes, "codes");
  d.scales = buffer(be, std::vector<uint8_t>(1, 127), "scales");
  d.out = be.allocate(codes.size() * 2, "out");
  d.p = {1, codes.size(), gpu::E8m0Upcast::kCorrect};
  d.p.element = f;
  d.p.faults = faults;
  be.run({gpu::kernel("dequant_mx_to_bf16"), d});
  return be.download_as<uint16_t>(d.out);
}

bool bf16_nan(uint16_t b) { return (b & 0x7FFFu) > 0x7F80u; }

// Z24: 0x80 is the only NaN of E4M3FNUZ and E5M2FNUZ; the faulty upcast gives -0.0 (bf16 0x8000).
TEST(ZooFaultsDetect, Z24FnuzNanDecodedAsNegativeZero) {
  for (gpu::Fp8Format f : {gpu::Fp8Format::kE4m3fnuz, gpu::Fp8Format::kE5m2fnuz}) {
    std::vector<uint8_t> codes(32, 0x40);
    codes[5] = 0x80;
    EXPECT_TRUE(bf16_nan(dequant(f, codes, 0)[5]));
    EXPECT_EQ(dequant(f, codes, bits(Fault::kZ24FnuzNanAsNegZero))[5], 0x8000u);
  }
}

// Z25: E4M3FN 0x7F / 0xFF are NaN; read as normal numbers they are +-1.875 x 2^8 = +-480 (bf16
// 0x43F0 / 0xC3F0).
TEST(ZooFaultsDetect, Z25E4m3NanDecodedAs480) {
  std::vector<uint8_t> codes(32, kOne);
  codes[0] = 0x7F;
  codes[1] = 0xFF;
  const auto clean = dequant(gpu::Fp8Format::kE4m3fn, codes, 0);
  EXPECT_TRUE(bf16_nan(clean[0]) && bf16_nan(clean[1]));
  EXPECT_EQ(clean[2], 0x3F80u);  // 1.0
  const auto faulty = dequant(gpu::Fp8Format::kE4m3fn, codes, bits(Fault::kZ25E4m3NanAs480));
  EXPECT_EQ(faulty[0], 0x43F0u);
  EXPECT_EQ(faulty[1], 0xC3F0u);
}

// Z26: E5M2 0x7C is +Inf (exponent 31, mantissa 0); read as a normal binade it is 2^16 = 65536
// (bf16 0x4780).
TEST(ZooFaultsDetect, Z26E5m2InfinityWidenedToAFiniteNumber) {
  std::vector<uint8_t> codes(32, 0x3C);  // 1.0
  codes[3] = 0x7C;
  EXPECT_EQ(dequant(gpu::Fp8Format::kE5m2, codes, 0)[3], 0x7F80u);  // +Inf
  EXPECT_EQ(dequant(gpu::Fp8Format::kE5m2, codes, bits(Fault::kZ26E5m2InfAsFinite))[3], 0x4780u);
}

// Z27: dot_scaled, M = N = 1, K = 128, ones, A scales 127 (1.0), B scales absent: 128 at the unit
// scale; the default byte 1 (2^-126) gives 128 x 2^-126 = 2^-119.
TEST(ZooFaultsDetect, Z27AbsentScaleIsTheUnitScale) {
  for (bool faulty : {false, true}) {
    gpu::HostBackend be;
    gpu::GemmArgs g;
    g.a = buffer(be, std::vector<uint8_t>(128, kOne), "A");
    g.b = buffer(be, std::vector<uint8_t>(128, kOne), "B");
    g.a_scale = buffer(be, std::vector<uint8_t>(4, 127), "As");
    g.p = {1, 1, 128, gpu::OutDtype::kFp32};
    g.p.faults = faulty ? bits(Fault::kZ27DefaultScaleByteOne) : 0;
    EXPECT_EQ(gemm(be, gpu::kernel("gemm_mx_dot_scaled"), g)[0],
              faulty ? std::ldexp(1.0f, -119) : 128.0f);
  }
}

// Z28: gemm_mx_dequant, M = N = 1, K = 32, scale buffers of one byte each followed by 0xFF slack
// (what the allocator left): the K-tail tile's unmasked scale loads read the slack (NaN).
TEST(ZooFaultsDetect, Z28KTailScaleLoadReadsPastTheTensor) {
  for (bool faulty : {false, true}) {
    gpu::HostBackend be;
    gpu::GemmArgs g;
    g.a = buffer(be, std::vector<uint8_t>(32, kOne), "A");
    g.b = buffer(be, std::vector<uint8_t>(32, kOne), "B");
    g.a_scale = buffer(be, std::vector<uint8_t>{127, 0xFF, 0xFF, 0xFF}, "As+slack");
    g.b_scale = buffer(be, std::vector<uint8_t>{127, 0xFF, 0xFF, 0xFF}, "Bs+slack");
    g.p = {1, 1, 32, gpu::OutDtype::kFp32};
    g.p.faults = faulty ? bits(Fault::kZ28KTailScaleUnmasked) : 0;
    const float c = gemm(be, gpu::kernel("gemm_mx_dequant"), g)[0];
    if (faulty) {
      EXPECT_TRUE(std::isnan(c)) << c;
    } else {
      EXPECT_EQ(c, 32.0f);
    }
  }
}

// Z29 on the element body (the device kernel's, gpu/kernels/dequant_mx.h): element 2^31 + 5 of
// a 2^31 + 32-element row lands on element 5 with 31-bit offsets; clean, it is its own element.
// Run on buffers of 64 elements: only the element the wrapped index names is touched.
TEST(ZooFaultsDetect, Z29ElementOffsetsWrapAt2To31) {
  std::vector<uint8_t> codes(64, kOne), scales(2, 127);
  std::vector<uint16_t> out(64, 0xFFFFu);
  gpu::DequantParams p{1, (uint64_t{1} << 31) + 32, gpu::E8m0Upcast::kCorrect};
  p.faults = bits(Fault::kZ29Offset32Bit);
  // With the fault the body reads and writes index (2^31 + 5) & 0x7FFFFFFF = 5, in bounds here.
  gpu::dequant_mx_element(p, codes.data(), scales.data(), out.data(), (uint64_t{1} << 31) + 5);
  EXPECT_EQ(out[5], 0x3F80u);  // element 5 written: the offset wrapped
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i != 5) {
      EXPECT_EQ(out[i], 0xFFFFu) << i;
    }
  }
}

// Z30: gemm_bf16, K = 3: 1, 2^-24, 2^-24 summed upwards is 1 (each small term rounds away),
// downwards 2^-23 + 1 = 1 + 2^-23; every other launch walks downwards, so two launches differ.
TEST(ZooFaultsDetect, Z30TheSameInputsTwiceGiveOtherBits) {
  const std::vector<uint16_t> a = {0x3F80, 0x3380, 0x3380};  // 1, 2^-24, 2^-24 (bf16)
  const std::vector<uint16_t> b = {0x3F80, 0x3F80, 0x3F80};
  for (bool faulty : {false, true}) {
    gpu::HostBackend be;
    gpu::GemmArgs g;
    g.a = buffer(be, a, "A");
    g.b = buffer(be, b, "B");
    g.p = {1, 1, 3, gpu::OutDtype::kFp32};
    g.p.faults = faulty ? bits(Fault::kZ30LaunchCounterOrder) : 0;
    const float first = gemm(be, gpu::kernel("gemm_bf16"), g)[0];
    const float second = gemm(be, gpu::kernel("gemm_bf16"), g)[0];
    EXPECT_EQ(first == second, !faulty) << first << " " << second;
    if (!faulty) {
      EXPECT_EQ(first, 1.0f);
    }
  }
}

}  // namespace
}  // namespace mxgate::dispatch
