// Covers the FP4 zoo faults Z31-Z37 (docs/bug_classes.md §2) by hand, on the host models of the
// built-in FP4 kernels: each fault's minimal case launched clean and with its kernel_fault bit,
// the clean bytes equal to the value the formats give (the arithmetic beside each expectation,
// docs/fp4.md §1, §4.1, §6.1, §8), the faulty bytes the ones the public report describes. Also
// that every FP4 fault maps to its own kernel_fault bit. Does not cover: detection by the
// properties (tests/property_zoo.cpp), the device kernels (test_gpu_device.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dispatch/faults.h"
#include "gpu/backend.h"
#include "gpu/host/host_backend.h"
#include "gpu/kernel.h"
#include "reference/format.h"

namespace mxgate::gpu {
namespace {

using dispatch::Fault;

uint64_t bit(Fault f) { return dispatch::kernel_fault_bits({f}); }

struct Quantized {
  std::vector<uint8_t> codes, scales;
};

// One quantize launch of `kernel` on fp32 `x` (1 x cols) with an optional global amax buffer.
Quantized quantize(std::string_view kernel, const std::vector<float>& x, uint64_t faults,
                   const std::vector<uint8_t>& global = {},
                   GlobalDtype gdtype = GlobalDtype::kFp32) {
  HostBackend be;
  ScopedBuffers buffers(be);
  Fp4QuantizeArgs a;
  a.p.rows = 1;
  a.p.cols = x.size();
  a.p.global_dtype = gdtype;
  a.p.faults = faults;
  a.in = buffers.make(x, "x");
  if (!global.empty()) a.global = buffers.make(global, "global");
  const std::size_t block = kernel == "quantize_nvfp4" ? 16 : 32;
  a.codes = buffers.allocate((x.size() + 1) / 2, "codes");
  a.scales = buffers.allocate((x.size() + block - 1) / block, "scales");
  be.run({gpu::kernel(kernel), a});
  return {be.download(a.codes), be.download(a.scales)};
}

std::vector<uint8_t> fp32_bytes(float v) {
  std::vector<uint8_t> b(4);
  std::memcpy(b.data(), &v, 4);
  return b;
}

// The MXFP4 quantize of the pair `x`: clean, scale byte `scale` and code byte `clean_code`; with
// `fault` planted, code byte `faulty_code`.
void expect_mxfp4_code_fault(const std::vector<float>& x, Fault fault, uint8_t scale,
                             uint8_t clean_code, uint8_t faulty_code) {
  const Quantized clean = quantize("quantize_mxfp4", x, 0);
  EXPECT_EQ(clean.scales, std::vector<uint8_t>{scale});
  EXPECT_EQ(clean.codes, std::vector<uint8_t>{clean_code});
  EXPECT_EQ(quantize("quantize_mxfp4", x, bit(fault)).codes, std::vector<uint8_t>{faulty_code});
}

// Z31 minimal: x = {1, 2}: amax 2, FLOOR scale 2^(1 - 2) = 2^-1 (byte 126); x * 2 = {2, 4} =
// E2M1 {0x4, 0x6}; element 0 low: 0x64. Swapped: 0x46.
TEST(Fp4KernelFaults, Z31NibbleOrderSwapped) {
  expect_mxfp4_code_fault({1.0f, 2.0f}, Fault::kZ31NibbleOrderSwapped, 126, 0x64, 0x46);
}

// Z32 minimal: x = {6, 2.5}: amax 6, scale 2^(2 - 2) = 1 (byte 127); 6 = 0x7; 2.5 is the midpoint
// of 2 (0x4, even) and 3 (0x5): nearest-even gives 0x4 (byte 0x47), ties away 0x5 (0x57).
TEST(Fp4KernelFaults, Z32E2m1TiesAway) {
  expect_mxfp4_code_fault({6.0f, 2.5f}, Fault::kZ32E2m1TiesAway, 127, 0x47, 0x57);
}

// One gemm launch, M = N = 1: A, B packed (one byte each for K <= 2), scales as given.
float gemm(std::string_view kernel, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
           const std::vector<uint8_t>& sa, const std::vector<uint8_t>& sb, uint64_t k,
           bool swizzled, uint64_t faults) {
  HostBackend be;
  ScopedBuffers buffers(be);
  Fp4GemmArgs g;
  g.p.m = g.p.n = 1;
  g.p.k = k;
  g.p.swizzled_scales = swizzled;
  g.p.faults = faults;
  g.a = buffers.make(a, "A");
  g.b = buffers.make(b, "B");
  g.a_scale = buffers.make(sa, "As");
  g.b_scale = buffers.make(sb, "Bs");
  const std::vector<float> one = {1.0f};
  if (kernel == "gemm_nvfp4") {
    g.a_global = buffers.make(one, "ga");
    g.b_global = buffers.make(one, "gb");
  }
  g.out = buffers.allocate(4, "C");
  be.run({gpu::kernel(kernel), g});
  return be.download_as<float>(g.out)[0];
}

// Z33 minimal: K = 1, a = b = 1.0 (E2M1 0x2; the padding nibble 0xF is past K), scale A = 0x01
// (subnormal: 1 * 2^-9 = 0.001953125), scale B = 0x38 (exponent 7 - 7 = 0: 1.0), globals 1:
// C = 2^-9. With the normal formula 0x01 reads (1 + 1/8) * 2^-7 = 0.0087890625 (b12x #388).
TEST(Fp4KernelFaults, Z33E4m3SubnormalScaleAsNormal) {
  EXPECT_EQ(gemm("gemm_nvfp4", {0xF2}, {0xF2}, {0x01}, {0x38}, 1, false, 0), 0.001953125f);
  EXPECT_EQ(gemm("gemm_nvfp4", {0xF2}, {0xF2}, {0x01}, {0x38}, 1, false,
                 bit(Fault::kZ33E4m3SubnormalAsNormal)),
            0.0087890625f);
}

// Z34 minimal: K = 32, block 0 sixteen 1.0, block 1 fifteen 1.0 and one 6.0; global amax 2688
// (encode scale 2688 / 2688 = 1, decode 1). Block 0: fl(1 * fl(1 * fl(1/6))) = 0x1.555556p-3
// lies between the E4M3 values 1.25 * 2^-3 and 1.375 * 2^-3, nearer the second: 0x23. Block 1:
// fl(6 * fl(1/6)) = 1 (6 * fl(1/6) = 1 + 2^-25 rounds to 1): 0x38. Over 32, block 0 gets 0x38.
TEST(Fp4KernelFaults, Z34Nvfp4BlockAmaxOver32) {
  std::vector<float> x(32, 1.0f);
  x[20] = 6.0f;
  const std::vector<uint8_t> global = fp32_bytes(2688.0f);
  EXPECT_EQ(quantize("quantize_nvfp4", x, 0, global).scales, (std::vector<uint8_t>{0x23, 0x38}));
  EXPECT_EQ(quantize("quantize_nvfp4", x, bit(Fault::kZ34Nvfp4Amax32), global).scales,
            (std::vector<uint8_t>{0x38, 0x38}));
}

// Z35 minimal: sixteen 1.0, global amax 1.0 as bf16 (0x3F80). Clean: encode scale 2688,
// fl(2688 * fl(1/6)) = 448 (2688 * fl(1/6) = 448 + 2688 * 2^-26 * ... within half an ulp of
// 448), block scale min(448, 448): 0x7E. Read as fp32, the two bytes after the bf16 are the
// allocation's guard bytes (gpu::guard_byte(0), (1)): the amax is the negative fp32 0xB8A53F80,
// the encode scale negative, the block scale clamped to -448: 0xFE.
TEST(Fp4KernelFaults, Z35Bf16GlobalReadAsFp32) {
  const std::vector<float> x(16, 1.0f);
  const std::vector<uint8_t> bf16_one = {0x80, 0x3F};
  EXPECT_EQ(quantize("quantize_nvfp4", x, 0, bf16_one, GlobalDtype::kBf16).scales,
            std::vector<uint8_t>{0x7E});
  const uint32_t misread =
      0x3F80u | (uint32_t{guard_byte(0)} << 16) | (uint32_t{guard_byte(1)} << 24);
  ASSERT_EQ(misread, 0xB8A53F80u);
  EXPECT_EQ(
      quantize("quantize_nvfp4", x, bit(Fault::kZ35Bf16GlobalAsFp32), bf16_one, GlobalDtype::kBf16)
          .scales,
      std::vector<uint8_t>{0xFE});
}

// Z36 minimal: a zero block, global amax 0.5 (encode scale 5376). Clean: vec_max 0, scale 0x00,
// codes 0. Faulty: vec_max 1, fl(1 * fl(5376 * fl(1/6))) = 896 > 464 rounds onto 0x7F, the NaN
// scale of NVIDIA/Model-Optimizer #1397; the codes stay 0 (NaN * 0 casts to +0).
TEST(Fp4KernelFaults, Z36ZeroAmaxGivesNanScale) {
  const std::vector<float> x(16, 0.0f);
  const std::vector<uint8_t> global = fp32_bytes(0.5f);
  const Quantized clean = quantize("quantize_nvfp4", x, 0, global);
  EXPECT_EQ(clean.scales, std::vector<uint8_t>{0x00});
  EXPECT_EQ(clean.codes, std::vector<uint8_t>(8, 0x00));
  const Quantized faulty = quantize("quantize_nvfp4", x, bit(Fault::kZ36ZeroAmaxNanScale), global);
  EXPECT_EQ(faulty.scales, std::vector<uint8_t>{0x7F});
  EXPECT_TRUE(std::isnan(decode(Format::kE4M3FN, faulty.scales[0])));
}

// Z37 minimal: M = N = 1, K = 2, a = b = {1, 1} (0x22), one scale column 0x7F (1.0) in the 128x4
// swizzle (offset 0; offsets 1-3 are padding, poison 0xFF = NaN): C = 2. Loading the last tile's
// four scale columns unmasked applies padding 0xFF to an empty partial: 0 * NaN = NaN.
TEST(Fp4KernelFaults, Z37ScaleTailReadUnmasked) {
  std::vector<uint8_t> swizzled(512, 0xFF);
  swizzled[0] = 0x7F;
  EXPECT_EQ(gemm("gemm_mxfp4", {0x22}, {0x22}, swizzled, swizzled, 2, true, 0), 2.0f);
  EXPECT_TRUE(std::isnan(gemm("gemm_mxfp4", {0x22}, {0x22}, swizzled, swizzled, 2, true,
                              bit(Fault::kZ37ScaleTailUnmasked))));
  // Row-major scales: the over-read lands on finite bytes past the grid, 0 * finite = 0.
  std::vector<uint8_t> row = {0x7F, 0x7F, 0x7F, 0x7F};
  EXPECT_EQ(
      gemm("gemm_mxfp4", {0x22}, {0x22}, row, row, 2, false, bit(Fault::kZ37ScaleTailUnmasked)),
      2.0f);
}

// Guards against two FP4 faults sharing a kernel bit (one would plant the other).
TEST(Fp4KernelFaults, EachFaultHasItsOwnKernelBit) {
  uint64_t seen = 0;
  for (Fault f :
       {Fault::kZ31NibbleOrderSwapped, Fault::kZ32E2m1TiesAway, Fault::kZ33E4m3SubnormalAsNormal,
        Fault::kZ34Nvfp4Amax32, Fault::kZ35Bf16GlobalAsFp32, Fault::kZ36ZeroAmaxNanScale,
        Fault::kZ37ScaleTailUnmasked}) {
    const uint64_t b = bit(f);
    EXPECT_NE(b, 0u) << dispatch::to_string(f);
    EXPECT_EQ(b & (b - 1), 0u) << dispatch::to_string(f);
    EXPECT_EQ(seen & b, 0u) << dispatch::to_string(f);
    seen |= b;
  }
}

}  // namespace
}  // namespace mxgate::gpu
