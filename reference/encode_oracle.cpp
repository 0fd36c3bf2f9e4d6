#include "reference/encode_oracle.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "common/blocks.h"

namespace mxgate {
namespace {

// The NaN a format writes when it has a choice (a spec fact, not derivable from values):
// E4M3FN S.1111.111, E5M2 S.11111.11 (PyTorch, CUDA and Triton all emit 0x7F, docs/conventions.md
// §3.1, §3.2, §3.3), BF16/FP16 the IEEE quiet NaN, FNUZ its single NaN 0x80 (docs/formats.md §1.1).
// E2M1 / E2M3 / E3M2 have none (docs/fp4.md §1): asking for one is an undefined encoding.
uint32_t oracle_nan(Format f, bool negative) {
  switch (f) {
    case Format::kE4M3FN:
    case Format::kE5M2:
      return negative ? 0xFFu : 0x7Fu;
    case Format::kE4M3FNUZ:
    case Format::kE5M2FNUZ:
    case Format::kE4M3B11FNUZ:
      return 0x80u;
    case Format::kE3M4:  // IEEE quiet NaN: the first fraction bit set (ml_dtypes quiet_NaN())
      return negative ? 0xF8u : 0x78u;
    case Format::kE4M3IEEE:
      return negative ? 0xFCu : 0x7Cu;
    case Format::kBF16:
      return negative ? 0xFFC0u : 0x7FC0u;
    case Format::kFP16:
      return negative ? 0xFE00u : 0x7E00u;
    case Format::kE2M1:
    case Format::kE2M3:
    case Format::kE3M2:
    case Format::kMXINT8:
      throw UndefinedEncoding("EncodeOracle: " + std::string(info(f).name) + " has no NaN code");
    default:
      throw std::invalid_argument("EncodeOracle: unsupported format");
  }
}

}  // namespace

EncodeOracle::EncodeOracle(Format f, const EncodePolicy& policy) : format_(f), policy_(policy) {
  const FormatInfo& fi = info(f);
  if (fi.bits > 16 || f == Format::kE8M0) {
    throw std::invalid_argument(
        "EncodeOracle covers the 8- and 16-bit sign-magnitude formats and MXINT8");
  }
  const uint32_t sign = 1u << (fi.bits - 1);
  for (uint32_t code = 0; code < sign; ++code) {
    const float v = decode(f, code);
    if (std::isinf(v)) inf_ = code;
    if (std::isfinite(v)) {
      values_.push_back(v);
      codes_.push_back(code);
    }
  }
  // Codes are monotone in value for sign-magnitude formats; sort anyway, the oracle must not
  // rely on the bit layout.
  std::vector<size_t> order(values_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return values_[a] < values_[b]; });
  std::vector<double> v;
  std::vector<uint32_t> c;
  for (size_t i : order) {
    v.push_back(values_[i]);
    c.push_back(codes_[i]);
  }
  const double max = v.back();
  const double spacing = max - v[v.size() - 2];
  v.push_back(max + spacing);  // virtual "beyond max" neighbour
  c.push_back(0);
  values_ = std::move(v);
  codes_ = std::move(c);
  if (fi.specials != SpecialStyle::kInt) return;
  // Two's complement: every code with a negative value, by |value|; under IntRange::kSymmetric
  // only those no larger in magnitude than the positive max (which drops -2, code 0x80).
  twos_complement_ = true;
  std::vector<std::pair<double, uint32_t>> neg = {{0.0, 0u}};
  for (uint32_t code = 0; code < (1u << fi.bits); ++code) {
    const double m = -static_cast<double>(decode(f, code));
    if (m <= 0.0) continue;
    if (policy.int_range == IntRange::kSymmetric && m > max) continue;
    neg.emplace_back(m, code);
  }
  std::sort(neg.begin(), neg.end());
  for (const auto& [m, code] : neg) {
    neg_values_.push_back(m);
    neg_codes_.push_back(code);
  }
  const double neg_max = neg_values_.back();
  neg_values_.push_back(neg_max + (neg_max - neg_values_[neg_values_.size() - 2]));
  neg_codes_.push_back(0);
}

