// Covers the zoo classes Z17-Z30, Z38, Z40, Z43, Z46, Z47 and Z49 (docs/bug_classes.md §2,
// dispatch/faults.h) one by one: each fault's minimal case built by hand and run on the host
// backend clean and with the fault. The
// expected output is written from the formats' definitions (docs/formats.md §1.1, §2, §5.2), the
// arithmetic beside it; the gate's bit-exact verdict (reference/verdict.h) must pass clean and,
// with the fault, fail at the element the mechanism predicts (row, column, count). Z19 is a
// dispatch fault: also the launch it adds. Z29 is shown on the element body alone (the host
// never runs 2^31 elements; the full shape is the `gpu` label's and the gate's on a device).
// Also: determinism.run_twice (Z30's property) reaches every built-in op, FP4 ones included.
// Does not cover: finding the faults from generated cases (tests/property_zoo.cpp), GPU backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "common/blocks.h"
#include "dispatch/faults.h"
#include "dispatch/layer.h"
#include "gpu/host/host_backend.h"
#include "gpu/kernels/dequant_mx.h"
#include "impl/builtin.h"
#include "properties/property.h"
#include "reference/format.h"
#include "reference/verdict.h"

namespace mxgate::dispatch {
namespace {

using gpu::Kernel;

uint64_t bits(Fault f) { return kernel_fault_bits({f}); }

std::vector<float> gemm(gpu::Backend& be, Kernel k, gpu::GemmArgs g) {
  g.out = be.allocate(g.p.m * g.p.n * sizeof(float), "C");
  be.run({k, g});
  return be.download_as<float>(g.out);
}

template <class T>
gpu::BufferId buffer(gpu::Backend& be, const std::vector<T>& v, const char* label) {
  return be.make_buffer(std::span<const T>(v), label);
}

// The gate's verdict of `got` (rows x cols) against the spec's `want`: clean it must pass; with
// the fault it must fail with `bad` differing elements, the first at (row, col).
struct Where {
  std::size_t bad, row, col;
};
void expect_verdict(const BitExactVerdict& v, bool faulty, Where w) {
  if (!faulty) {
    EXPECT_TRUE(v.ok()) << "clean: " << v.summary();
    return;
  }
  ASSERT_FALSE(v.ok()) << "the fault changed nothing";
  EXPECT_EQ(v.mismatches, w.bad) << v.summary();
  ASSERT_TRUE(v.first.has_value());
  EXPECT_EQ(v.first->row, w.row) << v.summary();
  EXPECT_EQ(v.first->col, w.col) << v.summary();
}
void expect_fp32(std::size_t rows, std::size_t cols, const std::vector<float>& want,
                 const std::vector<float>& got, bool faulty, Where w) {
  expect_verdict(compare_fp32(rows, cols, want, got), faulty, w);
}
void expect_bf16(std::size_t rows, std::size_t cols, const std::vector<uint16_t>& want,
                 const std::vector<uint16_t>& got, bool faulty, Where w) {
  expect_verdict(compare_bf16(rows, cols, want, got), faulty, w);
}

// E4M3FN 1.0 is 0x38 (bias 7: exponent field 7); fp32 scale blocks of the block GEMMs.
constexpr uint8_t kOne = 0x38;

// A block GEMM of all-ones codes, M x N x K, with A scales `as` (M x Kb row-major or Kb x M
// column-major) and B scales `bs`.
std::vector<float> block_gemm(Kernel k, std::size_t m, std::size_t n, std::size_t kk,
                              const std::vector<float>& as, const std::vector<float>& bs,
                              uint64_t faults) {
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
// 128 x (1 x 1) + 128 x (2 x 4) = 1152 in every column; slice 0's scales for both slices:
// 128 + 128 = 256. All 16 columns share the one B block, so all 16 differ, the first (0,0).
TEST(ZooFaultsDetect, Z17SplitKSlicesUseSliceZerosScales) {
  for (bool faulty : {false, true}) {
    const auto c = block_gemm(gpu::kernel("gemm_blockscale_bpreshuffle"), 1, 16, 256, {1, 2},
                              {1, 4}, faulty ? bits(Fault::kZ17SplitKSlice0Scales) : 0);
    expect_fp32(1, 16, std::vector<float>(16, 1152.0f), c, faulty, {16, 0, 0});
    if (faulty) {
      EXPECT_EQ(c[0], 256.0f);
    }
  }
}

// Z18: M = 129, N = 1, K = 32: rows 0-127 (wave 0) have A scale 2, row 128 (wave 1) 4, B scale
// 1: 32 x 2 = 64 and 32 x 4 = 128; the previous wave's A scale once more on row 128:
// 32 x 4 x 2 = 256. Only row 128 differs.
TEST(ZooFaultsDetect, Z18NextWaveReappliesThePreviousWavesAScale) {
  std::vector<float> as(129, 2.0f);
  as[128] = 4.0f;
  std::vector<float> want(129, 64.0f);
  want[128] = 128.0f;
  for (bool faulty : {false, true}) {
    const auto c = block_gemm(gpu::kernel("gemm_blockscale"), 129, 1, 32, as, {1.0f},
                              faulty ? bits(Fault::kZ18WaveReappliesAScale) : 0);
    expect_fp32(129, 1, want, c, faulty, {1, 128, 0});
    if (faulty) {
      EXPECT_EQ(c[128], 256.0f);
    }
  }
}

// Z19: a BlockScaledFp8 layer, N = 2, K = 32, weights 448 with fp32 weight scales: the block
// scale is 448 / 448 = 1.0 and every code 448 (0x7E). Processing launches nothing for fp32
// scales; with the fault it runs the e8m0 upcast on their bytes (1.0f = 0x3F800000: its first
// byte 0x00 reads as 2^-127). Apply on an activation of 448s (act scale 1.0, codes 448):
// 32 x 448 x 448 = 6422528 in both columns; the wrong weight scale changes both, first (0,0).
TEST(ZooFaultsDetect, Z19Fp32ScalesReadAsUe8m0) {
  LinearConfig c;
  c.platform = Platform::kHost;
  c.scheme = Scheme::kFp8Block;
  c.n = 2;
  c.k = 32;
  c.weight_scale = WeightScaleDtype::kFp32;
  for (bool faulty : {false, true}) {
    gpu::HostBackend be;
    const BlockScaledFp8 kernel;
    LinearLayer layer(be, c, kernel);
    if (faulty) layer.set_faults({Fault::kZ19Fp32ScaleAsUe8m0});
    layer.load_float_weights(std::vector<float>(64, 448.0f));
    const gpu::Counters before = be.counters();
    layer.process_weights_after_loading();
    EXPECT_EQ(be.counters().since(before).launches_of(gpu::kernel("upcast_e8m0")),
              faulty ? 1u : 0u);
    const ApplyResult r = layer.apply(make_activation(std::vector<float>(32, 448.0f), 1, 32));
    expect_fp32(1, 2, std::vector<float>(2, 6422528.0f), r.out.fp32, faulty, {2, 0, 0});
  }
}

// Z20: gemm_blockscale, M = 2, K = 32, A scales {1.0, 1.5 (0x3FC00000)}, B scale 1: rows
// 32 x 1 = 32 and 32 x 1.5 = 48; reduced to its exponent 1.5 becomes 1.0 and row 1 gives 32.
// Row 0's scale has no mantissa: only (1,0) differs.
TEST(ZooFaultsDetect, Z20ScaleTruncatedToItsExponent) {
  for (bool faulty : {false, true}) {
    const auto c = block_gemm(gpu::kernel("gemm_blockscale"), 2, 1, 32, {1.0f, 1.5f}, {1.0f},
                              faulty ? bits(Fault::kZ20TruncateScaleExponent) : 0);
    expect_fp32(2, 1, {32.0f, 48.0f}, c, faulty, {1, 1, 0});
    if (faulty) {
      EXPECT_EQ(c[1], 32.0f);
    }
  }
}

// Z21: two rows of one 1x128 group (K = 32): row 0 all 448 (amax / 448 = 1.0: UE8M0 1.0, the
// clamp never bites), row 1 zero: amax clamped to 1e-4, sf = ceil_to_ue8m0(1e-4 / 448) = 2^-22
// (1e-4 / 448 = 2.23e-7 lies in [2^-23, 2^-22)); the clamp after rounding leaves 1e-4 / 448, not
// a power of two. Only row 1's scale differs.
TEST(ZooFaultsDetect, Z21MinClampAfterPowerOfTwoRounding) {
  std::vector<float> x(64, 0.0f);
  std::fill(x.begin(), x.begin() + 32, 448.0f);
  for (bool faulty : {false, true}) {
    gpu::HostBackend be;
    gpu::QuantizeBlockArgs q;
    q.in = buffer(be, x, "x");
    q.codes = be.allocate(64, "codes");
    q.scales = be.allocate(8, "scales");
    q.p = {2, 32, gpu::InputDtype::kFp32};
    q.p.faults = faulty ? bits(Fault::kZ21MinClampAfterPow2) : 0;
    be.run({gpu::kernel("quantize_act1x128_ue8m0"), q});
    const auto sf = be.download_as<float>(q.scales);
    expect_fp32(2, 1, {1.0f, std::ldexp(1.0f, -22)}, sf, faulty, {1, 1, 0});
    if (faulty) {
      EXPECT_EQ(sf[1], 1e-4f / 448.0f);
    }
  }
}

// Z22: gemm_blockscale_ue8m0, M = 2, K = 256 (two scales in one word per row), A scales row 0
// {1.0, 1.0}, row 1 {1.5, 1.5}: the UE8M0 value of 1.5 is its exponent byte 0x7F (1.0), so both
// rows give 2 x 128 = 256. Packed by shift-and-OR, row 1's second scale leaks its mantissa into
// byte 0 (0x7F | 0xFF = 0xFF: NaN); row 0 has no mantissa to leak. Only (1,0) differs.
TEST(ZooFaultsDetect, Z22MantissaBitsLeakIntoThePackedUe8m0Word) {
  for (bool faulty : {false, true}) {
    const auto c =
        block_gemm(gpu::kernel("gemm_blockscale_ue8m0"), 2, 1, 256, {1.0f, 1.0f, 1.5f, 1.5f},
                   {1.0f, 1.0f}, faulty ? bits(Fault::kZ22Ue8m0PackLeak) : 0);
    expect_fp32(2, 1, {256.0f, 256.0f}, c, faulty, {1, 1, 0});
    if (faulty) {
      EXPECT_TRUE(std::isnan(c[1])) << c[1];
    }
  }
}

// One upcast_e8m0 launch of `bytes` with the faults `f`.
std::vector<float> upcast(const std::vector<uint8_t>& bytes, uint64_t f) {
  gpu::HostBackend be;
  gpu::UpcastArgs u;
  u.in = buffer(be, bytes, "in");
  u.out = be.allocate(bytes.size() * 4, "out");
  u.p = {bytes.size(), gpu::E8m0Upcast::kCorrect};
  u.p.faults = f;
  be.run({gpu::kernel("upcast_e8m0"), u});
  return be.download_as<float>(u.out);
}

// Z23: bytes 0x7F, 0x86, 0xFF are 2^0 = 1.0, 2^(134 - 127) = 128.0 and NaN (OCP MX); tested on
// the decoded value, 128.0 becomes NaN and 0xFF +Inf: two differ, the first at column 1.
TEST(ZooFaultsDetect, Z23NanSentinelTestedOnTheDecodedValue) {
  const std::vector<float> want = {1.0f, 128.0f, std::numeric_limits<float>::quiet_NaN()};
  for (bool faulty : {false, true}) {
    const auto got = upcast({0x7F, 0x86, 0xFF}, faulty ? bits(Fault::kZ23E8m0NanOnValue) : 0);
    expect_fp32(1, 3, want, got, faulty, {2, 0, 1});
    if (faulty) {
      EXPECT_TRUE(std::isnan(got[1]));
      EXPECT_EQ(got[2], std::numeric_limits<float>::infinity());
    }
  }
}

// One dequant_mx_to_bf16 launch of a 1 x 32 row with scale byte 127 (1.0).
std::vector<uint16_t> dequant(gpu::Fp8Format f, const std::vector<uint8_t>& codes,
                              uint64_t faults) {
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

constexpr uint16_t kBf16Nan = 0x7FC0;

// Z24: 0x80 is the only NaN of E4M3FNUZ and E5M2FNUZ (no negative zero); 0x40 is 2^(8 - 8) x 1
// = 1.0 in E4M3FNUZ (bias 8) and 2^(16 - 16) x 1 = 1.0 in E5M2FNUZ (bias 16): bf16 0x3F80. The
// faulty upcast gives -0.0 (bf16 0x8000) for element 5 only.
TEST(ZooFaultsDetect, Z24FnuzNanDecodedAsNegativeZero) {
  std::vector<uint8_t> codes(32, 0x40);
  codes[5] = 0x80;
  std::vector<uint16_t> want(32, 0x3F80);
  want[5] = kBf16Nan;
  for (gpu::Fp8Format f : {gpu::Fp8Format::kE4m3fnuz, gpu::Fp8Format::kE5m2fnuz}) {
    for (bool faulty : {false, true}) {
      const auto got = dequant(f, codes, faulty ? bits(Fault::kZ24FnuzNanAsNegZero) : 0);
      expect_bf16(1, 32, want, got, faulty, {1, 0, 5});
      if (faulty) {
        EXPECT_EQ(got[5], 0x8000u);
      }
    }
  }
}

// Z25: E4M3FN 0x7F / 0xFF are NaN; read as normal numbers they are +-1.875 x 2^8 = +-480 (bf16
// 0x43F0 / 0xC3F0). Elements 7 and 9 hold them, the rest 1.0 (0x38 -> bf16 0x3F80).
TEST(ZooFaultsDetect, Z25E4m3NanDecodedAs480) {
  std::vector<uint8_t> codes(32, kOne);
  codes[7] = 0x7F;
  codes[9] = 0xFF;
  std::vector<uint16_t> want(32, 0x3F80);
  want[7] = want[9] = kBf16Nan;
  for (bool faulty : {false, true}) {
    const auto got =
        dequant(gpu::Fp8Format::kE4m3fn, codes, faulty ? bits(Fault::kZ25E4m3NanAs480) : 0);
    expect_bf16(1, 32, want, got, faulty, {2, 0, 7});
    if (faulty) {
      EXPECT_EQ(got[7], 0x43F0u);
      EXPECT_EQ(got[9], 0xC3F0u);
    }
  }
}

// Z26: E5M2 0x7C is +Inf (exponent 31, mantissa 0; bf16 0x7F80); read as a normal binade it is
// 2^(31 - 15) = 65536 (bf16 0x4780). 0x3C is 2^(15 - 15) = 1.0. Only element 3 differs.
TEST(ZooFaultsDetect, Z26E5m2InfinityWidenedToAFiniteNumber) {
  std::vector<uint8_t> codes(32, 0x3C);
  codes[3] = 0x7C;
  std::vector<uint16_t> want(32, 0x3F80);
  want[3] = 0x7F80;
  for (bool faulty : {false, true}) {
    const auto got =
        dequant(gpu::Fp8Format::kE5m2, codes, faulty ? bits(Fault::kZ26E5m2InfAsFinite) : 0);
    expect_bf16(1, 32, want, got, faulty, {1, 0, 3});
    if (faulty) {
      EXPECT_EQ(got[3], 0x4780u);
    }
  }
}

// Z27: dot_scaled, M = 1, N = 2, K = 128, ones, A scales 127 (1.0), B scales absent: 128 at the
// unit scale in both columns; the default byte 1 (2^-126) gives 128 x 2^-126 = 2^-119 in both.
TEST(ZooFaultsDetect, Z27AbsentScaleIsTheUnitScale) {
  for (bool faulty : {false, true}) {
    gpu::HostBackend be;
    gpu::GemmArgs g;
    g.a = buffer(be, std::vector<uint8_t>(128, kOne), "A");
    g.b = buffer(be, std::vector<uint8_t>(256, kOne), "B");
    g.a_scale = buffer(be, std::vector<uint8_t>(4, 127), "As");
    g.p = {1, 2, 128, gpu::OutDtype::kFp32};
    g.p.faults = faulty ? bits(Fault::kZ27DefaultScaleByteOne) : 0;
    const auto c = gemm(be, gpu::kernel("gemm_mx_dot_scaled"), g);
    expect_fp32(1, 2, {128.0f, 128.0f}, c, faulty, {2, 0, 0});
    if (faulty) {
      EXPECT_EQ(c[0], std::ldexp(1.0f, -119));
    }
  }
}

// Z28: gemm_mx_dequant, M = N = 1, K = 32, scale buffers of one byte each followed by 0xFF slack
// (what the allocator left): 32 x 1 x 1 = 32; the K-tail tile's unmasked scale loads read the
// slack (NaN) into the only output.
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
    const auto c = gemm(be, gpu::kernel("gemm_mx_dequant"), g);
    expect_fp32(1, 1, {32.0f}, c, faulty, {1, 0, 0});
    if (faulty) {
      EXPECT_TRUE(std::isnan(c[0])) << c[0];
    }
  }
}

// Z29 on the element body (the device kernel's, gpu/kernels/dequant_mx.h): element 2^31 + 5 of
// a 2^31 + 32-element row lands on element 5 with 31-bit offsets; clean, it is its own element.
// Run on buffers of 64 elements (the clean index is out of them, so only the faulty run is
// made): only the element the wrapped index names is written, with 1.0 (0x3F80).
TEST(ZooFaultsDetect, Z29ElementOffsetsWrapAt2To31) {
  std::vector<uint8_t> codes(64, kOne), scales(2, 127);
  std::vector<uint16_t> out(64, 0xFFFFu);
  gpu::DequantParams p{1, (uint64_t{1} << 31) + 32, gpu::E8m0Upcast::kCorrect};
  p.faults = bits(Fault::kZ29Offset32Bit);
  // With the fault the body reads and writes index (2^31 + 5) & 0x7FFFFFFF = 5, in bounds here.
  gpu::dequant_mx_element(p, codes.data(), scales.data(), out.data(), (uint64_t{1} << 31) + 5);
  expect_bf16(1, 64, std::vector<uint16_t>(64, 0xFFFFu), out, true, {1, 0, 5});
  EXPECT_EQ(out[5], 0x3F80u);
}

// Z30: gemm_bf16, M = 1, N = 2, K = 3, A = {1, 2^-24, 2^-24}; B column 0 {1, 0, 0} gives 1 in
// any order; column 1 {1, 1, 1} summed upwards is 1 (each small term rounds away), downwards
// 2^-23 + 1 = 1 + 2^-23. Every other launch walks downwards, so the second launch differs from
// the first at (0,1) only.
TEST(ZooFaultsDetect, Z30TheSameInputsTwiceGiveOtherBits) {
  const std::vector<uint16_t> a = {0x3F80, 0x3380, 0x3380};  // 1, 2^-24, 2^-24 (bf16)
  const std::vector<uint16_t> b = {0x3F80, 0x0000, 0x0000,   // column 0 (B is N x K)
                                   0x3F80, 0x3F80, 0x3F80};  // column 1
  for (bool faulty : {false, true}) {
    gpu::HostBackend be;
    gpu::GemmArgs g;
    g.a = buffer(be, a, "A");
    g.b = buffer(be, b, "B");
    g.p = {1, 2, 3, gpu::OutDtype::kFp32};
    g.p.faults = faulty ? bits(Fault::kZ30LaunchCounterOrder) : 0;
    const auto first = gemm(be, gpu::kernel("gemm_bf16"), g);
    const auto second = gemm(be, gpu::kernel("gemm_bf16"), g);
    EXPECT_EQ(first, (std::vector<float>{1.0f, 1.0f}));
    expect_fp32(1, 2, first, second, faulty, {1, 0, 1});
    if (faulty) {
      EXPECT_EQ(second[1], 1.0f + std::ldexp(1.0f, -23));
    }
  }
}

// Z38: gemm_blockscale_fnuz, M = 2, N = 1, K = 16 (one MFMA step), scales 1; A row 0 zeros (0x00:
// zero in both readings), row 1 and B E4M3FNUZ 1.0 (0x40: exponent field 8, bias 8): rows 0 and
// 16. Read as E4M3FN (bias 7) 0x40 is 2.0, each product 4: row 1 gives 64, row 0 stays 0, so only
// (1,0) differs.
TEST(ZooFaultsDetect, Z38FnuzCodesDecodedAsOcp) {
  std::vector<uint8_t> a(32, 0x40);
  std::fill(a.begin(), a.begin() + 16, uint8_t{0});
  for (bool faulty : {false, true}) {
    gpu::HostBackend be;
    gpu::GemmArgs g;
    g.a = buffer(be, a, "A");
    g.b = buffer(be, std::vector<uint8_t>(16, 0x40), "B");
    g.a_scale = buffer(be, std::vector<float>{1.0f, 1.0f}, "As");
    g.b_scale = buffer(be, std::vector<float>{1.0f}, "Bs");
    g.p = {2, 1, 16, gpu::OutDtype::kFp32};
    g.p.a_format = g.p.b_format = gpu::Fp8Format::kE4m3fnuz;
    g.p.faults = faulty ? bits(Fault::kZ38FnuzDecodedAsOcp) : 0;
    const auto c = gemm(be, gpu::kernel("gemm_blockscale_fnuz"), g);
    expect_fp32(2, 1, {0.0f, 16.0f}, c, faulty, {1, 1, 0});
    if (faulty) {
      EXPECT_EQ(c[1], 64.0f);
    }
  }
}

// Z40: gemm_mx_dequant, M = N = 1, K = 32, every code 1.0, unit scales: 32. A's and B's buffers
// go on past K (A: 224 codes of 2.0, B: 224 of 1.0, as the rest of a larger tensor would): K
// padded to 256 with those data read unmasked under the filled scale 127 adds 224 x 2 = 448.
TEST(ZooFaultsDetect, Z40KPaddingScaleFilledWith127) {
  for (bool faulty : {false, true}) {
    gpu::HostBackend be;
    std::vector<uint8_t> a(256, 0x40), b(256, kOne);  // E4M3FN 0x40 = 2.0
    std::fill(a.begin(), a.begin() + 32, kOne);
    gpu::GemmArgs g;
    g.a = buffer(be, a, "A");
    g.b = buffer(be, b, "B");
    g.a_scale = buffer(be, std::vector<uint8_t>{127}, "sa");
    g.b_scale = buffer(be, std::vector<uint8_t>{127}, "sb");
    g.p = {1, 1, 32, gpu::OutDtype::kFp32};
    g.p.faults = faulty ? bits(Fault::kZ40ScalePad127) : 0;
    const auto c = gemm(be, gpu::kernel("gemm_mx_dequant"), g);
    expect_fp32(1, 1, {32.0f}, c, faulty, {1, 0, 0});
    if (faulty) {
      EXPECT_EQ(c[0], 480.0f);
    }
  }
}

// Z47: gemm_mx_dequant, M = 2, N = 1, K = 32, swizzled scales (one 512-byte tile, padding 0xFF):
// A row 0 at byte 0 (127: 1.0), row 1 at byte 16 (lane 1: 128, 2.0), B 1.0: rows 32 and 64. The
// other architecture's order reads row 1 at byte 4 (padding: NaN).
TEST(ZooFaultsDetect, Z47SwizzleReadInAnotherArchitecturesOrder) {
  for (bool faulty : {false, true}) {
    gpu::HostBackend be;
    std::vector<uint8_t> sa(512, 0xFF), sb(512, 0xFF);
    sa[0] = 127;
    sa[16] = 128;
    sb[0] = 127;
    gpu::GemmArgs g;
    g.a = buffer(be, std::vector<uint8_t>(2 * 32, kOne), "A");
    g.b = buffer(be, std::vector<uint8_t>(32, kOne), "B");
    g.a_scale = buffer(be, sa, "sa");
    g.b_scale = buffer(be, sb, "sb");
    g.p = {2, 1, 32, gpu::OutDtype::kFp32};
    g.p.mx_scales_swizzled = true;
    g.p.faults = faulty ? bits(Fault::kZ47SwizzleOtherArch) : 0;
    const auto c = gemm(be, gpu::kernel("gemm_mx_dequant"), g);
    expect_fp32(2, 1, {32.0f, 64.0f}, c, faulty, {1, 1, 0});
    if (faulty) {
      EXPECT_TRUE(std::isnan(c[1]));
    }
  }
}

// Z43: gemm_blockscale, M = N = 1, K = 256 (two blocks), As {1, 2}, Bs {1, 4}: 128 x (1 x 1) +
// 128 x (2 x 4) = 1152; block 0's scales for both blocks: 128 + 128 = 256.
TEST(ZooFaultsDetect, Z43ScalesNotAdvancedPerKBlock) {
  for (bool faulty : {false, true}) {
    const auto c = block_gemm(gpu::kernel("gemm_blockscale"), 1, 1, 256, {1, 2}, {1, 4},
                              faulty ? bits(Fault::kZ43ScaleSliceNotAdvanced) : 0);
    expect_fp32(1, 1, {1152.0f}, c, faulty, {1, 0, 0});
    if (faulty) {
      EXPECT_EQ(c[0], 256.0f);
    }
  }
}

// Z46: gemm_blockscale, M = 2, N = 1, K = 128, As row-major at ld 2 (a view into a 2 x 2 tensor:
// {1, NaN, 4, NaN}), Bs {1}: rows 128 and 512; with the ld taken from the shape (1) row 1 reads
// the NaN padding.
TEST(ZooFaultsDetect, Z46ScaleLeadingDimensionIgnored) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (bool faulty : {false, true}) {
    gpu::HostBackend be;
    gpu::GemmArgs g;
    g.a = buffer(be, std::vector<uint8_t>(2 * 128, kOne), "A");
    g.b = buffer(be, std::vector<uint8_t>(128, kOne), "B");
    g.a_scale = buffer(be, std::vector<float>{1.0f, nan, 4.0f, nan}, "As");
    g.b_scale = buffer(be, std::vector<float>{1.0f}, "Bs");
    g.p = {2, 1, 128, gpu::OutDtype::kFp32};
    g.p.sa_ld = 2;
    g.p.faults = faulty ? bits(Fault::kZ46ScaleLdIgnored) : 0;
    const auto c = gemm(be, gpu::kernel("gemm_blockscale"), g);
    expect_fp32(2, 1, {128.0f, 512.0f}, c, faulty, {1, 1, 0});
    if (faulty) {
      EXPECT_TRUE(std::isnan(c[1]));
    }
  }
}

// Z49: gemm_blockscale, M = N = 1, K = 128, As 2^-127 (an fp32 subnormal), Bs 2^127:
// fl(fl(128 x 2^-127) x 2^127) = 128; the subnormal scale flushed to zero gives 0.
TEST(ZooFaultsDetect, Z49SubnormalFp32ScaleFlushedToZero) {
  for (bool faulty : {false, true}) {
    const auto c = block_gemm(gpu::kernel("gemm_blockscale"), 1, 1, 128, {0x1p-127f}, {0x1p127f},
                              faulty ? bits(Fault::kZ49Fp32ScaleDaz) : 0);
    expect_fp32(1, 1, {128.0f}, c, faulty, {1, 0, 0});
    if (faulty) {
      EXPECT_EQ(c[0], 0.0f);
    }
  }
}

// Guards against an op that determinism.run_twice silently leaves out (Z30 in another kernel
// would pass the gate): on the host backend it must pick from every built-in op but the planted
// test kernels of the table (none of them is in the built-in implementation) and the host-only
// quantize_mx_hw, which it reaches where the hardware has it; grouped GEMMs go to
// grouped.determinism instead.
TEST(ZooFaultsDetect, RunTwiceReachesEveryBuiltinOp) {
  gpu::HostBackend be;
  const properties::Property* p = properties::find_property("determinism.run_twice");
  ASSERT_NE(p, nullptr);
  const properties::Context ctx{&be, {}, nullptr, nullptr};
  std::vector<std::string> why_not;
  std::set<std::string> picked;
  for (const impl::Op* op : properties::candidate_ops(*p, ctx, &why_not)) picked.insert(op->name);
  std::string reasons;
  for (const std::string& w : why_not) reasons += w + "\n";
  for (const char* name :
       {"quantize_mx", "dequant_mx_to_bf16", "upcast_e8m0", "preshuffle_weight", "gemm_mx_dequant",
        "gemm_mx_dot_scaled", "gemm_blockscale", "gemm_blockscale_bpreshuffle", "gemm_bf16",
        "quantize_act1x128_ue8m0", "gemm_blockscale_ue8m0", "gemm_blockscale_fnuz",
        "gemm_blockscale_fnuz_bpreshuffle", "quantize_mxfp4", "quantize_nvfp4", "dequant_mxfp4",
        "dequant_nvfp4", "gemm_mxfp4", "gemm_nvfp4"}) {
    EXPECT_EQ(picked.count(name), 1u) << name << " left out of determinism.run_twice\n" << reasons;
  }
  // Grouped GEMMs are run twice by grouped.determinism (their call takes offsets), which must
  // pick every one of them.
  const properties::Property* g = properties::find_property("grouped.determinism");
  ASSERT_NE(g, nullptr);
  std::set<std::string> grouped;
  for (const impl::Op* op : properties::candidate_ops(*g, ctx, &why_not)) grouped.insert(op->name);
  for (const impl::Op& op : impl::builtin().ops) {
    const bool is_grouped =
        op.family == impl::Family::kGroupedGemmBlock || op.family == impl::Family::kGroupedGemmMx;
    if (is_grouped) {
      EXPECT_EQ(grouped.count(op.name), 1u) << op.name << " left out of grouped.determinism";
      continue;
    }
    EXPECT_TRUE(picked.count(op.name) == 1 || op.name == "quantize_mx_hw")
        << op.name << " left out of determinism.run_twice\n"
        << reasons;
  }
}

}  // namespace
}  // namespace mxgate::dispatch
