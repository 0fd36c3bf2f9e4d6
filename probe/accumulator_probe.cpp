#include "probe/accumulator_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/machinery_fault.h"
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
    Fp8GemmCall call = zero_call(o_);
    for (const Term& t : terms) {
      const auto [a, b] = factor(t.value);
      call.a[t.k] = a;
      call.b[t.k] = b;
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
  // Test plant (common/machinery_fault.h): the search stops one step short of its answer.
  if (machinery_fault_is(MachineryFault::kProbeSearchShort) && lo > 0) return lo - 1;
  return lo;
}

// The exponent of the smallest power-of-two product: the format's smallest subnormal squared.
int tiny_exponent(Format f) { return 2 * std::ilogb(decode(f, 1)); }

// C[0][0] that `params` predicts for `terms` over K (unit scales: each promoted partial is added
// in fp32, as simulate_gemm does with scales 1).
float predict(const std::vector<Term>& terms, const AlignedChunkParams& c, size_t k) {
  std::vector<double> x(k, 0.0);
  for (const Term& t : terms) x[t.k] = t.value;
  const size_t len = c.chunk_k == 0 ? k : c.chunk_k;
  float acc = 0.0f;
  for (size_t c0 = 0; c0 < k; c0 += len) {
    const size_t c1 = std::min(k, c0 + len);
    float s = 0.0f;
    for (size_t g0 = c0; g0 < c1; g0 += c.group_size) {
      s = aligned_group_sum(s, &x[g0], std::min(c1, g0 + c.group_size) - g0, c);
    }
    acc = acc + s;
  }
  return acc;
}

// The experiments of §7 step 6: crafted calls whose results tell the structured parameters
// apart, given the measured precision p, group g, sub-sum stride and chunk.
std::vector<std::vector<Term>> battery(int eb, int et, int p, size_t g, size_t stride,
                                       size_t chunk_k, size_t k) {
  const double big = std::ldexp(1.0, eb), q = std::ldexp(1.0, eb + 1 - p);
  const double u = std::ldexp(1.0, eb - 23);  // the fp32 unit next to 2^eb
  const int jmax = eb - et;
  std::vector<std::vector<Term>> out;
  // Halves and their rounding: +B, -B at k = 0, 2 (even) cancel; what is at odd k is fused on
  // its own grid first (0.5q + 0.5q = q whole), then aligned next to B (+-0.75q: truncated,
  // rounded down or to nearest).
  if (stride == 1 && g >= 4) {
    out.push_back({{0, big}, {2, -big}, {1, 0.5 * q}, {3, 0.5 * q}});
    out.push_back({{0, big}, {2, -big}, {1, 0.75 * q}});
    out.push_back({{0, big}, {2, -big}, {1, -0.75 * q}});
  }
  // Renormalisation: B + B + q in one group (the last before a promotion, and the first).
  if (g >= 3 * stride) {
    const size_t end = chunk_k != 0 ? std::min(chunk_k, k) : k;
    const size_t start = (end - 1) / g * g;
    if (end - start >= 3 * stride) {
      out.push_back({{start, big}, {start + stride, big}, {start + 2 * stride, q}});
    }
    if (start != 0) out.push_back({{0, big}, {stride, big}, {2 * stride, q}});
  }
  // The fp32 store: B and a fraction of the fp32 unit next to it, in one group.
  if (g >= 2 * stride) {
    for (double f : {0.5, 0.75, 1.5, -0.5, -0.75, -1.5}) out.push_back({{0, big}, {stride, f * u}});
  }
  // Late C: the partial B (group 0) and products of the next group, in the same chunk.
  if (2 * g <= k && (chunk_k == 0 || 2 * g <= chunk_k)) {
    for (double f : {1.5, -1.5, 0.5, -0.5}) out.push_back({{0, big}, {g, f * q}});
    if (g >= 2 * stride) {
      out.push_back({{0, big}, {g, -0.75 * q}, {g + stride, -0.75 * q}});
      out.push_back({{0, big}, {g, 0.75 * q}, {g + stride, 0.75 * q}});
    }
    // The bits a late C keeps: a lone -2^(eb-j) after B (seen through a directed store), and
    // 2^(eb-24) + 2^(eb-j) after B (a tie of the fp32 store broken by the small product).
    for (int j = p; j <= jmax; ++j) {
      out.push_back({{0, big}, {g, -std::ldexp(1.0, eb - j)}});
      if (g >= 2 * stride && j > 24 && eb - j >= et) {
        out.push_back({{0, big}, {g, 0.5 * u}, {g + stride, std::ldexp(1.0, eb - j)}});
      }
    }
  }
  return out;
}

}  // namespace