namespace {

[[noreturn]] void oracle_undefined(Format f, std::string_view what) {
  throw UndefinedEncoding("EncodeOracle: " + std::string(info(f).name) + " cannot encode " +
                          std::string(what) + " under this policy");
}

// torchao's NaN code restated on values: its normal branch treats the NaN pattern as the number
// 2^128 * (1 + mant / 2^23), so the code is the rebiased exponent field (128 + bias) followed by
// the mantissa rounded half-to-even to m bits (a carry runs into the exponent), modulo 256.
uint32_t oracle_torchao_nan(Format f, uint32_t xb) {
  const FormatInfo& fi = info(f);
  const double scaled = std::ldexp(static_cast<double>(xb & 0x7FFFFFu), fi.man_bits - 23);
  const double fl = std::floor(scaled);
  const double frac = scaled - fl;
  const bool odd = std::fmod(fl, 2.0) != 0.0;
  const double q = (frac > 0.5 || (frac == 0.5 && odd)) ? fl + 1 : fl;
  const double field = std::ldexp(static_cast<double>(128 + fi.bias), fi.man_bits) + q;
  const uint32_t code = static_cast<uint32_t>(std::fmod(field, 256.0));
  return code | ((xb >> 31) ? (1u << (fi.bits - 1)) : 0u);
}

}  // namespace

uint32_t EncodeOracle::special(float x) const {
  const bool negative = std::signbit(x);
  const uint32_t sign = 1u << (info(format_).bits - 1);
  const bool fnuz = info(format_).specials == SpecialStyle::kFnuz;
  const bool none = has_no_specials(format_);
  const uint32_t max = codes_[codes_.size() - 2];
  if (twos_complement_) {  // MXINT8: no -0, no sign bit; the negative max from its own table
    const uint32_t neg_max = neg_codes_[neg_codes_.size() - 2];
    if (std::isnan(x)) {
      switch (policy_.nan) {
        case NanPolicy::kToPosZero:
          return 0;
        case NanPolicy::kToNegMax:
          return neg_max;
        case NanPolicy::kToMaxKeepSign:
          return negative ? neg_max : max;
        default:
          oracle_undefined(format_, "NaN");
      }
    }
    if (std::isinf(x)) {
      if (policy_.overflow != Overflow::kSaturate) oracle_undefined(format_, "Inf");
      return negative ? neg_max : max;
    }
    return 0u;  // +-0.0
  }
  if (std::isnan(x)) {
    switch (policy_.nan) {
      case NanPolicy::kKeepSign:
        if (none) oracle_undefined(format_, "NaN");
        return oracle_nan(format_, negative);
      case NanPolicy::kCanonical:
        if (none) oracle_undefined(format_, "NaN");
        return oracle_nan(format_, false);
      case NanPolicy::kToNegMax:
        return max | sign;
      case NanPolicy::kToPosZero:
        return 0;
      case NanPolicy::kToMaxKeepSign:
        return max | (negative ? sign : 0u);
      case NanPolicy::kToZeroSignFlipped:
        return (negative || fnuz) ? 0u : sign;
      case NanPolicy::kTorchaoNormalPath:
        if (!none) oracle_undefined(format_, "NaN with nan_torchao_bits");
        return oracle_torchao_nan(format_, bits_of(x));
      case NanPolicy::kQuietKeepSign:
        // E5M2 (IEEE style): exponent 11111, mantissa 10; the formats with one NaN code keep it.
        if (none) oracle_undefined(format_, "NaN");
        if (format_ == Format::kE5M2) return negative ? 0xFEu : 0x7Eu;
        return oracle_nan(format_, negative);
      case NanPolicy::kUndefined:
        oracle_undefined(format_, "NaN");
    }
  }
  if (std::isinf(x)) {
    const uint32_t signed_max = max | (negative ? sign : 0u);
    switch (policy_.overflow) {
      case Overflow::kSaturate:
        return signed_max;
      case Overflow::kToInf:
        if (none) oracle_undefined(format_, "Inf");
        return inf_ ? (*inf_ | (negative ? sign : 0u)) : oracle_nan(format_, negative);
      case Overflow::kToNaN:
      case Overflow::kSaturateInfToNaN:
        if (none) oracle_undefined(format_, "Inf");
        return oracle_nan(format_, negative);
    }
  }
  if (negative && policy_.neg_zero == NegZeroInput::kToPositive) return 0u;  // exactly -0.0
  return (negative && !fnuz) ? sign : 0u;                                    // zero
}

