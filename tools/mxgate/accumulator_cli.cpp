// Verbs on accumulator models (docs/accumulators.md): `accumulators` lists the registry,
// `probe-accumulator` measures an accumulator: a simulated model's (--simulate, all of it in
// verbs/accumulator_ops.h, shared with the C API) or an implementation's GEMM op (--impl SPEC[:OP],
// run here through the harness: properties/crafted_gemm.h; docs/plugins.md §10).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "impl/harness.h"
#include "impl/plugin.h"
#include "impl/registry.h"
#include "properties/crafted_gemm.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/backend_select.h"
#include "tools/mxgate/impl_select.h"
#include "tools/mxgate/verbs.h"
#include "verbs/accumulator_ops.h"

namespace mxgate::cli {
namespace {

void no_positionals(const Args& a) {
  if (!a.positionals().empty()) {
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  }
}

impl::Dtype dtype_of(Format f) {
  switch (f) {
    case Format::kE4M3FN:
      return impl::Dtype::kE4m3fn;
    case Format::kE5M2:
      return impl::Dtype::kE5m2;
    case Format::kE4M3FNUZ:
      return impl::Dtype::kE4m3fnuz;
    case Format::kE5M2FNUZ:
      return impl::Dtype::kE5m2fnuz;
    default:
      throw UsageError("probe-accumulator: " + std::string(info(f).name) +
                       " is not an FP8 element type of the plugin ABI");
  }
}

// The probe's call as a crafted GEMM: its codes, and its scales per element (per-tensor: one
// each; block: A per 1x128, B per 128x128, row-major grids of ceil(K/128) columns).
properties::CraftedGemm crafted(const Fp8GemmCall& call) {
  properties::CraftedGemm g;
  g.m = call.m;
  g.n = call.n;
  g.k = call.k;
  g.types = {dtype_of(call.format), dtype_of(call.format)};
  g.a = call.a;
  g.b = call.b;
  if (call.scaling == ProbeScaling::kPerTensor) {
    g.a_scale = [s = call.a_scale.at(0)](std::size_t, std::size_t) { return s; };
    g.b_scale = [s = call.b_scale.at(0)](std::size_t, std::size_t) { return s; };
  } else {
    const std::size_t kb = (call.k + 127) / 128;
    g.a_scale = [s = call.a_scale, kb](std::size_t r, std::size_t kk) {
      return s.at(r * kb + kk / 128);
    };
    g.b_scale = [s = call.b_scale, kb](std::size_t j, std::size_t kk) {
      return s.at((j / 128) * kb + kk / 128);
    };
  }
  return g;
}

// Whether `op`'s scale blocks are exactly the probe's (per-tensor: whole tensors; block: 1x128 A,
// 128x128 B), the op to prefer when SPEC names none.
bool same_blocks(const impl::Op& op, ProbeScaling s) {
  if (op.family != impl::Family::kGemmBlock) return false;
  const impl::Contract& c = op.contract;
  if (s == ProbeScaling::kPerTensor) {
    return c.a_block_rows == 0 && c.a_block_cols == 0 && c.b_block_rows == 0 && c.b_block_cols == 0;
  }
  return c.a_block_rows == 1 && c.a_block_cols == 128 && c.b_block_rows == 128 &&
         c.b_block_cols == 128;
}

struct Target {
  const impl::Implementation* impl = nullptr;
  const impl::Op* op = nullptr;
};

// SPEC (one implementation: the op is picked) or SPEC:OP (the op of that implementation).
Target resolve_target(const std::string& spec, const ProbeOptions& o) {
  Target t;
  std::string op_name;
  try {
    const std::vector<const impl::Implementation*> all = impl::resolve(spec);
    if (all.size() != 1) {
      throw UsageError("--impl " + spec + " names " + std::to_string(all.size()) +
                       " implementations; name one (PLUGIN:NAME, PATH.so:NAME), and an op with "
                       "SPEC:OP");
    }
    t.impl = all.front();
  } catch (const impl::PluginError& e) {
    const std::size_t colon = spec.rfind(':');
    if (e.kind() == impl::PluginError::Kind::kEnvironment || colon == std::string::npos) {
      throw;
    }
    t.impl = &one_impl(spec.substr(0, colon));  // SPEC:OP
    op_name = spec.substr(colon + 1);
  }
  // The shape and scales of every probe call: what an op must accept.
  const properties::CraftedGemm sample = crafted(zero_call(o));
  if (!op_name.empty()) {
    t.op = t.impl->find_op(op_name);
    if (t.op == nullptr) {
      std::string ops;
      for (const impl::Op& op : t.impl->ops) ops += (ops.empty() ? "" : ", ") + op.name;
      throw UsageError("--impl " + spec + ": implementation " + t.impl->name + " has no op '" +
                       op_name + "' (ops: " + ops + ")");
    }
    if (auto why = properties::crafted_gemm_problem(*t.op, sample)) {
      throw UsageError("--impl " + spec + ": the probe cannot run on it: " + *why);
    }
    return t;
  }
  // No op named: the GEMM op whose scale blocks are the probe's, else the first that can run it.
  std::string reasons;
  for (int pass = 0; pass < 2 && t.op == nullptr; ++pass) {
    for (const impl::Op& op : t.impl->ops) {
      if (pass == 0 && !same_blocks(op, o.scaling)) continue;
      const auto why = properties::crafted_gemm_problem(op, sample);
      if (!why) {
        t.op = &op;
        break;
      }
      if (pass == 1 && impl::is_gemm(op.family)) reasons += "\n  " + *why;
    }
  }
  if (t.op == nullptr) {
    throw UsageError("--impl " + spec + ": no gemm_block or gemm_mx op of " + t.impl->name +
                     " can run the probe's calls (M=" + std::to_string(o.m) +
                     " N=" + std::to_string(o.n) + " K=" + std::to_string(o.k) + ", " +
                     std::string(info(o.format).name) + ", f32 out)" +
                     (reasons.empty() ? std::string(": it has no GEMM op") : reasons));
  }
  return t;
}

int probe_impl(const Args& a, const verbs::ProbeAccumulatorSpec& spec) {
  const Target t = resolve_target(spec.impl, spec.options);
  const std::string backend = a.get("backend").value_or("auto");
  std::unique_ptr<gpu::Backend> be;
  try {
    be = make_backend(backend);
  } catch (const EnvironmentError& e) {
    // Exit 3, as every verb with an unavailable backend; say what runs without the GPU.
    throw EnvironmentError(
        "probe-accumulator --backend " + backend + ": " + e.what() +
        (backend == "hip" ? "; no AMD GPU to probe here (a hip build on an MI300 / MI355 runs it; "
                            "the published CDNA3 model: --simulate cdna3_fp8_mfma)"
                          : ""));
  }
  const impl::Op& op = *t.op;
  const Fp8Gemm gemm = [&be, &op](const Fp8GemmCall& call) {
    try {
      return properties::run_crafted_gemm(*be, op, crafted(call));
    } catch (const impl::Unsupported& e) {
      // The contract was checked above: what is left is memory this backend lacks.
      throw EnvironmentError(e.what());
    }
  };
  std::fputs(verbs::probe_accumulator_text(spec, &gemm, t.impl->spec + ":" + op.name).c_str(),
             stdout);
  return 0;
}

}  // namespace

int cmd_accumulators(const Argv& argv) {
  const Args a(argv, {}, verbs::accumulators_flags());
  no_positionals(a);
  std::fputs(verbs::accumulators_text(a).c_str(), stdout);
  return 0;
}

int cmd_probe_accumulator(const Argv& argv) {
  const Args a(argv, verbs::probe_accumulator_options(), verbs::probe_accumulator_flags());
  no_positionals(a);
  const verbs::ProbeAccumulatorSpec spec = verbs::probe_accumulator_spec(a);
  if (!spec.impl.empty()) return probe_impl(a, spec);
  std::fputs(verbs::probe_accumulator_text(spec).c_str(), stdout);
  return 0;
}

}  // namespace mxgate::cli