Fp8GemmCall zero_call(const ProbeOptions& o) {
  Fp8GemmCall call;
  call.m = o.m;
  call.n = o.n;
  call.k = o.k;
  call.format = o.format;
  call.scaling = o.scaling;
  const uint8_t zero = static_cast<uint8_t>(encode(o.format, 0.0f, EncodePolicy{}));
  call.a.assign(o.m * o.k, zero);
  call.b.assign(o.n * o.k, zero);
  const size_t kb = (o.k + 127) / 128;
  const bool per_tensor = o.scaling == ProbeScaling::kPerTensor;
  call.a_scale.assign(per_tensor ? 1 : o.m * kb, 1.0f);
  call.b_scale.assign(per_tensor ? 1 : (o.n + 127) / 128 * kb, 1.0f);
  return call;
}

ProbeResult probe_accumulator(const Fp8Gemm& gemm, const ProbeOptions& options) {
  validate(options);
  Prober pr(gemm, options);
  ProbeResult r;
  const int eb = big_exponent(options.format);
  const int et = tiny_exponent(options.format);
  const int jmax = eb - et;        // 2^(eb-j) is a product for j <= jmax
  const std::string B = pow2(eb);  // the large product, for the evidence
  const double big = std::ldexp(1.0, eb), tiny = std::ldexp(1.0, et);
  const size_t K = options.k;

  // 0. Sanity: one product comes back exactly.
  if (const double c = pr.run({{0, big}}); c != big) {
    throw std::runtime_error("probe-accumulator: a single product " + B + " at k=0 came back as " +
                             describe(c) + ": the call's layout or scales are not understood");
  }

  // 1. Exact sub-sums: B at k = 0, the smallest product at k = 2 and -B at k = d. Aligned
  //    together the small product is lost; summed exactly first (one run) it survives the
  //    cancellation. The run ends at the first even d where it is lost.
  size_t stride = 1;
  if (pr.run({{0, big}, {2, tiny}, {4, -big}}) == tiny) {
    const size_t half = first_kept(3, K / 2 - 1, [&](size_t i) {
      return pr.run({{0, big}, {2, tiny}, {2 * i, -big}}) != tiny;
    });
    if (half > K / 2 - 1) {  // exact over all of K: nothing this probe models
      r.sub_sum = K;
      r.log.push_back("sub-sum: " + B + " + " + pow2(et) + " - " + B + " kept at every k < " +
                      std::to_string(K) + ": exact over all of K; model: none");
      r.calls = pr.calls();
      return r;
    }
    stride = 2 * half;
    r.sub_sum = stride;
    r.log.push_back("sub-sum: " + B + " (k=0) + " + pow2(et) + " (k=2) - " + B + " kept up to k=" +
                    std::to_string(stride - 2) + ", lost at k=" + std::to_string(stride) + ": " +
                    std::to_string(stride) + " products summed exactly before the alignment");
  }

  // 2. Group: +B and -B at k = 0 and `stride` cancel exactly; the smallest product at k = d is
  //    lost while it shares their group (aligned to B) and kept from the next group on.
  const size_t g = first_kept(stride + 1, K - 1, [&](size_t d) {
    return pr.run({{0, big}, {stride, -big}, {d, tiny}}) == tiny;
  });
  r.group_size = g >= K ? 0 : g;
  if (r.group_size == 0) {
    r.log.push_back("group: " + pow2(et) + " after +" + B + " -" + B + " is lost at every k < " +
                    std::to_string(K));
  } else {
    r.log.push_back("group: after +" + B + " -" + B + " at k=0," + std::to_string(stride) + ", " +
                    pow2(et) + " is lost at k=" + std::to_string(g - 1) +
                    ", kept at k=" + std::to_string(g) + ": " + std::to_string(g) +
                    " products added at once" + (g == 2 ? " (or 1: not distinguishable)" : ""));
  }
  const size_t g_eff = r.group_size == 0 ? K : r.group_size;
  const bool cancel = g_eff >= 3 * stride;  // +B, -B and a third term fit in one group

  // 3. Precision. With room in a group: +B, -B and 2^(eb-j) at k = 0, stride, 2 stride; the
  //    small term is kept for j <= p - 1 (a whole unit 2^(eb+1-p) of the aligned grid) and lost
  //    from j = p on (half a unit: truncated, or a tie to the even 0), whatever the output holds.
  //    Else B + 2^(eb-j) at k = 0, 1, which the fp32 output itself limits to j <= 23.
  if (cancel) {
    auto kept = [&](int j) {
      const double t = std::ldexp(1.0, eb - j);
      return pr.run({{0, big}, {stride, -big}, {2 * stride, t}}) == t;
    };
    const size_t lost = first_kept(1, static_cast<size_t>(jmax),
                                   [&](size_t j) { return !kept(static_cast<int>(j)); });
    r.precision_bits = static_cast<int>(lost);
    r.precision_beyond_format = lost > static_cast<size_t>(jmax);
    r.log.push_back(
        "precision: +" + B + " -" + B + " + 2^(" + std::to_string(eb) + "-j) in one group: " +
        (r.precision_beyond_format
             ? "kept down to the format's smallest product " + pow2(et) + ": at least " +
                   std::to_string(r.precision_bits) + " bits"
             : "kept for j=" + std::to_string(lost - 1) + ", lost for j=" + std::to_string(lost) +
                   ": " + std::to_string(r.precision_bits) + " bits relative to the largest term"));
  } else {
    int kept_j = 0;
    for (int j = 1; j <= 23; ++j) {
      const double small = std::ldexp(1.0, eb - j);
      if (pr.run({{0, big}, {1, small}}) != big + small) break;
      kept_j = j;
    }
    r.precision_bits = kept_j + 1;
    r.precision_at_output_limit = kept_j == 23;
    r.log.push_back("precision: " + B + " + " + pow2(eb - kept_j) + " kept" +
                    (r.precision_at_output_limit
                         ? " (the fp32 output's last bit: at least 24 bits)"
                         : ", " + B + " + " + pow2(eb - kept_j - 1) +
                               " lost: " + std::to_string(r.precision_bits) +
                               " bits relative to the largest term"));
  }
  const int p = r.precision_bits;
  const double q = std::ldexp(1.0, eb + 1 - p);  // the unit next to B

  // 4. Rounding of the bits shifted out: +-0.75 q and the tie 0.5 q next to B (after a
  //    cancelling pair when a group holds three terms: the result is then small and exact).
  double pos = 0, neg = 0, tie = 0, base = 0;  // base: B, or 0 after +B -B
  if (cancel) {
    pos = pr.run({{0, big}, {stride, -big}, {2 * stride, 0.75 * q}});
    neg = pr.run({{0, big}, {stride, -big}, {2 * stride, -0.75 * q}});
    tie = pr.run({{0, big}, {stride, -big}, {2 * stride, 0.5 * q}});
  } else {
    base = big;
    pos = pr.run({{0, big}, {1, 0.75 * q}}) - big;
    neg = pr.run({{0, -big}, {1, -0.75 * q}}) + big;
    tie = pr.run({{0, big}, {1, 0.5 * q}}) - big;
  }
  const bool pos_up = pos == q, pos_down = pos == 0;
  const bool neg_away = neg == -q, neg_zero = neg == 0;
  if (!(pos_up || pos_down) || !(neg_away || neg_zero) || !(tie == 0 || tie == q)) {
    throw std::runtime_error("probe-accumulator: " + B + " + 0.75 ulp gave " +
                             describe(base + pos) + ", its negation " + describe(neg - base) +
                             ", " + B + " + 0.5 ulp " + describe(base + tie) +
                             (cancel ? " (after +B -B)" : "") + ": no rounding explains them");
  }
  if (pos_down && neg_zero) {
    r.rounding = "truncate";
  } else if (pos_up && neg_away) {
    r.rounding = tie == 0 ? "nearest_even" : "nearest_away";
  } else {
    r.rounding = pos_up ? "toward_positive" : "round_down";
  }
  r.log.push_back("rounding: " + std::string(cancel ? "after +B -B, " : "next to B, ") +
                  "+0.75 ulp -> " + describe(pos) + ", -0.75 ulp -> " + describe(neg) +
                  ", +0.5 ulp -> " + describe(tie) + " (relative to " + B + "): " + r.rounding);

  if (r.precision_at_output_limit) {
    r.group_size = 0;
    r.sub_sum = 1;
    r.log.push_back(
        "chunk, group, structure: not measurable, the accumulator keeps fp32 precision");
    r.model = r.rounding == "nearest_even" ? "fp32_rn" : "";
    r.calls = pr.calls();
    return r;
  }

  // 5. Chunk: B at k = 0 and s = 2^(eb-p) (lost next to B in the accumulator, kept by an fp32
  //    addition) at k = d: s survives from the first k of the next chunk on. Needs p <= 23 (B + s
  //    an fp32 value); a wider accumulator gains nothing from a promotion.
  if (p <= 23) {
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
  } else {
    r.log.push_back("chunk: not observable (" + std::to_string(p) +
                    " bits: an fp32 promotion keeps no more); reported as none");
  }

  const bool modelled =
      r.rounding == "truncate" || r.rounding == "nearest_even" || r.rounding == "round_down";
  if (!modelled || r.precision_beyond_format || p > 40) {
    r.log.push_back("structure: not run (" +
                    std::string(!modelled ? "a rounding no model has" : "precision beyond reach") +
                    "); model: none");
    r.calls = pr.calls();
    return r;
  }

  // 6. Structure: the battery's calls, and every candidate model (halves, late C and its bits,
  //    their rounding, the store, renormalisation) whose prediction matches them all.
  AlignedChunkParams start;
  start.chunk_k = r.chunk_k;
  start.group_size = g_eff;
  start.precision_bits = p;
  start.rounding = parse_accumulator_spec("sm90_fp8_mma:rounding=" + r.rounding).chunks.rounding;
  start.sub_sum = stride;
  const std::vector<std::vector<Term>> calls = battery(eb, et, p, g_eff, stride, r.chunk_k, K);
  std::vector<float> seen;
  for (const std::vector<Term>& t : calls) seen.push_back(static_cast<float>(pr.run(t)));
  std::vector<AlignedChunkParams> matches;
  const AlignRounding roundings[] = {AlignRounding::kTruncate, AlignRounding::kRoundDown,
                                     AlignRounding::kNearestEven};
  const StoreRounding stores[] = {StoreRounding::kExact, StoreRounding::kNearestEven,
                                  StoreRounding::kTruncate};
  std::vector<int> lates = {0};
  for (int l = p; l <= std::min(48, jmax + 1); ++l) lates.push_back(l);
  // Preference among equally consistent candidates: the simplest adder first.
  for (int halves = 0; halves <= 1; ++halves) {
    for (int late : lates) {
      for (AlignRounding lr : roundings) {
        for (StoreRounding st : stores) {
          for (int norm = 0; norm <= 1; ++norm) {
            AlignedChunkParams c = start;
            c.halves = halves != 0;
            c.late_c_bits = late;
            c.late_rounding = lr;
            c.store = st;
            c.normalize_group_sum = norm != 0;
            AccumulatorModel m;
            m.name = "candidate";
            m.kind = AccumulatorKind::kAlignedChunks;
            m.chunks = c;
            try {
              validate_accumulator(m);
            } catch (const std::invalid_argument&) {
              continue;
            }
            bool ok = true;
            for (size_t i = 0; i < calls.size() && ok; ++i) {
              const float want = predict(calls[i], c, K);
              ok = std::memcmp(&want, &seen[i], sizeof want) == 0;
            }
            if (ok) matches.push_back(c);
          }
        }
      }
    }
  }
  r.candidates = static_cast<int>(matches.size());
  if (matches.empty()) {
    r.log.push_back("structure: " + std::to_string(calls.size()) +
                    " crafted calls, no candidate model predicts them all; model: none");
    r.calls = pr.calls();
    return r;
  }
  const AlignedChunkParams& c = matches.front();
  bool norm_decided = cancel, halves_decided = true;
  for (const AlignedChunkParams& m : matches) {
    if (m.normalize_group_sum != c.normalize_group_sum) norm_decided = false;
    if (m.halves != c.halves) halves_decided = false;
  }
  if (norm_decided) r.normalize_group_sum = c.normalize_group_sum;
  r.halves = c.halves;
  r.late_c_bits = c.late_c_bits;
  r.late_rounding = std::string(to_string(c.late_rounding));
  r.store = std::string(to_string(c.store));
  r.log.push_back("structure: " + std::to_string(calls.size()) + " crafted calls leave " +
                  std::to_string(matches.size()) + " candidate(s); the simplest: halves=" +
                  (c.halves ? "1" : "0") + (halves_decided ? "" : " (undecided)") +
                  " late_c_bits=" + std::to_string(c.late_c_bits) +
                  " late_rounding=" + r.late_rounding + " store=" + r.store +
                  " normalize_group_sum=" + (c.normalize_group_sum ? "1" : "0") +
                  (norm_decided ? "" : " (undecided)"));

  // The model: a registry row with these parameters (partial_roundings is not observable with
  // unit scales), else a new spec with every measured parameter.
  for (const AccumulatorModel& m : all_accumulators()) {
    if (m.kind != AccumulatorKind::kAlignedChunks) continue;
    const AlignedChunkParams& x = m.chunks;
    if (x.chunk_k == c.chunk_k && x.group_size == c.group_size &&
        x.precision_bits == c.precision_bits && x.rounding == c.rounding &&
        x.normalize_group_sum == c.normalize_group_sum && x.sub_sum == c.sub_sum &&
        x.halves == c.halves && x.late_c_bits == c.late_c_bits &&
        x.late_rounding == c.late_rounding && x.store == c.store) {
      r.model = m.name;
      break;
    }
  }
  if (r.model.empty()) {
    const std::string spec =
        "sm90_fp8_mma:chunk_k=" + std::to_string(c.chunk_k) +
        ",group_size=" + std::to_string(c.group_size) +
        ",precision_bits=" + std::to_string(c.precision_bits) + ",rounding=" + r.rounding +
        ",normalize_group_sum=" + (c.normalize_group_sum ? "1" : "0") +
        ",sub_sum=" + std::to_string(c.sub_sum) + ",halves=" + (c.halves ? "1" : "0") +
        ",late_c_bits=" + std::to_string(c.late_c_bits) + ",late_rounding=" + r.late_rounding +
        ",store=" + r.store;
    try {
      parse_accumulator_spec(spec);
      r.model = spec;
      r.new_model = true;
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
                         : r.precision_beyond_format ? ">= " + std::to_string(r.precision_bits) +
                                                           " (the format's smallest product)"
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
    line("sub_sum", r.sub_sum == 1 ? "1 (none)" : std::to_string(r.sub_sum) + " (exact runs)");
    line("normalize_group_sum", !r.normalize_group_sum   ? "not measurable"
                                : *r.normalize_group_sum ? "1 (renormalised)"
                                                         : "0 (carry bits kept)");
    if (r.halves) {
      line("halves", *r.halves ? "1 (odd / even k fused apart)" : "0 (one flat group)");
      line("late_c_bits", *r.late_c_bits == 0 ? "0 (early C: aligned with the products)"
                                              : std::to_string(*r.late_c_bits) + " (late C)");
      line("late_rounding", r.late_rounding);
      line("store", r.store);
    }
  }
  if (r.model.empty()) {
    line("model", "none matches");
  } else if (r.new_model) {
    line("model", r.model);
    line("model_status", "new: no registry model has these measured parameters");
  } else {
    line("model", r.model);
    const AccumulatorModel* m = find_accumulator(r.model);
    line("model_status", "registry" + (m ? ": " + m->status : std::string()));
  }
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