uint32_t EncodeOracle::round_magnitude(double ax, size_t hi, bool negative) const {
  // Two's complement negatives: their own table, whose codes are whole codes (no sign bit to add).
  const bool own = negative && twos_complement_;
  const std::vector<double>& vals = own ? neg_values_ : values_;
  const std::vector<uint32_t>& codes = own ? neg_codes_ : codes_;
  const uint32_t sign_bit = negative && !twos_complement_ ? (1u << (info(format_).bits - 1)) : 0u;
  const bool fnuz = info(format_).specials == SpecialStyle::kFnuz || twos_complement_;
  const size_t virtual_index = vals.size() - 1;
  size_t pick;
  if (hi > virtual_index) {
    pick = policy_.rounding == Rounding::kTowardZero ? virtual_index - 1 : virtual_index;
  } else if (vals[hi] == ax) {
    pick = hi;
  } else {
    const size_t lo = hi - 1;
    const double twice = 2.0 * ax;            // exact
    const double mid2 = vals[lo] + vals[hi];  // exact: neighbours share a scale
    if (policy_.rounding == Rounding::kTowardZero || twice < mid2) {
      pick = lo;
    } else if (twice > mid2 || policy_.rounding == Rounding::kNearestAway) {
      pick = hi;
    } else {
      // Tie to the neighbour whose value is an even multiple of their spacing.
      const double d = vals[hi] - vals[lo];
      pick = std::fmod(vals[lo] / d, 2.0) == 0.0 ? lo : hi;
    }
    if (pick == virtual_index && policy_.rounding == Rounding::kTowardZero) pick = lo;
  }
  if (pick == virtual_index) {  // finite overflow
    const uint32_t max = codes[virtual_index - 1] | sign_bit;
    switch (policy_.overflow) {
      case Overflow::kSaturate:
      case Overflow::kSaturateInfToNaN:
        return max;
      case Overflow::kToInf:
        if (has_no_specials(format_)) oracle_undefined(format_, "overflow");
        return inf_ ? (*inf_ | sign_bit) : oracle_nan(format_, negative);
      case Overflow::kToNaN:
        if (has_no_specials(format_)) oracle_undefined(format_, "overflow");
        return oracle_nan(format_, negative);
    }
  }
  if (pick == 0) return (negative && !fnuz) ? sign_bit : 0u;
  return codes[pick] | sign_bit;
}

uint32_t EncodeOracle::expected(float x) const {
  if (!std::isfinite(x) || x == 0.0f) return special(x);
  const double ax = std::fabs(static_cast<double>(x));
  const std::vector<double>& v = std::signbit(x) && twos_complement_ ? neg_values_ : values_;
  const size_t hi = static_cast<size_t>(std::lower_bound(v.begin(), v.end(), ax) - v.begin());
  return round_magnitude(ax, hi, std::signbit(x));
}

