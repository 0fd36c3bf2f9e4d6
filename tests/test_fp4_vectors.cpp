// Covers the FP4 / FP6 byte vectors under tests/data/fp4_fp6_bytes_*.txt (format: docs/fp4.md §9,
// written by tools/measure/fp4_fp6_bytes.py on a device and by tools/measure/ml_dtypes_model.py
// from ml_dtypes' source semantics): each `cast` line of a source is compared with the convention
// that source maps to, each `decode` line with decode(), each `probe` line with the model it
// probes. Sources without a mapped convention are listed on stdout as not compared (never
// dropped silently). Does NOT cover: the vectors' own provenance (docs/fp4.md §9 records it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "reference/convention.h"
#include "reference/format.h"
#include "reference/fp_encode.h"

namespace mxgate {
namespace {

struct Line {
  std::string file;
  int number;
  std::string kind, source, what;
  uint32_t in, out;
};

std::vector<Line> read_vectors() {
  std::vector<Line> lines;
  const std::filesystem::path dir = std::filesystem::path(MXGATE_SOURCE_DIR) / "tests" / "data";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("fp4_fp6_bytes_", 0) != 0 || entry.path().extension() != ".txt") continue;
    std::ifstream in(entry.path());
    std::string text;
    int number = 0;
    while (std::getline(in, text)) {
      ++number;
      if (text.empty() || text[0] == '#') continue;
      std::istringstream fields(text);
      Line l{name, number, "", "", "", 0, 0};
      std::string a, b;
      fields >> l.kind >> l.source >> l.what >> a >> b;
      l.in = static_cast<uint32_t>(std::stoul(a, nullptr, 16));
      l.out = static_cast<uint32_t>(std::stoul(b, nullptr, 16));
      lines.push_back(l);
    }
  }
  return lines;
}

// docs/fp4.md §9: which convention claims each measured source's bytes.
const char* convention_of(const std::string& source) {
  if (source == "ml_dtypes" || source.rfind("jax_", 0) == 0) return "ml_dtypes";
  if (source.rfind("triton_kernels_", 0) == 0) return "triton_mxfp4";
  return nullptr;
}

// What JAX 0.11.2 on an H200 (XLA GPU) gave where it departs from ml_dtypes (docs/fp4.md §9.1,
// a finding, not a convention): a NaN goes to 0x8 (-0) in E2M1 whatever its sign; in E2M3 and
// E3M2 every input that rounds past the largest finite value (|x| >= max + ulp(max)/2, so 7.75 for
// E2M3 and 30 for E3M2), +-Inf and NaN go to zero with the input's sign instead of saturating.
// Everything else is ml_dtypes' byte.
uint32_t jax_gpu_code(Format f, uint32_t in, uint32_t ml_dtypes_code) {
  const float x = float_of(in);
  const uint32_t sign_zero = (in >> 31) != 0 ? 1u << (info(f).bits - 1) : 0u;
  if (f == Format::kE2M1) return std::isnan(x) ? 0x8u : ml_dtypes_code;
  const uint32_t max_code = (1u << (info(f).bits - 1)) - 1;
  const float max = decode(f, max_code);
  const float half_ulp = (max - decode(f, max_code - 1)) / 2;
  if (std::isnan(x) || std::fabs(x) >= max + half_ulp) return sign_zero;
  return ml_dtypes_code;
}

// rcp.approx.ftz.f32 as nvfp4_quant.cpp models it: the correctly rounded reciprocal, subnormal
// inputs and outputs flushed to zero.
uint32_t rcp_model(uint32_t x) {
  float a = float_of(x);
  if (std::fpclassify(a) == FP_SUBNORMAL) a = std::copysign(0.0f, a);
  float r = 1.0f / a;
  if (std::fpclassify(r) == FP_SUBNORMAL) r = std::copysign(0.0f, r);
  return bits_of(r);
}

// Guards against a convention's bytes disagreeing with the bytes its source gives (or, for the
// model file, with ml_dtypes' conversion semantics restated independently): the first mismatch
// names the file, line, input and both codes.
TEST(Fp4Vectors, EverySourceMatchesItsConvention) {
  const std::vector<Line> lines = read_vectors();
  ASSERT_FALSE(lines.empty()) << "no tests/data/fp4_fp6_bytes_*.txt vectors";
  std::map<std::string, int> compared, not_compared;
  for (const Line& l : lines) {
    const std::string where =
        l.file + ":" + std::to_string(l.number) + " " + l.kind + " " + l.source + " " + l.what;
    if (l.kind == "probe") {
      if (l.source == "ptx_rcp_approx_ftz") {
        // docs/fp4.md §9.2: the H200 returns exactly 448 for 1/fl(1/448) (0x3b124925), one ulp
        // above the correctly rounded 0x43dfffff; every other probe equals the model.
        const uint32_t expected = l.in == 0x3b124925u ? 0x43e00000u : rcp_model(l.in);
        EXPECT_EQ(expected, l.out) << where << std::hex << " input 0x" << l.in;
        ++compared[l.source];
      } else {
        ++not_compared[l.source];
      }
      continue;
    }
    const std::optional<Format> f = parse_format(l.what);
    ASSERT_TRUE(f && has_no_specials(*f)) << where << ": not an FP4 / FP6 format";
    if (l.kind == "decode") {
      EXPECT_EQ(bits_of(decode(*f, l.in)), l.out) << where << std::hex << " code 0x" << l.in;
      ++compared[l.source];
      continue;
    }
    ASSERT_EQ(l.kind, "cast") << where;
    const char* name = convention_of(l.source);
    if (!name) {
      ++not_compared[l.source];
      continue;
    }
    const Convention* c = find_convention(name);
    ASSERT_NE(c, nullptr) << name;
    const uint32_t convention_code = encode_with(*c, *f, float_of(l.in));
    const uint32_t expected = l.source.rfind("jax_gpu", 0) == 0
                                  ? jax_gpu_code(*f, l.in, convention_code)
                                  : convention_code;
    EXPECT_EQ(expected, l.out) << where << std::hex << ": input 0x" << l.in << " ("
                               << float_of(l.in) << ") under " << name;
    ++compared[l.source];
  }
  for (const auto& [s, n] : compared)
    std::printf("[ vectors  ] %s: %d lines compared\n", s.c_str(), n);
  for (const auto& [s, n] : not_compared) {
    std::printf("[ vectors  ] %s: %d lines NOT compared (no convention mapped, docs/fp4.md §9)\n",
                s.c_str(), n);
  }
  EXPECT_GT(compared["ml_dtypes"], 0) << "the ml_dtypes vectors are missing";
}

}  // namespace
}  // namespace mxgate
