// Reference self-checks of `mxgate gate`: the MX scale-rule table of docs/formats.md §3.7,
// agreement of the GEMM oracle's exact, ordered and bound modes, and layout round trips.
#include <cstdio>
#include <iterator>
#include <random>
#include <string>

#include "reference/convention.h"
#include "reference/gemm_oracle.h"
#include "reference/mx_quant.h"
#include "reference/quant_conventions.h"
#include "reference/scale_layout.h"
#include "reference/verdict.h"
#include "tools/mxgate/checks.h"

namespace mxgate::cli {
namespace {

// docs/formats.md §3.7, "Canonical MXFP8 (E4M3) scale bytes of one 32-block" (byte = exponent
// + 127).
struct ScaleRow {
  const char* convention;
  float amax;
  uint8_t byte;
};
constexpr float kInf = __builtin_inff();
constexpr ScaleRow kScaleTable[] = {
    // FLOOR: floor(log2 amax) - 8; 480 and 500 clip to 448 with byte 127.
    {"ocp_mx", 1.0f, 119},
    {"ocp_mx", 448.0f, 127},
    {"ocp_mx", 480.0f, 127},
    {"ocp_mx", 500.0f, 127},
    {"ocp_mx", 0.0f, 0},
    {"ocp_mx", kInf, 0xFF},
    {"torchao_floor", 448.0f, 127},
    // RCEIL: ceil(log2(amax / 448)); TE saturates Inf to 0xFE, torchao gives 0xFF.
    {"transformer_engine", 1.0f, 119},
    {"transformer_engine", 448.0f, 127},
    {"transformer_engine", 480.0f, 128},
    {"transformer_engine", 500.0f, 128},
    {"transformer_engine", 0.0f, 0},
    {"transformer_engine", kInf, 0xFE},
    {"torchao_rceil", 480.0f, 128},
    {"torchao_rceil", kInf, 0xFF},
    // AITER HIP: RCEIL with absMax seeded 1e-10: a zero block gets byte 85 (2^-42).
    {"aiter_hip", 448.0f, 127},
    {"aiter_hip", 0.0f, 85},
    {"aiter_hip", kInf, 0xFF},
    // AITER Triton: bump at significand >= 1.75, so 448 = 1.75 * 2^8 -> byte 128.
    {"aiter_triton", 1.0f, 119},
    {"aiter_triton", 448.0f, 128},
    {"aiter_triton", 480.0f, 128},
    {"aiter_triton", 0.0f, 0},
    {"aiter_triton", kInf, 254},
    // vLLM gen-2: no emax offset, amax clamped to FLT_MIN: 1.0 -> 127, 448 -> 135, 0 -> 1.
    {"vllm_mxfp8_exp2", 1.0f, 127},
    {"vllm_mxfp8_exp2", 448.0f, 135},
    {"vllm_mxfp8_exp2", 0.0f, 1},
};

CheckResult mx_scale_table(const GateOptions&) {
  CheckResult r;
  for (const ScaleRow& row : kScaleTable) {
    ++r.cases;
    const Convention& c = require_convention(row.convention);
    std::vector<float> block(32, 0.0f);
    block[5] = row.amax;
    const MxQuantized q = quantize_mx(block, 1, 32, Format::kE4M3FN, require_mx_policy(c));
    if (q.scales[0] != row.byte && r.passed) {
      r.passed = false;
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "%s, block amax %g: scale byte %u, docs/formats.md §3.7 says %u",
                    row.convention, static_cast<double>(row.amax), q.scales[0], row.byte);
      r.detail = buf;
    }
  }
  return r;
}

// On exact-mode operands any fp32 summation order is exact, so exact == ordered; on general data
// the ordered result must lie inside the bound.
CheckResult gemm_modes_agree(const GateOptions& opts) {
  CheckResult r;
  struct Shape {
    size_t m, n, k;
    BlockSizes blocks;
  };
  const Shape shapes[] = {{1, 1, 32, kMxfp8Blocks},
                          {2, 3, 160, kMxfp8Blocks},
                          {3, 5, 256, kMxfp8Blocks},
                          {2, 130, 256, kDeepSeekBlocks},
                          {5, 128, 288, kDeepSeekBlocks}};
  std::vector<Shape> all(std::begin(shapes), std::end(shapes));
  // Then --cases random shapes (default 20) from --seed: M in [1, 9], N in [1, 40], K a multiple
  // of 32 up to 320 (so partial 128-blocks occur), MX or DeepSeek blocks.
  std::mt19937_64 rng(opts.seed);
  const uint64_t extra = opts.cases ? opts.cases : 20;
  for (uint64_t i = 0; i < extra; ++i) {
    const size_t m = 1 + rng() % 9, n = 1 + rng() % 40, k = 32 * (1 + rng() % 10);
    all.push_back({m, n, k, (rng() & 1) ? kMxfp8Blocks : kDeepSeekBlocks});
  }
  uint64_t seed = opts.seed;
  for (const Shape& s : all) {
    ++r.cases;
    const ExactModeOperands ops = make_exact_mode_operands(s.m, s.n, s.k, s.blocks, true, seed++);
    const GemmOutput exact = exact_gemm(ops.problem, OutputFormat::kFp32);
    const GemmOutput ordered = ordered_gemm(
        ops.problem, {s.blocks.a_k, ScaleApplication::kPerPartial, OutputFormat::kFp32});
    const BitExactVerdict v = compare_fp32(s.m, s.n, exact.fp32, ordered.fp32);
    if (!v.ok() && r.passed) {
      r.passed = false;
      r.detail = "exact-mode operands (seed " + std::to_string(ops.seed) + ", " +
                 std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                 "): ordered != exact: " + v.summary();
      r.repro = "mxgate gate --only gemm_modes --seed " + std::to_string(opts.seed) + " --cases " +
                std::to_string(extra);
    }
  }
  return r;
}

CheckResult layout_round_trips(const GateOptions&) {
  CheckResult r;
  const size_t shapes[][2] = {{1, 1}, {3, 5}, {130, 9}, {300, 13}, {257, 72}};
  for (ScaleLayout layout : all_scale_layouts()) {
    for (const auto& s : shapes) {
      ++r.cases;
      std::vector<uint8_t> logical(s[0] * s[1]);
      for (size_t i = 0; i < logical.size(); ++i) logical[i] = static_cast<uint8_t>(i * 7 + 1);
      const auto stored = pack_scales<uint8_t>(layout, s[0], s[1], logical, 0);
      const auto back = unpack_scales<uint8_t>(layout, s[0], s[1], stored);
      if (back != logical && r.passed) {
        r.passed = false;
        r.detail = std::string(to_string(layout)) + " " + std::to_string(s[0]) + "x" +
                   std::to_string(s[1]) + ": unpack(pack(x)) != x";
      }
    }
  }
  return r;
}

}  // namespace

void add_reference_checks(std::vector<Check>& checks) {
  checks.push_back({"reference.mx_scale_table", "host", mx_scale_table});
  checks.push_back({"reference.gemm_modes_agree", "host", gemm_modes_agree});
  checks.push_back({"reference.layout_round_trips", "host", layout_round_trips});
}

}  // namespace mxgate::cli
