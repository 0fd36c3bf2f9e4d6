// Covers MXFP4 / MXFP6 quantization per convention (scale byte and codes, the K tail, zero and
// NaN blocks) and NVFP4 quantization per recipe (TE reference with 1x16 / 16x16 tiles and pow2
// scales, torchao, FlashInfer precise / fast): zero blocks and zero tensors, subnormal E4M3 block
// scales, saturation at 6, dequantization. Expected bytes are derived by hand beside each case
// from the sources of docs/fp4.md §4 and §6. Does NOT cover: the element encoders in isolation
// (test_fp4_codecs.cpp), GEMMs (test_fp4_gemm.cpp), measured device bytes (test_fp4_vectors.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "reference/convention.h"
#include "reference/format.h"
#include "reference/mx_quant.h"
#include "reference/nvfp4_quant.h"
#include "reference/quant_conventions.h"

namespace mxgate {
namespace {

MxQuantized mx(const char* convention, Format f, const std::vector<float>& x, std::size_t cols) {
  const Convention* c = find_convention(convention);
  EXPECT_NE(c, nullptr) << convention;
  const auto p = mx_policy(*c, f);
  EXPECT_TRUE(p.has_value()) << convention << " has no MX quantizer for " << info(f).name;
  return quantize_mx(x, x.size() / cols, cols, f, *p);
}

std::vector<float> block(std::initializer_list<float> head, std::size_t n = 32) {
  std::vector<float> v(head);
  v.resize(n, 0.0f);
  return v;
}

// Guards against the OCP FP4 rule using the FP8 emax (8) instead of E2M1's 2, or rounding a tie
// away: amax 6 -> floor(log2 6) - 2 = 0 -> byte 127; 3 -> 0x5, 1.5 -> 0x3, 0.75 -> tie -> 1.0
// (0x2).
TEST(Mxfp4Quant, OcpFloorEmaxTwo) {
  const MxQuantized q = mx("ocp_mx", Format::kE2M1, block({6, 3, 1.5f, 0.75f, -6}), 32);
  ASSERT_EQ(q.scales.size(), 1u);
  EXPECT_EQ(q.scales[0], 127);
  EXPECT_EQ(q.data[0], 0x7);
  EXPECT_EQ(q.data[1], 0x5);
  EXPECT_EQ(q.data[2], 0x3);
  EXPECT_EQ(q.data[3], 0x2);
  EXPECT_EQ(q.data[4], 0xF);
}

// Guards against FLOOR and RCEIL being confused on amax 7: FLOOR keeps 2^0 and clips 7 -> 6;
// RCEIL (torchao) takes ceil(log2(7 * fl(1/6))) = 1 -> byte 128, 7 / 2 = 3.5 -> tie -> 4 (0x6);
// Triton ROUND_UP on fl(7 / 6) gives the same byte.
TEST(Mxfp4Quant, FloorClipsRceilAndTritonRoundUp) {
  const auto x = block({7});
  EXPECT_EQ(mx("ocp_mx", Format::kE2M1, x, 32).scales[0], 127);
  EXPECT_EQ(mx("ocp_mx", Format::kE2M1, x, 32).data[0], 0x7);
  for (const char* c : {"torchao_rceil", "triton_mxfp4", "aiter_fp4_fallback"}) {
    const MxQuantized q = mx(c, Format::kE2M1, x, 32);
    EXPECT_EQ(q.scales[0], 128) << c;
    EXPECT_EQ(q.data[0], 0x6) << c;
  }
}

// Guards against a zero block turning into a NaN or a huge multiplier: every rule gives byte 0
// and codes 0; Triton and AITER multiply by 0 (their byte-0 reciprocal), so -0.0 stays -0 (0x8).
TEST(Mxfp4Quant, ZeroBlock) {
  const auto x = block({0.0f, -0.0f});
  for (const char* c : {"ocp_mx", "torchao_floor", "triton_mxfp4", "aiter_fp4_fallback"}) {
    const MxQuantized q = mx(c, Format::kE2M1, x, 32);
    EXPECT_EQ(q.scales[0], 0) << c;
    EXPECT_EQ(q.data[0], 0x0) << c;
    EXPECT_EQ(q.data[1], 0x8) << c;
  }
}

// Guards against a NaN block being written with bytes its convention does not define: OCP names
// 0 for elements under a NaN scale; torchao multiplies by its NaN reciprocal and sends 0x7FC00000
// down its normal path (code 3); Triton ignores the NaN in amax: fl(2 / 6) = 0.33333334 rounds up
// to 2^-1 (byte 126), 2 / 0.5 = 4 (0x6), and the NaN element (NaN * 2) encodes as +max (0x7).
TEST(Mxfp4Quant, NanBlock) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto x = block({2.0f, nan});
  const MxQuantized ocp = mx("ocp_mx", Format::kE2M1, x, 32);
  EXPECT_EQ(ocp.scales[0], 0xFF);
  EXPECT_EQ(ocp.data[0], 0x0);
  const MxQuantized ao = mx("torchao_floor", Format::kE2M1, x, 32);
  EXPECT_EQ(ao.scales[0], 0xFF);
  EXPECT_EQ(ao.data[0], 0x3);
  const MxQuantized tr = mx("triton_mxfp4", Format::kE2M1, x, 32);
  EXPECT_EQ(tr.scales[0], 126);
  EXPECT_EQ(tr.data[0], 0x6);
  EXPECT_EQ(tr.data[1], 0x7);
}

// Guards against MXFP6 scales using E2M1's emax: E3M2 emax is 4 (max 28), E2M3's is 2 (7.5).
TEST(Mxfp6Quant, EmaxPerFormat) {
  EXPECT_EQ(element_emax(Format::kE3M2), 4);
  EXPECT_EQ(element_emax(Format::kE2M3), 2);
  EXPECT_EQ(element_emax(Format::kE2M1), 2);
  // E3M2: amax 28 -> floor(log2 28) - 4 = 0 -> byte 127, 28 -> 0x1F.
  const MxQuantized q = mx("ocp_mx", Format::kE3M2, block({28, 0.0625f}), 32);
  EXPECT_EQ(q.scales[0], 127);
  EXPECT_EQ(q.data[0], 0x1F);
  EXPECT_EQ(q.data[1], 0x01);
  // E2M3 with a 40-wide row: two blocks, the second short (8 values, padded with 0).
  std::vector<float> row(40, 0.0f);
  row[0] = 7.5f;
  // block 2: floor(log2 3) - 2 = -1 -> byte 126; 3 / 0.5 = 6 = 1.5 * 2^2: exponent field
  // 2 + bias 1 = 0b11, mantissa .100 -> 0b0_11_100 = 0x1C.
  row[39] = 3.0f;
  const MxQuantized r = mx("ocp_mx", Format::kE2M3, row, 40);
  ASSERT_EQ(r.scales.size(), 2u);
  EXPECT_EQ(r.scales[0], 127);
  EXPECT_EQ(r.data[0], 0x1F);
  EXPECT_EQ(r.scales[1], 126);
  EXPECT_EQ(r.data[39], 0x1C);
}

NvFp4Policy recipe(const char* convention) {
  const Convention* c = find_convention(convention);
  EXPECT_NE(c, nullptr) << convention;
  return *nvfp4_policy(*c);
}

// Guards against the NVFP4 scale formula (amax / 6 * ge) or its E4M3 cast being wrong: with the
// global amax 2688 = 448 * 6, ge = 1, so block amax 6 gives 6 * fl(1/6) = fl(1.00000003) = 1.0
// -> E4M3 0x38, and the elements are multiplied by 1 / (1.0 * 1) = 1 (6 -> 0x7, 5 -> tie -> 0x6).
TEST(Nvfp4Quant, TeReferenceUnitGlobal) {
  std::vector<float> x(16, 0.0f);
  x[0] = 6;
  x[1] = 5;
  const NvFp4Quantized q = quantize_nvfp4(x, 1, 16, recipe("te_nvfp4_ref"), 2688.0f);
  EXPECT_EQ(q.global_encode, 1.0f);
  EXPECT_EQ(q.global_decode, 1.0f);
  ASSERT_EQ(q.scales.size(), 1u);
  EXPECT_EQ(q.scales[0], 0x38);
  EXPECT_EQ(q.data[0], 0x7);
  EXPECT_EQ(q.data[1], 0x6);
}

// Guards against a subnormal E4M3 block scale decoded with the normal formula (b12x #388):
// block amax 6 * 2^-8 with ge = 1 -> dec = 2^-8 * fl(6 * fl(1/6)) = 2^-8 = 2 * 2^-9, the E4M3
// subnormal 0x02; the elements are multiplied by 1 / 2^-8 = 256, so 6 * 2^-8 -> 6 (0x7).
// Decoded with the normal formula 0x02 would be 2^-7 * 1.25.
TEST(Nvfp4Quant, SubnormalBlockScale) {
  std::vector<float> x(16, 0.0f);
  x[3] = 6.0f * 0x1p-8f;
  const NvFp4Quantized q = quantize_nvfp4(x, 1, 16, recipe("te_nvfp4_ref"), 2688.0f);
  EXPECT_EQ(q.scales[0], 0x02);
  EXPECT_EQ(q.data[3], 0x7);
  EXPECT_EQ(nvfp4_scale_value(0x02, false), 0x1p-8f);
  EXPECT_EQ(dequantize_nvfp4(q)[3], 6.0f * 0x1p-8f);
}

// Guards against amax = 0 giving a NaN scale (Model-Optimizer #1397): TE's reference clamps
// 2688 / 0 = Inf to FLT_MAX and 1 / 0 to FLT_MAX, so a zero tensor gives scale 0x00 and code 0;
// FlashInfer's precise path guards vecMax == 0. torchao (0 / 0 in block / per_tensor_scale) and
// FlashInfer's fast path (Inf * 0 in SFScaleVal * (vecMax * rcp(6))) do give the NaN byte 0x7F:
// modelled from their source, docs/fp4.md §6.5.
TEST(Nvfp4Quant, ZeroTensor) {
  const std::vector<float> x(32, 0.0f);
  NvFp4Policy precise = recipe("flashinfer_nvfp4");
  precise.recipe = NvFp4Recipe::kFlashInferPrecise;
  for (const NvFp4Policy& p : {recipe("te_nvfp4_ref"), precise}) {
    const NvFp4Quantized q = quantize_nvfp4(x, 1, 32, p);
    EXPECT_EQ(q.scales[0], 0x00) << name(p.recipe);
    EXPECT_EQ(q.scales[1], 0x00) << name(p.recipe);
    EXPECT_EQ(q.data[0], 0x0) << name(p.recipe);
    for (float v : dequantize_nvfp4(q)) EXPECT_EQ(v, 0.0f) << name(p.recipe);
  }
  const NvFp4Quantized ao = quantize_nvfp4(x, 1, 32, recipe("torchao_nvfp4"));
  EXPECT_EQ(ao.scales[0], 0x7F);
  EXPECT_EQ(ao.data[0], 0x3);  // 0 * NaN = NaN -> torchao's NaN bits
  const NvFp4Quantized fast = quantize_nvfp4(x, 1, 32, recipe("flashinfer_nvfp4"));
  EXPECT_EQ(fast.scales[0], 0x7F);
}

// Guards against a zero block inside a nonzero tensor getting a NaN or a nonzero code.
TEST(Nvfp4Quant, ZeroBlockInNonzeroTensor) {
  std::vector<float> x(32, 0.0f);
  x[20] = 3.0f;  // block 1 only
  for (const char* c : {"te_nvfp4_ref", "torchao_nvfp4", "flashinfer_nvfp4"}) {
    const NvFp4Quantized q = quantize_nvfp4(x, 1, 32, recipe(c));
    EXPECT_EQ(q.data[0], 0x0) << c;
    EXPECT_FALSE(std::isnan(nvfp4_scale_value(q.scales[1], false))) << c;
    EXPECT_EQ(q.data[20], 0x7) << c;  // the block amax lands on 6 (up to the E4M3 scale rounding)
  }
  // TE: block 0 has dec 0 -> 0x00; torchao clamps the block scale to E4M3's tiny 2^-6 -> 0x08.
  EXPECT_EQ(quantize_nvfp4(x, 1, 32, recipe("te_nvfp4_ref")).scales[0], 0x00);
  EXPECT_EQ(quantize_nvfp4(x, 1, 32, recipe("torchao_nvfp4")).scales[0], 0x08);
}

// Guards against the 16x16 tile amax being taken per row, and pow2 scales being E4M3: one 6 at
// row 15 sets the scale of all 16 rows of its tile (0x38 with ge = 1); pow2: 7 / 6 -> ceil(log2)
// = 1 -> E8M0 byte 128, 7 * 2^-1 = 3.5 -> tie -> 4 (0x6).
TEST(Nvfp4Quant, TeTilesAndPow2) {
  std::vector<float> x(16 * 16, 0.0f);
  x[15 * 16] = 6.0f;
  NvFp4Policy tile = recipe("te_nvfp4_ref");
  tile.tile_16x16 = true;
  const NvFp4Quantized q = quantize_nvfp4(x, 16, 16, tile, 2688.0f);
  for (std::size_t r = 0; r < 16; ++r) EXPECT_EQ(q.scales[r], 0x38) << "row " << r;
  NvFp4Policy pow2 = recipe("te_nvfp4_ref");
  pow2.pow2_scales = true;
  std::vector<float> y(16, 0.0f);
  y[0] = 7.0f;
  const NvFp4Quantized p = quantize_nvfp4(y, 1, 16, pow2);
  EXPECT_EQ(p.scales[0], 128);
  EXPECT_EQ(p.data[0], 0x6);
  EXPECT_EQ(p.global_decode, 1.0f);
  EXPECT_THROW(quantize_nvfp4(y, 1, 16,
                              [] {
                                NvFp4Policy bad = *nvfp4_policy(*find_convention("torchao_nvfp4"));
                                bad.pow2_scales = true;
                                return bad;
                              }()),
               std::invalid_argument);
}

// Guards against the global scale being dropped in dequantization: with global amax 5376
// (= 2688 * 2), TE's ge = 0.5 and gd = 2: block amax 12 -> dec = 12 * fl(0.5 * fl(1/6)) = 1.0
// (0x38), elements multiplied by 1 / (1 * 2) = 0.5, so 12 -> 6 (0x7), dequantized 6 * 1 * 2 = 12.
TEST(Nvfp4Quant, GlobalScaleRoundTrip) {
  std::vector<float> x(16, 0.0f);
  x[0] = 12.0f;
  const NvFp4Quantized q = quantize_nvfp4(x, 1, 16, recipe("te_nvfp4_ref"), 5376.0f);
  EXPECT_EQ(q.global_decode, 2.0f);
  EXPECT_EQ(q.scales[0], 0x38);
  EXPECT_EQ(q.data[0], 0x7);
  EXPECT_EQ(dequantize_nvfp4(q)[0], 12.0f);
}

}  // namespace
}  // namespace mxgate