uint8_t e8m0_oracle(float x, E8m0Encode rule) {
  const uint32_t xb = bits_of(x);
  if (rule == E8m0Encode::kAiterTritonBump && std::isnan(x)) {
    // The rule is defined on bits: a NaN payload >= 0x7FE00000 wraps to -0.0 (log2 -> -inf).
    return (xb & 0x7FFFFFFFu) >= 0x7FE00000u ? 0 : 254;
  }
  const double ax = std::fabs(static_cast<double>(x));
  const bool nan = std::isnan(x);
  const bool inf = std::isinf(x);
  // floor(log2 ax) and ceil(log2 ax) from the exact frexp decomposition ax = m * 2^E.
  int e = 0;
  const double m = (nan || inf || ax == 0.0) ? 0.0 : std::frexp(ax, &e);
  const int fl = e - 1;
  const int ce = m == 0.5 ? e - 1 : e;
  auto clamp_byte = [](int v, int lo, int hi) {
    return static_cast<uint8_t>(std::clamp(v, lo, hi));
  };
  const double min_normal = std::ldexp(1.0, -126);
  switch (rule) {
    case E8m0Encode::kFloor:
    case E8m0Encode::kFloorSat:
      if (nan) return 0xFF;
      if (inf) return rule == E8m0Encode::kFloor ? 0xFF : 0xFE;
      if (ax < min_normal) return 0;  // below 2^-126 the largest power of two <= ax is 2^-127
      return clamp_byte(fl + 127, 0, 254);
    case E8m0Encode::kCeilSat:
    case E8m0Encode::kCeilNoSat: {
      const uint8_t over = rule == E8m0Encode::kCeilSat ? 0xFE : 0xFF;
      if (nan) return 0xFF;
      if (inf) return over;
      if (ax == 0.0) return 0;
      if (ce > 127) return over;
      return clamp_byte(ce + 127, 0, 254);
    }
    case E8m0Encode::kNearestTorch:
    case E8m0Encode::kNearestMlDtypes: {
      if (rule == E8m0Encode::kNearestMlDtypes && (std::signbit(x) || ax == 0.0)) return 0xFF;
      if (nan || inf) return 0xFF;
      // Below 2^-126 PyTorch rounds up only strictly above 2^-127 (its LSB is 0 there).
      if (ax < min_normal) return ax > std::ldexp(1.0, -127) ? 1 : 0;
      // Normals: up iff ax >= 1.5 * 2^fl (ties up).
      const int pick = ax >= 1.5 * std::ldexp(1.0, fl) ? fl + 1 : fl;
      return pick > 127 ? 0xFF : clamp_byte(pick + 127, 0, 254);
    }
    case E8m0Encode::kDeepGemmClamp:
      if (nan || inf) return 254;
      if (ax < min_normal) return 1;
      return clamp_byte(ce + 127, 1, 254);
    case E8m0Encode::kAiterCeil:
      if (nan || inf) return 0xFF;
      if (ax == 0.0) return 0;
      if (ax < min_normal) return 1;
      return ce > 127 ? 0xFF : clamp_byte(ce + 127, 0, 254);
    case E8m0Encode::kAiterTritonBump: {
      if (inf) return 254;
      if (ax < min_normal) return ax >= 0.75 * min_normal ? 1 : 0;
      const int pick = ax >= 1.75 * std::ldexp(1.0, fl) ? fl + 1 : fl;
      return clamp_byte(pick + 127, 0, 254);
    }
    case E8m0Encode::kCeilViaLog2f: {
      if (nan || inf) return 0xFF;
      if (ax == 0.0) return 0;
      // log2 in extended precision, rounded once to fp32 as a correctly rounded log2f would.
      const float l = static_cast<float>(std::log2(static_cast<long double>(ax)));
      const double c = std::ceil(static_cast<double>(l));
      if (c >= 128) return 0xFF;
      if (c <= -127) return 0;
      return static_cast<uint8_t>(c + 127);
    }
  }
  return 0xFF;
}

std::string SweepResult::describe(std::string_view what) const {
  char buf[256];
  if (mismatches == 0) {
    std::snprintf(buf, sizeof buf, "%.*s: %llu inputs, 0 mismatches", static_cast<int>(what.size()),
                  what.data(), static_cast<unsigned long long>(checked));
  } else {
    std::snprintf(buf, sizeof buf,
                  "%.*s: %llu of %llu inputs differ; first input 0x%08x (%a): expected 0x%x, "
                  "encoder gave 0x%x",
                  static_cast<int>(what.size()), what.data(),
                  static_cast<unsigned long long>(mismatches),
                  static_cast<unsigned long long>(checked), first_bad_input,
                  static_cast<double>(float_of(first_bad_input)), first_expected, first_actual);
  }
  return buf;
}

