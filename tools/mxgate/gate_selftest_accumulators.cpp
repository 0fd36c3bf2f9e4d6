// selftest.accumulators (gate_selftest.h): every registered accumulator model
// (reference/accumulator.h all_accumulators) both ways, though no op of the default gate declares
// any model but fp32_rn:
//   - its simulated kernel (a host gemm_block op computing the reference's bit-faithful
//     simulation of the model, per-tensor scales, declaring that model) passes gemm.ordered_bound;
//   - tightness: the same problem with its dominant product one E4M3FN code off (448 -> 416)
//     leaves the model's bound at element (0, 0), and an aligned-chunk model's kernel promoting
//     one chunk late (chunk_k doubled) leaves it, on data whose second chunk is lost next to the
//     first chunk's 1 without the promotion (a bound built from wider chunks lets that pass);
//   - the accumulator probe names the model from its simulation (E5M2 operands, M = N = 1).
#include <cmath>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "gpu/host/host_backend.h"
#include "impl/op.h"
#include "probe/accumulator_probe.h"
#include "properties/property.h"
#include "reference/accumulator.h"
#include "reference/accumulator_bounds.h"
#include "reference/accumulator_simulation.h"
#include "reference/format.h"
#include "reference/gemm_oracle.h"
#include "tools/mxgate/gate_selftest.h"

