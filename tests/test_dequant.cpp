// Covers reference/dequant: MX dequantization to fp32 (element * 2^(byte - 127), exact) and to
// bf16 (one RNE rounding of the fp32 product), the e8m0 decode policies at bytes 0x00 and 0xFF
// (ocp, shift, exp2_cuda, shift_mask_nan) including BUG Z5 (shift upcast of a scale byte 0 in
// one quantized block), block-FP8 dequantization (element * fp32 scale, one rounded fp32
// multiply, then bf16 from that fp32 product), and the GEMM problems built from quantized
// operands (decoded values, scale grids, block sizes, K mismatch and bad sizes throw).
// Expected values come from docs/formats.md §2.2, §3.5, §5.4, §6 item 10, docs/bug_classes.md §2 Z5
// and docs/conventions.md §3.5, computed by test-local decoders (E4M3FN by its defining formula,
// bf16 RNE in double precision), never by the code under test. Does not cover: quantization
// (test_mx_quant.cpp, test_block_quant.cpp), the GEMM oracle itself (test_gemm_oracle_*.cpp),
// E5M2 / FNUZ element decoding, or bf16_gemm_problem beyond its sizes.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/gemm_oracle.h"
#include "reference/quant_conventions.h"

namespace mxgate {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kNanD = std::numeric_limits<double>::quiet_NaN();

// E4M3FN by its defining formula (docs/formats.md §1.1), independent of the format codecs: exponent
// field e, mantissa m: e = 0 -> m * 2^-9, else (8 + m) * 2^(e - 10); S.1111.111 = NaN.
double e4m3_value(uint8_t code) {
  const int e = (code >> 3) & 15, m = code & 7;
  if (e == 15 && m == 7) return kNanD;
  const double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
  return (code & 0x80) ? -mag : mag;
}

// bf16 bits of the RNE rounding of an exact double (8 significant bits, exponent range of fp32,
// subnormal quantum 2^-133, overflow to Inf at 2^128 - 2^119 (max + half ulp)), test-local.
uint16_t bf16_rne(double x) {
  if (std::isnan(x)) return 0x7FC0;
  const bool neg = std::signbit(x);
  const double a = std::fabs(x);
  double r;
  if (a < 0x1p-126) {
    r = std::nearbyint(a / 0x1p-133) * 0x1p-133;  // default rounding mode: nearest-even
  } else {
    int e;
    std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
    const double q = std::ldexp(1.0, e - 8);
    r = std::nearbyint(a / q) * q;
  }
  uint16_t bits;
  if (r >= 0x1p128) {
    bits = 0x7F80;
  } else {
    bits = static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(r)) >> 16);
  }
  return static_cast<uint16_t>(bits | (neg ? 0x8000 : 0));
}

MxPolicy mx_policy_of(std::string_view convention) {
  return require_mx_policy(require_convention(convention));
}

E8m0Decode decode_of(std::string_view convention) {
  return require_convention(convention).e8m0_decode;
}

// One row of MX data with the given element codes (cols = codes.size()) and scale bytes.
MxQuantized mx_row(const std::vector<uint8_t>& codes, const std::vector<uint8_t>& scales) {
  MxQuantized q;
  q.rows = 1;
  q.cols = codes.size();
  q.element = Format::kE4M3FN;
  q.data = codes;
  q.scales = scales;
  return q;
}

bool same_float(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) ||
         (std::isnan(a) && std::isnan(b));
}

