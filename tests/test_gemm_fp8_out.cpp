// Covers FP8 GEMM output (include/mxgate/plugin.h revision 4, docs/plugins.md §3.7) and the zoo
// class Z45 (docs/bug_classes.md §2): the reference epilogue fl32(v * scale_result) then the
// convention's cast (reference/gemm_fp8_out.h) against a table of bytes derived by hand from
// the formats' definitions (docs/formats.md §1.1: E4M3FN bias 7, 3 mantissa bits, max 448 = 0x7E,
// NaN 0x7F; E5M2 bias 15, 2 mantissa bits, max 57344 = 0x7B), the arithmetic beside each; the
// built-in gemm_blockscale's E4M3FN output on a hand-built case, clean and with
// z45_scale_result_dropped; gemm.exact's and gemm.ordered_bound's FP8-output cases passing clean
// and failing with the fault at a located element; an op writing only FP8 checked by them on
// every case, and listed with the clause it lacks (never dropped) by the fp32-only properties;
// check_call's clauses on out_scale; a direct launch without out_scale refused.
// Does not cover: device backends (the same element body, gpu/kernels/gemm.h store_output), a
// plugin's FP8 output, how often the generators draw FP8 output (tests/property_zoo.cpp and the
// coverage test of tests/property_host.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "contract/contract.h"
#include "dispatch/faults.h"
#include "gpu/host/host_backend.h"
#include "gpu/kernel.h"
#include "impl/builtin.h"
#include "properties/case.h"
#include "properties/gemm_cases.h"
#include "properties/property.h"
#include "reference/convention.h"
#include "reference/gemm_fp8_out.h"

