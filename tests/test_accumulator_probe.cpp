// Covers probe/accumulator_probe: the probe recovers the parameters of simulated accumulators
// (fp32_rn, and sm90_fp8_mma under several parameter sets: precision, rounding, chunk, group,
// normalisation) through per-tensor and block scales and the four FP8 formats' codes (the large
// product is 2^16, or 2^14 where E4M3FNUZ cannot hold 256), and the model spec it
// prints parses back to those parameters; an accumulator outside every model (rounding toward
// +Inf) is reported as such; an implementation that does not return a single product fails the
// sanity call.
// Also: every registry model comes back from its own simulation (calls per model printed), and
// the structured variants (round-down / truncation / nearest-even halves, late / early C, halves /
// flat, no / long promotion, the fp32 store) each come back as a new spec.
// Does not cover: real hardware (the nvplug branch runs it on the H200), partial_roundings (not
// observable with unit scales), the CLI verb (test_cli_accumulators).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "probe/accumulator_probe.h"
#include "reference/accumulator.h"

namespace mxgate {
namespace {

using std::size_t;

// Guards against a probe that misreads a plain fp32 accumulator (every addition rounded to
// nearest): it must report fp32 precision, nearest-even, nothing to promote, and fp32_rn.
TEST(AccumulatorProbe, RecognisesFp32RoundToNearest) {
  for (ProbeScaling s : {ProbeScaling::kPerTensor, ProbeScaling::kBlock}) {
    ProbeOptions o;
    o.scaling = s;
    o.format = s == ProbeScaling::kBlock ? Format::kE4M3FNUZ : Format::kE4M3FN;  // 2^14 / 2^16
    const ProbeResult r = probe_accumulator(simulated_fp8_gemm(*find_accumulator("fp32_rn")), o);
    EXPECT_EQ(r.precision_bits, 24);
    EXPECT_TRUE(r.precision_at_output_limit);
    EXPECT_EQ(r.rounding, "nearest_even");
    EXPECT_EQ(r.chunk_k, 0u);
    EXPECT_EQ(r.group_size, 0u);
    EXPECT_FALSE(r.normalize_group_sum.has_value());
    EXPECT_EQ(r.model, "fp32_rn");
  }
}

// Guards against a probe that reports a parameter it did not measure: for each simulated
// parameter set, every measurable parameter must come back as set, and the printed model spec
// must parse to it.
TEST(AccumulatorProbe, RecoversSimulatedSm90Parameters) {
  struct Case {
    std::string spec;
    bool block_scaling_ok;  // chunks inside 128-wide scale blocks
  };
  const std::vector<Case> cases = {
      {"sm90_fp8_mma", true},
      {"sm90_fp8_mma:precision_bits=12,group_size=16,chunk_k=64,rounding=nearest_even,"
       "normalize_group_sum=1",
       true},
      {"sm90_fp8_mma:precision_bits=16,group_size=8,chunk_k=32", true},
      {"sm90_fp8_mma:precision_bits=10,group_size=4,rounding=nearest_even", true},
      {"sm90_fp8_mma:precision_bits=18,group_size=32,normalize_group_sum=1", true},
      {"sm90_fp8_mma:precision_bits=13,chunk_k=0", false},
      {"sm90_fp8_mma:precision_bits=11,chunk_k=256,group_size=64", false},
  };
  for (const Case& c : cases) {
    const AccumulatorModel m = parse_accumulator_spec(c.spec);
    for (ProbeScaling s : {ProbeScaling::kPerTensor, ProbeScaling::kBlock}) {
      if (s == ProbeScaling::kBlock && !c.block_scaling_ok) continue;
      for (Format f : {Format::kE4M3FN, Format::kE5M2, Format::kE4M3FNUZ, Format::kE5M2FNUZ}) {
        SCOPED_TRACE(c.spec + (s == ProbeScaling::kBlock ? " block " : " per-tensor ") +
                     std::string(info(f).name));
        ProbeOptions o;
        o.scaling = s;
        o.format = f;
        o.m = o.n = 4;  // zeros outside row 0 as at 16 x 16, a sixteenth of the simulation
        const ProbeResult r = probe_accumulator(simulated_fp8_gemm(m), o);
        EXPECT_EQ(r.precision_bits, m.chunks.precision_bits);
        EXPECT_FALSE(r.precision_at_output_limit);
        EXPECT_EQ(r.rounding, to_string(m.chunks.rounding));
        EXPECT_EQ(r.chunk_k, m.chunks.chunk_k);
        EXPECT_EQ(r.chunk_verified, m.chunks.chunk_k != 0 && 2 * m.chunks.chunk_k < o.k);
        EXPECT_EQ(r.group_size, m.chunks.group_size);
        ASSERT_TRUE(r.normalize_group_sum.has_value());
        EXPECT_EQ(*r.normalize_group_sum, m.chunks.normalize_group_sum);
        ASSERT_FALSE(r.model.empty());
        const AccumulatorModel back = parse_accumulator_spec(r.model);
        EXPECT_EQ(back.chunks.precision_bits, m.chunks.precision_bits);
        EXPECT_EQ(back.chunks.group_size, m.chunks.group_size);
        EXPECT_EQ(back.chunks.chunk_k, m.chunks.chunk_k);
        EXPECT_EQ(back.chunks.rounding, m.chunks.rounding);
        EXPECT_EQ(back.chunks.normalize_group_sum, m.chunks.normalize_group_sum);
      }
    }
  }
}

// Guards against reading "1 or 2" products at a time as a measured group size, and against a
// normalisation verdict from groups too small to hold the test.
TEST(AccumulatorProbe, GroupsOfTwoAreReportedAsAtMostTwo) {
  const ProbeResult r = probe_accumulator(
      simulated_fp8_gemm(parse_accumulator_spec("sm90_fp8_mma:group_size=2")), ProbeOptions{});
  EXPECT_EQ(r.group_size, 2u);
  EXPECT_FALSE(r.normalize_group_sum.has_value());
  bool noted = false;
  for (const std::string& l : r.log) noted = noted || l.find("(or 1") != std::string::npos;
  EXPECT_TRUE(noted);
}

// Guards against a probe that forces every accumulator into a model: one that rounds the
// aligned terms toward +Inf (14 bits, no chunks) is reported as toward_positive, with no model.
TEST(AccumulatorProbe, ReportsAnAccumulatorNoModelDescribes) {
  const Fp8Gemm round_up = [](const Fp8GemmCall& call) {
    // C[0][0] only: the exact sum of row 0's products, each aligned to 14 bits of the largest
    // term by rounding toward +Inf (every other element 0).
    std::vector<double> x(call.k);
    double big = 0;
    for (size_t k = 0; k < call.k; ++k) {
      x[k] = static_cast<double>(decode(call.format, call.a[k])) * decode(call.format, call.b[k]);
      big = std::max(big, std::fabs(x[k]));
    }
    const double unit = std::ldexp(1.0, std::ilogb(big) - 13);
    double sum = 0;
    for (double v : x) sum += std::ceil(v / unit) * unit;
    std::vector<float> c(call.m * call.n, 0.0f);
    c[0] = static_cast<float>(sum);
    return c;
  };
  const ProbeResult r = probe_accumulator(round_up, ProbeOptions{});
  EXPECT_EQ(r.precision_bits, 14);
  EXPECT_EQ(r.rounding, "toward_positive");
  EXPECT_EQ(r.model, "");
}

// Guards against forcing a correctly rounded (exact, then one fp32 rounding) accumulator into a
// structured model: the cancellation survives over all of K, and no model is named.
TEST(AccumulatorProbe, ReportsAnExactAccumulatorAsNoModel) {
  const Fp8Gemm exact = [](const Fp8GemmCall& call) {
    double sum = 0;  // the probe's products are powers of two within 2^-36..2^16: exact
    for (size_t k = 0; k < call.k; ++k) {
      sum += static_cast<double>(decode(call.format, call.a[k])) * decode(call.format, call.b[k]);
    }
    std::vector<float> c(call.m * call.n, 0.0f);
    c[0] = static_cast<float>(sum);
    return c;
  };
  const ProbeResult r = probe_accumulator(exact, ProbeOptions{});
  EXPECT_EQ(r.sub_sum, ProbeOptions{}.k);
  EXPECT_EQ(r.model, "");
}

// Guards against measuring an implementation that does not even return one product: the
// sanity call must stop the probe with a message.
TEST(AccumulatorProbe, FailsTheSanityCallLoudly) {
  const Fp8Gemm zeros = [](const Fp8GemmCall& call) {
    return std::vector<float>(call.m * call.n, 0.0f);
  };
  try {
    probe_accumulator(zeros, ProbeOptions{});
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("a single product 2^16 at k=0 came back as 0"),
              std::string::npos)
        << e.what();
  }
  ProbeOptions bad;
  bad.scaling = ProbeScaling::kBlock;
  bad.k = 300;
  EXPECT_THROW(probe_accumulator(zeros, bad), std::invalid_argument);
}

// Guards against a registry model the probe cannot recover from its own simulation (a model
// added without the probe telling it apart fails here): for EVERY model, probe(simulate(model))
// names that model, through E5M2 (whose products reach 48 bits below 2^16) and, where its bits
// are within E4M3's 34, E4M3FN; E4M3FNUZ as well for the CDNA3 model (FNUZ inputs). The number
// of GEMM calls per model is printed.
TEST(AccumulatorProbe, RecoversEveryRegistryModelFromItsSimulation) {
  for (const AccumulatorModel& m : all_accumulators()) {
    std::vector<Format> formats = {Format::kE5M2};
    const bool narrow = m.kind == AccumulatorKind::kFloat ||
                        std::max(m.chunks.precision_bits, m.chunks.late_c_bits) <= 33;
    if (narrow) formats.push_back(Format::kE4M3FN);
    if (m.name == "cdna3_fp8_mfma") formats.push_back(Format::kE4M3FNUZ);
    for (Format f : formats) {
      SCOPED_TRACE(m.name + " " + std::string(info(f).name));
      ProbeOptions o;
      o.m = 1;
      o.n = 1;
      o.format = f;
      const ProbeResult r = probe_accumulator(simulated_fp8_gemm(m), o);
      EXPECT_EQ(r.model, m.name);
      EXPECT_FALSE(r.new_model);
      if (m.kind == AccumulatorKind::kAlignedChunks) {
        EXPECT_EQ(r.precision_bits, m.chunks.precision_bits);
        EXPECT_EQ(r.group_size, m.chunks.group_size);
        EXPECT_EQ(r.sub_sum, m.chunks.sub_sum);
        EXPECT_EQ(r.chunk_k, m.chunks.chunk_k);
        EXPECT_EQ(r.halves, m.chunks.halves);
        EXPECT_EQ(r.late_c_bits, m.chunks.late_c_bits);
        EXPECT_EQ(r.store, to_string(m.chunks.store));
      }
      std::cout << "[ probe    ] " << m.name << " (" << info(f).name << "): " << r.calls
                << " GEMM calls, " << r.candidates << " candidate(s) left\n";
    }
  }
}

// Guards against a probe that cannot tell the structured variants apart: round-down from
// truncation from nearest-even in the halves' alignment, a late C from an early one, halves from
// a flat group, a missing promotion from a long one; each variant comes back as a new spec
// with its parameter.
TEST(AccumulatorProbe, TellsTheStructuredVariantsApart) {
  const std::vector<std::string> specs = {
      "cdna3_fp8_mfma:late_rounding=truncate",
      "cdna3_fp8_mfma:late_rounding=nearest_even",
      "cdna3_fp8_mfma:halves=0",
      "cdna3_fp8_mfma:late_c_bits=28",
      "sm100_f8f6f4:late_c_bits=30",
      "sm100_f8f6f4:store=nearest_even",
      "sm90_fp8_mma:chunk_k=512",
      "sm90_fp8_mma:rounding=round_down",
  };
  for (const std::string& spec : specs) {
    SCOPED_TRACE(spec);
    const AccumulatorModel m = parse_accumulator_spec(spec);
    ProbeOptions o;
    o.m = 1;
    o.n = 1;
    const ProbeResult r = probe_accumulator(simulated_fp8_gemm(m), o);
    ASSERT_FALSE(r.model.empty());
    EXPECT_TRUE(r.new_model);
    const AlignedChunkParams back = parse_accumulator_spec(r.model).chunks;
    EXPECT_EQ(back.late_rounding == m.chunks.late_rounding || !m.chunks.halves, true);
    EXPECT_EQ(back.halves, m.chunks.halves);
    EXPECT_EQ(back.late_c_bits, m.chunks.late_c_bits);
    EXPECT_EQ(back.store, m.chunks.store);
    EXPECT_EQ(back.chunk_k, m.chunks.chunk_k);
    EXPECT_EQ(back.rounding, m.chunks.rounding);
    EXPECT_EQ(back.precision_bits, m.chunks.precision_bits);
    std::cout << "[ probe    ] " << spec << " -> " << r.model << " (" << r.calls << " calls)\n";
  }
}

}  // namespace
}  // namespace mxgate