// Guards against an MX fp32 dequant that is not element * 2^(byte - 127) exactly (OCP decode,
// docs/formats.md §2, §2.2): every E4M3FN code in 8 blocks of 32, each under scale bytes 0, 1, 60,
// 119, 127, 135, 200, 254. The product of a <= 4-bit significand and a power of two >= 2^-127 is
// >= 2^-136 with an lsb >= 2^-139, so it is exact in fp32 or overflows to Inf.
TEST(MxDequant, Fp32IsElementTimesPowerOfTwoExactly) {
  std::vector<uint8_t> codes(256);
  for (int c = 0; c < 256; ++c) codes[c] = static_cast<uint8_t>(c);
  for (uint8_t byte : {0, 1, 60, 119, 127, 135, 200, 254}) {
    const MxQuantized q = mx_row(codes, std::vector<uint8_t>(8, byte));
    const std::vector<float> out = dequantize_mx(q, E8m0Decode::kOcp);
    ASSERT_EQ(out.size(), 256u);
    for (int c = 0; c < 256; ++c) {
      const double exact = std::ldexp(e4m3_value(static_cast<uint8_t>(c)), byte - 127);
      // Exact, or +-Inf: a 4-bit significand above FLT_MAX is >= 2^128.
      const float want =
          std::fabs(exact) >= 0x1p128 ? (exact > 0 ? kInf : -kInf) : static_cast<float>(exact);
      if (!std::isinf(want) && !std::isnan(want)) {
        ASSERT_EQ(static_cast<double>(want), exact);
      }
      EXPECT_TRUE(same_float(out[c], want))
          << "code " << c << " byte " << int(byte) << ": " << out[c] << " vs " << want;
    }
  }
}

// Guards against a bf16 dequant that rounds twice or rounds the wrong way (docs/formats.md §3.5:
// fp32 intermediate, one bf16 rounding). Because the fp32 product is exact (above), one RNE
// rounding of it equals one RNE rounding of the exact product, and also equals vLLM gen-1's bf16 x
// bf16 multiply (E4M3 elements and 2^k scales are exact in bf16): the paths cannot differ, so the
// test checks every code against bf16_rne(exact). Rounding happens only below bf16's normal
// range, e.g. byte 0: 0x01 -> 2^-136 = 0.125 * 2^-133 -> +0; 0x04 -> 0.5 * 2^-133, tie -> +0;
// 0x05 -> 0.625 -> 1 (bits 0x0001); 0x0C = 1.5 * 2^-6 -> 1.5 * 2^-133, tie -> 2 (0x0002).
TEST(MxDequant, Bf16IsOneRoundingOfTheExactProduct) {
  std::vector<uint8_t> codes(256);
  for (int c = 0; c < 256; ++c) codes[c] = static_cast<uint8_t>(c);
  for (uint8_t byte : {0, 1, 2, 60, 119, 127, 135, 200, 254}) {
    const MxQuantized q = mx_row(codes, std::vector<uint8_t>(8, byte));
    const std::vector<uint16_t> out = dequantize_mx_bf16(q, E8m0Decode::kOcp);
    ASSERT_EQ(out.size(), 256u);
    for (int c = 0; c < 256; ++c) {
      const double v = e4m3_value(static_cast<uint8_t>(c));
      if (std::isnan(v)) {
        EXPECT_EQ(out[c] & 0x7F80, 0x7F80) << "code " << c;
        EXPECT_NE(out[c] & 0x7F, 0) << "code " << c << " must stay NaN";
        continue;
      }
      EXPECT_EQ(out[c], bf16_rne(std::ldexp(v, byte - 127)))
          << "code " << c << " byte " << int(byte);
    }
  }
  const MxQuantized q = mx_row({0x01, 0x04, 0x05, 0x0C, 0x84, 0x8C}, {0});
  const std::vector<uint16_t> out = dequantize_mx_bf16(q, E8m0Decode::kOcp);
  EXPECT_EQ(out[0], 0x0000);
  EXPECT_EQ(out[1], 0x0000);
  EXPECT_EQ(out[2], 0x0001);
  EXPECT_EQ(out[3], 0x0002);
  EXPECT_EQ(out[4], 0x8000);
  EXPECT_EQ(out[5], 0x8002);
}

