// Covers the conventions of docs/conventions.md §2.24 - §2.29 (torch_2_13, microxcaling,
// torch_e8m0_nan_bits, torchao_ceil, torchao_even, triton_rtz): one table of named hazard cases
// per convention, each with its expected byte and the arithmetic that gives it, a contrast with
// the convention it must differ from, the ties-away rounding policy over every fp32 value nearest
// each tie of seven formats, and microxcaling's add-half step against the fp32 arithmetic written
// out. Does NOT cover: the registry (test_conventions.cpp), the other conventions' edges
// (test_convention_edges.cpp), the real libraries' bytes (scripts/h200/conventions_bytes.py on a
// GPU host, recorded in docs/conventions.md §3.8).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reference/convention.h"
#include "reference/e8m0.h"
#include "reference/encode_oracle.h"
#include "reference/format.h"
#include "reference/fp_encode.h"
#include "reference/mx_quant.h"
#include "reference/quant_conventions.h"
#include "tests/hex.h"

namespace mxgate {
namespace {

using test_support::hex;

struct Case {
  const char* name;
  const char* convention;
  Format format;
  uint32_t input;  // fp32 bits
  uint32_t code;
  const char* arithmetic;
};

// clang-format off
constexpr Case kCases[] = {
    // torch_2_13 (§2.24): E4M3FN 0 1111 110 = 448 is the max; the midpoint to 480 is 464.
    {"896 saturates", "torch_2_13", Format::kE4M3FN, 0x44600000, 0x7E, "896 = 2 * 448 > 464: +448 = 0x7E"},
    {"-896 saturates", "torch_2_13", Format::kE4M3FN, 0xC4600000, 0xFE, "sign 0x80 | 0x7E"},
    {"464 ties to even", "torch_2_13", Format::kE4M3FN, 0x43E80000, 0x7E, "464 = (448 + 480) / 2, 0x7E even"},
    {"464+ulp saturates", "torch_2_13", Format::kE4M3FN, 0x43E80001, 0x7E, "above the midpoint: 480 is NaN, so 448"},
    {"inf is NaN (named)", "torch_2_13", Format::kE4M3FN, 0x7F800000, 0x7F, "finite overflow only: Inf -> 0x7F"},
    {"-inf is NaN (named)", "torch_2_13", Format::kE4M3FN, 0xFF800000, 0xFF, "sign kept: 0xFF"},
    {"-nan keeps sign", "torch_2_13", Format::kE4M3FN, 0xFFC00000, 0xFF, "result |= sign: 0xFF"},
    {"contrast: 896 NaN in 2.11", "torch_2_11", Format::kE4M3FN, 0x44600000, 0x7F, "f_bits >= 480: 0x7F"},
    // microxcaling (§2.25): sign(A) floor(|A| + 0.5), A scaled so the quantum is 1.
    {"1.0625 ties away", "microxcaling", Format::kE4M3FN, 0x3F880000, 0x39, "1 + 1/16 between 1 (0x38) and 1.125: up"},
    {"-1.0625 ties away", "microxcaling", Format::kE4M3FN, 0xBF880000, 0xB9, "magnitude as above"},
    {"contrast: 1.0625 RNE", "ocp_mx", Format::kE4M3FN, 0x3F880000, 0x38, "RNE: 0x38 even"},
    {"464 ties past max", "microxcaling", Format::kE4M3FN, 0x43E80000, 0x7F, "14.5 -> 15: 480 > 448 -> Inf -> NaN"},
    {"2^-10 ties up", "microxcaling", Format::kE4M3FN, 0x3A800000, 0x01, "2^-10 = half of 2^-9: 0.5 -> 1"},
    {"2^-10 - 2^-34 adds half", "microxcaling", Format::kE4M3FN, 0x3A7FFFFF, 0x01, "a = 0.5 - 2^-25; fl32(a + 0.5) = 1.0"},
    {"2^-10 - 2^-33 stays 0", "microxcaling", Format::kE4M3FN, 0x3A7FFFFE, 0x00, "a = 0.5 - 2^-24; a + 0.5 exact < 1"},
    {"1000 overflows to NaN", "microxcaling", Format::kE4M3FN, 0x447A0000, 0x7F, "saturate_normals=False: Inf -> 0x7F"},
    {"1.125 ties away", "microxcaling", Format::kE5M2, 0x3F900000, 0x3D, "between 1 (0x3C) and 1.25 (0x3D): up"},
    {"2^-17 - 2^-41 adds half", "microxcaling", Format::kE5M2, 0x36FFFFFF, 0x01, "half of 2^-16, one ulp below"},
    {"1e6 overflows to Inf", "microxcaling", Format::kE5M2, 0x49742400, 0x7C, "> 57344 + 8192: Inf 0x7C"},
    {"2.5 ties away", "microxcaling", Format::kE2M1, 0x40200000, 0x5, "between 2 (0x4) and 3 (0x5): up"},
    {"0.25 - 2^-26 adds half", "microxcaling", Format::kE2M1, 0x3E7FFFFF, 0x1, "half of 0.5, one ulp below"},
    {"7 saturates (MX path)", "microxcaling", Format::kE2M1, 0x40E00000, 0x7, "6.5 < 7: 8 > 6 clamps to 6 = 0x7"},
    {"2^-4 ties up", "microxcaling", Format::kE2M3, 0x3D800000, 0x01, "half of 2^-3: up"},
    {"2^-5 - 2^-29 adds half", "microxcaling", Format::kE3M2, 0x3CFFFFFF, 0x01, "half of 2^-4, one ulp below"},
    // triton_rtz (§2.29): cvt.rz.f16.f32, then the fp16's top byte. Triton 3.6 on the H200 gave
    // these bytes for 1.99, -1.99, 60000, inf, -inf, nan, -nan, 1.5 * 2^-16 (§3.8).
    {"1.99 truncates", "triton_rtz", Format::kE5M2, 0x3FFEB852, 0x3F, "1.99 < 2: 1.75 = 0 01111 11"},
    {"-1.99 truncates", "triton_rtz", Format::kE5M2, 0xBFFEB852, 0xBF, "sign 0x80 | 0x3F"},
    {"60000 to max", "triton_rtz", Format::kE5M2, 0x476A6000, 0x7B, "fp16 RZ 60000 = 0x7B53: top byte 57344"},
    {"65536 to max", "triton_rtz", Format::kE5M2, 0x47800000, 0x7B, "fp16 RZ: 65504 = 0x7BFF"},
    {"-65536 to -max", "triton_rtz", Format::kE5M2, 0xC7800000, 0xFB, "57344 + 8192 exactly: still RZ"},
    {"contrast: 65536 nosat", "cuda_nosat", Format::kE5M2, 0x47800000, 0x7C, "RNE past max: Inf"},
    {"inf stays inf", "triton_rtz", Format::kE5M2, 0x7F800000, 0x7C, "fp16 Inf 0x7C00: 0x7C"},
    {"-inf stays -inf", "triton_rtz", Format::kE5M2, 0xFF800000, 0xFC, "fp16 0xFC00: 0xFC"},
    {"nan canonical", "triton_rtz", Format::kE5M2, 0x7FC00000, 0x7F, "fp16 NaN 0x7FFF: 0x7F"},
    {"-nan canonical", "triton_rtz", Format::kE5M2, 0xFFC00000, 0x7F, "the canonical NaN has no sign"},
    {"1.5 * 2^-17 to 0", "triton_rtz", Format::kE5M2, 0x37400000, 0x00, "below 2^-16: 0 (RNE: 0x01)"},
    {"1.5 * 2^-16 to 2^-16", "triton_rtz", Format::kE5M2, 0x37C00000, 0x01, "truncated to 1 * 2^-16"},
    {"-2^-149 to -0", "triton_rtz", Format::kE5M2, 0x80000001, 0x80, "toward zero keeps the sign"},
};
// clang-format on

// Guards against a hazard case of §2.24, §2.25 or §2.29 drifting from its written arithmetic.
TEST(ConventionHazards, NamedCases) {
  for (const Case& k : kCases) {
    const Convention& c = require_convention(k.convention);
    EXPECT_EQ(hex(encode_with(c, k.format, float_of(k.input))), hex(k.code))
        << k.convention << " / " << k.name << " (" << k.arithmetic << ")";
  }
}

// Guards against the conventions claiming formats their source does not cast to: torch_2_13 only
// changed E4M3FN, Triton has no rtz lowering to fp8e4nv; and against microxcaling's FP4 naming a
// code for NaN, which its fp32 emulation keeps as a NaN value FP4 cannot hold.
TEST(ConventionHazards, UndefinedCombinationsRefuse) {
  EXPECT_THROW(encode_with(require_convention("torch_2_13"), Format::kE5M2, 1.0f),
               std::invalid_argument);
  EXPECT_THROW(encode_with(require_convention("triton_rtz"), Format::kE4M3FN, 1.0f),
               std::invalid_argument);
  EXPECT_THROW(encode_with(require_convention("microxcaling"), Format::kE2M1, std::nanf("")),
               UndefinedEncoding);
}

// Guards against the torch_e8m0_nan_bits decode returning a canonical NaN instead of PyTorch's
// fp32_from_bits(0x7f800001) (§2.26; torch 2.11 on CPU and CUDA gave exactly those bits, §3.8),
// and against it moving the other edge byte; only that convention sets e8m0_nan_bits.
TEST(ConventionHazards, TorchE8m0NanBits) {
  const Convention& c = require_convention("torch_e8m0_nan_bits");
  EXPECT_EQ(hex(bits_of(decode_with(c, Format::kE8M0, 0xFF)), 8), hex(0x7F800001u, 8));
  EXPECT_EQ(hex(bits_of(decode_with(c, Format::kE8M0, 0x00)), 8), hex(0x00400000u, 8));  // 2^-127
  EXPECT_EQ(hex(bits_of(decode_with(c, Format::kE8M0, 0x7F)), 8), hex(0x3F800000u, 8));  // 1.0
  EXPECT_EQ(c.e8m0_decode, E8m0Decode::kOcp);  // the OCP rule but for the NaN's bits
  // torch_2_11's OCP decode is a NaN too, but not these bits.
  const float ocp = decode_with(require_convention("torch_2_11"), Format::kE8M0, 0xFF);
  EXPECT_TRUE(std::isnan(ocp));
  EXPECT_NE(bits_of(ocp), 0x7F800001u);
  for (const Convention& other : all_conventions()) {
    EXPECT_EQ(other.e8m0_nan_bits.has_value(), other.name == "torch_e8m0_nan_bits") << other.name;
  }
}

struct ScaleCase {
  const char* convention;
  Format element;
  float amax;
  uint8_t byte;
  const char* arithmetic;
};

// clang-format off
constexpr ScaleCase kScaleCases[] = {
    // CEIL: (E - 127) + (M != 0) - emax, +127 (emax: E4M3 8, E5M2 15, E2M1 2).
    {"torchao_ceil", Format::kE4M3FN, 448.0f, 128, "448 = 1.75 * 2^8: 8 + 1 - 8 = 1"},
    {"torchao_ceil", Format::kE4M3FN, 256.0f, 127, "2^8: 8 + 0 - 8 = 0"},
    {"torchao_ceil", Format::kE4M3FN, 1.0f, 119, "0 - 8 = -8"},
    {"torchao_ceil", Format::kE4M3FN, 0.0f, 0, "-127 - 8 clamps to -127"},
    {"torchao_ceil", Format::kE5M2, 57344.0f, 128, "1.75 * 2^15: 15 + 1 - 15 = 1"},
    {"torchao_ceil", Format::kE2M1, 6.0f, 128, "1.5 * 2^2: 2 + 1 - 2 = 1"},
    {"torchao_ceil", Format::kE2M1, 4.0f, 127, "2^2: 2 - 2 = 0"},
    // EVEN: (bits + 2^(22 - mbits)) & 0xFF800000, then FLOOR.
    {"torchao_even", Format::kE4M3FN, 500.0f, 128, "1.953 * 2^8 >= 1.9375: bumps to 2^9, 9 - 8"},
    {"torchao_even", Format::kE4M3FN, 480.0f, 127, "1.875 < 1.9375: 8 - 8"},
    {"torchao_even", Format::kE5M2, 61440.0f, 128, "1.875 * 2^15, + 0x100000 bumps: 16 - 15"},
    {"torchao_even", Format::kE5M2, 59392.0f, 127, "1.8125 < 1.875: 15 - 15"},
    {"torchao_even", Format::kE2M1, 7.0f, 128, "1.75 * 2^2, + 0x200000 bumps: 3 - 2"},
    {"torchao_even", Format::kE2M1, 6.0f, 127, "1.5 < 1.75: 2 - 2"},
    {"torchao_even", Format::kE3M2, 30.0f, 128, "1.875 * 2^4, + 0x100000 bumps: 5 - 4"},
    {"torchao_even", Format::kE2M3, 7.75f, 128, "1.9375 * 2^2, + 0x80000 bumps: 3 - 2"},
    {"torchao_even", Format::kE2M3, 7.5f, 127, "1.875 < 1.9375: 2 - 2"},
};
// clang-format on

// Guards against torchao_ceil / torchao_even choosing another rule than torchao's to_mx CEIL /
// EVEN (§2.27, §2.28), including the EVEN constant that depends on the element's mantissa bits.
TEST(ConventionHazards, TorchaoCeilAndEvenScales) {
  for (const ScaleCase& s : kScaleCases) {
    const auto p = mx_policy(require_convention(s.convention), s.element);
    ASSERT_TRUE(p.has_value()) << s.convention;
    EXPECT_EQ(hex(mx_scale_byte(s.amax, s.element, *p)), hex(s.byte))
        << s.convention << " " << info(s.element).name << " amax " << s.amax << " (" << s.arithmetic
        << ")";
  }
  for (const char* n : {"torchao_ceil", "torchao_even"}) {
    const auto p = mx_policy(require_convention(n), Format::kE4M3FN);
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(mx_scale_byte(std::nanf(""), Format::kE4M3FN, *p), 0xFF) << n;
    EXPECT_EQ(mx_scale_byte(INFINITY, Format::kE4M3FN, *p), 0xFF) << n;
  }
  // microxcaling's MX quantizer is not modelled (§2.25): none, rather than a wrong FLOOR.
  EXPECT_FALSE(mx_policy(require_convention("microxcaling")).has_value());
}

// Guards against the EVEN block quantizer scaling E5M2 elements by E4M3's constant: amax 61440 =
// 1.875 * 2^15 gets scale 2^1 (byte 128), so 61440 is stored as 30720 = 1.875 * 2^14, the tie
// between 28672 (0 11101 11 = 0x77) and 32768 (0 11110 00 = 0x78): RNE to the even 0x78. (E4M3's
// constant gave scale 127 and 61440 itself, saturated to 0x7B.)
TEST(ConventionHazards, TorchaoEvenE5m2Block) {
  const MxPolicy p = *mx_policy(require_convention("torchao_even"), Format::kE5M2);
  std::vector<float> x(32, 0.0f);
  x[0] = 61440.0f;
  const MxQuantized q = quantize_mx(x, 1, 32, Format::kE5M2, p);
  EXPECT_EQ(hex(q.scales[0]), hex(128));
  EXPECT_EQ(hex(q.data[0]), hex(0x78));
}

// Guards against a new convention's element cast and the independent value oracle disagreeing on
// any bf16 pattern (ties, overflow, exactly 57344 + 8192 under rtz, subnormals, Inf, NaN), after
// the convention's pre-cast step.
TEST(ConventionHazards, ElementCastsAgreeWithTheOracleOnEveryBf16Pattern) {
  for (const char* n : {"torch_2_13", "microxcaling", "triton_rtz"}) {
    const Convention& c = require_convention(n);
    for (Format f : {Format::kE4M3FN, Format::kE5M2}) {
      if (!defines(c, f)) continue;
      const EncodeOracle oracle(f, c.element);
      int bad = 0;
      for (uint32_t hi = 0; hi < 0x10000u; ++hi) {
        const float x = float_of(hi << 16);
        const uint32_t want = oracle.expected(pre_cast(c, f, x));
        const uint32_t got = encode_with(c, f, x);
        if (want != got && bad++ < 5) {
          ADD_FAILURE() << n << " " << info(f).name << " " << hex(hi << 16, 8) << ": " << hex(got)
                        << ", oracle " << hex(want);
        }
      }
    }
  }
}

// Guards against the ties-away policy rounding any value next to a tie the wrong way: for every
// pair of adjacent finite positive codes c, c + 1 of seven formats, the midpoint m (exact in fp32)
// and its fp32 neighbours, both signs. The rule written out: |x| < m gives c, |x| >= m gives c + 1.
TEST(NearestAwayPolicy, EveryTieAndItsNeighbours) {
  const EncodePolicy away{Rounding::kNearestAway, Overflow::kToInf, NanPolicy::kCanonical};
  for (Format f : {Format::kE4M3FN, Format::kE5M2, Format::kE2M3, Format::kE3M2, Format::kE2M1,
                   Format::kFP16, Format::kBF16}) {
    const uint32_t top = max_code(f, false);
    const uint32_t sign = 1u << (info(f).bits - 1);
    int checked = 0;
    for (uint32_t c = 0; c < top; ++c) {
      const double lo = decode(f, c);
      const double hi = decode(f, c + 1);
      const float m = static_cast<float>((lo + hi) / 2);
      ASSERT_EQ(static_cast<double>(m), (lo + hi) / 2) << info(f).name << " " << c;
      const float below = std::nextafter(m, 0.0f);
      const float above = std::nextafter(m, INFINITY);
      for (const auto& [x, want] :
           {std::pair{below, c}, std::pair{m, c + 1}, std::pair{above, c + 1}}) {
        ASSERT_EQ(encode(f, x, away), want) << info(f).name << " " << x;
        ASSERT_EQ(encode(f, -x, away), want | sign) << info(f).name << " " << -x;
        ++checked;
      }
    }
    EXPECT_GT(checked, 0) << info(f).name;
  }
}

// Guards against the add-half step (§2.25) touching another input, or missing one: over the 2^17
// fp32 values around half the smallest subnormal of each element format, microxcaling's arithmetic
// written out with fp32 operations, floor(fl32(fl32(x * 2^k) + 0.5)) with 2^k the reciprocal of the
// smallest subnormal, gives the code of encode_with(microxcaling, ...) (those codes are the
// subnormal integers).
TEST(MicroxcalingAddHalf, MatchesFp32ArithmeticNearHalfTheSmallestSubnormal) {
  const Convention& c = require_convention("microxcaling");
  for (Format f : {Format::kE4M3FN, Format::kE5M2, Format::kE2M3, Format::kE3M2, Format::kE2M1}) {
    const FormatInfo& fi = info(f);
    const int k = fi.bias - 1 + fi.man_bits;  // smallest subnormal 2^(1 - bias - man_bits)
    const uint32_t half = bits_of(std::ldexp(1.0f, -k - 1));
    int up = 0;
    for (uint32_t b = half > 65536 ? half - 65536 : 0; b < half + 65536; ++b) {
      volatile float scaled = std::ldexp(float_of(b), k);  // exact: a power-of-two scaling
      volatile float sum = scaled + 0.5f;
      const auto want = static_cast<uint32_t>(std::floor(sum));
      ASSERT_EQ(encode_with(c, f, float_of(b)), want) << fi.name << " " << hex(b, 8);
      if (b < half && want == 1) ++up;
    }
    EXPECT_EQ(up, 1) << fi.name;  // only the predecessor of the half
  }
  // The step alone also knows FP16 (half of 2^-24 = 0x33000000) and skips BF16, whose half smallest
  // subnormal 2^-134 is an fp32 subnormal (its predecessor's a + 0.5 is exact).
  EXPECT_EQ(hex(bits_of(add_half_in_fp32(Format::kFP16, float_of(0x32FFFFFF))), 8),
            hex(0x33000000u, 8));
  EXPECT_EQ(hex(bits_of(add_half_in_fp32(Format::kBF16, float_of(0x00007FFF))), 8),
            hex(0x00007FFFu, 8));
}

}  // namespace
}  // namespace mxgate