namespace mxgate::cli::selftest {

using report::CheckOutcome;

namespace {

// A host gemm_block op, per-tensor scales, computing simulate_gemm(`model`), declaring `model`.
impl::Implementation simulated_impl(const AccumulatorModel& model) {
  impl::Op op;
  op.name = "sim_" + model.name;
  op.impl = "selftest_sim";
  op.family = impl::Family::kGemmBlock;
  op.memory = impl::Memory::kHost;
  impl::Contract& c = op.contract;
  c.a_dtypes = c.b_dtypes =
      impl::dtype_bit(impl::Dtype::kE4m3fn) | impl::dtype_bit(impl::Dtype::kE5m2);
  c.out_dtypes = impl::dtype_bit(impl::Dtype::kF32);
  c.a_scale_layouts = c.b_scale_layouts = c.b_layouts = impl::layout_bit(impl::Layout::kRowMajor);
  c.scale_dtype = impl::Dtype::kF32;
  c.accumulator = model.name;
  op.run = [model](gpu::Backend& be, const impl::Call& call, std::string& message) {
    const uint64_t m = call.m, n = call.n, k = call.k;
    GemmProblem p = make_gemm_problem(m, n, k, BlockSizes{m, k, n, k}, true);
    const auto values = [&be](const impl::Tensor& t, std::vector<float>& out, bool codes) {
      const auto* data = static_cast<const uint8_t*>(be.address(t.buffer));
      const uint64_t ld = t.ld == 0 ? t.cols : t.ld;
      const Format f = t.dtype == impl::Dtype::kE5m2 ? Format::kE5M2 : Format::kE4M3FN;
      for (uint64_t r = 0; r < t.rows; ++r) {
        for (uint64_t col = 0; col < t.cols; ++col) {
          float x = 0;
          if (codes) {
            x = decode(f, data[r * ld + col]);
          } else {
            std::memcpy(&x, data + (r * ld + col) * 4, 4);
          }
          out[r * t.cols + col] = x;
        }
      }
    };
    if (call.a_scale.rows * call.a_scale.cols != 1 || call.b_scale.rows * call.b_scale.cols != 1) {
      message = "per-tensor scales only";
      return impl::Status::kError;
    }
    values(call.a, p.a, true);
    values(call.b, p.b, true);
    values(call.a_scale, p.a_scale, false);
    values(call.b_scale, p.b_scale, false);
    const GemmOutput out = simulate_gemm(p, model, OutputFormat::kFp32);
    std::memcpy(be.address(call.out.buffer), out.fp32.data(), out.fp32.size() * 4);
    return impl::Status::kDone;
  };
  impl::Implementation im;
  im.name = im.spec = "selftest_sim_" + model.name;
  im.description = "the reference's simulation of " + model.name + ", declared as such";
  im.ops = {std::move(op)};
  return im;
}

// "inside" or "outside at (ROW, COL)" (the first element outside, row-major).
std::string bound_answer(const GemmBounds& b, const GemmOutput& out) {
  const BoundVerdict v = check_bound(b, out);
  if (v.ok()) return "inside";
  return "outside at (" + std::to_string(v.violations.front().row) + ", " +
         std::to_string(v.violations.front().col) + ")";
}

// M = 2, N = 3, K = 300 (two 128-blocks and a tail): small E4M3FN values (codes 0 .. 0x3F, 0 ..
// 1.875) from a fixed LCG, and one product 448 * 448 = 200704 at k = 137 in output (0, 0). Its A
// code one below (0x7D = 416) moves row 0 of the output by 32 b(j, 137): (0, 0) by 32 * 448 =
// 14336, about 7% of the element, where every model's bound is a few units of its last kept bit
// (14 bits or more: under 2^-13 of the element): outside, first in row-major order at (0, 0).
GemmProblem product_problem() {
  const size_t k = 300;
  GemmProblem prob = make_gemm_problem(2, 3, k, BlockSizes{2, k, 3, k}, true);
  prob.a_scale.clear();
  prob.b_scale.clear();
  uint32_t state = 12345;
  const auto code = [&state] {
    state = state * 1664525u + 1013904223u;
    return decode(Format::kE4M3FN, (state >> 24) & 0x3Fu);
  };
  for (float& x : prob.a) x = code();
  for (float& x : prob.b) x = code();
  prob.a[137] = prob.b[137] = 448.0f;
  return prob;
}

// M = N = 1, K = 2 chunk_k: a = 1 at k = 0, t = 2^-p at k = chunk_k .. 2 chunk_k - 1 (p: the
// model's precision bits), b = 1. Promoted every chunk_k (the model), the second chunk's group
// sums are aligned to their own largest term t and kept exactly: chunk_k t, added to 1 in fp32
// (exact: chunk_k t = chunk_k 2^-p is a power of two far above 2^-24): the model's bound is a few
// fp32 ulps of 1. Promoted one chunk late, each group of t is aligned to the running partial 1,
// whose unit is 2^(1-p): t is half of it, truncated away (or a tie rounded to the even 1): the
// late kernel returns 1, an error of chunk_k t (sm90_fp8_mma: 128 * 2^-14 = 2^-7), outside at
// (0, 0).
GemmProblem promotion_problem(const AccumulatorModel& m) {
  const size_t chunk = m.chunks.chunk_k, k = 2 * chunk;
  GemmProblem prob = make_gemm_problem(1, 1, k, BlockSizes{1, k, 1, k}, true);
  prob.a_scale.clear();
  prob.b_scale.clear();
  const float t = static_cast<float>(std::ldexp(1.0, -m.chunks.precision_bits));
  prob.a.assign(k, 0.0f);
  prob.a[0] = 1.0f;
  for (size_t kk = chunk; kk < k; ++kk) prob.a[kk] = t;
  prob.b.assign(k, 1.0f);
  return prob;
}

}  // namespace

CheckRun accumulators_check(const GateOptions& opts) {
  CheckRun run;
  gpu::HostBackend be;
  const properties::Property* bound = properties::find_property("gemm.ordered_bound");
  if (bound == nullptr) return error_run("no property gemm.ordered_bound");
  properties::RunOptions ro;
  ro.seed = opts.seed;
  ro.cases = 20;
  ro.shrink = false;
  for (const AccumulatorModel& m : all_accumulators()) {
    // The faithful twin: the model's own simulation, declared as the model, is inside its bound.
    const impl::Implementation im = simulated_impl(m);
    std::string twin;
    try {
      const properties::RunResult r =
          properties::run_property(*bound, properties::Context{&be, {}, nullptr, &im}, ro);
      twin = !r.passed            ? "fail: " + (r.failure ? r.failure->what : r.message)
             : r.unsupported != 0 ? "unsupported: " + std::to_string(r.unsupported) + " cases"
                                  : "pass";
    } catch (const std::exception& e) {
      twin = std::string("error: ") + e.what();
    }
    expect_answer(run, m.name + " simulated kernel, gemm.ordered_bound 20 cases", "pass", twin);

    // Tightness: one product off leaves the bound at (0, 0); the model's own output is inside.
    std::string tight;
    try {
      const GemmProblem prob = product_problem();
      const GemmBounds b = compute_bounds(prob, m, OutputFormat::kFp32);
      GemmProblem off = prob;
      off.a[137] = decode(Format::kE4M3FN, 0x7D);  // 416, one code below 448 (0x7E)
      tight = "own " + bound_answer(b, simulate_gemm(prob, m, OutputFormat::kFp32)) +
              "; one product off " + bound_answer(b, simulate_gemm(off, m, OutputFormat::kFp32));
      if (m.kind == AccumulatorKind::kAlignedChunks && m.chunks.chunk_k != 0) {
        const GemmProblem pp = promotion_problem(m);
        const GemmBounds pb = compute_bounds(pp, m, OutputFormat::kFp32);
        AccumulatorModel late = m;
        late.chunks.chunk_k *= 2;
        tight += "; own " + bound_answer(pb, simulate_gemm(pp, m, OutputFormat::kFp32)) +
                 "; one promotion late " +
                 bound_answer(pb, simulate_gemm(pp, late, OutputFormat::kFp32));
      }
    } catch (const std::exception& e) {
      tight = std::string("error: ") + e.what();
    }
    const bool chunked = m.kind == AccumulatorKind::kAlignedChunks && m.chunks.chunk_k != 0;
    expect_answer(run, m.name + " bound tightness",
                  chunked ? "own inside; one product off outside at (0, 0); own inside; one "
                            "promotion late outside at (0, 0)"
                          : "own inside; one product off outside at (0, 0)",
                  tight);

    // The probe recovers the model from its simulation.
    std::string named;
    try {
      ProbeOptions o;
      o.m = o.n = 1;
      o.format = Format::kE5M2;
      const ProbeResult r = probe_accumulator(simulated_fp8_gemm(m), o);
      named = r.model.empty() ? "no model" : r.model;
    } catch (const std::exception& e) {
      named = std::string("error: ") + e.what();
    }
    expect_answer(run, m.name + " simulated, the probe names", m.name, named);
  }
  if (run.report.result == CheckOutcome::kFail) {
    run.report.repro =
        "mxgate gate --only selftest.accumulators; mxgate probe-accumulator "
        "--simulate MODEL";
  }
  return run;
}

}  // namespace mxgate::cli::selftest