// Guards against an e8m0 decode policy mixing up 0x00 and 0xFF (docs/formats.md §2.2, §6 item 10;
// device rows "torch: 2^-127 ... nan", "torch.exp2(e-127) on CUDA: 0x1.fffff8p-128 ... inf", "(e <<
// 23): 0.0 ... inf"; Triton's maskNan selects NaN for 0xFF, §4). Element 1.0 (0x38) and 0.0 (0x00).
TEST(MxDequant, ScaleDecodePoliciesAtTheEdgeBytes) {
  const MxQuantized zero_byte = mx_row(std::vector<uint8_t>(32, 0x38), {0x00});
  EXPECT_EQ(dequantize_mx(zero_byte, E8m0Decode::kOcp)[0], 0x1p-127f);
  EXPECT_EQ(std::bit_cast<uint32_t>(dequantize_mx(zero_byte, E8m0Decode::kShift)[0]), 0u);
  EXPECT_EQ(dequantize_mx(zero_byte, E8m0Decode::kExp2Cuda)[0], 0x1.fffff8p-128f);
  EXPECT_EQ(std::bit_cast<uint32_t>(dequantize_mx(zero_byte, E8m0Decode::kShiftMaskNan)[0]), 0u);
  // bf16 of each: 2^-127 = bf16 subnormal 0x0040; 0x1.fffff8p-128 = 64 * 2^-133 (1 - 2^-22) ->
  // 0x0040; +0 -> 0x0000.
  EXPECT_EQ(dequantize_mx_bf16(zero_byte, E8m0Decode::kOcp)[0], 0x0040);
  EXPECT_EQ(dequantize_mx_bf16(zero_byte, E8m0Decode::kExp2Cuda)[0], 0x0040);
  EXPECT_EQ(dequantize_mx_bf16(zero_byte, E8m0Decode::kShift)[0], 0x0000);

  std::vector<uint8_t> codes(32, 0x38);
  codes[1] = 0x00;
  const MxQuantized ff_byte = mx_row(codes, {0xFF});
  EXPECT_TRUE(std::isnan(dequantize_mx(ff_byte, E8m0Decode::kOcp)[0]));
  EXPECT_EQ(dequantize_mx(ff_byte, E8m0Decode::kShift)[0], kInf);
  EXPECT_EQ(dequantize_mx(ff_byte, E8m0Decode::kExp2Cuda)[0], kInf);
  EXPECT_TRUE(std::isnan(dequantize_mx(ff_byte, E8m0Decode::kShiftMaskNan)[0]));
  // 0 * +Inf = NaN under the shift decodes; 0 * NaN = NaN under ocp.
  EXPECT_TRUE(std::isnan(dequantize_mx(ff_byte, E8m0Decode::kShift)[1]));
  EXPECT_TRUE(std::isnan(dequantize_mx(ff_byte, E8m0Decode::kOcp)[1]));
}

// Guards against BUG Z5 (shift-based e8m0 upcast, vLLM _upcast_e8m0_to_fp32): one block
// quantized by ocp_mx with subnormal amax 2^-130 gets scale byte 0 (FLOOR clamps -138 to -127)
// and element 2^-130 * 2^127 = 2^-3 = 0x20. The OCP decode gives back 2^-3 * 2^-127 = 2^-130
// exactly; vllm_e8m0_shift's decode gives 2^-3 * 0 = 0: the block silently vanishes.
TEST(MxDequant, ShiftUpcastOfByteZeroLosesTheBlock) {
  std::vector<float> x(32, 0.0f);
  x[0] = 0x1p-130f;
  const MxQuantized q = quantize_mx(x, 1, 32, Format::kE4M3FN, mx_policy_of("ocp_mx"));
  ASSERT_EQ(q.scales[0], 0x00);
  ASSERT_EQ(q.data[0], 0x20);
  const std::vector<float> ocp = dequantize_mx(q, decode_of("ocp_mx"));
  const std::vector<float> shift = dequantize_mx(q, decode_of("vllm_e8m0_shift"));
  EXPECT_EQ(ocp[0], 0x1p-130f);
  EXPECT_EQ(shift[0], 0.0f);
  EXPECT_NE(ocp[0], shift[0]) << "shift upcast must differ from OCP on a byte-0 block";
}

