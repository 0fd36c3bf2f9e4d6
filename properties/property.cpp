#include "properties/property.h"

#include <fcntl.h>
#include <rapidcheck.h>
#include <rapidcheck/detail/Configuration.h>
#include <rapidcheck/detail/Property.h>
#include <rapidcheck/detail/TestListenerAdapter.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <exception>
#include <optional>
#include <sstream>

#include "impl/accumulator.h"
#include "impl/builtin.h"
#include "impl/harness.h"
#include "model/branches.h"
#include "properties/gemm_operands.h"
#include "properties/props.h"

namespace mxgate::properties {

uint64_t Coverage::count(const std::string& tag) const {
  const auto it = counts_.find(tag);
  return it == counts_.end() ? 0 : it->second;
}

void Coverage::merge(const Coverage& other) {
  for (const auto& [t, n] : other.counts_) counts_[t] += n;
}

std::span<const std::string_view> required_coverage() {
  static const std::vector<std::string> tags = [] {
    std::vector<std::string> t = {
        "e8m0:0x00",
        "e8m0:0x01",
        "e8m0:0xFE",
        "e8m0:0xFF",
        // Every family that consumes scales reaches every extreme code of its scale format
        // (gemm.exact's extreme regime, properties/extreme_scales.h; dequantize.bit_exact).
        "gemm_mx:e8m0:0x00",
        "gemm_mx:e8m0:0x01",
        "gemm_mx:e8m0:0xFE",
        "gemm_mx:e8m0:0xFF",
        "gemm_block:scale:subnormal",
        "gemm_block:scale:min_normal",
        "gemm_block:scale:2^127",
        "gemm_block:scale:nan",
        // The block GEMMs with per-row A scales meet K of one scale block with an all-zero row
        // under a tiny scale (gemm.exact's zero-row regime, properties/zero_row_regime.h; Z44).
        "gemm_block:edge:zero_row_one_k_tile",
        // A NaN scale (E8M0 0xFF) over nonzero elements reaches the MX and block GEMMs, so that
        // a decode of 0xFF as Inf or as 2^127 changes the output (gemm.exact's NaN-scale regime,
        // properties/nan_scale_regime.h; Z50, Z51).
        "gemm_mx:edge:nan_scale_block",
        "gemm_block:edge:nan_scale_block",
        // Every FP8 element code at an end of its range (+-max, the smallest normal, every
        // subnormal, +0, -0) reaches each GEMM family through gemm.exact's extreme-element
        // regime (extreme_scales.h), in the element format of the built-in kernels.
        "gemm_mx:e4m3fn:max",
        "gemm_mx:e4m3fn:min_normal",
        "gemm_mx:e4m3fn:subnormal",
        "gemm_mx:e4m3fn:zero",
        "gemm_mx:e4m3fn:neg_zero",
        "gemm_block:e4m3fn:max",
        "gemm_block:e4m3fn:min_normal",
        "gemm_block:e4m3fn:subnormal",
        "gemm_block:e4m3fn:zero",
        "gemm_block:e4m3fn:neg_zero",
        // The same for the FNUZ formats the MI300 block GEMMs consume (no -0: 0x80 is the NaN),
        // and for E2M1 in both FP4 GEMM families (gemm_fp4.exact's regime; 0.5 the one
        // subnormal, 1 the smallest normal, 6 the max).
        "gemm_block:e4m3fnuz:max",
        "gemm_block:e4m3fnuz:min_normal",
        "gemm_block:e4m3fnuz:subnormal",
        "gemm_block:e4m3fnuz:zero",
        "gemm_block:e5m2fnuz:max",
        "gemm_block:e5m2fnuz:min_normal",
        "gemm_block:e5m2fnuz:subnormal",
        "gemm_block:e5m2fnuz:zero",
        "gemm_mx:e2m1:max",
        "gemm_mx:e2m1:min_normal",
        "gemm_mx:e2m1:subnormal",
        "gemm_mx:e2m1:zero",
        "gemm_mx:e2m1:neg_zero",
        "gemm_nvfp4:e2m1:max",
        "gemm_nvfp4:e2m1:min_normal",
        "gemm_nvfp4:e2m1:subnormal",
        "gemm_nvfp4:e2m1:zero",
        "gemm_nvfp4:e2m1:neg_zero",
        "dequantize:e8m0:0x00",
        "dequantize:e8m0:0x01",
        "dequantize:e8m0:0xFE",
        "dequantize:e8m0:0xFF",
        // Every element format a built-in dequantizer reads reaches it at the ends of its range,
        // its NaN and Inf codes included (field elements=every of dequantize.bit_exact and
        // dequantize_fp4.bit_exact; the FNUZ NaN is 0x80).
        "dequantize:e4m3fn:max",
        "dequantize:e4m3fn:min_normal",
        "dequantize:e4m3fn:subnormal",
        "dequantize:e4m3fn:zero",
        "dequantize:e4m3fn:neg_zero",
        "dequantize:e4m3fn:nan",
        "dequantize:e5m2:max",
        "dequantize:e5m2:min_normal",
        "dequantize:e5m2:subnormal",
        "dequantize:e5m2:zero",
        "dequantize:e5m2:neg_zero",
        "dequantize:e5m2:nan",
        "dequantize:e5m2:inf",
        "dequantize:e4m3fnuz:max",
        "dequantize:e4m3fnuz:min_normal",
        "dequantize:e4m3fnuz:subnormal",
        "dequantize:e4m3fnuz:zero",
        "dequantize:e4m3fnuz:nan",
        "dequantize:e5m2fnuz:max",
        "dequantize:e5m2fnuz:min_normal",
        "dequantize:e5m2fnuz:subnormal",
        "dequantize:e5m2fnuz:zero",
        "dequantize:e5m2fnuz:nan",
        "dequantize:e2m1:max",
        "dequantize:e2m1:min_normal",
        "dequantize:e2m1:subnormal",
        "dequantize:e2m1:zero",
        "dequantize:e2m1:neg_zero",
        "dequantize_nvfp4:e2m1:max",
        "dequantize_nvfp4:e2m1:min_normal",
        "dequantize_nvfp4:e2m1:subnormal",
        "dequantize_nvfp4:e2m1:zero",
        "dequantize_nvfp4:e2m1:neg_zero",
        // The UE4M3 extremes (zero, the smallest subnormal, the largest) of both NVFP4 scale
        // consumers and the fp32 global scales at the ends of their range (gemm_fp4.exact's
        // extreme regime; dequantize_fp4.bit_exact's every-code scales).
        "gemm_nvfp4:ue4m3:0x00",
        "gemm_nvfp4:ue4m3:0x01",
        "gemm_nvfp4:ue4m3:0x7E",
        "gemm_nvfp4:global:subnormal",
        "gemm_nvfp4:global:2^127",
        "dequantize_nvfp4:ue4m3:0x00",
        "dequantize_nvfp4:ue4m3:0x01",
        "dequantize_nvfp4:ue4m3:0x7E",
        // Scale grids that are views into wider tensors (gemm.exact's field scale_ld).
        "layout:padded_scale_ld",
        "out:subnormal",
        "out:saturated",
        "in:tie",
        "block:zero",
        "block:nan_inf",
        "k%128=0",
        "k%128=32",
        "k%128=64",
        "k%128=96",
        "k%32!=0",
        "tile:partial_n",
        "tile:partial_m",
        "m=1",
        "m>1",
        "layout:row_major",
        "layout:col_major",
        "layout:tma_col_major",
        "layout:nv_swizzle_128x4",
        "layout:aiter_preshuffle",
        "tp:shard",
        // Detection work (docs/bug_classes.md §2): the block maximum at every position, amax/448
        // an exact power of two, M past the kernels' 128-row tile and past 256, the FP8 element
        // formats of the dequantizer, an absent scale operand, the UE8M0 block scales.
        "max_at:first",
        "max_at:last",
        "max_at:middle",
        "values:pow2_ratio",
        "m>128",
        "m>256",
        "format:e4m3fn",
        "format:e5m2",
        "format:e4m3fnuz",
        "format:e5m2fnuz",
        "scale:absent",
        "scale:ue8m0",
        "determinism:run_twice",
        // FP4 (props_fp4.cpp, docs/fp4.md §12): odd K (a padding nibble), K around the 16- and
        // 32-element blocks, E2M1 ties and saturation, E4M3 block-scale codes, NVFP4 global
        // scales at the extremes and in bf16, zero blocks, MXFP8 x MXFP4.
        "fp4:k_odd",
        "fp4:k%16!=0",
        "fp4:k%32=16",
        "e2m1:tie",
        "e2m1:saturated",
        "e4m3_scale:subnormal",
        "e4m3_scale:0x00",
        "e4m3_scale:0x7E",
        "nvfp4:global_zero",
        "nvfp4:global_extreme",
        "nvfp4:global_bf16",
        "fp4:zero_block",
        "fp4:mixed_operands",
    };
    // Every built-in op every backend runs (a kernel with its own hardware check, the
    // satfinite quantize_mx_hw, is exercised where the hardware has it): a new row of the
    // kernel table is required coverage without a second list to update.
    for (const gpu::KernelDef& k : gpu::all_kernels()) {
      if (k.family && k.device_available == nullptr) t.push_back("op:" + std::string(k.name));
    }
    // FP8 GEMM output (plugin.h revision 4): where a built-in GEMM writes it, gemm.exact reaches it
    // with power-of-two and other scale_result factors (props_gemm.cpp check_fp8_out).
    const bool fp8_out = std::any_of(gpu::all_kernels().begin(), gpu::all_kernels().end(),
                                     [](const gpu::KernelDef& k) {
                                       return k.family && impl::takes_fp8_out(*k.family) &&
                                              (k.contract.out_dtypes & impl::kFp8OutDtypes) != 0;
                                     });
    if (fp8_out) {
      for (const char* tag : {"out:fp8_scaled", "out:fp8_scale:pow2", "out:fp8_scale:non_pow2"}) {
        t.push_back(tag);
      }
    }
    // The grouped GEMMs' edges (props_grouped.cpp, docs/grouped.md §8).
    for (const std::string& tag : grouped_coverage_tags()) t.push_back(tag);
    for (const std::string& tag : kgrouped_coverage_tags()) t.push_back(tag);
    // Every branch of the decision model (docs/dispatch_model.md §8), as the glue tags it.
    for (model::Branch b : model::all_branches()) t.push_back("model:" + std::string(name(b)));
    return t;
  }();
  static const std::vector<std::string_view> views(tags.begin(), tags.end());
  return views;
}

std::vector<std::string> missing(const Coverage& c) {
  std::vector<std::string> out;
  for (std::string_view t : required_coverage()) {
    if (c.count(std::string(t)) == 0) out.emplace_back(t);
  }
  return out;
}

std::span<const Property> all_properties() {
  static const std::vector<Property> props = [] {
    std::vector<Property> v;
    add_cast_properties(v);
    add_quant_properties(v);
    add_quant_2d_properties(v);
    add_gemm_properties(v);
    add_layout_properties(v);
    add_dispatch_properties(v);
    add_detect_properties(v);
    add_determinism_properties(v);
    add_fp4_properties(v);
    add_grouped_properties(v);
    add_grouped_split_properties(v);
    extend_grouped_properties_k(v);
    return v;
  }();
  return props;
}

const Property* find_property(std::string_view name) {
  for (const Property& p : all_properties()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string_view to_string(Failure::Kind k) {
  switch (k) {
    case Failure::Kind::kWrong:
      return "fail";
    case Failure::Kind::kContractMismatch:
      return "contract_mismatch";
    case Failure::Kind::kError:
      return "error";
  }
  return "error";
}

const impl::Implementation& Context::implementation() const {
  return impl != nullptr ? *impl : impl::builtin();
}

bool applies(const Property& p, const impl::Implementation& impl) {
  if (p.families == 0) return impl.builtin;
  return (impl.families() & p.families) != 0;
}

Ops candidate_ops(const Property& p, const Context& ctx, std::vector<std::string>* why_not) {
  Ops out;
  if (p.families == 0) return out;
  for (const impl::Op& op : ctx.implementation().ops) {
    if ((impl::family_bit(op.family) & p.families) == 0) continue;
    if (p.accepts != nullptr && !p.accepts(op)) {
      if (why_not != nullptr) {
        const std::string needs = p.declines != nullptr ? p.declines(op) : "";
        why_not->push_back(
            op.impl + "/" + op.name + ": " + std::string(p.name) + " cannot build its inputs: " +
            (needs.empty() ? "a dtype, layout or convention it lacks" : "it needs " + needs));
      }
      continue;
    }
    try {
      (void)impl::backend_for(op, *ctx.be);
    } catch (const impl::Unsupported& e) {
      if (why_not != nullptr) why_not->push_back(e.what());
      continue;
    }
    out.push_back(&op);
  }
  return out;
}

const impl::Op& case_op(const Context& ctx, const Case& c) {
  // Regression files written before ops existed name the built-in kernel as `kernel=`.
  const std::string& name = !c.has("op") && c.has("kernel") ? c.text("kernel") : c.text("op");
  const impl::Implementation& impl = ctx.implementation();
  if (const impl::Op* op = impl.find_op(name)) return *op;
  throw impl::Unsupported("implementation " + impl.name + " has no op '" + name + "'");
}

std::optional<Failure> check_case(const Property& p, const Context& ctx, const Case& c) {
  try {
    return p.check(ctx, c);
  } catch (const CaseError&) {
    throw;
  } catch (const impl::Unsupported&) {
    throw;
  } catch (const impl::ContractError& e) {
    return Failure{std::string("contract error: ") + e.what(), std::nullopt, std::nullopt,
                   std::nullopt, Failure::Kind::kError};
  } catch (const impl::InvocationError& e) {
    return Failure{e.what(), std::nullopt, std::nullopt, std::nullopt,
                   e.kind() == impl::InvocationError::Kind::kContractMismatch
                       ? Failure::Kind::kContractMismatch
                       : Failure::Kind::kError};
  } catch (const std::exception& e) {
    return Failure{std::string("threw: ") + e.what(), std::nullopt, std::nullopt, std::nullopt,
                   Failure::Kind::kError};
  }
}

namespace {

// RapidCheck loads its global configuration (RC_PARAMS) on first use and prints it, with a
// random seed of its own that no mxgate run uses (seeds come from RunOptions). Load it once
// with stderr silenced so that line does not suggest otherwise.
void load_rapidcheck_configuration_quietly() {
  static const bool loaded = [] {
    std::fflush(stderr);
    const int saved = ::dup(2);
    const int null = ::open("/dev/null", O_WRONLY);
    if (saved >= 0 && null >= 0) ::dup2(null, 2);
    (void)rc::detail::configuration();
    std::fflush(stderr);
    if (saved >= 0) {
      ::dup2(saved, 2);
      ::close(saved);
    }
    if (null >= 0) ::close(null);
    return true;
  }();
  (void)loaded;
}

}  // namespace

RunResult run_property(const Property& p, const Context& ctx, const RunOptions& opts) {
  RunResult out;
  const impl::Implementation& impl = ctx.implementation();
  const auto unsupported = [&out](const std::string& why) {
    ++out.unsupported;
    if (out.unsupported_reasons.size() < 8 &&
        std::find(out.unsupported_reasons.begin(), out.unsupported_reasons.end(), why) ==
            out.unsupported_reasons.end()) {
      out.unsupported_reasons.push_back(why);
    }
  };
  if (!applies(p, impl)) {
    unsupported(std::string(p.name) + " does not apply to " + impl.name +
                (p.families == 0 ? " (a property of the built-in implementation)"
                                 : " (no op of its families)"));
    return out;
  }
  std::vector<std::string> why_not;
  const Ops ops = candidate_ops(p, ctx, &why_not);
  for (const impl::Op* op : ops) out.ops.push_back(op->name);
  if (!ops.empty()) out.ops_not_checked = why_not;
  if (p.families != 0 && ops.empty()) {
    for (const std::string& w : why_not) unsupported(w);
    if (why_not.empty()) {
      unsupported("no op of " + impl.name + " that " + std::string(p.name) + " can check on " +
                  std::string(ctx.be->name()));
    }
    return out;
  }
  load_rapidcheck_configuration_quietly();
  std::optional<Case> last_case;
  std::optional<Failure> last_failure;
  bool failed_once = false;
  // Generated cases tag the coverage; shrink steps (after the first failure) do not.
  Context quiet = ctx;
  quiet.coverage = nullptr;
  int done = 0;
  const auto body = [&] {
    if (opts.keep_going && (out.stopped || !opts.keep_going(done))) {
      out.stopped = true;
      RC_DISCARD("stopped");  // RapidCheck gives up after its discards: no case runs
    }
    ++done;
    const Case c = *p.gen(ctx, ops);
    std::optional<Failure> f;
    try {
      f = check_case(p, failed_once ? quiet : ctx, c);
    } catch (const impl::Unsupported& e) {
      unsupported(e.what());
      return;
    }
    if (f) {
      failed_once = true;
      last_case = c;
      last_failure = f;
      RC_FAIL(f->what);
    }
  };
  rc::detail::TestParams params;
  params.seed = opts.seed;
  params.maxSuccess = p.max_cases > 0 ? std::min(opts.cases, p.max_cases) : opts.cases;
  params.maxSize = opts.max_size;
  params.disableShrinking = !opts.shrink;
  // No property discards a case: the one discard is the stop, and RapidCheck gives up at once.
  if (opts.keep_going) params.maxDiscardRatio = 0;
  rc::detail::TestMetadata meta;
  meta.id = std::string(p.name);
  meta.description = std::string(p.name);
  rc::detail::TestListenerAdapter listener;
  const rc::detail::TestResult result =
      rc::detail::checkProperty(rc::detail::toProperty(body), meta, params, listener);
  if (result.is<rc::detail::SuccessResult>()) {
    // A case the implementation could not take is no checked case (RapidCheck counts it).
    out.cases = std::max(0, result.get<rc::detail::SuccessResult>().numSuccess - out.unsupported);
    return out;
  }
  out.passed = false;
  std::ostringstream msg;
  rc::detail::printResultMessage(result, msg);
  out.message = msg.str();
  if (result.is<rc::detail::FailureResult>()) {
    out.cases = result.get<rc::detail::FailureResult>().numSuccess + 1;
    // The last failing evaluation is the final, minimal one: every later shrink attempt passed.
    out.counterexample = last_case;
    out.failure = last_failure;
  } else if (result.is<rc::detail::GaveUpResult>()) {
    out.cases = result.get<rc::detail::GaveUpResult>().numSuccess;
    if (out.stopped) {  // no case failed before the stop
      out.passed = true;
      out.message.clear();
      out.cases = std::max(0, out.cases - out.unsupported);
    }
  }
  return out;
}

namespace {

// The value of `key=` in RC_PARAMS (space-separated key=value pairs), or nullopt.
std::optional<std::string> rc_param(const std::string& key) {
  const char* env = std::getenv("RC_PARAMS");
  if (env == nullptr) return std::nullopt;
  const std::string s(env);
  for (std::size_t at = 0; (at = s.find(key + "=", at)) != std::string::npos; at += key.size()) {
    if (at == 0 || s[at - 1] == ' ') {
      const std::size_t v = at + key.size() + 1;
      return s.substr(v, s.find(' ', v) - v);
    }
  }
  return std::nullopt;
}

}  // namespace

int cases_from_rc_params(int fallback) {
  const auto v = rc_param("max_success");
  const int n = v ? std::atoi(v->c_str()) : 0;
  return n > 0 ? n : fallback;
}

uint64_t seed_from_rc_params(uint64_t fallback) {
  const auto v = rc_param("seed");
  return v && !v->empty() ? std::strtoull(v->c_str(), nullptr, 10) : fallback;
}

std::optional<Failure> compare_outputs(const std::string& what, const GemmOutput& expected,
                                       const GemmOutput& actual) {
  const BitExactVerdict v = compare(expected, actual);
  if (v.ok()) return std::nullopt;
  return Failure{what + ": " + v.summary(), v.first, expected, actual};
}

std::optional<Failure> size_failure(const std::string& what, std::size_t expected,
                                    std::size_t actual) {
  if (expected == actual) return std::nullopt;
  return Failure{
      what + ": " + std::to_string(actual) + " bytes, expected " + std::to_string(expected),
      std::nullopt, std::nullopt, std::nullopt};
}

std::optional<Failure> compare_codes(const std::string& what, Format format, std::size_t rows,
                                     std::size_t cols, std::span<const uint8_t> expected,
                                     std::span<const uint8_t> actual) {
  if (auto f = size_failure(what, expected.size(), actual.size())) return f;
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != actual[i] && bad++ == 0) first = i;
  }
  if (bad == 0) return std::nullopt;
  char buf[160];
  std::snprintf(buf, sizeof buf,
                ": %zu of %zu bytes differ; first (%zu,%zu) expected 0x%02X actual 0x%02X", bad,
                expected.size(), first / cols, first % cols, expected[first], actual[first]);
  BitMismatch m;
  m.row = first / cols;
  m.col = first % cols;
  m.expected_bits = expected[first];
  m.actual_bits = actual[first];
  m.ulp_distance = ulp_distance_code(format, expected[first], actual[first]);
  (void)rows;
  return Failure{what + buf, m, std::nullopt, std::nullopt};
}

}  // namespace mxgate::properties
