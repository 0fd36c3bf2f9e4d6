// Covers reference/convention's behaviour where implementations disagree: the disagreement
// tables of docs/formats.md §1.3, §3.7 and §6 per convention (one cell a row), the e8m0 decode of
// 0x00 and 0xff, BF16 / FP16 the same under every convention, the pre-cast clamp (vLLM's fnuz
// 224 included), and encode_with / decode_with errors for undefined combinations. Does NOT cover:
// the registry and the measured device rows (test_conventions.cpp), the encoders' rounding in
// general (test_fp_encode.cpp, test_e8m0.cpp), the CLI (test_cli_formats.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>

#include "reference/convention.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/quant_conventions.h"
#include "tests/hex.h"

namespace mxgate {
namespace {

using test_support::hex;
using test_support::hexfloat;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// ---- Per-convention disagreement tables (docs/formats.md §1.3, §3.7, §6) ----

struct EdgeCase {
  const char* convention;
  Format format;
  float input;
  uint32_t code;
  const char* why;  // docs/formats.md row
};
const EdgeCase kEdges[] = {
    // §1.3 e4m3 464 < |x| < Inf: PyTorch <= 2.11 / ml_dtypes NaN, SATFINITE / Triton-NV / TE 448,
    // CUDA NOSAT NaN, Triton-AMD mode bit 448; DeepGEMM uses SATFINITE constructors (§1.2.6);
    // vLLM clamps to +-448 first (§5.1); torchao clamps first (§3.3); OCP saturates normals.
    {"torch_2_11", Format::kE4M3FN, 470.0f, 0x7F, "§1.3 e4m3 overflow, PyTorch"},
    {"ml_dtypes", Format::kE4M3FN, 470.0f, 0x7F, "§1.3 e4m3 overflow, ml_dtypes"},
    {"cuda_satfinite", Format::kE4M3FN, 470.0f, 0x7E, "§1.3 e4m3 overflow, SATFINITE"},
    {"transformer_engine", Format::kE4M3FN, 470.0f, 0x7E, "§1.3 e4m3 overflow, TE"},
    {"triton_nvidia", Format::kE4M3FN, 470.0f, 0x7E, "§1.3 e4m3 overflow, Triton-NV"},
    {"cuda_nosat", Format::kE4M3FN, 470.0f, 0x7F, "§1.3 e4m3 overflow, NOSAT"},
    // E5M2 NaN: PyTorch keeps the all-ones mantissa (0x7F, docs/conventions.md §3.2); ml_dtypes
    // 0.6.0
    // gives +-quiet_NaN(), exponent 11111 and mantissa 10: 0x7E, measured on the H200 host for
    // every
    // NaN of the survey's sample (docs/conventions.md §3.7), 0xFE for -NaN (its float8.h).
    {"torch_2_11", Format::kE5M2, kNaN, 0x7F, "§3.2 e5m2 NaN, PyTorch"},
    {"ml_dtypes", Format::kE5M2, kNaN, 0x7E, "§3.7 e5m2 NaN, ml_dtypes quiet_NaN()"},
    {"ml_dtypes", Format::kE5M2, -kNaN, 0xFE, "§3.7 e5m2 -NaN, ml_dtypes -quiet_NaN()"},
    {"ml_dtypes", Format::kE4M3FN, -kNaN, 0xFF, "§3.7 e4m3fn -NaN, ml_dtypes: the one NaN code"},
    {"ml_dtypes", Format::kE5M2FNUZ, -kNaN, 0x80, "§3.7 e5m2fnuz -NaN, ml_dtypes: 0x80"},
    {"aiter_triton", Format::kE4M3FN, 470.0f, 0x7E, "§1.3 e4m3 overflow, Triton-AMD"},
    {"deepgemm", Format::kE4M3FN, 1e6f, 0x7E, "§1.2.6 DeepGEMM __nv_fp8x4_e4m3 SATFINITE"},
    {"vllm_group_quant", Format::kE4M3FN, 1e6f, 0x7E, "§5.1 fminf(fmaxf(x, -448), 448)"},
    {"torchao_floor", Format::kE4M3FN, 1e6f, 0x7E, "§3.3 clamp(+-max_pos) then cast"},
    {"ocp_mx", Format::kE4M3FN, 1e6f, 0x7E, "§3.1 normals saturated to +-max"},
    // §1.3 e4m3 ±Inf.
    {"torch_2_11", Format::kE4M3FN, kInf, 0x7F, "§1.3 e4m3 Inf, PyTorch NaN"},
    {"torch_2_11", Format::kE4M3FN, -kInf, 0xFF, "§1.3 e4m3 -Inf, PyTorch NaN"},
    {"cuda_satfinite", Format::kE4M3FN, -kInf, 0xFE, "§1.3 e4m3 -Inf, SATFINITE"},
    {"triton_nvidia", Format::kE4M3FN, kInf, 0x7E, "§1.3 e4m3 Inf, Triton-NV 448"},
    {"aiter_triton", Format::kE4M3FN, kInf, 0x7F, "§1.3 e4m3 Inf, Triton-AMD NaN"},
    {"ocp_mx", Format::kE4M3FN, kInf, 0x7F, "§3.2 Inf in block -> NaN"},
    {"torchao_floor", Format::kE4M3FN, kInf, 0x7E, "§3.3 clamp so Inf -> max"},
    {"vllm_group_quant", Format::kE4M3FN, kInf, 0x7E, "§5.1 fminf(Inf, 448)"},
    // §1.3 e5m2 >= 61440 and Inf.
    {"torch_2_11", Format::kE5M2, 61440.0f, 0x7C, "§1.3 e5m2 overflow, PyTorch Inf"},
    {"cuda_satfinite", Format::kE5M2, 61440.0f, 0x7B, "§1.3 e5m2 overflow, SATFINITE"},
    {"cuda_nosat", Format::kE5M2, 61440.0f, 0x7C, "§1.3 e5m2 overflow, NOSAT Inf"},
    {"triton_nvidia", Format::kE5M2, 61440.0f, 0x7B, "§1.3 e5m2 overflow, Triton 57344"},
    {"aiter_triton", Format::kE5M2, 61440.0f, 0x7B, "§1.3 e5m2 overflow, Triton-AMD"},
    {"torch_2_11", Format::kE5M2, kInf, 0x7C, "§1.3 e5m2 Inf, PyTorch"},
    {"triton_nvidia", Format::kE5M2, -kInf, 0xFB, "§1.3 e5m2 -Inf, Triton saturates"},
    // §1.3 NaN sign: PyTorch keeps it (result |= sign), CUDA canonicalizes.
    {"torch_2_11", Format::kE4M3FN, -kNaN, 0xFF, "§1.3 NaN sign kept, PyTorch"},
    {"cuda_nosat", Format::kE4M3FN, -kNaN, 0x7F, "§1.3 NaN canonical, CUDA"},
    // §5.1 vLLM: NaN element -> fminf(fmaxf(NaN, -448), 448) = -448.
    {"vllm_group_quant", Format::kE4M3FN, kNaN, 0xFE, "§5.1 NaN -> -448"},
    // §1.2.2 / §1.2.5 FNUZ: PyTorch >= 248 -> NaN 0x80, -0 -> 00; HIP gfx942 fmed3 clamp -> 240,
    // Inf/NaN -> 0x80.
    {"torch_2_11", Format::kE4M3FNUZ, 248.0f, 0x80, "§1.2.2 fnuz [248, 256) -> NaN"},
    {"torch_2_11", Format::kE4M3FNUZ, -0.0f, 0x00, "§1.2.2 fnuz no -0"},
    {"aiter_hip", Format::kE4M3FNUZ, 248.0f, 0x7F, "§1.2.5 fmed3 clamp to 240"},
    {"aiter_hip", Format::kE4M3FNUZ, -kInf, 0x80, "§1.2.5 Inf -> 0x80"},
    // §6 item 6 e8m0 of 0 / negative: PyTorch 0x00 / |x|; ml_dtypes NaN; DeepGEMM clamp -> 0x01.
    {"torch_2_11", Format::kE8M0, 0.0f, 0x00, "§6 item 6 zero, PyTorch"},
    {"ml_dtypes", Format::kE8M0, 0.0f, 0xFF, "§6 item 6 zero, ml_dtypes NaN"},
    {"deepgemm", Format::kE8M0, 0.0f, 0x01, "§6 item 6 zero, DeepGEMM clamp(1, 254)"},
    {"torch_2_11", Format::kE8M0, -1.0f, 0x7F, "§6 item 6 -1, PyTorch ignores the sign"},
    {"ml_dtypes", Format::kE8M0, -1.0f, 0xFF, "§6 item 6 -1, ml_dtypes NaN"},
    // §6 item 7 rounding: 2.9 -> 2 under PyTorch nearest, 4 under ceil, 2 under floor.
    {"torch_2_11", Format::kE8M0, 2.9f, 0x80, "§6 item 7 nearest"},
    {"torchao_rceil", Format::kE8M0, 2.9f, 0x81, "§6 item 7 RCEIL"},
    {"ocp_mx", Format::kE8M0, 2.9f, 0x80, "§6 item 7 FLOOR"},
    // §6 item 8 / §3.7 e8m0 +Inf: TE & CUDA SATFINITE 0xFE; torchao/AITER/PyTorch/NOSAT 0xFF;
    // DeepGEMM 0xFE; AITER Triton 254; torchao FLOOR non-finite -> 0xFF.
    {"transformer_engine", Format::kE8M0, kInf, 0xFE, "§6 item 8 TE"},
    {"torchao_rceil", Format::kE8M0, kInf, 0xFF, "§6 item 8 torchao"},
    {"aiter_hip", Format::kE8M0, kInf, 0xFF, "§6 item 8 AITER"},
    {"torch_2_11", Format::kE8M0, kInf, 0xFF, "§6 item 8 PyTorch"},
    {"cuda_nosat", Format::kE8M0, kInf, 0xFF, "§6 item 8 NOSAT"},
    {"deepgemm", Format::kE8M0, kNaN, 0xFE, "§6 item 8 DeepGEMM clamp even for NaN"},
    {"aiter_triton", Format::kE8M0, kInf, 0xFE, "§3.7 AITER Triton 254"},
    {"torchao_floor", Format::kE8M0, kInf, 0xFF, "§3.3 FLOOR non-finite -> 0xFF"},
    // §6 item 9 subnormal ceil: AITER any nonzero subnormal -> 0x01; TE / torchao only > 2^-127.
    {"aiter_hip", Format::kE8M0, 0x1p-128f, 0x01, "§6 item 9 AITER subnormal bump"},
    {"transformer_engine", Format::kE8M0, 0x1p-128f, 0x00, "§6 item 9 TE"},
    {"torchao_rceil", Format::kE8M0, 0x1p-128f, 0x00, "§6 item 9 torchao"},
    // §6 item 15 log2-based ceil: vLLM group quant misses one binade at 0x1.000002p-8, TE does not.
    {"vllm_group_quant", Format::kE8M0, 0x1.000002p-8f, 0x77, "§6 item 15 log2f ceil"},
    {"transformer_engine", Format::kE8M0, 0x1.000002p-8f, 0x78, "§6 item 15 bit ceil"},
};

// Guards against a convention with one wrong policy: each row is one cell of a docs/formats.md
// disagreement table, where the implementations differ and the convention must pick its side.
TEST(ConventionEdges, DisagreementTables) {
  for (const EdgeCase& e : kEdges) {
    EXPECT_EQ(hex(encode_with(require_convention(e.convention), e.format, e.input)), hex(e.code))
        << e.convention << " " << info(e.format).name << " " << hexfloat(e.input) << " (" << e.why
        << ")";
  }
}

// Guards against the e8m0 decode column of §6 item 10 / §2.2 / §3.6 / §4 per convention: 0x00 is
// 2^-127 (PyTorch, CUDA, TE, torchao), +0 (vLLM shift, Triton emulation, AITER HIP dequant,
// DeepGEMM fast_pow2 (e + 127) << 23), 0x1.fffff8p-128 (vLLM exp2 on CUDA); 0xff is NaN or +Inf.
TEST(ConventionEdges, E8m0DecodeOfZeroAndFF) {
  struct Row {
    const char* convention;
    uint32_t zero_bits;
    bool ff_is_nan;
  };
  const Row rows[] = {
      {"torch_2_11", 0x00400000, true},       {"transformer_engine", 0x00400000, true},
      {"cuda_satfinite", 0x00400000, true},   {"torchao_rceil", 0x00400000, true},
      {"vllm_e8m0_shift", 0x00000000, false}, {"triton_nvidia", 0x00000000, true},
      {"aiter_hip", 0x00000000, false},       {"deepgemm", 0x00000000, false},
      {"vllm_mxfp8_exp2", 0x003FFFFF, false}};
  for (const Row& r : rows) {
    EXPECT_EQ(hex(bits_of(decode_with(require_convention(r.convention), Format::kE8M0, 0x00))),
              hex(r.zero_bits))
        << r.convention;
    const float ff = decode_with(require_convention(r.convention), Format::kE8M0, 0xFF);
    if (r.ff_is_nan) {
      EXPECT_TRUE(std::isnan(ff)) << r.convention;
    } else {
      EXPECT_EQ(ff, kInf) << r.convention;
    }
  }
}

// Guards against BF16 / FP16 depending on the convention: every convention encodes them with
// kIeeeDefault (RNE, Inf, canonical NaN); 0x3F818000 is a bf16 tie that RNE sends to 0x3F82.
TEST(ConventionEdges, SixteenBitFormatsAreIeeeEverywhere) {
  for (const Convention& c : all_conventions()) {
    EXPECT_EQ(encode_with(c, Format::kBF16, float_of(0x3F818000)), 0x3F82u) << c.name;
    EXPECT_EQ(encode_with(c, Format::kBF16, float_of(0xFFC00000)), 0x7FC0u) << c.name;
    EXPECT_EQ(encode_with(c, Format::kFP16, 65520.0f), 0x7C00u) << c.name;
    EXPECT_EQ(decode_with(c, Format::kBF16, 0x3F80), 1.0f) << c.name;
  }
}

// Guards against the pre-cast clamp clamping where the implementation does not, or with the
// wrong bound: vLLM fminf(fmaxf(x, -max), max) (docs/formats.md §5.1) turns NaN into -max (fmaxf
// ignores a NaN operand, also a signalling one), Inf into max, and uses 224 for e4m3fnuz;
// conventions without an explicit clamp pass x through unchanged.
TEST(ConventionEdges, PreCastClamp) {
  const Convention& v = require_convention("vllm_group_quant");
  EXPECT_EQ(pre_cast(v, Format::kE4M3FN, kNaN), -448.0f);
  EXPECT_EQ(pre_cast(v, Format::kE4M3FN, -kNaN), -448.0f);
  EXPECT_EQ(pre_cast(v, Format::kE4M3FN, float_of(0x7F800001)), -448.0f);  // signalling NaN
  EXPECT_EQ(pre_cast(v, Format::kE4M3FN, kInf), 448.0f);
  EXPECT_EQ(pre_cast(v, Format::kE4M3FN, -1e6f), -448.0f);
  EXPECT_EQ(pre_cast(v, Format::kE4M3FN, 470.0f), 448.0f);
  EXPECT_EQ(pre_cast(v, Format::kE4M3FN, 0x1p-140f), 0x1p-140f);
  EXPECT_EQ(bits_of(pre_cast(v, Format::kE4M3FN, -0.0f)), 0x80000000u);
  EXPECT_EQ(pre_cast(v, Format::kE4M3FNUZ, 300.0f), 224.0f);
  EXPECT_EQ(pre_cast(v, Format::kE4M3FNUZ, kNaN), -224.0f);
  for (const char* name : {"torch_2_11", "cuda_satfinite", "ml_dtypes", "ocp_mx"}) {
    const Convention& c = require_convention(name);
    EXPECT_EQ(pre_cast(c, Format::kE4M3FN, 1e6f), 1e6f) << name;
    EXPECT_EQ(pre_cast(c, Format::kE4M3FN, kInf), kInf) << name;
    EXPECT_TRUE(std::isnan(pre_cast(c, Format::kE4M3FN, kNaN))) << name;
  }
}

// ---- Errors ----

// Runs `f`, expects std::invalid_argument whose message contains every word of `words`.
template <class F>
void expect_invalid(F f, std::initializer_list<const char*> words, const char* what) {
  try {
    f();
    ADD_FAILURE() << what << ": no exception";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    for (const char* w : words) {
      EXPECT_NE(msg.find(w), std::string::npos) << what << ": '" << msg << "' lacks '" << w << "'";
    }
  } catch (...) {
    ADD_FAILURE() << what << ": wrong exception type";
  }
}

// Guards against an undefined (convention, format) pair silently producing bytes: DeepGEMM has
// no E5M2 path (§5.2), Triton-NV no fp32 -> e8m0 encoder, OCP conventions no FNUZ; the message
// must name both the convention and the format.
TEST(ConventionErrors, UndefinedCombinationsThrowNamingBoth) {
  expect_invalid([] { encode_with(require_convention("deepgemm"), Format::kE5M2, 1.0f); },
                 {"deepgemm", "e5m2"}, "encode deepgemm e5m2");
  expect_invalid([] { decode_with(require_convention("deepgemm"), Format::kE5M2, 0x3C); },
                 {"deepgemm", "e5m2"}, "decode deepgemm e5m2");
  expect_invalid([] { encode_with(require_convention("triton_nvidia"), Format::kE8M0, 1.0f); },
                 {"triton_nvidia", "e8m0"}, "encode triton_nvidia e8m0");
  expect_invalid([] { encode_with(require_convention("ocp_mx"), Format::kE4M3FNUZ, 1.0f); },
                 {"ocp_mx", "e4m3fnuz"}, "encode ocp_mx e4m3fnuz");
  expect_invalid([] { encode_with(require_convention("aiter_hip"), Format::kE5M2, 1.0f); },
                 {"aiter_hip", "e5m2"}, "encode aiter_hip e5m2");
  expect_invalid(
      [] { encode_with(require_convention("vllm_group_quant"), Format::kE5M2FNUZ, 1.0f); },
      {"vllm_group_quant", "e5m2fnuz"}, "encode vllm_group_quant e5m2fnuz");
  EXPECT_FALSE(defines(require_convention("deepgemm"), Format::kE5M2));
  EXPECT_FALSE(defines(require_convention("ocp_mx"), Format::kE4M3FNUZ));
  // Triton-NV still decodes e8m0 (its dot_scaled emulation does).
  EXPECT_EQ(decode_with(require_convention("triton_nvidia"), Format::kE8M0, 0x7F), 1.0f);
}

// Guards against a code wider than the format being truncated to its low bits.
TEST(ConventionErrors, CodeTooWideThrows) {
  expect_invalid([] { decode_with(require_convention("torch_2_11"), Format::kE4M3FN, 0x100); },
                 {"e4m3fn"}, "decode 0x100 e4m3fn");
  expect_invalid([] { decode_with(require_convention("torch_2_11"), Format::kE8M0, 0x1FF); },
                 {"e8m0"}, "decode 0x1ff e8m0");
  expect_invalid([] { decode_with(require_convention("torch_2_11"), Format::kBF16, 0x10000); },
                 {"bf16"}, "decode 0x10000 bf16");
  EXPECT_EQ(decode_with(require_convention("torch_2_11"), Format::kE4M3FN, 0xFE), -448.0f);
}

// Guards the wrong fp8 max constant (docs/bug_classes.md §2 Z11): vLLM's fp8_max for
// float8_e4m3fnuz is 224, not 240 (docs/formats.md §5.1 get_fp8_min_max: "±224 for
// float8_e4m3fnuz"), and the kernel clamps with it before the cast: a NaN element becomes
// fminf(fmaxf(NaN, -224), 224) = -224 = 0xFE (224 = 1.75 * 2^7: S.1111.110), and 235 becomes
// 224 = 0x7E, where saturating at the format's 240 would give 0xFF / 0x7F.
TEST(ConventionEdges, VllmGroupQuantFnuzClampsAt224) {
  const Convention& v = require_convention("vllm_group_quant");
  EXPECT_EQ(hex(encode_with(v, Format::kE4M3FNUZ, kNaN)), hex(0xFE));
  EXPECT_EQ(hex(encode_with(v, Format::kE4M3FNUZ, 235.0f)), hex(0x7E));
  EXPECT_EQ(hex(encode_with(v, Format::kE4M3FNUZ, 1e6f)), hex(0x7E));
}

}  // namespace
}  // namespace mxgate
