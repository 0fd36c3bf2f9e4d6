// Covers reference/block_quant and the block half of reference/quant_conventions: DeepSeek-style
// block FP8 with 1x128 activation groups and 128x128 weight blocks (docs/formats.md §5):
// fp32 scales = amax / max by IEEE division, the eps of each convention (vLLM 1e-10, DeepGEMM
// 1e-4), the UE8M0 modes (vLLM CUDA log2f with the 1e-10 clamp, vLLM Triton without it,
// DeepGEMM ceil_to_ue8m0 clamped to [1, 254], AITER bit ceil), NaN and Inf elements (vLLM's
// fminf(fmaxf(NaN, -max), max) = -max, DeepGEMM's NaN amax), DeepGEMM's reciprocal multiply
// against vLLM's division, the fnuz max 224 (BUG Z11), the log2f ceil hazard (Z8), the payload
// requantized with the power-of-two scale (Z14), partial blocks (K or N not a multiple of 128:
// the scale grid is the ceiling), a scale-index fingerprint over a 2 x 3 weight grid, and shape
// validation. Expected values are derived by hand from docs/formats.md (§5.1-§5.3, §6 item 4, §6
// items 13-15) and docs/conventions.md §3, never from the code under test. Does not cover: MX 1x32
// quantization (test_mx_quant.cpp), dequantization (test_dequant.cpp), packed-int32 UE8M0 layouts,
// or vLLM's bit-ceil register path as a named convention.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reference/block_quant.h"
#include "reference/convention.h"
#include "reference/format.h"
#include "reference/quant_conventions.h"