// Guards against a block dequant that skips the fp32 rounding of element * scale, or rounds
// the exact product straight to bf16 (docs/formats.md §5.4: AITER reference "x.to(fp32) * x_scale";
// dequant.h: bf16 is the fp32 product rounded once). Element 1.5 (0x3C), fp32 scale
// 0x1.035556p-1: exact product 0x1.850001p-1 is an fp32 tie -> even -> 0x1.85p-1, which is a
// bf16 tie between 0x1.84p-1 (fraction 66, even) and 0x1.86p-1 -> 0x1.84p-1 = bits 0x3F42. One
// rounding of the exact product would give 0x1.86p-1 = 0x3F43.
TEST(BlockDequant, ElementTimesFp32ScaleRoundedInFp32) {
  BlockQuantized q;
  q.rows = 1;
  q.cols = 2;
  q.block_rows = 1;
  q.block_cols = kBlockK;
  q.element = Format::kE4M3FN;
  q.data = {0x3C, 0x7E};
  q.scales = {0x1.035556p-1f};
  const std::vector<float> f = dequantize_block(q);
  EXPECT_EQ(f[0], 0x1.85p-1f);
  // 448 * s: 4-bit x 24-bit significands, exact in double; expected = one fp32 rounding of it.
  EXPECT_EQ(f[1], static_cast<float>(448.0 * static_cast<double>(0x1.035556p-1f)));
  const std::vector<uint16_t> b = dequantize_block_bf16(q);
  EXPECT_EQ(b[0], 0x3F42);
  EXPECT_NE(b[0], bf16_rne(1.5 * static_cast<double>(0x1.035556p-1f)));
}

// Guards against block dequant reading the scale of the wrong block: weights 256 x 256 with
// 128 x 128 blocks, each block's scale a distinct power of two, element 1.0 everywhere.
TEST(BlockDequant, WeightScaleGridIndexing) {
  BlockQuantized q;
  q.rows = 256;
  q.cols = 200;  // partial second block column
  q.block_rows = kBlockK;
  q.block_cols = kBlockK;
  q.element = Format::kE4M3FN;
  q.data.assign(q.rows * q.cols, 0x38);
  q.scales = {0x1p-1f, 0x1p-2f, 0x1p-3f, 0x1p-4f};
  const std::vector<float> f = dequantize_block(q);
  EXPECT_EQ(f[0 * 200 + 0], 0x1p-1f);
  EXPECT_EQ(f[127 * 200 + 199], 0x1p-2f);
  EXPECT_EQ(f[128 * 200 + 127], 0x1p-3f);
  EXPECT_EQ(f[255 * 200 + 128], 0x1p-4f);
  q.scales.pop_back();
  EXPECT_THROW(dequantize_block(q), std::invalid_argument);
}

// A GEMM problem's (M, N, K) and block sizes (A a_m x a_k, B b_n x b_k), field by field so a
// failure names the field.
void expect_shape(const GemmProblem& g, std::size_t m, std::size_t n, std::size_t k,
                  const BlockSizes& blocks) {
  EXPECT_EQ(g.m, m);
  EXPECT_EQ(g.n, n);
  EXPECT_EQ(g.k, k);
  EXPECT_EQ(g.blocks.a_m, blocks.a_m);
  EXPECT_EQ(g.blocks.a_k, blocks.a_k);
  EXPECT_EQ(g.blocks.b_n, blocks.b_n);
  EXPECT_EQ(g.blocks.b_k, blocks.b_k);
}

