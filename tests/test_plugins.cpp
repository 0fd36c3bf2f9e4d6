// Covers plugin loading through the C ABI (impl/plugin.h, impl/registry.h) and the invocation
// harness's verdicts (impl/harness.h): the shipped example plugin loads with every op and its
// contract as the plugin wrote it; each broken plugin of tests/plugins is refused with a message
// naming the plugin and the symbol or field, as an input error (missing file, missing symbol,
// wrong ABI version, malformed description) or an environment error (init refuses); the harness
// tells an op that declines inside its contract (contract mismatch), one that errs, one that
// writes past its output (guard damage), a case outside the contract and an op in memory the
// backend lacks (unsupported). Also the accumulator lookup (impl/accumulator.h), and the example's
// tactics read through the ABI (impl/tactics.h tactic_view).
// Does not cover: crashes and hangs inside an op (the gate's watchdog; test_cli_impls.cpp), device
// plugins (no device here), the properties over plugin ops (property_plugins.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/host/host_backend.h"
#include "impl/accumulator.h"
#include "impl/builtin.h"
#include "impl/harness.h"
#include "impl/plugin.h"
#include "impl/registry.h"
#include "properties/cast_sweep.h"
#include "properties/property.h"
#include "properties/zoo.h"

namespace mxgate::impl {
namespace {

std::string test_plugin(const std::string& name) {
  return std::string(MXGATE_TEST_PLUGIN_DIR) + "/lib" + name + ".so";
}

// The error resolving `spec` throws (fails the test when it loads).
PluginError load_error(const std::string& spec) {
  try {
    (void)resolve(spec);
  } catch (const PluginError& e) {
    return e;
  }
  ADD_FAILURE() << spec << " loaded";
  return PluginError(PluginError::Kind::kInput, "");
}

// `text` contains each of `phrases`; on failure the first one missing and the text.
testing::AssertionResult Mentions(const std::string& text,
                                  std::initializer_list<std::string_view> phrases) {
  for (std::string_view phrase : phrases) {
    if (text.find(phrase) == std::string::npos) {
      return testing::AssertionFailure() << "\"" << text << "\" lacks \"" << phrase << "\"";
    }
  }
  return testing::AssertionSuccess();
}

// Guards against the shipped example not being found by its short name, or its contracts being
// misread (a wrong mask or block shape would make every property test the wrong thing).
TEST(PluginLoading, ShippedExampleLoadsWithItsContracts) {
  const std::vector<const Implementation*> impls = resolve("example");
  ASSERT_EQ(impls.size(), 1u);
  const Implementation& ex = *impls.front();
  EXPECT_EQ(ex.name, "example");
  EXPECT_EQ(ex.spec, "example");
  EXPECT_FALSE(ex.builtin);
  EXPECT_EQ(ex.ops.size(), 10u);
  const Op* deepseek = ex.find_op("gemm_block_deepseek");
  ASSERT_NE(deepseek, nullptr);
  EXPECT_EQ(deepseek->family, Family::kGemmBlock);
  EXPECT_EQ(deepseek->memory, Memory::kHost);
  EXPECT_EQ(deepseek->contract.a_block_cols, 128u);
  EXPECT_EQ(deepseek->contract.b_block_rows, 128u);
  EXPECT_EQ(deepseek->contract.b_scale_ld_align, 4u);
  EXPECT_EQ(deepseek->contract.a_scale_layouts, layout_bit(Layout::kRowMajor) |
                                                    layout_bit(Layout::kColMajor) |
                                                    layout_bit(Layout::kTmaColMajor));
  EXPECT_EQ(deepseek->contract.accumulator, "fp32_rn");
  const Op* cast = ex.find_op("cast_satfinite");
  ASSERT_NE(cast, nullptr);
  EXPECT_EQ(cast->contract.conventions, std::vector<std::string>{"cuda_satfinite"});
  // Every implementation of the plugin: the correct one, one planted fault per family, and the
  // gemm_mx of three tactics, correct and with one faulty tactic (docs/plugins.md §3.6).
  const std::vector<const Implementation*> all = resolve("example:all");
  EXPECT_EQ(all.size(), 11u);
  EXPECT_TRUE(cast->tactics.empty());  // no tactics declared: one
  const Implementation& tactics = *resolve("example:example_faulty_tactic").front();
  ASSERT_EQ(tactics.ops.size(), 1u);
  ASSERT_EQ(tactics.ops[0].tactics.size(), 3u);
  EXPECT_EQ(tactics.ops[0].tactics[2].name, "tile4x4");
  EXPECT_EQ(tactics.tactic_count(), 3u);
  const Implementation view = tactic_view(tactics, 2);
  ASSERT_EQ(view.ops.size(), 1u);
  EXPECT_EQ(view.ops[0].tactic, 2u);
  EXPECT_EQ(view.tactic_label(), " tactic 2 (tile4x4)");
  FamilyMask faulty = 0;
  for (const Implementation* i : all) {
    if (i->planted_fault) faulty |= i->families();
  }
  EXPECT_EQ(faulty, ex.families());
  EXPECT_EQ(resolve("example:example_faulty_upcast_shift").front()->spec,
            "example:example_faulty_upcast_shift");
}

// Guards against a missing plugin file being a crash or a silent builtin run.
TEST(PluginLoading, MissingFileIsAnInputErrorNamingIt) {
  const PluginError e = load_error("/no/such/dir/libnothing.so");
  EXPECT_EQ(e.kind(), PluginError::Kind::kInput);
  EXPECT_TRUE(Mentions(e.what(), {"/no/such/dir/libnothing.so", "cannot load"}));
  const PluginError name = load_error("no_such_shipped_plugin");
  // "example": the shipped plugins are listed.
  EXPECT_TRUE(Mentions(name.what(), {"libmxgate_no_such_shipped_plugin.so", "example"}));
}

// Guards against calling into a library that is not an mxgate plugin.
TEST(PluginLoading, MissingEntrySymbolIsNamed) {
  const PluginError e = load_error(test_plugin("no_entry"));
  EXPECT_EQ(e.kind(), PluginError::Kind::kInput);
  EXPECT_TRUE(Mentions(e.what(), {"libno_entry.so", "symbol 'mxgate_plugin_v1' not found"}));
}

// Guards against reading a description laid out for another ABI version.
TEST(PluginLoading, WrongAbiVersionIsRefused) {
  const PluginError e = load_error(test_plugin("bad_abi"));
  EXPECT_EQ(e.kind(), PluginError::Kind::kInput);
  EXPECT_TRUE(Mentions(e.what(), {"ABI version 99", "mxgate_plugin_v1", "speaks 1"}));
}

// Guards against an init() refusal (no device) being reported as a bad plugin, or ignored.
TEST(PluginLoading, InitRefusalIsAnEnvironmentError) {
  const PluginError e = load_error(test_plugin("init_refuses"));
  EXPECT_EQ(e.kind(), PluginError::Kind::kEnvironment);
  EXPECT_TRUE(Mentions(e.what(), {"no CUDA device (test plugin)", "init"}));
  // Listing does not call init: the description is readable without the device.
  EXPECT_EQ(resolve(test_plugin("init_refuses"), /*call_init=*/false).size(), 1u);
}

// Guards against an op of an unknown family reaching a property.
TEST(PluginLoading, MalformedDescriptionNamesTheField) {
  const PluginError e = load_error(test_plugin("bad_family"));
  EXPECT_EQ(e.kind(), PluginError::Kind::kInput);
  EXPECT_TRUE(Mentions(e.what(), {"bad_family/mystery", "family 42"}));
}

// Guards against misreading a plugin built against an older header revision: mxgate_op embeds
// mxgate_contract, so an appended contract field changes the ops array's stride; the second op
// must come back whole (its name, its K <= 64, its notes) and the fields the plugin lacks unset.
TEST(PluginLoading, OlderHeaderRevisionIsReadWithItsOwnStride) {
  const std::vector<const Implementation*> impls = resolve(test_plugin("old_header"));
  ASSERT_EQ(impls.size(), 1u);
  ASSERT_EQ(impls.front()->ops.size(), 2u);
  const Op& second = impls.front()->ops[1];
  EXPECT_EQ(second.name, "second");
  EXPECT_EQ(second.family, Family::kUpcastE8m0);
  EXPECT_EQ(second.contract.k.max, 64u);
  EXPECT_EQ(second.contract.notes, "the second op");
  EXPECT_EQ(second.contract.a_scale_ld_align, 1u);  // absent in that revision: unset
  gpu::HostBackend be;
  Invocation inv(second, be);
  const std::vector<uint8_t> bytes = {0x00, 0x7F, 0xFF};
  inv.input(&Call::a, bytes, 1, 3, 3, Dtype::kE8m0, Layout::kRowMajor);
  inv.output(&Call::out, 12, 1, 3, 3, Dtype::kF32, Layout::kRowMajor);
  Call call;
  call.m = 1;
  call.k = 3;
  inv.run(call);
  const std::vector<uint8_t> raw = inv.read(&Call::out);
  uint32_t bits[3];
  std::memcpy(bits, raw.data(), sizeof bits);
  EXPECT_EQ(bits[0], 0x00400000u);  // 2^-127
  EXPECT_EQ(bits[1], 0x3f800000u);  // 2^0
  EXPECT_EQ(bits[2], 0x7fc00000u);  // NaN
}

// Guards against a claim the reference cannot check being accepted (or a valid e8m0 rule being
// refused): "e8m0:RULE" names a rule of reference/e8m0.h; the cast property checks it.
TEST(PluginLoading, E8m0RuleClaimsAreCheckedAgainstTheRule) {
  const PluginError e = load_error(test_plugin("bad_claim"));
  EXPECT_EQ(e.kind(), PluginError::Kind::kInput);
  EXPECT_TRUE(Mentions(e.what(), {"'e8m0:no_such_rule' is no convention"}));
  const Implementation& rule = *resolve(test_plugin("e8m0_rule")).front();
  gpu::HostBackend be;
  properties::RunOptions opts;
  opts.cases = 200;
  const properties::RunResult r =
      properties::run_property(*properties::find_property("cast.bit_exact"),
                               properties::Context{&be, {}, nullptr, &rule}, opts);
  EXPECT_TRUE(r.passed) << (r.failure ? r.failure->what : r.message);
  EXPECT_EQ(r.cases, 200);
}

// A flag this mxgate does not know may change what the op accepts: loading it as if absent
// would check the op against a contract it does not have.
TEST(PluginLoading, UnknownContractFlagsAreRefused) {
  const PluginError e = load_error(test_plugin("bad_flags"));
  EXPECT_EQ(e.kind(), PluginError::Kind::kInput);
  EXPECT_TRUE(Mentions(e.what(), {"contract.flags 128", "does not know"}));
}

// FP8 GEMM output (plugin.h revision 4) exists only where a call carries out_scale and the op's
// convention defines the cast: a bf16 GEMM listing E4M3FN output, or E5M2 output under a
// convention without E5M2, loaded as is would be checked against an output rule it cannot have.
TEST(PluginLoading, Fp8GemmOutputOutsideItsFamiliesOrConventionIsRefused) {
  const PluginError family = load_error(test_plugin("bad_fp8_out"));
  EXPECT_EQ(family.kind(), PluginError::Kind::kInput);
  EXPECT_TRUE(Mentions(family.what(), {"gemm_bf16_fp8_out",
                                       "contract.out_dtypes lists FP8 "
                                       "output for gemm_bf16"}));
  const PluginError conv = load_error(test_plugin("bad_fp8_out_convention"));
  EXPECT_EQ(conv.kind(), PluginError::Kind::kInput);
  EXPECT_TRUE(Mentions(conv.what(), {"gemm_block_e5m2_out",
                                     "lists e5m2 output, which convention "
                                     "'aiter_hip' does not cast to"}));
}

const Op& misbehaving(const std::string& impl) {
  const std::vector<const Implementation*> all = resolve(test_plugin("misbehaving") + ":" + impl);
  return all.front()->ops.front();
}

// One upcast of `count` e8m0 bytes through the harness; returns the fp32 results.
std::vector<float> upcast(const Op& op, gpu::Backend& be, uint64_t count) {
  Invocation inv(op, be);
  std::vector<uint8_t> bytes(count, 127);
  inv.input(&Call::a, bytes, 1, count, count, Dtype::kE8m0, Layout::kRowMajor);
  inv.output(&Call::out, count * 4, 1, count, count, Dtype::kF32, Layout::kRowMajor);
  Call call;
  call.m = 1;
  call.k = count;
  inv.run(call);
  const std::vector<uint8_t> raw = inv.read(&Call::out);
  std::vector<float> out(count);
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

InvocationError invocation_error(const Op& op, gpu::Backend& be, uint64_t count) {
  try {
    (void)upcast(op, be, count);
  } catch (const InvocationError& e) {
    return e;
  }
  ADD_FAILURE() << op.impl << " did not fail";
  return InvocationError(InvocationError::Kind::kError, "");
}

// Guards against an op that declines a case its own contract admits passing as "unsupported"
// (it would hide a contract that lies).
TEST(Harness, DecliningInsideTheContractIsAContractMismatch) {
  gpu::HostBackend be;
  EXPECT_EQ(upcast(misbehaving("declines"), be, 7), std::vector<float>(7, 1.0f));
  const InvocationError e = invocation_error(misbehaving("declines"), be, 8);
  EXPECT_EQ(e.kind(), InvocationError::Kind::kContractMismatch);
  EXPECT_TRUE(Mentions(e.what(), {"declines/upcast", "more than 7 elements"}));
}

// Guards against an op's error (or its message) being lost.
TEST(Harness, AnOpErrorKeepsItsMessage) {
  gpu::HostBackend be;
  const InvocationError e = invocation_error(misbehaving("errors"), be, 4);
  EXPECT_EQ(e.kind(), InvocationError::Kind::kError);
  EXPECT_TRUE(Mentions(e.what(), {"the test plugin's library error"}));
}

// Guards against a write past the output buffer going unnoticed: the guard band names the
// buffer and the byte offset (4 elements of 4 bytes: the first byte past the end is 16).
TEST(Harness, WritingPastTheOutputIsAGuardError) {
  gpu::HostBackend be;
  const InvocationError e = invocation_error(misbehaving("overruns"), be, 4);
  EXPECT_EQ(e.kind(), InvocationError::Kind::kError);
  EXPECT_TRUE(Mentions(e.what(), {"guard", "'out'", "byte offset 16"}));
}

// Guards against running a case outside the op's contract (or in memory the backend does not
// have) and calling the answer a verdict: both are unsupported, never failures.
TEST(Harness, OutsideTheContractAndForeignMemoryAreUnsupported) {
  gpu::HostBackend be;
  EXPECT_EQ(upcast(misbehaving("narrow"), be, 16), std::vector<float>(16, 1.0f));
  try {
    (void)upcast(misbehaving("narrow"), be, 17);
    ADD_FAILURE() << "K = 17 ran outside K <= 16";
  } catch (const Unsupported& e) {
    EXPECT_TRUE(Mentions(e.what(), {"K <= 16 violated (K = 17)"}));
  }
  try {
    (void)upcast(misbehaving("device"), be, 4);
    ADD_FAILURE() << "a CUDA-memory op ran on the host backend";
  } catch (const Unsupported& e) {
    EXPECT_TRUE(Mentions(e.what(), {"needs cuda memory"}));
  }
}

Op gemm_op(const std::string& accumulator) {
  Op op;
  op.name = "g";
  op.impl = "test";
  op.family = Family::kGemmBlock;
  op.contract.accumulator = accumulator;
  return op;
}

// Guards against a bound check that uses a model other than the op declares: the name goes
// through the reference's registry; for the float model a built-in kernel's declared order sets
// the partial structure, an op without one gets the structure that holds for every order, and a
// parameter the spec sets wins; an unknown model or parameter is a contract error, not a silent
// default.
TEST(Accumulator, ModelComesFromTheContract) {
  const AccumulatorModel declared = accum_model_for(*builtin().find_op("gemm_blockscale"));
  EXPECT_EQ(declared.name, "fp32_rn");
  EXPECT_EQ(declared.kind, AccumulatorKind::kFloat);
  EXPECT_EQ(declared.fp.block_k, 128u);
  EXPECT_EQ(declared.fp.product_roundings, 1);
  EXPECT_EQ(declared.fp.partial_roundings, 2);
  EXPECT_EQ(declared.fp.unit_roundoff, 0x1p-24);
  const AccumulatorModel any_order = accum_model_for(gemm_op(""));
  EXPECT_EQ(any_order.name, "fp32_rn");
  EXPECT_EQ(any_order.fp.block_k, 0u);
  EXPECT_EQ(any_order.fp.product_roundings, 3);
  EXPECT_EQ(any_order.fp.partial_roundings, 2);
  const AccumulatorModel own = accum_model_for(gemm_op("fp32_rn:block_k=64"));
  EXPECT_EQ(own.name, "fp32_rn:block_k=64");
  EXPECT_EQ(own.fp.block_k, 64u);
  EXPECT_EQ(own.fp.product_roundings, 3);
  // The Hopper row of docs/accumulators.md §4: 14 bits, truncation, promotion every 128 k.
  const AccumulatorModel sm90 = accum_model_for(gemm_op("sm90_fp8_mma"));
  EXPECT_EQ(sm90.kind, AccumulatorKind::kAlignedChunks);
  EXPECT_EQ(sm90.chunks.precision_bits, 14);
  EXPECT_EQ(sm90.chunks.chunk_k, 128u);
  EXPECT_EQ(sm90.chunks.rounding, AlignRounding::kTruncate);
  EXPECT_EQ(accum_model_for(gemm_op("sm90_fp8_mma:precision_bits=13")).chunks.precision_bits, 13);
  try {
    (void)accum_model_for(gemm_op("sm100_fp8_mma"));
    ADD_FAILURE() << "an unknown model was accepted";
  } catch (const ContractError& e) {
    // sm90_fp8_mma: the known models are listed.
    EXPECT_TRUE(Mentions(e.what(),
                         {"test/g: accumulator model 'sm100_fp8_mma' is unknown", "sm90_fp8_mma"}));
  }
  try {
    (void)accum_model_for(gemm_op("fp32_rn:chunk_k=64"));
    ADD_FAILURE() << "a parameter of another kind of model was accepted";
  } catch (const ContractError& e) {
    EXPECT_TRUE(Mentions(e.what(), {"unknown parameter 'chunk_k'"}));
  }
  EXPECT_THROW((void)accum_model_for(*builtin().find_op("upcast_e8m0")), ContractError);
}

// Guards against an aligned-chunk model applied to an op whose scale blocks it cannot describe
// (a 128-k chunk promoted under one scale, on MX blocks of 32 k): the bound and the exact-mode
// operands would assume one scale per chunk where there are four. It is a contract error naming
// the op, the model and both block sizes; blocks the chunk divides (1x128 / 128x128, per-tensor)
// are fine, a chunk longer than the block is not.
TEST(Accumulator, ModelThatCannotApplyToTheScaleBlocksIsAContractError) {
  Op mx = *resolve("example").front()->find_op("gemm_mx");
  mx.contract.accumulator = "sm90_fp8_mma";
  const std::optional<std::string> why = accumulator_problem(mx);
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(Mentions(*why, {"example/gemm_mx: accumulator sm90_fp8_mma promotes chunks of 128 k "
                              "under one scale, but the op's A scale blocks span 32 k"}));
  EXPECT_THROW((void)accum_model_for(mx), ContractError);
  Op deepseek = *resolve("example").front()->find_op("gemm_block_deepseek");
  deepseek.contract.accumulator = "sm90_fp8_mma";
  EXPECT_FALSE(accumulator_problem(deepseek).has_value());
  deepseek.contract.accumulator = "sm90_fp8_mma:chunk_k=256";
  ASSERT_TRUE(accumulator_problem(deepseek).has_value());
  EXPECT_TRUE(Mentions(*accumulator_problem(deepseek), {"A scale blocks span 128 k"}));
  Op tensor = *resolve("example").front()->find_op("gemm_block_tensor");
  tensor.contract.accumulator = "sm90_fp8_mma:chunk_k=0";  // one chunk over all of K
  EXPECT_FALSE(accumulator_problem(tensor).has_value());
  EXPECT_FALSE(accumulator_problem(*builtin().find_op("gemm_blockscale")).has_value());
  EXPECT_FALSE(accumulator_problem(*builtin().find_op("upcast_e8m0")).has_value());
}

// Guards against the exhaustive cast sweep missing a rounding bug or misplacing it. Inputs
// [0x3f000000, 0x3f100000): 0.5 .. 0.5625 and the values between. E4M3FN codes 0x30 = 0.5
// (exponent 6 - bias 7 = -1, mantissa 0) and 0x31 = 0.5625 (mantissa 1: 1.125 * 2^-1); their
// midpoint 0.53125 = 0x3f080000 rounds to the even code 0x30 under RNE (cuda_satfinite) and to
// 0x31 ties-away: the first (and only) difference of the planted fault in this range.
TEST(CastSweep, FindsAndLocatesTheFirstDifference) {
  gpu::HostBackend be;
  const Op& good = *resolve("example").front()->find_op("cast_satfinite");
  const Op& bad =
      *resolve("example:example_faulty_cast_ties_away").front()->find_op("cast_satfinite");
  const properties::SweepResult ok =
      properties::sweep_cast(be, good, Dtype::kE4m3fn, 0x3f000000u, 0x3f100000u, 1 << 16);
  EXPECT_EQ(ok.inputs, 0x100000u);
  EXPECT_EQ(ok.mismatches, 0u) << ok.describe();
  const properties::SweepResult r =
      properties::sweep_cast(be, bad, Dtype::kE4m3fn, 0x3f000000u, 0x3f100000u, 1 << 16);
  EXPECT_EQ(r.mismatches, 1u);
  ASSERT_TRUE(r.first_input.has_value());
  EXPECT_EQ(*r.first_input, 0x3f080000u);
  EXPECT_EQ(r.expected, 0x30u);
  EXPECT_EQ(r.actual, 0x31u);
  // The sweep covers host cast ops only, every target their convention defines.
  EXPECT_EQ(properties::sweep_targets(*resolve("example").front()).size(), 3u);
  EXPECT_TRUE(properties::sweep_targets(builtin()).empty());
}

// Guards against the sweep's reused buffers hiding an unwritten element: on the second call
// (inputs from 0x3f010000 = 0.50390625) the op leaves element 0 unwritten; its expected code
// 0x30 is the one the first call wrote there (0.5), so only the poison (0xFF) shows it.
TEST(CastSweep, AnElementUnwrittenOnALaterCallReadsAsPoison) {
  gpu::HostBackend be;
  const Op inner = *resolve("example").front()->find_op("cast_satfinite");
  Op op = inner;
  auto calls = std::make_shared<int>(0);
  op.run = [inner, calls](gpu::Backend& b, const Call& call, std::string& message) {
    auto* out = static_cast<uint8_t*>(b.address(call.out.buffer));
    const uint8_t before = out[0];
    const impl::Status s = inner.run(b, call, message);
    if ((*calls)++ == 1) out[0] = before;
    return s;
  };
  const properties::SweepResult r =
      properties::sweep_cast(be, op, Dtype::kE4m3fn, 0x3f000000u, 0x3f020000u, 1 << 16);
  EXPECT_EQ(r.inputs, 0x20000u);
  EXPECT_EQ(r.mismatches, 1u) << r.describe();
  ASSERT_TRUE(r.first_input.has_value());
  EXPECT_EQ(*r.first_input, 0x3f010000u);
  EXPECT_EQ(r.expected, 0x30u);
  EXPECT_EQ(r.actual, 0xFFu);
}

// Guards against an accumulator model mxgate does not know being replaced by a default: every
// check that needs the model (the bound, the exact-mode operands) is a contract error naming it,
// while the checks that need none still run.
TEST(Accumulator, UnknownModelIsAContractErrorOfTheChecksThatNeedIt) {
  Implementation im = *resolve("example").front();
  im.name = "example_unknown_accumulator";
  std::vector<Op> ops;
  for (Op op : im.ops) {
    if (op.name != "gemm_block_tensor" && op.name != "cast_satfinite") continue;
    if (op.name == "gemm_block_tensor") op.contract.accumulator = "sm100_fp8_mma";
    op.impl = im.name;
    ops.push_back(op);
  }
  im.ops = ops;
  gpu::HostBackend be;
  properties::RunOptions opts;
  opts.cases = 20;
  const properties::Context ctx{&be, {}, nullptr, &im};
  for (const char* name : {"gemm.ordered_bound", "gemm.exact"}) {
    SCOPED_TRACE(name);
    const properties::RunResult r =
        properties::run_property(*properties::find_property(name), ctx, opts);
    ASSERT_FALSE(r.passed);
    ASSERT_TRUE(r.failure.has_value());
    EXPECT_EQ(r.failure->kind, properties::Failure::Kind::kError);
    EXPECT_TRUE(Mentions(r.failure->what, {"contract error", "'sm100_fp8_mma' is unknown"}));
  }
  EXPECT_TRUE(
      properties::run_property(*properties::find_property("cast.bit_exact"), ctx, opts).passed);
}

// Guards against `zoo --impl` deciding "planted fault" from a name: the implementation declares
// it, its description starting with MXGATE_PLANTED_FAULT_PREFIX, read in one place when the plugin
// loads. A planted fault under a plain name must still be caught; a correct implementation whose
// name contains "faulty" must pass, and is no planted fault.
TEST(PlantedFault, DeclaredByTheDescriptionNotTheName) {
  EXPECT_TRUE(is_planted_fault_description("planted fault: casts round ties away from zero"));
  EXPECT_FALSE(is_planted_fault_description("example_faulty_x, named like one"));
  EXPECT_FALSE(is_planted_fault_description(" planted fault: not at the start"));
  for (const Implementation* im : resolve("example:all")) {  // two correct ones, the rest planted
    const bool correct = im->name == "example" || im->name == "example_tactics";
    EXPECT_EQ(im->planted_fault, !correct) << im->name << ": " << im->description;
  }
  const auto only = [](Implementation im, const std::string& name, const std::string& op) {
    im.name = name;
    std::vector<Op> ops;
    for (Op o : im.ops) {
      if (o.name != op) continue;
      o.impl = name;
      ops.push_back(o);
    }
    im.ops = ops;
    return im;
  };
  const Implementation planted =
      only(*resolve("example:example_faulty_upcast_shift").front(), "upcast_b", "upcast_e8m0");
  const Implementation correct =
      only(*resolve("example").front(), "example_faulty_in_name_only", "upcast_e8m0");
  gpu::HostBackend be;
  properties::ZooOptions opts;
  opts.seeds = 2;
  opts.cases = 50;
  const properties::ImplZooResult p = properties::run_impl_zoo(planted, be, opts);
  EXPECT_TRUE(p.planted);
  EXPECT_TRUE(p.detected);
  EXPECT_EQ(p.caught_by, "upcast_e8m0.bit_exact");
  EXPECT_TRUE(p.ok());
  const properties::ImplZooResult c = properties::run_impl_zoo(correct, be, opts);
  EXPECT_FALSE(c.planted);
  EXPECT_FALSE(c.detected);
  EXPECT_TRUE(c.ok());
}

}  // namespace
}  // namespace mxgate::impl
