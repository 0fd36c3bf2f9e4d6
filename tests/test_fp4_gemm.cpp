// Covers the GEMM oracle on FP4 / FP6 operands: MXFP4 x MXFP4, MXFP8 x MXFP4 (mixed), MXFP6 x
// MXFP8 through mx_gemm_problem, and NVFP4 x NVFP4 with 16-element blocks and both global scales
// as the epilogue's alpha, in the exact, bound and ordered modes (docs/fp4.md §8). Expected values
// are computed by hand beside each case. Does NOT cover: the oracle's general machinery
// (test_gemm_oracle_exact.cpp, test_gemm_oracle_modes.cpp), quantization (test_fp4_quant.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/gemm_oracle.h"
#include "reference/nvfp4_quant.h"

namespace mxgate {
namespace {

MxQuantized mx_row(Format f, std::size_t k, uint8_t code, uint8_t scale) {
  MxQuantized q;
  q.rows = 1;
  q.cols = k;
  q.element = f;
  q.data.assign(k, code);
  q.scales.assign(q.scale_cols(), scale);
  return q;
}

// Guards against FP4 / FP6 operands being decoded with the wrong format or scale in mixed GEMMs:
// MXFP4 x MXFP4: 32 * (1.0 * 2^0) * (6 * 2^1) = 384; MXFP8 (E4M3 0x40 = 2) x MXFP4 (0x3 = 1.5):
// 64 * 2 * 1.5 * 2^-1 = 96 over two blocks; MXFP6 (E3M2 0x1F = 28) x MXFP8 (E5M2 0x3C = 1):
// 32 * 28 = 896.
TEST(Fp4Gemm, MxMixedFormatsExact) {
  struct Case {
    MxQuantized a, b;
    float want;
  };
  const Case cases[] = {
      {mx_row(Format::kE2M1, 32, 0x2, 127), mx_row(Format::kE2M1, 32, 0x7, 128), 384.0f},
      {mx_row(Format::kE4M3FN, 64, 0x40, 126), mx_row(Format::kE2M1, 64, 0x3, 127), 96.0f},
      {mx_row(Format::kE3M2, 32, 0x1F, 127), mx_row(Format::kE5M2, 32, 0x3C, 127), 896.0f},
  };
  for (const Case& c : cases) {
    const GemmProblem p = mx_gemm_problem(c.a, c.b, E8m0Decode::kOcp);
    const GemmOutput out = exact_gemm(p, OutputFormat::kFp32);
    ASSERT_EQ(out.fp32.size(), 1u);
    EXPECT_EQ(out.fp32[0], c.want) << info(c.a.element).name << " x " << info(c.b.element).name;
  }
}

GemmProblem nvfp4_problem(float alpha) {
  // A: 1 x 32, codes 0x2 (1.0), scales 0x38 (1.0); B: 1 x 32, codes 0x7 (6), scales 0x02
  // (subnormal 2^-8) and 0x30 (0.5): S = 16 * 6 * 2^-8 + 16 * 6 * 0.5 = 0.375 + 48 = 48.375.
  GemmProblem p;
  p.m = p.n = 1;
  p.k = 32;
  p.blocks = {1, kNvfp4Block, 1, kNvfp4Block};
  p.a.assign(32, decode(Format::kE2M1, 0x2));
  p.b.assign(32, decode(Format::kE2M1, 0x7));
  p.a_scale = {nvfp4_scale_value(0x38, false), nvfp4_scale_value(0x38, false)};
  p.b_scale = {nvfp4_scale_value(0x02, false), nvfp4_scale_value(0x30, false)};
  p.alpha = alpha;
  return p;
}

// Guards against 16-element blocks, the subnormal E4M3 scale or alpha (the product of both global
// decode scales) being mishandled: alpha = 2 * 3 = 6 gives 6 * 48.375 = 290.25 exactly; alpha =
// 0.1f gives fl32(0.1f * 48.375) (one epilogue rounding) in every mode; bf16 output rounds that
// fp32 once more (290.25 -> 290: bf16 spacing is 2 in [256, 512)).
TEST(Fp4Gemm, Nvfp4WithGlobalScales) {
  const GemmProblem p = nvfp4_problem(2.0f * 3.0f);
  EXPECT_EQ(exact_gemm(p, OutputFormat::kFp32).fp32[0], 290.25f);
  EXPECT_EQ(exact_gemm(p, OutputFormat::kBf16).bf16[0], 0x4391u);  // 290 = 0x4391 in bf16
  const OrderModel order{kNvfp4Block, ScaleApplication::kPerPartial, OutputFormat::kFp32};
  EXPECT_EQ(ordered_gemm(p, order).fp32[0], 290.25f);

  const GemmProblem q = nvfp4_problem(0.1f);
  const float want = 0.1f * 48.375f;  // fl32 of the fp32 product
  EXPECT_EQ(exact_gemm(q, OutputFormat::kFp32).fp32[0], want);
  EXPECT_EQ(ordered_gemm(q, order).fp32[0], want);
  AccumModel model;
  model.block_k = kNvfp4Block;
  const GemmBounds b = compute_bounds(q, model);
  EXPECT_EQ(b.exact[0], static_cast<double>(0.1f) * 48.375);
  GemmOutput actual = exact_gemm(q, OutputFormat::kFp32);
  EXPECT_TRUE(check_bound(b, actual).ok());
  // The bound: gamma_19 (1 product + 15 + 2 partial roundings + 1) * 48.375 * 0.1 ~ 5.5e-6 plus
  // the epilogue's half ulp; 2^-14 * 4.84 ~ 3e-4 is far outside it.
  actual.fp32[0] = want * (1 + 0x1p-14f);
  const BoundVerdict v = check_bound(b, actual);
  EXPECT_FALSE(v.ok());
}

// Guards against alpha = 1 changing the existing single-rounding bf16 result.
TEST(Fp4Gemm, AlphaOneKeepsSingleRounding) {
  const GemmProblem p = nvfp4_problem(1.0f);
  EXPECT_EQ(exact_gemm(p, OutputFormat::kFp32).fp32[0], 48.375f);
  EXPECT_EQ(exact_gemm(p, OutputFormat::kBf16).bf16[0], 0x4242u);  // 48.375 -> 48.5 (RNE)
}

}  // namespace
}  // namespace mxgate
