// Covers reference/convention and reference/measured_bytes: the 23 named conventions exist and
// cite their section of docs/conventions.md; every MeasuredEncode / MeasuredE8m0 /
// MeasuredE8m0Decode row reproduces byte for byte (one test per row, named after its
// docs/conventions.md §3 source); an independent transcription of docs/conventions.md §3 kept in
// this file (the probe.cu table, the torch, triton, e8m0 and decode rows, the bf16-first e4m3 row)
// both reproduces and matches measured_bytes.cpp. Does NOT cover: the per-convention edge cases
// and errors (test_convention_edges.cpp), the encoders' rounding in general (test_fp_encode.cpp,
// test_e8m0.cpp), the CLI (test_cli_formats.cpp), full sweeps (exhaustive_encoders.cpp).
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/convention.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/measured_bytes.h"
#include "reference/quant_conventions.h"
#include "tests/hex.h"
#include "tests/measured_rows.h"

namespace mxgate {
namespace {

using test_support::hex;
using test_support::hexfloat;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kFltMax = 0x1.fffffep127f;

// Same fp32 pattern, or both NaN.
bool same_input(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || bits_of(a) == bits_of(b);
}

// ---- Registry ----

// README.md "Conventions:" list.
constexpr const char* kConventionNames[] = {
    "ocp_mx", "torchao_floor", "torchao_rceil", "transformer_engine", "cuda_satfinite",
    "cuda_nosat", "torch_2_11", "ml_dtypes", "triton_nvidia", "aiter_hip", "aiter_triton",
    "vllm_group_quant", "vllm_e8m0_shift", "vllm_mxfp8_exp2", "deepgemm",
    // FP4-only implementations (docs/fp4.md §3)
    "triton_mxfp4", "triton_mxfp4_half_up", "aiter_fp4_fallback", "aiter_fp4_fallback_pre3992",
    "aiter_gfx950", "te_nvfp4_ref", "flashinfer_nvfp4", "torchao_nvfp4",
    // Newer releases and other peers (docs/conventions.md §2.24 - §2.29)
    "torch_2_13", "microxcaling", "torch_e8m0_nan_bits", "torchao_ceil", "torchao_even",
    "triton_rtz"};
// The first kFp8ConventionCount names are the FP8 conventions, the next kFp4ConventionCount
// FP4-only; the rest are checked against the format their source casts to (kAddedFormats).
constexpr size_t kFp8ConventionCount = 15;
constexpr size_t kFp4ConventionCount = 8;
// The format each added convention must define: torch_2_13 changes E4M3FN only, Triton's rtz
// downcast exists for E5M2 only (docs/conventions.md §2.24, §2.29).
constexpr Format kAddedFormats[] = {Format::kE4M3FN, Format::kE4M3FN, Format::kE4M3FN,
                                    Format::kE4M3FN, Format::kE4M3FN, Format::kE5M2};

// Guards against a convention dropped, renamed or left without a citation: every name of the
// README exists, is found by name, its source points into docs/conventions.md §2
// (tests/test_docs_match_code.cpp checks that the section is the convention's own), and it casts
// to E4M3 (the FP8 ones) or to E2M1 and no FP8 format (the FP4-only ones, docs/fp4.md §3).
TEST(ConventionRegistry, EveryConventionExistsAndCitesASource) {
  EXPECT_EQ(all_conventions().size(), std::size(kConventionNames));
  std::set<std::string_view> seen;
  for (const Convention& c : all_conventions()) {
    EXPECT_TRUE(seen.insert(c.name).second) << "duplicate " << c.name;
    EXPECT_NE(c.source.find("docs/conventions.md §2."), std::string_view::npos)
        << c.name << ": " << c.source;
    EXPECT_TRUE(defines(c, Format::kBF16) && defines(c, Format::kFP16) && defines(c, Format::kE8M0))
        << c.name;
  }
  const std::string all = convention_names();
  for (size_t i = 0; i < std::size(kConventionNames); ++i) {
    const char* n = kConventionNames[i];
    const Convention* c = find_convention(n);
    ASSERT_NE(c, nullptr) << n;
    EXPECT_EQ(c->name, n);
    EXPECT_NE(all.find(n), std::string::npos) << n;
    if (i < kFp8ConventionCount) {
      EXPECT_TRUE(defines(*c, Format::kE4M3FN)) << n;  // every surveyed FP8 one casts to E4M3
    } else if (i >= kFp8ConventionCount + kFp4ConventionCount) {
      const size_t a = i - kFp8ConventionCount - kFp4ConventionCount;
      ASSERT_LT(a, std::size(kAddedFormats)) << n;
      EXPECT_TRUE(defines(*c, kAddedFormats[a])) << n;
    } else {
      EXPECT_TRUE(defines(*c, Format::kE2M1)) << n;
      for (Format f : {Format::kE4M3FN, Format::kE5M2, Format::kE4M3FNUZ, Format::kE5M2FNUZ}) {
        EXPECT_FALSE(defines(*c, f)) << n << " is FP4-only but defines " << info(f).name;
      }
    }
  }
  EXPECT_EQ(find_convention(""), nullptr);
  EXPECT_EQ(find_convention("torch"), nullptr);
  EXPECT_EQ(find_convention("cuda_satfinite "), nullptr);
}

// Guards against a convention name written in code (dispatch, the gate, the properties) with a
// typo: the lookup must fail loudly, naming the bad name and the known ones, never give a null
// convention or an empty quantizer policy.
TEST(ConventionRegistry, RequireNamesTheTypo) {
  EXPECT_EQ(require_convention("ocp_mx").name, "ocp_mx");
  try {
    (void)require_convention("ocp_mxx");
    ADD_FAILURE() << "require_convention accepted a typo";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'ocp_mxx'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("torchao_rceil"), std::string::npos) << e.what();
  }
  // cuda_satfinite is a cast convention with no MX or block quantizer.
  EXPECT_THROW((void)require_mx_policy(require_convention("cuda_satfinite")),
               std::invalid_argument);
  EXPECT_THROW(
      (void)require_block_policy(require_convention("cuda_satfinite"), Format::kE4M3FN, false),
      std::invalid_argument);
  EXPECT_EQ(require_mx_policy(require_convention("ocp_mx")).rule, MxScaleRule::kFloor);
  EXPECT_EQ(require_block_policy(require_convention("deepgemm"), Format::kE4M3FN, true).ue8m0,
            Ue8m0::kDeepGemmClamp);
}

// ---- Every row of measured_bytes, one test each ----

class MeasuredEncodeRow : public ::testing::TestWithParam<size_t> {};

// Guards against a convention whose policies do not reproduce the bytes the implementation it
// names produced on the device.
TEST_P(MeasuredEncodeRow, ReproducesDeviceBytes) {
  const MeasuredEncode& m = measured_encodes()[GetParam()];
  const Convention* c = find_convention(m.convention);
  ASSERT_NE(c, nullptr) << m.convention;
  ASSERT_TRUE(defines(*c, m.format)) << m.convention << " " << info(m.format).name;
  ASSERT_EQ(m.inputs.size(), m.bytes.size());
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    EXPECT_EQ(hex(encode_with(*c, m.format, m.inputs[i])), hex(m.bytes[i]))
        << m.source << ", input #" << i << " " << hexfloat(m.inputs[i]);
  }
}