namespace mxgate {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

BlockPolicy policy_of(std::string_view convention, bool ue8m0, Format element = Format::kE4M3FN) {
  return require_block_policy(require_convention(convention), element, ue8m0);
}

// One 1x128 activation group: probe values first, +0.0 after.
BlockQuantized quantize_group(const std::vector<float>& probe, const BlockPolicy& policy,
                              Format element = Format::kE4M3FN) {
  std::vector<float> x(kBlockK, 0.0f);
  for (std::size_t i = 0; i < probe.size(); ++i) x[i] = probe[i];
  return quantize_block(x, 1, kBlockK, 1, kBlockK, element, policy);
}

// Guards against a convention without a block quantizer growing one by accident (docs/formats.md §5
// names vLLM per_token_group_quant, DeepGEMM and AITER only).
TEST(BlockPolicy, OnlyTheDeepSeekQuantizersHaveOne) {
  for (const Convention& c : all_conventions()) {
    const bool has = c.name == "vllm_group_quant" || c.name == "deepgemm" || c.name == "aiter_hip";
    EXPECT_EQ(block_policy(c, Format::kE4M3FN, false).has_value(), has) << c.name;
  }
}

// Guards against a scale computed as amax * fl32(1/448) (or any other formula) where the source
// divides: y_s = absmax / max_8bit, IEEE division (docs/formats.md §5.1; DeepGEMM sf = amax /
// 448.0, §5.2). amax 13: 13/448 = (13/7) * 2^-6, 13/7 = 1.110110110..b truncates at bit 23 (next
// bit 0) -> 0x1.db6db6p-6, while 13 * fl32(1/448) rounds to 0x1.db6db8p-6. The two groups of each
// row land at their own index; a negative amax element counts by |x|.
TEST(BlockActivations, ScaleIsAmaxOver448ByDivision) {
  const std::size_t rows = 2, cols = 256;
  std::vector<float> x(rows * cols, 0.0f);
  x[5] = 300.0f;         // row 0 group 0
  x[6] = 100.0f;         //
  x[130] = 13.0f;        // row 0 group 1
  x[131] = 1.21875f;     //
  x[256 + 0] = 1e-3f;    // row 1 group 0
  x[256 + 255] = -7.5f;  // row 1 group 1
  for (std::string_view conv : {"vllm_group_quant", "deepgemm", "aiter_hip"}) {
    const BlockQuantized q =
        quantize_block(x, rows, cols, 1, kBlockK, Format::kE4M3FN, policy_of(conv, false));
    ASSERT_EQ(q.scale_rows(), 2u);
    ASSERT_EQ(q.scale_cols(), 2u);
    ASSERT_EQ(q.scales.size(), 4u);
    EXPECT_EQ(q.scales[0], 300.0f / 448.0f) << conv;
    EXPECT_EQ(q.scales[1], 0x1.db6db6p-6f) << conv;
    EXPECT_NE(q.scales[1], 0x1.db6db8p-6f) << conv << ": scale = amax * fl32(1/448)";
    EXPECT_EQ(q.scales[2], 1e-3f / 448.0f) << conv;
    EXPECT_EQ(q.scales[3], 7.5f / 448.0f) << conv;
    // 300 / fl32(300/448) = 448 exactly = 0x7E; 100 / fl32(300/448) = 149.33 -> 144 (e=14, m=1)
    // = 0x71; -7.5 / (7.5/448) ~ -448 -> 0xFE.
    EXPECT_EQ(q.data[5], 0x7E) << conv;
    EXPECT_EQ(q.data[6], 0x71) << conv;
    EXPECT_EQ(q.data[256 + 255], 0xFE) << conv;
  }
}

// Guards against weight scales landing at the wrong (block row, block col) or a block that is
// not 128 x 128: N = 256, K = 384 gives a 2 x 3 grid; block (br, bc) holds amax 2^(3br+bc) + 1
// at a position inside it that varies with the block, so every scale is distinct.
TEST(BlockWeights, Fingerprint128x128) {
  const std::size_t n = 256, k = 384;
  std::vector<float> w(n * k, 0.0f);
  auto amax = [](std::size_t br, std::size_t bc) {
    return std::ldexp(1.0f, static_cast<int>(3 * br + bc)) + 1.0f;
  };
  for (std::size_t br = 0; br < 2; ++br) {
    for (std::size_t bc = 0; bc < 3; ++bc) {
      const std::size_t r = br * 128 + (17 * bc + 40 * br) % 128;
      const std::size_t c = bc * 128 + (29 * br + 3 * bc) % 128;
      w[r * k + c] = amax(br, bc);
    }
  }
  const BlockQuantized q =
      quantize_block(w, n, k, kBlockK, kBlockK, Format::kE4M3FN, policy_of("deepgemm", false));
  ASSERT_EQ(q.scale_rows(), 2u);
  ASSERT_EQ(q.scale_cols(), 3u);
  ASSERT_EQ(q.scales.size(), 6u);
  for (std::size_t br = 0; br < 2; ++br) {
    for (std::size_t bc = 0; bc < 3; ++bc) {
      EXPECT_EQ(q.scales[br * 3 + bc], amax(br, bc) / 448.0f) << "br=" << br << " bc=" << bc;
    }
  }
}

// Guards against the wrong eps for an all-zero group (docs/formats.md §5.1 "non-UE8M0 -> 1e-10/448
// ~ 2.23e-13"; §5.2 amax.clamp(1e-4); AITER seeds 1e-10, §3.6). Elements 0 / s = 0 -> 0x00.
TEST(BlockEps, ZeroGroupFp32Scale) {
  struct Row {
    std::string_view conv;
    float scale;
  };
  for (const Row& r : {Row{"vllm_group_quant", 1e-10f / 448.0f}, Row{"deepgemm", 1e-4f / 448.0f},
                       Row{"aiter_hip", 1e-10f / 448.0f}}) {
    const BlockQuantized q = quantize_group({}, policy_of(r.conv, false));
    EXPECT_EQ(q.scales[0], r.scale) << r.conv;
    for (uint8_t b : q.data) EXPECT_EQ(b, 0x00) << r.conv;
  }
}

// Guards against the wrong UE8M0 power of two for an all-zero group (docs/formats.md §5.1, §6 item
// 14): vLLM CUDA: y_s = 1e-10/448 = 2.2e-13, clamped up to 1e-10, log2f = -33.2 -> ceil -33 ->
// 2^-33. vLLM Triton (no clamp after the division): log2(2.2e-13) = -42.03 -> 2^-42. DeepGEMM:
// 1e-4/448 = 2.23e-7, log2 = -22.1 -> ceil -> 2^-22 (the [1, 254] clamp of §5.2 does not bite: byte
// 105). AITER (bit ceil of 1e-10/448): 2^-42, the "byte 85" of §3.6.
TEST(BlockUe8m0, ZeroGroupPowerOfTwo) {
  EXPECT_EQ(quantize_group({}, policy_of("vllm_group_quant", true)).scales[0], 0x1p-33f);
  BlockPolicy triton = policy_of("vllm_group_quant", true);
  triton.ue8m0_floor = 0.0f;
  EXPECT_EQ(quantize_group({}, triton).scales[0], 0x1p-42f);
  EXPECT_EQ(quantize_group({}, policy_of("deepgemm", true)).scales[0], 0x1p-22f);
  EXPECT_EQ(quantize_group({}, policy_of("aiter_hip", true)).scales[0], 0x1p-42f);
}

// Guards against DeepGEMM's ceil_to_ue8m0 clamp being lost (docs/formats.md §5.2 "clamp(1, 254)":
// NaN/Inf amax -> 2^127; 0/subnormal -> 2^-126, §6 items 6 and 8): only reachable without the 1e-4
// eps, so block_scale is called directly with eps 0.
TEST(BlockUe8m0, DeepGemmClampOneTo254) {
  BlockPolicy p = policy_of("deepgemm", true);
  p.eps = 0.0f;
  EXPECT_EQ(block_scale(0.0f, p), 0x1p-126f);
  EXPECT_EQ(block_scale(0x1p-140f, p), 0x1p-126f);  // 2^-140 / 448 is a subnormal
  EXPECT_EQ(block_scale(kInf, p), 0x1p127f);
  EXPECT_EQ(block_scale(kNan, p), 0x1p127f);
  // In range it is the bit ceil: 1/448 = 2^-8.8 -> 2^-8; 448/448 = 1 -> 2^0.
  EXPECT_EQ(block_scale(1.0f, p), 0x1p-8f);
  EXPECT_EQ(block_scale(448.0f, p), 1.0f);
}

// Guards against a NaN element escaping vLLM's clamp (docs/formats.md §5.1 / §6 item 13: fmaxf
// ignores NaN in the amax; fminf(fmaxf(NaN, -448), 448) = -448 -> stored as 0xFE). Group
// [NaN, 1.0]: amax 1.0, fp32 scale 1/448 (1.0 / s = 447.99997 -> 448 = 0x7E); UE8M0: log2f(1/448) =
// -8.8 -> 2^-8, 1.0 * 2^8 = 256 = 0x78.
TEST(BlockNan, VllmStoresNanAsMinus448) {
  BlockQuantized q = quantize_group({kNan, 1.0f}, policy_of("vllm_group_quant", false));
  EXPECT_EQ(q.scales[0], 1.0f / 448.0f);
  EXPECT_EQ(q.data[0], 0xFE);
  EXPECT_EQ(q.data[1], 0x7E);
  q = quantize_group({kNan, 1.0f}, policy_of("vllm_group_quant", true));
  EXPECT_EQ(q.scales[0], 0x1p-8f);
  EXPECT_EQ(q.data[0], 0xFE);
  EXPECT_EQ(q.data[1], 0x78);
}

// Guards against the Inf-element path of vLLM (docs/formats.md §5.1: "+Inf element makes y_s = inf,
// then Inf/Inf = NaN -> -448 and all finite elements -> 0"): [Inf, 1, -1] -> 0xFE, 0x00, -0 =
// 0x80 (fmaxf(-0, -448) = -0), with and without UE8M0 (exp2f(inf) = inf).
TEST(BlockInf, VllmInfElementBecomesMinus448) {
  for (bool ue8m0 : {false, true}) {
    const BlockQuantized q =
        quantize_group({kInf, 1.0f, -1.0f}, policy_of("vllm_group_quant", ue8m0));
    EXPECT_EQ(q.scales[0], kInf) << ue8m0;
    EXPECT_EQ(q.data[0], 0xFE) << ue8m0;
    EXPECT_EQ(q.data[1], 0x00) << ue8m0;
    EXPECT_EQ(q.data[2], 0x80) << ue8m0;
  }
}

// Guards against DeepGEMM's NaN group losing its NaN-propagating amax (docs/formats.md §6 item 13:
// "gets scale 2^127 and the block collapses to 0 except the NaN"; torch amax and clamp propagate
// NaN). UE8M0: ceil_to_ue8m0(NaN) = 2^127; NaN -> 0x7F (SATFINITE NaN, device "nan -> 7f"), 1 *
// 2^-127 -> 0x00, -1 * 2^-127 -> 0x80. fp32 scale: NaN / 448 = NaN, x * (1/NaN) = NaN everywhere.
TEST(BlockNan, DeepGemmNanAmax) {
  BlockQuantized q = quantize_group({kNan, 1.0f, -1.0f}, policy_of("deepgemm", true));
  EXPECT_EQ(q.scales[0], 0x1p127f);
  EXPECT_EQ(q.data[0], 0x7F);
  EXPECT_EQ(q.data[1], 0x00);
  EXPECT_EQ(q.data[2], 0x80);
  EXPECT_EQ(q.data[3], 0x00);
  q = quantize_group({kNan, 1.0f, -1.0f}, policy_of("deepgemm", false));
  EXPECT_TRUE(std::isnan(q.scales[0]));
  for (uint8_t b : q.data) EXPECT_EQ(b & 0x7F, 0x7F);
}

// Guards against DeepGEMM's x * fl32(1/s) being replaced by vLLM's x / s or vice versa
// (docs/formats.md §5.2 "with fp32 sf that reciprocal is rounded"; §5.1 "x / y_s"). Group amax 13,
// element 1.21875 = 39/32. s = 0x1.db6db6p-6 = (13/7)(1 - (3/13) 2^-23) 2^-6 (see above).
// vLLM: x / s = 42 (1 + (3/13) 2^-23) = 42 + 0.30 ulp -> 42.0, the midpoint of 40 (e=12, m=2)
// and 44 -> even -> 40 = 0x62. DeepGEMM / AITER: fl32(1/s) = (14/13 + (6/13) 2^-23) 2^5 (the
// remainder 7/13 + 0.25 ulp rounds up), x * that = 42 + 18 * 2^-23 = 42 + 0.56 ulp ->
// 0x1.500002p+5, above the midpoint -> 44 = 0x63.
TEST(BlockElementScaling, ReciprocalMultiplyVersusDivide) {
  const std::vector<float> g = {13.0f, 1.21875f};
  const BlockQuantized v = quantize_group(g, policy_of("vllm_group_quant", false));
  const BlockQuantized d = quantize_group(g, policy_of("deepgemm", false));
  const BlockQuantized a = quantize_group(g, policy_of("aiter_hip", false));
  ASSERT_EQ(v.scales[0], 0x1.db6db6p-6f);
  ASSERT_EQ(d.scales[0], 0x1.db6db6p-6f);
  EXPECT_EQ(v.data[1], 0x62);
  EXPECT_EQ(d.data[1], 0x63);
  EXPECT_EQ(a.data[1], 0x63);
  // With a power-of-two scale the two are the same (both exact): UE8M0 2^-5 (13/448 = 2^-5.1),
  // 1.21875 * 32 = 39 -> between 36 (m=1) and 40 (m=2), nearer 40 = 0x62.
  EXPECT_EQ(quantize_group(g, policy_of("vllm_group_quant", true)).data[1], 0x62);
  EXPECT_EQ(quantize_group(g, policy_of("deepgemm", true)).data[1], 0x62);
}

// Guards against BUG Z11 (the wrong fp8 max constant): vLLM quantizes E4M3FNUZ with max 224, not
// the format's 240 (docs/formats.md §5.1 get_fp8_min_max, §6 item 4); on E4M3FN it uses 448. Group
// amax 300 (> 240): fnuz scale 300/224, element 300 -> 224 = fnuz (bias 8) e=15, m=6 = 0x7E (not
// the max code 0x7F); 240 -> 179.2 -> 176 (m=3) = 0x7B. On E4M3FN: 300/448, 300 -> 448 = 0x7E, 240
// -> 358.4 -> 352 (e=15, m=3) = 0x7B. AITER on fnuz uses the format max 240 (§3.6): 300 -> 240 =
// 0x7F.
TEST(BlockFp8Max, VllmFnuzUses224) {
  const std::vector<float> g = {300.0f, 240.0f};
  BlockQuantized q =
      quantize_group(g, policy_of("vllm_group_quant", false, Format::kE4M3FNUZ), Format::kE4M3FNUZ);
  EXPECT_EQ(q.scales[0], 300.0f / 224.0f);
  EXPECT_NE(q.scales[0], 300.0f / 240.0f);
  EXPECT_EQ(q.data[0], 0x7E);
  EXPECT_EQ(q.data[1], 0x7B);
  q = quantize_group(g, policy_of("vllm_group_quant", false, Format::kE4M3FN));
  EXPECT_EQ(q.scales[0], 300.0f / 448.0f);
  EXPECT_EQ(q.data[0], 0x7E);
  EXPECT_EQ(q.data[1], 0x7B);
  q = quantize_group(g, policy_of("aiter_hip", false, Format::kE4M3FNUZ), Format::kE4M3FNUZ);
  EXPECT_EQ(q.scales[0], 300.0f / 240.0f);
  EXPECT_EQ(q.data[0], 0x7F);
}

// Guards against BUG Z8 (log2-based exponent ceil), docs/formats.md §5.3. amax = 1.75 * 2^-118 + 1
// ulp: amax / 448 = 2^-126 (1 + 2^-23 / 1.75) -> 0x1.000002p-126. log2f gives -126 + 1.7e-7,
// within half an ulp (2^-18 at |x| in [64, 128)) of -126, so exp2f(ceilf(log2f)) = 2^-126 where
// the bit ceil gives 2^-125 (device: "first: 0x1.000002p-126"). The vLLM CUDA clamp to 1e-10
// hides this y (2^-33); the Triton path (no clamp) shows it.
TEST(BlockUe8m0, Log2fCeilHazardAtTheBottom) {
  const float amax = std::nextafter(0x1.cp-118f, 1.0f);
  ASSERT_EQ(amax / 448.0f, 0x1.000002p-126f);
  BlockPolicy triton = policy_of("vllm_group_quant", true);
  triton.ue8m0_floor = 0.0f;
  EXPECT_EQ(block_scale(amax, triton), 0x1p-126f);
  BlockPolicy bit = triton;
  bit.ue8m0 = Ue8m0::kBitCeil;
  EXPECT_EQ(block_scale(amax, bit), 0x1p-125f);
  EXPECT_EQ(block_scale(amax, policy_of("vllm_group_quant", true)), 0x1p-33f);
}

// Guards against BUG Z8 where it bites vLLM CUDA (y above the 1e-10 clamp): amax 0x1.c00002p+0,
// amax / 448 = 0x1.000002p-8, log2f -> -8 (the device example "0x1.000002p-8 -> 2^-8"): vLLM
// scale 2^-8, element 448.0005 clamped to 448 = 0x7E. DeepGEMM's bit ceil: 2^-7, 224.0002 ->
// 0x76.
TEST(BlockUe8m0, Log2fCeilHazardInVllm) {
  const std::vector<float> g = {0x1.c00002p+0f};
  ASSERT_EQ(g[0] / 448.0f, 0x1.000002p-8f);
  const BlockQuantized v = quantize_group(g, policy_of("vllm_group_quant", true));
  const BlockQuantized d = quantize_group(g, policy_of("deepgemm", true));
  EXPECT_EQ(v.scales[0], 0x1p-8f);
  EXPECT_EQ(v.data[0], 0x7E);
  EXPECT_EQ(d.scales[0], 0x1p-7f);
  EXPECT_EQ(d.data[0], 0x76);
}

// Guards against BUG Z14 in block FP8 (payload quantized with the unrounded scale): amax 300,
// UE8M0 scale ceil(log2(300/448 = 0.67)) = 0 -> 1.0 for vLLM and DeepGEMM. Payload with 1.0:
// 300 -> 288 (e=15, m=1) = 0x79, 100 -> tie 96 / 104 -> 96 = 0x6C. With the unrounded 300/448:
// 448 = 0x7E and 149.3 -> 144 = 0x71.
TEST(BlockUe8m0, PayloadRequantizedWithThePowerOfTwo) {
  for (std::string_view conv : {"vllm_group_quant", "deepgemm", "aiter_hip"}) {
    const BlockQuantized q = quantize_group({300.0f, 100.0f}, policy_of(conv, true));
    EXPECT_EQ(q.scales[0], 1.0f) << conv;
    EXPECT_EQ(q.data[0], 0x79) << conv;
    EXPECT_EQ(q.data[1], 0x6C) << conv;
    EXPECT_NE(q.data[0], 0x7E) << conv << ": payload used the unrounded scale";
    EXPECT_NE(q.data[1], 0x71) << conv << ": payload used the unrounded scale";
  }
}

// Guards against a trailing partial group being dropped (BUG Z9) or scaled from the pad:
// activations K = 200 -> ceil(200/128) = 2 groups; group 1 (72 real elements) has amax 2 ->
// 2/448. Zero padding leaves it; pad 1000 makes it 1000/448 and 2 / (1000/448) = 0.896 ->
// 1.75 * 2^-1 (e=6, m=6) = 0x36 (block_quant.h pad_value; DeepGEMM pads with zeros, §5.2).
TEST(BlockPartial, ActivationsKNotAMultipleOf128) {
  const std::size_t k = 200;
  std::vector<float> x(k, 0.0f);
  x[0] = 448.0f;
  x[150] = 2.0f;
  BlockPolicy p = policy_of("vllm_group_quant", false);
  BlockQuantized q = quantize_block(x, 1, k, 1, kBlockK, Format::kE4M3FN, p);
  ASSERT_EQ(q.scale_cols(), 2u);
  ASSERT_EQ(q.scales.size(), 2u);
  ASSERT_EQ(q.data.size(), k);
  EXPECT_EQ(q.scales[0], 1.0f);
  EXPECT_EQ(q.scales[1], 2.0f / 448.0f);
  p.pad_value = 1000.0f;
  q = quantize_block(x, 1, k, 1, kBlockK, Format::kE4M3FN, p);
  EXPECT_EQ(q.scales[0], 1.0f);  // a full group never sees the pad
  EXPECT_EQ(q.scales[1], 1000.0f / 448.0f);
  EXPECT_EQ(q.data[150], 0x36);
}

// Guards against a weight scale grid that floors N or K (docs/formats.md §5.4: w_scale is
// [ceil(N/128), ceil(K/128)]): N = K = 200 -> 2 x 2; block (1, 1) covers rows and columns
// 128..199 only (zero padding), block (1, 0) rows 128..199 x columns 0..127.
TEST(BlockPartial, WeightsNAndKNotMultiplesOf128) {
  const std::size_t n = 200, k = 200;
  std::vector<float> w(n * k, 0.0f);
  w[0 * k + 0] = 1.0f;      // block (0, 0)
  w[5 * k + 199] = 3.0f;    // block (0, 1)
  w[199 * k + 7] = 5.0f;    // block (1, 0)
  w[150 * k + 170] = 7.0f;  // block (1, 1)
  const BlockQuantized q =
      quantize_block(w, n, k, kBlockK, kBlockK, Format::kE4M3FN, policy_of("deepgemm", false));
  ASSERT_EQ(q.scale_rows(), 2u);
  ASSERT_EQ(q.scale_cols(), 2u);
  ASSERT_EQ(q.scales.size(), 4u);
  EXPECT_EQ(q.scales[0], 1.0f / 448.0f);
  EXPECT_EQ(q.scales[1], 3.0f / 448.0f);
  EXPECT_EQ(q.scales[2], 5.0f / 448.0f);
  EXPECT_EQ(q.scales[3], 7.0f / 448.0f);
}

// Guards against a silently accepted wrong shape, zero block size or non-FP8 element format.
TEST(BlockQuantize, RejectsBadShapes) {
  const std::vector<float> x(256, 1.0f);
  const BlockPolicy p = policy_of("deepgemm", false);
  EXPECT_THROW(quantize_block(x, 3, 128, 1, 128, Format::kE4M3FN, p), std::invalid_argument);
  EXPECT_THROW(quantize_block(x, 1, 128, 1, 128, Format::kE4M3FN, p), std::invalid_argument);
  EXPECT_THROW(quantize_block(x, 2, 128, 0, 128, Format::kE4M3FN, p), std::invalid_argument);
  EXPECT_THROW(quantize_block(x, 2, 128, 1, 0, Format::kE4M3FN, p), std::invalid_argument);
  EXPECT_THROW(quantize_block(x, 2, 128, 1, 128, Format::kFP16, p), std::invalid_argument);
  EXPECT_NO_THROW(quantize_block(x, 2, 128, 1, 128, Format::kE4M3FN, p));
}

}  // namespace
}  // namespace mxgate