namespace mxgate {
namespace {

// One element of the epilogue: v (the fp32 result), scale_result, the format, the byte.
struct Fp8OutCase {
  const char* name;
  float v;
  float scale_result;
  Format format;
  uint8_t want;
};

// Bytes by hand under cuda_satfinite (RNE; finite overflow and Inf -> +-max; NaN -> 0x7F / 0x7F).
const Fp8OutCase kCases[] = {
    // 3 * 0.5 = 1.5 = 1.100b x 2^0: exponent field 0 + 7 = 0111, mantissa 100 -> 0x3C.
    {"half_of_three", 3.0f, 0.5f, Format::kE4M3FN, 0x3C},
    // 20 * 2 = 40 = 1.010b x 2^5: field 12 = 1100, mantissa 010 -> 0x62.
    {"twice_twenty", 20.0f, 2.0f, Format::kE4M3FN, 0x62},
    // -3 * 0.25 = -0.75 = -1.100b x 2^-1: sign 1, field 6 = 0110, mantissa 100 -> 0xB4.
    {"negative", -3.0f, 0.25f, Format::kE4M3FN, 0xB4},
    // 19 * 0.5 = 9.5, halfway between 9 (1.001b x 2^3) and 10 (1.010b x 2^3): the even mantissa,
    // 10: field 10 = 1010, mantissa 010 -> 0x52.
    {"tie_to_even", 19.0f, 0.5f, Format::kE4M3FN, 0x52},
    // fl32(0.3) = 0.300000011920928955078125 lies between 0.28125 (1.001b x 2^-2) and 0.3125
    // (1.010b x 2^-2), nearer 0.3125 (0.0125 vs 0.01875): field 5 = 0101, mantissa 010 -> 0x2A.
    {"non_power_of_two_scale", 1.0f, 0.3f, Format::kE4M3FN, 0x2A},
    // (10.5 + 2^-20) * (1 - 2^-24) = 10.5 + 0.34375 * 2^-20 - 2^-44: fl32 (ulp 2^-20 there) gives
    // 10.5, halfway between 10 (mantissa 010) and 11 (011): even, 10 -> 0x52. The exact product,
    // above the tie, would give 11 (0x53): the fp32 multiply comes first.
    {"fp32_product_first", 10.5f + 0x1p-20f, 1.0f - 0x1p-24f, Format::kE4M3FN, 0x52},
    // 300 * 2 = 600 > 448: saturates to 448 = 1.110b x 2^8, field 15 = 1111, mantissa 110 -> 0x7E.
    {"overflow_saturates", 300.0f, 2.0f, Format::kE4M3FN, 0x7E},
    // +Inf * 0.5 = +Inf: satfinite gives +448 -> 0x7E.
    {"inf_saturates", std::numeric_limits<float>::infinity(), 0.5f, Format::kE4M3FN, 0x7E},
    // NaN: the canonical NaN S.1111.111 with sign 0 -> 0x7F.
    {"nan", std::numeric_limits<float>::quiet_NaN(), 2.0f, Format::kE4M3FN, 0x7F},
    // 1 * 2^-9 = 2^-9, the smallest subnormal (0.001b x 2^-6) -> 0x01.
    {"smallest_subnormal", 1.0f, 0x1p-9f, Format::kE4M3FN, 0x01},
    // 3 * 2^-10 = 1.5 x 2^-9: halfway between 1 and 2 subnormal units; even, 2 -> 0x02.
    {"subnormal_tie", 3.0f, 0x1p-10f, Format::kE4M3FN, 0x02},
    // 1 * 2^-11 = a quarter of the smallest subnormal: rounds to +0 -> 0x00.
    {"flushes_to_zero", 1.0f, 0x1p-11f, Format::kE4M3FN, 0x00},
    // E5M2: 3 * 0.5 = 1.5 = 1.10b x 2^0: field 15 = 01111, mantissa 10 -> 0x3E.
    {"e5m2_half_of_three", 3.0f, 0.5f, Format::kE5M2, 0x3E},
    // E5M2: 40000 * 2 = 80000 > 57344 = 1.11b x 2^15: saturates, field 30 = 11110, 11 -> 0x7B.
    {"e5m2_overflow_saturates", 40000.0f, 2.0f, Format::kE5M2, 0x7B},
};

// The reference epilogue must give the hand-derived byte of every named case: a rounding,
// overflow or NaN rule of the FP8 output cast that is not cuda_satfinite's, or a cast before the
// fp32 multiply, changes one of them.
TEST(GemmFp8Out, ReferenceEpilogueMatchesHandDerivedBytes) {
  const Convention& conv = require_convention("cuda_satfinite");
  for (const Fp8OutCase& c : kCases) {
    const float v[] = {c.v};
    const std::vector<uint8_t> got = fp8_scaled_output(v, c.scale_result, c.format, conv);
    ASSERT_EQ(got.size(), 1u) << c.name;
    EXPECT_EQ(got[0], c.want) << c.name << ": got 0x" << std::hex << int{got[0]};
  }
}

// A format the epilogue cannot write (bf16 is no 8-bit element format) is refused, not cast.
TEST(GemmFp8Out, ReferenceRefusesANonFp8Format) {
  const float v[] = {1.0f};
  EXPECT_THROW(fp8_scaled_output(v, 1.0f, Format::kBF16, require_convention("cuda_satfinite")),
               std::invalid_argument);
}

template <class T>
gpu::BufferId buffer(gpu::Backend& be, const std::vector<T>& v, const char* label) {
  return be.make_buffer(std::span<const T>(v), label);
}

// gemm_blockscale, M = N = 1, K = 32, all codes E4M3FN 1.0 (0x38), As = Bs = 1: v = 32;
// scale_result 0.25 gives 8 = 1.000b x 2^3 (field 10 = 1010) -> 0x50. With the scale dropped:
// 32 = 1.000b x 2^5 (field 12 = 1100) -> 0x60.
// Those arguments without scale_result (A, B: 32 codes 0x38; As = Bs = 1; E4M3FN out, 1 x 1).
gpu::GemmArgs ones_k32(gpu::Backend& be) {
  gpu::GemmArgs g;
  g.a = buffer(be, std::vector<uint8_t>(32, 0x38), "A");
  g.b = buffer(be, std::vector<uint8_t>(32, 0x38), "B");
  g.a_scale = buffer(be, std::vector<float>{1.0f}, "As");
  g.b_scale = buffer(be, std::vector<float>{1.0f}, "Bs");
  g.out = be.allocate(1, "C");
  g.p = {1, 1, 32, gpu::OutDtype::kE4m3fn};
  return g;
}

uint8_t blockscale_fp8(uint64_t faults) {
  gpu::HostBackend be;
  gpu::GemmArgs g = ones_k32(be);
  g.out_scale = buffer(be, std::vector<float>{0.25f}, "scale_result");
  g.p.faults = faults;
  be.run({gpu::kernel("gemm_blockscale"), g});
  return be.download_as<uint8_t>(g.out).at(0);
}

// The built-in kernel's epilogue must apply scale_result (0x50), and Z45 must drop it (0x60): a
// kernel that ignores out_scale, or a fault that changes nothing, fails here.
TEST(GemmFp8Out, BlockscaleKernelAppliesScaleResultAndZ45DropsIt) {
  EXPECT_EQ(blockscale_fp8(0), 0x50);
  EXPECT_EQ(blockscale_fp8(dispatch::kernel_fault_bits({dispatch::Fault::kZ45ScaleResultDropped})),
            0x60);
}

// A direct launch of an FP8-output GEMM without its scale_result is refused before the kernel
// runs (the epilogue would read through a null pointer), naming out_scale.
TEST(GemmFp8Out, LaunchWithoutScaleResultIsRefused) {
  gpu::HostBackend be;
  const gpu::GemmArgs g = ones_k32(be);
  try {
    be.run({gpu::kernel("gemm_blockscale"), g});
    ADD_FAILURE() << "launched without out_scale";
  } catch (const gpu::GpuError& e) {
    EXPECT_NE(std::string(e.what()).find("needs its scale_result (out_scale)"), std::string::npos)
        << e.what();
  }
}

// gemm.exact on FP8-output cases of gemm_blockscale (several shapes, a power-of-two and a
// non-power-of-two factor): the correct kernel passes every one, the z45 fault fails with a
// located element and the bytes of the first difference. A property that never reaches the FP8
// path, or compares nothing, fails here.
TEST(GemmFp8Out, GemmExactPassesCleanAndLocatesZ45) {
  const properties::Property* p = properties::find_property("gemm.exact");
  ASSERT_NE(p, nullptr);
  gpu::HostBackend be;
  for (const char* text :
       {"op=gemm_blockscale m=1 n=1 k=32 layout=row_major out=e4m3fn seed=0 out_scale=2",
        "op=gemm_blockscale m=3 n=5 k=160 layout=row_major out=e4m3fn seed=7 out_scale=0.3",
        "op=gemm_blockscale m=2 n=130 k=256 layout=row_major out=e4m3fn seed=3 out_scale=0.0625"}) {
    const properties::Case c = properties::Case::parse("gemm.exact", text);
    properties::Coverage cov;
    const properties::Context clean{&be, {}, &cov};
    const auto ok = properties::check_case(*p, clean, c);
    EXPECT_FALSE(ok.has_value()) << text << ": " << (ok ? ok->what : "");
    EXPECT_GT(cov.count("out:fp8_scaled"), 0u) << text;
    const properties::Context faulty{&be, {dispatch::Fault::kZ45ScaleResultDropped}, nullptr};
    const auto f = properties::check_case(*p, faulty, c);
    ASSERT_TRUE(f.has_value()) << text << ": the fault went unseen";
    ASSERT_TRUE(f->where.has_value()) << f->what;
    EXPECT_LT(f->where->row, c.num("m")) << f->what;
    EXPECT_LT(f->where->col, c.num("n")) << f->what;
    EXPECT_NE(f->where->expected_bits, f->where->actual_bits) << f->what;
    EXPECT_NE(f->what.find("e4m3fn output"), std::string::npos) << f->what;
  }
}

// gemm.ordered_bound's FP8-output cases (general data: v from gemm_blockscale's declared order,
// so fl32(v * scale_result) rounds before the cast): the correct kernel passes, the z45 fault
// fails at a located element.
TEST(GemmFp8Out, OrderedBoundPassesCleanAndLocatesZ45) {
  const properties::Property* p = properties::find_property("gemm.ordered_bound");
  ASSERT_NE(p, nullptr);
  gpu::HostBackend be;
  for (const char* text :
       {"op=gemm_blockscale m=2 n=3 k=200 layout=row_major out=e4m3fn seed=5 out_scale=0.3",
        "op=gemm_blockscale m=1 n=4 k=128 layout=row_major out=e4m3fn seed=9 out_scale=16"}) {
    const properties::Case c = properties::Case::parse("gemm.ordered_bound", text);
    const auto ok = properties::check_case(*p, properties::Context{&be, {}, nullptr}, c);
    EXPECT_FALSE(ok.has_value()) << text << ": " << (ok ? ok->what : "");
    const properties::Context faulty{&be, {dispatch::Fault::kZ45ScaleResultDropped}, nullptr};
    const auto f = properties::check_case(*p, faulty, c);
    ASSERT_TRUE(f.has_value()) << text << ": the fault went unseen";
    ASSERT_TRUE(f->where.has_value()) << f->what;
    EXPECT_NE(f->what.find("ordered_gemm (declared order)"), std::string::npos) << f->what;
  }
}

// The built-in gemm_blockscale as a second op that declares only E4M3FN output, in an
// implementation beside the unchanged one (or alone).
impl::Implementation with_fp8_only_op(bool keep_plain) {
  impl::Implementation im;
  im.name = "fp8_only";
  impl::Op plain = *impl::builtin().find_op("gemm_blockscale");
  plain.impl = im.name;
  if (keep_plain) im.ops.push_back(plain);
  impl::Op only = plain;
  only.name = "gemm_blockscale_fp8_only";
  only.contract.out_dtypes = impl::dtype_bit(impl::Dtype::kE4m3fn);
  im.ops.push_back(only);
  return im;
}

// Guards against a GEMM op whose only output is FP8 passing unchecked: gemm.exact and
// gemm.ordered_bound must draw every case of it with FP8 output and compare its bytes (the clean
// kernel passes, z45's dropped scale_result fails), never skip it for lacking fp32 / bf16.
TEST(GemmFp8Out, AnOpWritingOnlyFp8IsCheckedOnEveryCase) {
  const impl::Implementation im = with_fp8_only_op(false);
  gpu::HostBackend be;
  properties::RunOptions ro;
  ro.cases = 12;
  for (const char* name : {"gemm.exact", "gemm.ordered_bound"}) {
    SCOPED_TRACE(name);
    const properties::Property* p = properties::find_property(name);
    ASSERT_NE(p, nullptr);
    properties::Coverage cov;
    const properties::RunResult clean =
        properties::run_property(*p, properties::Context{&be, {}, &cov, &im}, ro);
    EXPECT_TRUE(clean.passed) << clean.message;
    EXPECT_EQ(clean.cases, 12);
    EXPECT_EQ(clean.ops, std::vector<std::string>{"gemm_blockscale_fp8_only"});
    EXPECT_EQ(cov.count("out:fp8_scaled"), 12u);  // every case compared FP8 bytes
    const properties::RunResult faulty = properties::run_property(
        *p, properties::Context{&be, {dispatch::Fault::kZ45ScaleResultDropped}, nullptr, &im}, ro);
    EXPECT_FALSE(faulty.passed) << "z45 went unseen";
    ASSERT_TRUE(faulty.failure && faulty.failure->where) << faulty.message;
  }
}

// Guards against an op the property cannot take vanishing from a run that checked others (a
// verdict of pass that never looked at it): the fp32-only properties list the FP8-only op, with
// the clause it lacks, beside the op they checked.
TEST(GemmFp8Out, AnFp8OnlyOpIsListedNotCheckedByFp32Properties) {
  const impl::Implementation im = with_fp8_only_op(true);
  gpu::HostBackend be;
  properties::RunOptions ro;
  ro.cases = 3;
  for (const char* name : {"metamorphic.tp_column_split", "metamorphic.padding_poison"}) {
    SCOPED_TRACE(name);
    const properties::RunResult r = properties::run_property(
        *properties::find_property(name), properties::Context{&be, {}, nullptr, &im}, ro);
    EXPECT_TRUE(r.passed) << r.message;
    EXPECT_EQ(r.ops, std::vector<std::string>{"gemm_blockscale"});
    ASSERT_EQ(r.ops_not_checked.size(), 1u);
    EXPECT_NE(r.ops_not_checked[0].find("fp8_only/gemm_blockscale_fp8_only: "), std::string::npos)
        << r.ops_not_checked[0];
    EXPECT_NE(r.ops_not_checked[0].find("it needs fp32 output"), std::string::npos)
        << r.ops_not_checked[0];
  }
}

// scale_result puts the largest finite |v| into [8, 16) times the factor, on the exponent's bits:
// amax 0.15625 = 1.25 x 2^-3 gives 2^6 (times 2: 2^7); amax 1000 = 1.95 x 2^9 gives 2^-6; all
// zeros (or not finite) leaves the factor itself. A normalization that overflows E4M3FN's 448
// or ignores the data fails here.
TEST(GemmFp8Out, ScaleResultNormalizesTheLargestValue) {
  const float a[] = {0.15625f, -0.0625f};
  EXPECT_EQ(properties::scale_result_for(a, 2.0f), 0x1p7f);
  const float b[] = {3.0f, -1000.0f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_EQ(properties::scale_result_for(b, 0.75f), 0.75f * 0x1p-6f);
  const float c[] = {0.0f, std::numeric_limits<float>::infinity()};
  EXPECT_EQ(properties::scale_result_for(c, 0.3f), 0.3f);
}

// A gemm_blockscale call inside its contract but for the out_scale clause.
contract::Call fp8_call(contract::Dtype out) {
  using contract::Dtype;
  contract::Call call;
  call.family = contract::Family::kGemmBlock;
  call.m = 1;
  call.n = 1;
  call.k = 32;
  const auto t = [](uint32_t id, uint64_t rows, uint64_t cols, Dtype d) {
    contract::Tensor x;
    x.buffer = id;
    x.rows = rows;
    x.cols = cols;
    x.ld = cols;
    x.dtype = d;
    return x;
  };
  call.a = t(1, 1, 32, Dtype::kE4m3fn);
  call.b = t(2, 1, 32, Dtype::kE4m3fn);
  call.a_scale = t(3, 1, 1, Dtype::kF32);
  call.b_scale = t(4, 1, 1, Dtype::kF32);
  call.out = t(5, 1, 1, out);
  call.out_scale = t(6, 1, 1, Dtype::kF32);
  return call;
}

// check_call must take a well-formed FP8-output call and name the out_scale clause of every
// malformed one: absent, not 1 x 1, not f32, and an out_scale on an fp32-output GEMM (which takes
// none); an FP8 dtype the op does not declare is an out clause.
TEST(GemmFp8Out, CheckCallNamesTheOutScaleClause) {
  using contract::Dtype;
  const contract::Contract& ct = gpu::kernel("gemm_blockscale")->contract;
  EXPECT_EQ(contract::check_call("g", ct, fp8_call(Dtype::kE4m3fn)), std::nullopt);
  const auto expect_clause = [&ct](const contract::Call& call, const std::string& words) {
    const auto why = contract::check_call("g", ct, call);
    ASSERT_TRUE(why.has_value()) << words;
    EXPECT_NE(why->find(words), std::string::npos) << *why;
  };
  contract::Call absent = fp8_call(Dtype::kE4m3fn);
  absent.out_scale = {};
  expect_clause(absent, "out dtype e4m3fn needs out_scale, a 1 x 1 f32 scale_result");
  contract::Call wide = fp8_call(Dtype::kE4m3fn);
  wide.out_scale.cols = 2;
  expect_clause(wide, "out_scale (scale_result) must be 1 x 1, got 1 x 2");
  contract::Call bf16 = fp8_call(Dtype::kE4m3fn);
  bf16.out_scale.dtype = Dtype::kBf16;
  expect_clause(bf16, "out_scale dtype bf16 not in {f32}");
  expect_clause(fp8_call(Dtype::kF32), "out_scale dtype f32 not in {}");
  expect_clause(fp8_call(Dtype::kE5m2), "out dtype e5m2 not in {f32,bf16,e4m3fn}");
}

}  // namespace
}  // namespace mxgate