INSTANTIATE_TEST_SUITE_P(Rows, MeasuredEncodeRow,
                         ::testing::Range<size_t>(0, measured_encodes().size()),
                         test_support::encode_row_name);

class MeasuredE8m0Row : public ::testing::TestWithParam<size_t> {};

// Guards against an e8m0 rule that does not reproduce its device row (CUDA rounding modes,
// torch, ml_dtypes).
TEST_P(MeasuredE8m0Row, ReproducesDeviceBytes) {
  const MeasuredE8m0& m = measured_e8m0_encodes()[GetParam()];
  ASSERT_EQ(m.inputs.size(), m.bytes.size());
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    EXPECT_EQ(hex(encode_e8m0(m.inputs[i], m.rule)), hex(m.bytes[i]))
        << m.source << ", input #" << i << " " << hexfloat(m.inputs[i]);
  }
}

INSTANTIATE_TEST_SUITE_P(Rows, MeasuredE8m0Row,
                         ::testing::Range<size_t>(0, measured_e8m0_encodes().size()),
                         test_support::e8m0_row_name);

class MeasuredDecodeRow : public ::testing::TestWithParam<size_t> {};

// Guards against a convention decoding e8m0 bytes other than the implementation it names
// (0x00 as 2^-127 vs +0 vs 0x1.fffff8p-128; 0xff as NaN vs +Inf).
TEST_P(MeasuredDecodeRow, ReproducesDeviceValues) {
  const MeasuredE8m0Decode& m = measured_e8m0_decodes()[GetParam()];
  const Convention* c = find_convention(m.convention);
  ASSERT_NE(c, nullptr) << m.convention;
  EXPECT_EQ(c->e8m0_decode, m.rule) << m.convention;
  ASSERT_EQ(m.bytes.size(), m.fp32_bits.size());
  for (size_t i = 0; i < m.bytes.size(); ++i) {
    const float got = decode_with(*c, Format::kE8M0, m.bytes[i]);
    const float want = float_of(m.fp32_bits[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << m.source << " byte " << hex(m.bytes[i]);
    } else {
      EXPECT_EQ(hex(bits_of(got)), hex(m.fp32_bits[i])) << m.source << " byte " << hex(m.bytes[i]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Rows, MeasuredDecodeRow,
                         ::testing::Range<size_t>(0, measured_e8m0_decodes().size()),
                         test_support::decode_row_name);

// Guards against measured tables emptied by mistake (the parameterized tests above would then
// pass vacuously): docs/conventions.md §3 has 10 element rows, 6 e8m0 rows and 3 decode rows.
TEST(MeasuredRows, NoTableIsEmpty) {
  EXPECT_GE(measured_encodes().size(), 10u);
  EXPECT_GE(measured_e8m0_encodes().size(), 6u);
  EXPECT_GE(measured_e8m0_decodes().size(), 3u);
}

// ---- Independent transcription of docs/conventions.md §3 ----

// "== probe.cu: cuda_fp8.h intrinsics executed on sm_90 ==", line by line:
// value | e4m3 SAT NOSAT | e5m2 SAT NOSAT || e8m0 RZsat RZnosat RPsat RPnosat | host e8m0 RPsat
struct ProbeLine {
  float value;
  uint8_t e4m3_sat, e4m3_nosat, e5m2_sat, e5m2_nosat, rz_sat, rz_nosat, rp_sat, rp_nosat, host;
};
const ProbeLine kProbe[] = {
    {0x0p+0f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
    {-0x0p+0f, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00},
    {0x1.b7cdfep-34f, 0x00, 0x00, 0x00, 0x00, 0x5d, 0x5d, 0x5e, 0x5e, 0x5e},
    {0x1p-10f, 0x00, 0x00, 0x14, 0x14, 0x75, 0x75, 0x75, 0x75, 0x75},
    {0x1.0001p-10f, 0x01, 0x01, 0x14, 0x14, 0x75, 0x75, 0x76, 0x76, 0x76},
    {0x1p-9f, 0x01, 0x01, 0x18, 0x18, 0x76, 0x76, 0x76, 0x76, 0x76},
    {0x1.cp+8f, 0x7e, 0x7e, 0x5f, 0x5f, 0x87, 0x87, 0x88, 0x88, 0x88},
    {0x1.dp+8f, 0x7e, 0x7e, 0x5f, 0x5f, 0x87, 0x87, 0x88, 0x88, 0x88},
    {0x1.d00002p+8f, 0x7e, 0x7f, 0x5f, 0x5f, 0x87, 0x87, 0x88, 0x88, 0x88},
    {0x1.d6p+8f, 0x7e, 0x7f, 0x5f, 0x5f, 0x87, 0x87, 0x88, 0x88, 0x88},
    {0x1.ep+8f, 0x7e, 0x7f, 0x60, 0x60, 0x87, 0x87, 0x88, 0x88, 0x88},
    {0x1.cp+15f, 0x7e, 0x7f, 0x7b, 0x7b, 0x8e, 0x8e, 0x8f, 0x8f, 0x8f},
    {0x1.dffep+15f, 0x7e, 0x7f, 0x7b, 0x7b, 0x8e, 0x8e, 0x8f, 0x8f, 0x8f},
    {0x1.ep+15f, 0x7e, 0x7f, 0x7b, 0x7c, 0x8e, 0x8e, 0x8f, 0x8f, 0x8f},
    {kInf, 0x7e, 0x7f, 0x7b, 0x7c, 0xfe, 0xff, 0xfe, 0xff, 0xfe},
    {-kInf, 0xfe, 0xff, 0xfb, 0xfc, 0xfe, 0xff, 0xfe, 0xff, 0xfe},
    {kNaN, 0x7f, 0x7f, 0x7f, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff},
    {-470.0f, 0xfe, 0xff, 0xdf, 0xdf, 0x87, 0x87, 0x88, 0x88, 0x88},
    {1.0f, 0x38, 0x38, 0x3c, 0x3c, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f},
    {1.5f, 0x3c, 0x3c, 0x3e, 0x3e, 0x7f, 0x7f, 0x80, 0x80, 0x80},
    {3.0f, 0x44, 0x44, 0x42, 0x42, 0x80, 0x80, 0x81, 0x81, 0x81},
    {0.75f, 0x34, 0x34, 0x3a, 0x3a, 0x7e, 0x7e, 0x7f, 0x7f, 0x7f},
    {-1.0f, 0xb8, 0xb8, 0xbc, 0xbc, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f},
    {0x1p-127f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
    {0x1.2p-127f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x01},
    {0x1.8p-127f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x01},
    {0x1p-128f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
    {0x1p-149f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
    {0x1.8p+127f, 0x7e, 0x7f, 0x7b, 0x7c, 0xfe, 0xfe, 0xfe, 0xff, 0xfe},
    {kFltMax, 0x7e, 0x7f, 0x7b, 0x7c, 0xfe, 0xfe, 0xfe, 0xff, 0xfe},
    {0x1.000002p+0f, 0x38, 0x38, 0x3c, 0x3c, 0x7f, 0x7f, 0x80, 0x80, 0x80},  // 1+2^-23
};

// Guards against the CUDA conventions (and the CUDA e8m0 rules) drifting from the probe.cu run,
// checked against this file's own copy of the table, not measured_bytes.cpp's.
TEST(DeviceProbeCopy, ProbeCuTable) {
  const Convention& sat = require_convention("cuda_satfinite");
  const Convention& nosat = require_convention("cuda_nosat");
  for (const ProbeLine& l : kProbe) {
    const std::string at = "probe.cu line " + hexfloat(l.value);
    EXPECT_EQ(hex(encode_with(sat, Format::kE4M3FN, l.value)), hex(l.e4m3_sat)) << at;
    EXPECT_EQ(hex(encode_with(nosat, Format::kE4M3FN, l.value)), hex(l.e4m3_nosat)) << at;
    EXPECT_EQ(hex(encode_with(sat, Format::kE5M2, l.value)), hex(l.e5m2_sat)) << at;
    EXPECT_EQ(hex(encode_with(nosat, Format::kE5M2, l.value)), hex(l.e5m2_nosat)) << at;
    EXPECT_EQ(hex(encode_e8m0(l.value, E8m0Encode::kFloorSat)), hex(l.rz_sat)) << at;
    EXPECT_EQ(hex(encode_e8m0(l.value, E8m0Encode::kFloor)), hex(l.rz_nosat)) << at;
    EXPECT_EQ(hex(encode_with(sat, Format::kE8M0, l.value)), hex(l.rp_sat)) << at;
    EXPECT_EQ(hex(encode_with(nosat, Format::kE8M0, l.value)), hex(l.rp_nosat)) << at;
    // Host __nv_fp8_e8m0 constructor = RoundPosInf + SATFINITE (docs/formats.md §2.1); TE's rule.
    EXPECT_EQ(hex(encode_with(require_convention("transformer_engine"), Format::kE8M0, l.value)),
              hex(l.host))
        << at;
  }
}

// The torch value list of docs/conventions.md §3.2, as torch.tensor(list, dtype=float32) makes it:
// each Python double rounded once to fp32 (the casts below are that rounding, done by the
// compiler). The last four entries differ per format.
std::vector<float> torch_inputs(bool e5m2_tail) {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          static_cast<float>(1e-10),
                          static_cast<float>(0x1p-10),
                          static_cast<float>(0x1p-10 * 1.0001),
                          static_cast<float>(0x1p-9),
                          448.0f,
                          464.0f,
                          static_cast<float>(464.0001),
                          470.0f,
                          static_cast<float>(479.9),
                          480.0f,
                          500.0f,
                          static_cast<float>(1e6),
                          kInf,
                          -kInf,
                          kNaN,
                          -470.0f};
  if (e5m2_tail) {
    v.insert(v.end(), {57344.0f, 61439.0f, 61440.0f, 65536.0f});
  } else {
    v.insert(v.end(), {240.0f, 247.0f, 248.0f, 256.0f});
  }
  return v;
}

struct TorchRow {
  const char* label;  // the docs/conventions.md §3 row
  const char* convention;
  Format format;
  bool e5m2_tail;
  std::vector<uint8_t> bytes;
};
const std::vector<TorchRow>& torch_rows() {
  // clang-format off
  static const std::vector<TorchRow> rows = {
      {"torch e4m3fn  f32->", "torch_2_11", Format::kE4M3FN, false,
       {0x00, 0x80, 0x00, 0x00, 0x01, 0x01, 0x7e, 0x7e, 0x7f, 0x7f, 0x7f,
        0x7f, 0x7f, 0x7f, 0x7f, 0xff, 0x7f, 0xff, 0x77, 0x77, 0x78, 0x78}},
      // "ml_dtypes e4m3fn: identical to torch e4m3fn row above (non-saturating)."
      {"ml_dtypes e4m3fn", "ml_dtypes", Format::kE4M3FN, false,
       {0x00, 0x80, 0x00, 0x00, 0x01, 0x01, 0x7e, 0x7e, 0x7f, 0x7f, 0x7f,
        0x7f, 0x7f, 0x7f, 0x7f, 0xff, 0x7f, 0xff, 0x77, 0x77, 0x78, 0x78}},
      {"torch e5m2    f32->", "torch_2_11", Format::kE5M2, true,
       {0x00, 0x80, 0x00, 0x14, 0x14, 0x18, 0x5f, 0x5f, 0x5f, 0x5f, 0x5f,
        0x60, 0x60, 0x7c, 0x7c, 0xfc, 0x7f, 0xdf, 0x7b, 0x7b, 0x7c, 0x7c}},
      {"torch e4m3fnuz f32->", "torch_2_11", Format::kE4M3FNUZ, false,
       {0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x80, 0x80, 0x80, 0x80, 0x80,
        0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f, 0x7f, 0x80, 0x80}},
      {"torch e5m2fnuz f32->", "torch_2_11", Format::kE5M2FNUZ, true,
       {0x00, 0x00, 0x00, 0x18, 0x18, 0x1c, 0x63, 0x63, 0x63, 0x63, 0x63,
        0x64, 0x64, 0x80, 0x80, 0x80, 0x80, 0xe3, 0x7f, 0x7f, 0x80, 0x80}},
      // Triton rows: the tail bytes (7e / 7b for all four) are only consistent with the e5m2
      // tail 57344..65536 (240 would give 0x77 in e4m3), as measured_bytes.cpp also concludes.
      {"triton 3.6 f32->fp8e4nv", "triton_nvidia", Format::kE4M3FN, true,
       {0x00, 0x80, 0x00, 0x00, 0x01, 0x01, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e,
        0x7e, 0x7e, 0x7e, 0x7e, 0xfe, 0x7f, 0xfe, 0x7e, 0x7e, 0x7e, 0x7e}},
      {"triton 3.6 f32->fp8e5", "triton_nvidia", Format::kE5M2, true,
       {0x00, 0x80, 0x00, 0x14, 0x14, 0x18, 0x5f, 0x5f, 0x5f, 0x5f, 0x5f,
        0x60, 0x60, 0x7b, 0x7b, 0xfb, 0x7f, 0xdf, 0x7b, 0x7b, 0x7b, 0x7b}},
  };
  // clang-format on
  return rows;
}

// Guards against the torch / ml_dtypes / triton conventions drifting from their device rows,
// checked against this file's own copy of the rows and of the input list.
TEST(DeviceProbeCopy, TorchAndTritonRows) {
  for (const TorchRow& r : torch_rows()) {
    const std::vector<float> in = torch_inputs(r.e5m2_tail);
    ASSERT_EQ(in.size(), r.bytes.size()) << r.label;
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_EQ(hex(encode_with(require_convention(r.convention), r.format, in[i])),
                hex(r.bytes[i]))
          << r.label << " input #" << i << " " << hexfloat(in[i]);
    }
  }
}

// Guards against double rounding hidden in the element cast, and documents it: "e4m3fn cuda
// bf16-> 00 80 00 00 00 01 7e 7e 7e 7f 7f ..." is the torch cast of the same list after a
// bf16 rounding (2^-10 * 1.0001 -> bf16 2^-10 -> tie -> 00; 464.0001 -> bf16 464 -> 7e).
TEST(DeviceProbeCopy, Bf16FirstE4m3Row) {
  const uint8_t row[] = {0x00, 0x80, 0x00, 0x00, 0x00, 0x01, 0x7e, 0x7e, 0x7e, 0x7f, 0x7f};
  const Convention& torch = require_convention("torch_2_11");
  const std::vector<float> in = torch_inputs(false);
  for (size_t i = 0; i < std::size(row); ++i) {
    const uint32_t b = encode_with(torch, Format::kBF16, in[i]);
    EXPECT_EQ(hex(encode_with(torch, Format::kE4M3FN, float_of(b << 16))), hex(row[i]))
        << "bf16-> input #" << i << " " << hexfloat(in[i]);
  }
  // And the direct cast differs on inputs #4 and #8 (torch e4m3fn f32-> row: 01, 7f).
  EXPECT_EQ(encode_with(torch, Format::kE4M3FN, in[4]), 0x01u);
  EXPECT_EQ(encode_with(torch, Format::kE4M3FN, in[8]), 0x7Fu);
}

// "e8m0 vals [0, -0, 1, 1.5, 1.5000001, 1.4999999, 3, 0.75, -1, -3, 2^-127, 1.2*2^-127,
// 1.5*2^-127, 1.6*2^-127, 2^-128, 2^-149, 1.5*2^127, 3e38, FLT_MAX, inf, -inf, nan]".
std::vector<float> e8m0_inputs() {
  return {0.0f,
          -0.0f,
          1.0f,
          1.5f,
          static_cast<float>(1.5000001),
          static_cast<float>(1.4999999),
          3.0f,
          0.75f,
          -1.0f,
          -3.0f,
          0x1p-127f,
          static_cast<float>(1.2 * 0x1p-127),
          static_cast<float>(1.5 * 0x1p-127),
          static_cast<float>(1.6 * 0x1p-127),
          0x1p-128f,
          0x1p-149f,
          0x1.8p+127f,
          static_cast<float>(3e38),
          kFltMax,
          kInf,
          -kInf,
          kNaN};
}

// Guards against the PyTorch / ml_dtypes e8m0 casts drifting from the device rows
// ("torch f32->e8m0" and "ml_dtypes 0.6.0"), through their conventions.
TEST(DeviceProbeCopy, E8m0Rows) {
  const uint8_t torch[] = {0x00, 0x00, 0x7f, 0x80, 0x80, 0x7f, 0x81, 0x7f, 0x7f, 0x81, 0x00,
                           0x01, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  const uint8_t ml[] = {0xff, 0xff, 0x7f, 0x80, 0x80, 0x7f, 0x81, 0x7f, 0xff, 0xff, 0x00,
                        0x01, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  const std::vector<float> in = e8m0_inputs();
  ASSERT_EQ(in.size(), std::size(torch));
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(hex(encode_with(require_convention("torch_2_11"), Format::kE8M0, in[i])),
              hex(torch[i]))
        << "torch f32->e8m0 #" << i << " " << hexfloat(in[i]);
    EXPECT_EQ(hex(encode_with(require_convention("ml_dtypes"), Format::kE8M0, in[i])), hex(ml[i]))
        << "ml_dtypes #" << i << " " << hexfloat(in[i]);
  }
}

// Guards against the decode conventions drifting from "e8m0 bytes [00,01,7e,7f,80,fe,ff] ->
// f32" (torch: 2^-127 ... nan; torch.exp2(e-127) on CUDA: 0x1.fffff8p-128 ... inf;
// (e.int32 << 23).view(f32): 0.0 ... inf).
TEST(DeviceProbeCopy, E8m0DecodeRows) {
  const uint32_t bytes[] = {0x00, 0x01, 0x7e, 0x7f, 0x80, 0xfe, 0xff};
  const float torch[] = {0x1p-127f, 0x1p-126f, 0x1p-1f, 1.0f, 2.0f, 0x1p127f, kNaN};
  const float exp2[] = {0x1.fffff8p-128f, 0x1p-126f, 0x1p-1f, 1.0f, 2.0f, 0x1p127f, kInf};
  const float shift[] = {0.0f, 0x1p-126f, 0x1p-1f, 1.0f, 2.0f, 0x1p127f, kInf};
  for (size_t i = 0; i < std::size(bytes); ++i) {
    EXPECT_TRUE(same_input(decode_with(require_convention("torch_2_11"), Format::kE8M0, bytes[i]),
                           torch[i]))
        << hex(bytes[i]);
    EXPECT_TRUE(same_input(
        decode_with(require_convention("vllm_mxfp8_exp2"), Format::kE8M0, bytes[i]), exp2[i]))
        << hex(bytes[i]);
    EXPECT_TRUE(same_input(
        decode_with(require_convention("vllm_e8m0_shift"), Format::kE8M0, bytes[i]), shift[i]))
        << hex(bytes[i]);
  }
}

// Guards against a transcription slip in measured_bytes.cpp (a byte or an input copied wrong
// from docs/conventions.md §3): its rows must equal this file's independent copy.
TEST(DeviceProbeCopy, MeasuredBytesTranscriptionMatches) {
  auto find = [](std::string_view source) -> const MeasuredEncode* {
    for (const MeasuredEncode& m : measured_encodes())
      if (m.source == source) return &m;
    return nullptr;
  };
  auto compare = [](const MeasuredEncode* m, const std::vector<float>& in,
                    const std::vector<uint8_t>& bytes, const char* what) {
    ASSERT_NE(m, nullptr) << what;
    ASSERT_EQ(m->inputs.size(), in.size()) << what;
    ASSERT_EQ(m->bytes.size(), bytes.size()) << what;
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_TRUE(same_input(m->inputs[i], in[i]))
          << what << " input #" << i << ": " << hexfloat(m->inputs[i]) << " vs " << hexfloat(in[i]);
      EXPECT_EQ(hex(m->bytes[i]), hex(bytes[i])) << what << " byte #" << i;
    }
  };
  std::vector<float> probe_in;
  std::vector<uint8_t> cols[4];
  for (const ProbeLine& l : kProbe) {
    probe_in.push_back(l.value);
    cols[0].push_back(l.e4m3_sat);
    cols[1].push_back(l.e4m3_nosat);
    cols[2].push_back(l.e5m2_sat);
    cols[3].push_back(l.e5m2_nosat);
  }
  compare(find("probe.cu e4m3 SAT"), probe_in, cols[0], "probe.cu e4m3 SAT");
  compare(find("probe.cu e4m3 NOSAT"), probe_in, cols[1], "probe.cu e4m3 NOSAT");
  compare(find("probe.cu e5m2 SAT"), probe_in, cols[2], "probe.cu e5m2 SAT");
  compare(find("probe.cu e5m2 NOSAT"), probe_in, cols[3], "probe.cu e5m2 NOSAT");
  const char* torch_sources[] = {"torch 2.11 e4m3fn f32->",   nullptr,
                                 "torch 2.11 e5m2 f32->",     "torch 2.11 e4m3fnuz f32->",
                                 "torch 2.11 e5m2fnuz f32->", "triton 3.6 f32->fp8e4nv",
                                 "triton 3.6 f32->fp8e5"};
  for (size_t r = 0; r < torch_rows().size(); ++r) {
    if (!torch_sources[r]) continue;  // ml_dtypes e4m3fn has no row of its own there
    const TorchRow& row = torch_rows()[r];
    compare(find(torch_sources[r]), torch_inputs(row.e5m2_tail), row.bytes, row.label);
  }
  // e8m0 rows: inputs and bytes.
  const std::vector<float> e8_in = e8m0_inputs();
  for (const MeasuredE8m0& m : measured_e8m0_encodes()) {
    if (m.inputs.size() == e8_in.size()) {
      for (size_t i = 0; i < e8_in.size(); ++i) {
        EXPECT_TRUE(same_input(m.inputs[i], e8_in[i])) << m.source << " input #" << i;
      }
    } else {
      ASSERT_EQ(m.inputs.size(), std::size(kProbe)) << m.source;
      for (size_t i = 0; i < std::size(kProbe); ++i) {
        EXPECT_TRUE(same_input(m.inputs[i], kProbe[i].value)) << m.source << " input #" << i;
        const ProbeLine& l = kProbe[i];
        const uint8_t want = m.rule == E8m0Encode::kFloorSat    ? l.rz_sat
                             : m.rule == E8m0Encode::kFloor     ? l.rz_nosat
                             : m.rule == E8m0Encode::kCeilSat   ? l.rp_sat
                             : m.rule == E8m0Encode::kCeilNoSat ? l.rp_nosat
                                                                : 0xAA;
        EXPECT_EQ(hex(m.bytes[i]), hex(want)) << m.source << " byte #" << i;
      }
    }
  }
}

}  // namespace
}  // namespace mxgate
