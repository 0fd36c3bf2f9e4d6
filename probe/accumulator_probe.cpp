#include "probe/accumulator_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reference/accumulator_simulation.h"
#include "reference/fp_encode.h"
#include "reference/gemm_oracle.h"

namespace mxgate {
namespace {

using std::size_t;

// The exponent of the large product: 2^16 = 256 * 256 where the format holds 256 (E4M3FN, E5M2,
// E5M2FNUZ), else twice the largest power of two it holds (E4M3FNUZ: 2^14 = 128 * 128). Every
// product the probe needs, down to 2^(E-25), is then a product of two codes.
int big_exponent(Format f) {
  int e = 0;
  std::frexp(static_cast<double>(max_finite(f)), &e);  // max = m * 2^e, m in [0.5, 1)
  return std::min(16, 2 * (e - 1));
}

// One product a*b = value placed at k.
struct Term {
  size_t k;
  double value;
};

std::string pow2(int e) { return "2^" + std::to_string(e); }

std::string describe(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

class Prober {
 public:
  Prober(const Fp8Gemm& gemm, const ProbeOptions& o) : gemm_(gemm), o_(o) {}

  // C[0][0] of the call whose row 0 of A and of B hold the factors of `terms` (zeros elsewhere).
  double run(const std::vector<Term>& terms) {
    Fp8GemmCall call;
    call.m = o_.m;
    call.n = o_.n;
    call.k = o_.k;
    call.format = o_.format;
    call.scaling = o_.scaling;
    const uint8_t zero = static_cast<uint8_t>(encode(o_.format, 0.0f, EncodePolicy{}));
    call.a.assign(o_.m * o_.k, zero);
    call.b.assign(o_.n * o_.k, zero);
    for (const Term& t : terms) {
      const auto [a, b] = factor(t.value);
      call.a[t.k] = a;
      call.b[t.k] = b;
    }
    if (o_.scaling == ProbeScaling::kPerTensor) {
      call.a_scale = {1.0f};
      call.b_scale = {1.0f};
    } else {
      const size_t kb = (o_.k + 127) / 128;
      call.a_scale.assign(o_.m * kb, 1.0f);
      call.b_scale.assign(((o_.n + 127) / 128) * kb, 1.0f);
    }
    ++calls_;
    const std::vector<float> c = gemm_(call);
    if (c.size() != o_.m * o_.n) {
      throw std::runtime_error("probe-accumulator: the implementation returned " +
                               std::to_string(c.size()) + " values for an " + std::to_string(o_.m) +
                               " x " + std::to_string(o_.n) + " C");
    }
    return c[0];
  }

  int calls() const { return calls_; }
  const ProbeOptions& options() const { return o_; }

 private:
  // Codes (a, b) of the format with decode(a) * decode(b) == value exactly: value is +-2^e or
  // +-1.5 * 2^e; the exponent is split as evenly as the format allows.
  std::pair<uint8_t, uint8_t> factor(double value) const {
    for (int d = 0; d <= 40; ++d) {
      for (int sign : {1, -1}) {
        int e = 0;
        const double frac = std::frexp(std::fabs(value), &e);  // value = frac * 2^e
        const int ea = (e - 1) / 2 + sign * d;
        const float a = static_cast<float>(std::copysign(std::ldexp(frac * 2, ea), value));
        const float b = static_cast<float>(std::ldexp(1.0, e - 1 - ea));
        const uint32_t ca = encode(o_.format, a, EncodePolicy{});
        const uint32_t cb = encode(o_.format, b, EncodePolicy{});
        if (decode(o_.format, ca) == a && decode(o_.format, cb) == b &&
            static_cast<double>(a) * b == value) {
          return {static_cast<uint8_t>(ca), static_cast<uint8_t>(cb)};
        }
      }
    }
    throw std::logic_error("probe-accumulator: " + describe(value) +
                           " is not a product of two codes of the format");
  }

  const Fp8Gemm& gemm_;
  ProbeOptions o_;
  int calls_ = 0;
};

void validate(const ProbeOptions& o) {
  if (info(o.format).bits != 8 || o.format == Format::kE8M0) {
    throw std::invalid_argument("probe-accumulator: the format must be an FP8 element format");
  }
  if (o.m == 0 || o.n == 0 || o.k < 256) {
    throw std::invalid_argument("probe-accumulator: M and N must be positive and K >= 256");
  }
  if (o.scaling == ProbeScaling::kBlock && o.k % 128 != 0) {
    throw std::invalid_argument("probe-accumulator: block scaling needs K a multiple of 128");
  }
}

// The smallest d in [lo, hi] with kept(d), given kept is monotone (false ... false true ... true)
// and kept(hi); hi + 1 when !kept(hi).
template <class Kept>
size_t first_kept(size_t lo, size_t hi, Kept kept) {
  if (!kept(hi)) {
    return hi + 1;
  }
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (kept(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

}  // namespace

ProbeResult probe_accumulator(const Fp8Gemm& gemm, const ProbeOptions& options) {
  validate(options);
  Prober pr(gemm, options);
  ProbeResult r;
  const int eb = big_exponent(options.format);
  const std::string B = pow2(eb);  // the large product, for the evidence
  const double big = std::ldexp(1.0, eb);
  const size_t K = options.k;

  // 0. Sanity: one product comes back exactly.
  if (const double c = pr.run({{0, big}}); c != big) {
    throw std::runtime_error("probe-accumulator: a single product " + B + " at k=0 came back as " +
                             describe(c) + ": the call's layout or scales are not understood");
  }

  // 1. Precision: 2^16 + 2^(16-j) at k = 0, 1. Kept for j <= p - 1 (the small term is a whole
  //    unit 2^(17-p) of the aligned grid), lost from j = p on (half a unit or less: truncated, or
  //    a tie rounded to the even 2^16). The fp32 output itself holds j <= 23.
  int kept_j = 0;
  for (int j = 1; j <= 23; ++j) {
    const double small = std::ldexp(1.0, eb - j);
    if (pr.run({{0, big}, {1, small}}) != big + small) break;
    kept_j = j;
  }
  r.precision_bits = kept_j + 1;
  r.precision_at_output_limit = kept_j == 23;
  r.log.push_back("precision: " + B + " + " + pow2(eb - kept_j) + " kept" +
                  (r.precision_at_output_limit ? " (the fp32 output's last bit: at least 24 bits)"
                                               : ", " + B + " + " + pow2(eb - kept_j - 1) +
                                                     " lost: " + std::to_string(r.precision_bits) +
                                                     " bits relative to the largest term"));
  const int p = r.precision_bits;
  const double q = std::ldexp(1.0, eb + 1 - p);  // the unit next to 2^16

  // 2. Rounding of the bits shifted out: +-(2^16 + 0.75 q) and the tie 2^16 + 0.5 q.
  const double pos = pr.run({{0, big}, {1, 0.75 * q}});
  const double neg = pr.run({{0, -big}, {1, -0.75 * q}});
  const double tie = pr.run({{0, big}, {1, 0.5 * q}});
  const bool pos_up = pos == big + q, pos_down = pos == big;
  const bool neg_away = neg == -big - q, neg_zero = neg == -big;
  if (!(pos_up || pos_down) || !(neg_away || neg_zero) || !(tie == big || tie == big + q)) {
    throw std::runtime_error("probe-accumulator: " + B + " + 0.75 ulp gave " + describe(pos) +
                             ", its negation " + describe(neg) + ", " + B + " + 0.5 ulp " +
                             describe(tie) + ": no rounding explains them");
  }
  if (pos_down && neg_zero) {
    r.rounding = "truncate";
  } else if (pos_up && neg_away) {
    r.rounding = tie == big ? "nearest_even" : "nearest_away";
  } else {
    r.rounding = pos_up ? "toward_positive" : "toward_negative";
  }
  r.log.push_back("rounding: " + B + " + 0.75 ulp -> " + describe(pos) + ", -(" + B +
                  " + 0.75 ulp) -> " + describe(neg) + ", " + B + " + 0.5 ulp -> " + describe(tie) +
                  ": " + r.rounding);

  if (r.precision_at_output_limit) {
    r.log.push_back(
        "chunk, group, normalisation: not measurable, the accumulator keeps fp32 precision");
  } else {
    // 3. Chunk: 2^16 at k = 0 and s = 2^(16-p) (lost next to 2^16 in the accumulator, kept by an
    //    fp32 addition) at k = d: s survives from the first k of the next chunk on.
    const double s = 0.5 * q;
    auto kept_after_big = [&](size_t at_big, size_t d) {
      return pr.run({{at_big, big}, {d, s}}) == big + s;
    };
    const size_t first = first_kept(1, K - 1, [&](size_t d) { return kept_after_big(0, d); });
    if (first >= K) {
      r.chunk_k = 0;
      r.log.push_back("chunk: " + pow2(eb - p) + " at every k < " + std::to_string(K) +
                      " is lost next to " + B + " at k=0: no promotion to fp32 within K");
    } else {
      r.chunk_k = first;
      r.log.push_back("chunk: " + pow2(eb - p) + " lost at k=" + std::to_string(first - 1) +
                      ", kept at k=" + std::to_string(first) + " after " + B +
                      " at k=0: partials promoted every " + std::to_string(first) + " k");
      if (2 * first < K) {
        r.chunk_verified =
            !kept_after_big(first, 2 * first - 1) && kept_after_big(first, 2 * first);
        r.log.push_back(std::string("chunk: the next boundary (" + B + " at k=") +
                        std::to_string(first) + ") is at k=" + std::to_string(2 * first) +
                        (r.chunk_verified ? ": verified" : ": NOT where predicted"));
      }
    }
    // 4. Group: +2^16 and -2^16 at k = 0, 1 cancel exactly; s at k = d is lost while it shares
    //    their group (aligned to 2^16) and kept from the next group (or chunk) on.
    const size_t g = first_kept(2, K - 1, [&](size_t d) {
      return pr.run({{0, big}, {1, -big}, {d, s}}) == s;
    });
    r.group_size = g >= K ? 0 : g;
    if (r.group_size == 0) {
      r.log.push_back("group: " + pow2(eb - p) + " after +" + B + " -" + B +
                      " is lost at every k < " + std::to_string(K));
    } else {
      r.log.push_back("group: after +" + B + " -" + B + " at k=0,1, " + pow2(eb - p) +
                      " is lost at k=" + std::to_string(g - 1) +
                      ", kept at k=" + std::to_string(g) + ": " + std::to_string(g) +
                      " products added at once" + (g == 2 ? " (or 1: not distinguishable)" : "") +
                      (r.chunk_k != 0 && g == r.chunk_k ? " (one group per chunk)" : ""));
    }
    // 5. Normalisation: 2^16 + 2^16 + q in one group is 2^17 + q exactly; a sum renormalised to
    //    p bits of 2^17 loses q (a unit of 2q: truncated, or a tie to the even 2^17). The three
    //    products go into the last group before a promotion: a later group step re-aligns the
    //    partial to its own p bits, so only there can kept carry bits reach the output.
    const size_t end = r.chunk_k != 0 ? r.chunk_k : K;
    const size_t start = r.group_size == 0 ? 0 : (end - 1) / r.group_size * r.group_size;
    if (r.group_size >= 3 && end - start >= 3) {
      const double c = pr.run({{start, big}, {start + 1, big}, {start + 2, q}});
      if (c == 2 * big + q) {
        r.normalize_group_sum = false;
      } else if (c == 2 * big) {
        r.normalize_group_sum = true;
      } else {
        throw std::runtime_error("probe-accumulator: " + B + " + " + B + " + " + describe(q) +
                                 " gave " + describe(c) + ": neither kept nor renormalised");
      }
      r.log.push_back("normalisation: " + B + " + " + B + " + " + pow2(eb + 1 - p) +
                      " at k=" + std::to_string(start) + ".." + std::to_string(start + 2) +
                      " (the last group before a promotion) -> " + describe(c) + ": " +
                      (*r.normalize_group_sum
                           ? "the group sum is renormalised to " + std::to_string(p) + " bits"
                           : "the carry bits are kept"));
    } else {
      r.log.push_back(
          "normalisation: not measurable (groups of fewer than 3 products, or a last group of "
          "fewer than 3 k before a promotion)");
    }
  }

  // The matching model, when one kind describes what was measured.
  if (r.precision_at_output_limit) {
    r.model = r.rounding == "nearest_even" ? "fp32_rn" : "";
  } else if (r.rounding == "truncate" || r.rounding == "nearest_even") {
    const size_t g = r.group_size == 0 ? K : r.group_size;
    const std::string spec =
        "sm90_fp8_mma:chunk_k=" + std::to_string(r.chunk_k) + ",group_size=" + std::to_string(g) +
        ",precision_bits=" + std::to_string(p) + ",rounding=" + r.rounding +
        ",normalize_group_sum=" + (r.normalize_group_sum.value_or(false) ? "1" : "0");
    try {
      parse_accumulator_spec(spec);
      r.model = spec;
    } catch (const std::invalid_argument& e) {
      r.log.push_back(std::string("model: none (") + e.what() + ")");
    }
  }
  r.calls = pr.calls();
  return r;
}

std::string format_probe_result(const ProbeResult& r) {
  std::string out;
  auto line = [&](const std::string& key, const std::string& value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "  %-21s", key.c_str());
    out += buf + value + "\n";
  };
  line("precision_bits", r.precision_at_output_limit ? ">= 24 (the fp32 output's precision)"
                                                     : std::to_string(r.precision_bits));
  line("rounding", r.rounding);
  if (r.precision_at_output_limit) {
    line("chunk_k", "n/a (fp32 precision: nothing to promote)");
    line("group_size", "n/a");
    line("normalize_group_sum", "n/a");
  } else {
    line("chunk_k", r.chunk_k == 0 ? "none within K (no promotion seen)"
                                   : std::to_string(r.chunk_k) +
                                         (r.chunk_verified ? " (verified at the next chunk)" : ""));
    line("group_size", r.group_size == 0 ? "not found within K" : std::to_string(r.group_size));
    line("normalize_group_sum", !r.normalize_group_sum   ? "not measurable"
                                : *r.normalize_group_sum ? "1 (renormalised)"
                                                         : "0 (carry bits kept)");
  }
  line("model", r.model.empty() ? "none matches" : r.model);
  out += "evidence (" + std::to_string(r.calls) + " GEMM calls):\n";
  for (const std::string& l : r.log) {
    out += "  " + l + "\n";
  }
  return out;
}

Fp8Gemm simulated_fp8_gemm(const AccumulatorModel& model) {
  validate_accumulator(model);
  return [model](const Fp8GemmCall& call) {
    const bool block = call.scaling == ProbeScaling::kBlock;
    const BlockSizes blocks = block ? kDeepSeekBlocks : BlockSizes{call.m, call.k, call.n, call.k};
    GemmProblem p = make_gemm_problem(call.m, call.n, call.k, blocks, true);
    if (call.a.size() != p.a.size() || call.b.size() != p.b.size() ||
        call.a_scale.size() != p.a_scale.size() || call.b_scale.size() != p.b_scale.size()) {
      throw std::invalid_argument("simulated FP8 GEMM: the call's arrays do not match its shape");
    }
    for (size_t i = 0; i < p.a.size(); ++i) p.a[i] = decode(call.format, call.a[i]);
    for (size_t i = 0; i < p.b.size(); ++i) p.b[i] = decode(call.format, call.b[i]);
    p.a_scale = call.a_scale;
    p.b_scale = call.b_scale;
    return simulate_gemm(p, model, OutputFormat::kFp32, 1).fp32;
  };
}

}  // namespace mxgate
