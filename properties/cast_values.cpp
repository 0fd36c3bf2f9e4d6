#include "properties/cast_values.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <random>

#include "common/name_table.h"
#include "reference/convention.h"
#include "reference/e8m0.h"

namespace mxgate::properties {

namespace {

constexpr std::array<std::string_view, 7> kNames = {"codes",    "ties",   "overflow", "subnormal",
                                                    "specials", "random", "range"};

// The finite values > 0 of a format's codes, sorted (computed once per format).
const std::vector<float>& positive_values(Format f) {
  static std::mutex mutex;
  static std::map<Format, std::vector<float>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& v = cache[f];
  if (!v.empty()) return v;
  const uint32_t codes = 1u << info(f).bits;
  for (uint32_t c = 0; c < codes; ++c) {
    const float x = decode(f, c);
    if (std::isfinite(x) && x > 0.0f) v.push_back(x);
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

float signed_(std::mt19937_64& rng, float x) { return (rng() & 1) ? -x : x; }

float ulp_step(float x, int steps) {
  float y = x;
  const float dir =
      steps > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
  for (int i = 0; i < std::abs(steps); ++i) y = std::nextafter(y, dir);
  return y;
}

float one_value(CastClass c, Format f, std::mt19937_64& rng, std::size_t i) {
  const std::vector<float>& pos = positive_values(f);
  const std::size_t n = pos.size();
  switch (c) {
    case CastClass::kCodes: {
      float x = pos[rng() % n];
      if (rng() % 4 == 0) x = ulp_step(x, (rng() & 1) ? 1 : -1);
      return rng() % 16 == 0 ? signed_(rng, 0.0f) : signed_(rng, x);
    }
    case CastClass::kTies: {
      const std::size_t j = rng() % n;
      const double lo = j == 0 ? 0.0 : pos[j - 1];
      const float mid = static_cast<float>((lo + pos[j]) / 2.0);  // exact: one more bit
      const int off = static_cast<int>(rng() % 5) - 2;            // -1, 0, +1 ulp mostly 0
      return signed_(rng, off == 1 || off == -1 ? ulp_step(mid, off) : mid);
    }
    case CastClass::kOverflow: {
      const float max = pos.back();
      const float prev = n > 1 ? pos[n - 2] : max / 2.0f;
      const float edge = static_cast<float>(max + (static_cast<double>(max) - prev) / 2.0);
      const float picks[] = {max,
                             ulp_step(max, 1),
                             edge,
                             ulp_step(edge, -1),
                             ulp_step(edge, 1),
                             2.0f * max,
                             std::numeric_limits<float>::max(),
                             std::numeric_limits<float>::infinity(),
                             static_cast<float>(max + (edge - max) * (rng() % 1000) / 1000.0)};
      return signed_(rng, picks[(i == 0 ? 2 : rng()) % std::size(picks)]);
    }
    case CastClass::kSubnormal: {
      const float tiny = pos.front();
      const float picks[] = {tiny,
                             tiny / 2.0f,
                             ulp_step(tiny / 2.0f, 1),
                             ulp_step(tiny / 2.0f, -1),
                             tiny * static_cast<float>(1 + rng() % 7),
                             float_of(static_cast<uint32_t>(1 + rng() % 0x7FFFFF)),
                             float_of(1u),
                             pos[std::min<std::size_t>(n - 1, rng() % 16)]};
      return signed_(rng, picks[(i == 0 ? 1 : rng()) % std::size(picks)]);
    }
    case CastClass::kSpecials: {
      static constexpr uint32_t kBits[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u,
                                           0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFFFFFFFu,
                                           0x7FBFFFFFu, 0xFF800001u, 0x7FFFFFFFu};
      return float_of(kBits[(i < std::size(kBits) ? i : rng()) % std::size(kBits)]);
    }
    case CastClass::kRandom:
      return float_of(static_cast<uint32_t>(rng()));
    case CastClass::kRange: {
      const int lo = std::ilogb(pos.front()) - 3, hi = std::ilogb(pos.back()) + 3;
      const int e = lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
      const float m = float_of(0x3F800000u | static_cast<uint32_t>(rng() & 0x7FFFFF));
      return signed_(rng, std::ldexp(m, e));
    }
  }
  return 0.0f;
}

}  // namespace

std::span<const CastClass> all_cast_classes() {
  static constexpr auto kAll = enum_values<CastClass, kNames.size()>();
  return kAll;
}

std::string_view to_string(CastClass c) { return kNames[static_cast<std::size_t>(c)]; }

std::optional<CastClass> parse_cast_class(std::string_view s) {
  return parse_index<CastClass>(kNames, s);
}

std::optional<Format> cast_format(impl::Dtype d) {
  switch (d) {
    case impl::Dtype::kE4m3fn:
      return Format::kE4M3FN;
    case impl::Dtype::kE5m2:
      return Format::kE5M2;
    case impl::Dtype::kE4m3fnuz:
      return Format::kE4M3FNUZ;
    case impl::Dtype::kE5m2fnuz:
      return Format::kE5M2FNUZ;
    case impl::Dtype::kE8m0:
      return Format::kE8M0;
    case impl::Dtype::kBf16:
      return Format::kBF16;
    case impl::Dtype::kFp16:
      return Format::kFP16;
    case impl::Dtype::kE3m4:
      return Format::kE3M4;
    case impl::Dtype::kE4m3ieee:
      return Format::kE4M3IEEE;
    case impl::Dtype::kE4m3b11fnuz:
      return Format::kE4M3B11FNUZ;
    case impl::Dtype::kMxint8:
      return Format::kMXINT8;
    default:
      return std::nullopt;
  }
}

std::optional<Format> element_cast_format(impl::Dtype d) {
  switch (d) {
    case impl::Dtype::kE2m1:
      return Format::kE2M1;
    case impl::Dtype::kE2m3:
      return Format::kE2M3;
    case impl::Dtype::kE3m2:
      return Format::kE3M2;
    default:
      return cast_format(d);
  }
}

std::optional<Format> fp8_format(impl::Dtype d) {
  const std::optional<Format> f = cast_format(d);
  if (f && info(*f).bits == 8 && *f != Format::kE8M0) return f;
  return std::nullopt;
}

std::function<uint32_t(float)> cast_encoder(std::string_view claim, Format f) {
  if (claim.rfind("e8m0:", 0) == 0) {
    const auto rule = parse_e8m0_encode(claim.substr(5));
    if (!rule || f != Format::kE8M0) return {};
    return [r = *rule](float x) { return static_cast<uint32_t>(encode_e8m0(x, r)); };
  }
  const Convention* conv = find_convention(claim);
  if (conv == nullptr || !defines(*conv, f) || (f == Format::kE8M0 && !conv->e8m0)) return {};
  return [conv, f](float x) { return encode_with(*conv, f, x); };
}

std::vector<float> cast_values(CastClass c, Format f, std::size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed ^ (static_cast<uint64_t>(c) << 56) ^ (static_cast<uint64_t>(f) << 48));
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = one_value(c, f, rng, i);
  return out;
}

std::optional<Failure> compare_codes(const std::string& what, std::span<const float> inputs,
                                     std::size_t width, std::span<const uint8_t> expected,
                                     std::span<const uint8_t> actual) {
  if (auto f = size_failure(what, expected.size(), actual.size())) return f;
  const std::size_t count = expected.size() / width;
  std::size_t bad = 0, first = 0;
  uint32_t want = 0, got = 0;
  for (std::size_t i = 0; i < count; ++i) {
    uint32_t e = 0, a = 0;
    std::memcpy(&e, expected.data() + i * width, width);
    std::memcpy(&a, actual.data() + i * width, width);
    if (e != a && bad++ == 0) {
      first = i;
      want = e;
      got = a;
    }
  }
  if (bad == 0) return std::nullopt;
  char buf[224];
  std::snprintf(buf, sizeof buf,
                ": %zu of %zu codes differ; first element %zu, input %a (0x%08x): expected "
                "0x%0*X actual 0x%0*X",
                bad, count, first, static_cast<double>(inputs[first]), bits_of(inputs[first]),
                static_cast<int>(width * 2), want, static_cast<int>(width * 2), got);
  BitMismatch m;
  m.row = 0;
  m.col = first;
  m.expected_bits = want;
  m.actual_bits = got;
  m.ulp_distance = want > got ? want - got : got - want;
  return Failure{what + buf, m, std::nullopt, std::nullopt};
}

}  // namespace mxgate::properties