std::vector<Run> build_runs(const std::function<uint32_t(uint32_t)>& oracle, uint64_t begin,
                            uint64_t end) {
  // Segment limits: the oracle is monotone inside each, not across them.
  static constexpr uint64_t kCuts[] = {0x7F800000u, 0x7F800001u, 0x80000000u,
                                       0xFF800000u, 0xFF800001u, 0x100000000u};
  std::vector<Run> runs;
  uint64_t s = begin;
  while (s < end) {
    uint64_t seg_end = end;
    for (uint64_t c : kCuts) {
      if (c > s) {
        seg_end = std::min(seg_end, c);
        break;
      }
    }
    const uint32_t v = oracle(static_cast<uint32_t>(s));
    runs.push_back({s, v});
    // Gallop to a pattern with another output (or the segment end), then bisect.
    uint64_t good = s;  // oracle(good) == v
    uint64_t step = 1;
    uint64_t bad = seg_end;  // first index known to differ, or seg_end
    while (good + step < seg_end) {
      if (oracle(static_cast<uint32_t>(good + step)) != v) {
        bad = good + step;
        break;
      }
      good += step;
      step *= 2;
    }
    while (bad - good > 1) {
      const uint64_t mid = good + (bad - good) / 2;
      (oracle(static_cast<uint32_t>(mid)) == v ? good : bad) = mid;
    }
    s = bad;
  }
  return runs;
}

namespace {

// Checks `actual(bits)` against the runs, on `threads` threads, each taking whole runs split
// into equal slices of inputs.
template <class Actual>
SweepResult check_runs(const std::vector<Run>& runs, uint64_t end, unsigned threads,
                       Actual actual) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const uint64_t begin = runs.empty() ? end : runs.front().begin;
  const uint64_t total = end - begin;
  const uint64_t chunk = ceil_div(total, threads);
  std::vector<SweepResult> parts(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const uint64_t lo = begin + t * chunk;
    const uint64_t hi = std::min(end, lo + chunk);
    if (lo >= hi) break;
    pool.emplace_back([&, t, lo, hi] {
      SweepResult& r = parts[t];
      // First run that overlaps [lo, hi).
      size_t i = static_cast<size_t>(
          std::upper_bound(runs.begin(), runs.end(), lo,
                           [](uint64_t v, const Run& run) { return v < run.begin; }) -
          runs.begin() - 1);
      for (; i < runs.size() && runs[i].begin < hi; ++i) {
        const uint64_t rb = std::max(lo, runs[i].begin);
        const uint64_t re = std::min(hi, i + 1 < runs.size() ? runs[i + 1].begin : end);
        const uint32_t want = runs[i].code;
        for (uint64_t b = rb; b < re; ++b) {
          const uint32_t got = actual(static_cast<uint32_t>(b));
          if (got != want && r.mismatches++ == 0) {
            r.first_bad_input = static_cast<uint32_t>(b);
            r.first_expected = want;
            r.first_actual = got;
          }
        }
        r.checked += re - rb;
      }
    });
  }
  for (auto& th : pool) th.join();
  SweepResult all;
  for (const SweepResult& p : parts) {  // parts are in input order: the first bad is the lowest
    if (p.mismatches && !all.mismatches) {
      all.first_bad_input = p.first_bad_input;
      all.first_expected = p.first_expected;
      all.first_actual = p.first_actual;
    }
    all.checked += p.checked;
    all.mismatches += p.mismatches;
  }
  return all;
}

}  // namespace

SweepResult sweep_encoder(Format f, const EncodePolicy& policy, uint64_t begin, uint64_t end,
                          unsigned threads) {
  const EncodeOracle oracle(f, policy);
  const auto runs =
      build_runs([&](uint32_t b) { return oracle.expected(float_of(b)); }, begin, end);
  return check_runs(runs, end, threads, [&](uint32_t b) { return encode(f, float_of(b), policy); });
}

SweepResult sweep_e8m0(E8m0Encode rule, uint64_t begin, uint64_t end, unsigned threads) {
  const auto runs = build_runs(
      [&](uint32_t b) -> uint32_t { return e8m0_oracle(float_of(b), rule); }, begin, end);
  return check_runs(runs, end, threads,
                    [&](uint32_t b) -> uint32_t { return encode_e8m0(float_of(b), rule); });
}

}  // namespace mxgate