// Guards against mx_gemm_problem handing the oracle raw bytes, the wrong decode rule, or wrong
// sizes: A 2 x 64 and B 3 x 64 (two 1x32 blocks each), scale byte 0 decoded by the chosen rule.
TEST(GemmProblems, MxOperandsDecoded) {
  MxQuantized a;
  a.rows = 2;
  a.cols = 64;
  a.data.assign(128, 0x38);  // 1.0
  a.data[1] = 0xC0;          // -2.0
  a.scales = {0x00, 0x7F, 0x80, 0xFE};
  MxQuantized b;
  b.rows = 3;
  b.cols = 64;
  b.data.assign(192, 0x30);  // 0.5
  b.scales = {0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x01};
  const GemmProblem ocp = mx_gemm_problem(a, b, E8m0Decode::kOcp);
  expect_shape(ocp, 2, 3, 64, {1, 32, 1, 32});
  ASSERT_EQ(ocp.a.size(), 128u);
  ASSERT_EQ(ocp.b.size(), 192u);
  EXPECT_EQ(ocp.a[0], 1.0f);
  EXPECT_EQ(ocp.a[1], -2.0f);
  EXPECT_EQ(ocp.b[5], 0.5f);
  ASSERT_EQ(ocp.a_scale.size(), 4u);
  ASSERT_EQ(ocp.b_scale.size(), 6u);
  EXPECT_EQ(ocp.a_scale[0], 0x1p-127f);
  EXPECT_EQ(ocp.a_scale[1], 1.0f);
  EXPECT_EQ(ocp.a_scale[2], 2.0f);
  EXPECT_EQ(ocp.a_scale[3], 0x1p127f);
  EXPECT_EQ(ocp.b_scale[5], 0x1p-126f);
  EXPECT_NO_THROW(validate_gemm_problem(ocp));
  const GemmProblem shift = mx_gemm_problem(a, b, E8m0Decode::kShift);
  EXPECT_EQ(shift.a_scale[0], 0.0f);
  EXPECT_EQ(shift.a_scale[1], 1.0f);
  // K mismatch and inconsistent sizes throw.
  MxQuantized b2 = b;
  b2.cols = 32;
  b2.data.resize(96);
  b2.scales.resize(3);
  EXPECT_THROW(mx_gemm_problem(a, b2, E8m0Decode::kOcp), std::invalid_argument);
  MxQuantized a2 = a;
  a2.scales.pop_back();
  EXPECT_THROW(mx_gemm_problem(a2, b, E8m0Decode::kOcp), std::invalid_argument);
  a2 = a;
  a2.data.pop_back();
  EXPECT_THROW(mx_gemm_problem(a2, b, E8m0Decode::kOcp), std::invalid_argument);
}

// Guards against block_gemm_problem mislabeling the block shapes (A 1x128 groups, B 128x128
// blocks) or altering fp32 scales: quantized by deepgemm from real data, K = 256.
TEST(GemmProblems, BlockOperandsDecoded) {
  std::vector<float> xa(2 * 256, 1.0f), xb(3 * 256, 2.0f);
  xa[256 + 200] = 448.0f;  // row 1, group 1
  const BlockPolicy p =
      require_block_policy(require_convention("deepgemm"), Format::kE4M3FN, false);
  const BlockQuantized a = quantize_block(xa, 2, 256, 1, kBlockK, Format::kE4M3FN, p);
  const BlockQuantized b = quantize_block(xb, 3, 256, kBlockK, kBlockK, Format::kE4M3FN, p);
  const GemmProblem g = block_gemm_problem(a, b);
  expect_shape(g, 2, 3, 256, {1, 128, 128, 128});
  ASSERT_EQ(g.a_scale.size(), 4u);  // 2 x ceil(256/128)
  ASSERT_EQ(g.b_scale.size(), 2u);  // ceil(3/128) x 2
  EXPECT_EQ(g.a_scale[0], 1.0f / 448.0f);
  EXPECT_EQ(g.a_scale[2], 1.0f / 448.0f);
  EXPECT_EQ(g.a_scale[3], 1.0f);  // 448 / 448
  EXPECT_EQ(g.b_scale[0], 2.0f / 448.0f);
  ASSERT_EQ(g.a.size(), 512u);
  EXPECT_EQ(g.a[456], 448.0f);  // 448 * fl32(1/1.0) = 448 -> 0x7E -> 448
  EXPECT_EQ(g.a[0], 448.0f);    // 1 * fl32(1 / (1/448)) = 447.99997 -> 0x7E -> 448
  const BlockQuantized b_short = quantize_block(std::vector<float>(3 * 128, 1.0f), 3, 128, kBlockK,
                                                kBlockK, Format::kE4M3FN, p);
  EXPECT_THROW(block_gemm_problem(a, b_short), std::invalid_argument);
}

// Guards against bf16_gemm_problem accepting operands of the wrong size.
TEST(GemmProblems, Bf16SizesChecked) {
  const std::vector<uint16_t> a(6, 0x3F80), b(9, 0x4000);
  const GemmProblem g = bf16_gemm_problem(a, b, 2, 3, 3);
  EXPECT_EQ(g.a[0], 1.0f);
  EXPECT_EQ(g.b[0], 2.0f);
  EXPECT_THROW(bf16_gemm_problem(a, b, 2, 3, 4), std::invalid_argument);
}

}  // namespace
}  // namespace mxgate
