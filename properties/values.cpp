#include "properties/values.h"

#include <array>
#include <cmath>
#include <limits>

#include "common/name_table.h"
#include "properties/random_draws.h"
#include "reference/e8m0.h"
#include "reference/format.h"

namespace mxgate::properties {

namespace {

constexpr std::array<std::string_view, kValueClassCount> kNames = {
    "ints", "normal",  "narrow",      "wide",       "subnormal", "ties",      "saturation",
    "zero", "nan_inf", "log2_hazard", "bf16_carry", "tiny",      "pow2_ratio"};
constexpr std::array<std::string_view, 3> kMaxAtNames = {"first", "last", "middle"};

using namespace draw;

// Fills out[1..] with +-amax * {0, 1/4, 1/2, 3/4}-style fractions and random smaller values.
void fill_below(std::mt19937_64& rng, float amax, std::span<float> out) {
  for (std::size_t i = 1; i < out.size(); ++i) {
    out[i] = sign(rng) * amax * std::ldexp(mantissa(rng), -in_range(rng, 1, 6));
  }
  out[0] = sign(rng) * amax;
}

}  // namespace

std::span<const ValueClass> all_value_classes() {
  static constexpr auto kAll = enum_values<ValueClass, kValueClassCount>();
  return kAll;
}

std::string_view to_string(ValueClass c) { return kNames[static_cast<std::size_t>(c)]; }

std::string_view to_string(MaxAt m) { return kMaxAtNames[static_cast<std::size_t>(m)]; }

std::optional<MaxAt> parse_max_at(std::string_view s) { return parse_index<MaxAt>(kMaxAtNames, s); }

std::optional<ValueClass> parse_value_class(std::string_view s) {
  return parse_index<ValueClass>(kNames, s);
}

const std::vector<Log2Hazard>& log2_hazards() {
  static const std::vector<Log2Hazard> table = [] {
    std::vector<Log2Hazard> out;
    const float rcp = 1.0f / 448.0f;
    for (int e = -125; e <= 100; ++e) {
      for (uint32_t j = 1; j <= 64; ++j) {
        const float y = std::ldexp(1.0f + static_cast<float>(j) * 0x1p-23f, e);
        if (!log2f_rounds_to_floor(y)) continue;
        // amax with fl(amax * rcp) == y: start at y * 448 and walk by ulps.
        float amax = y * 448.0f;
        for (int i = 0; i < 64 && amax * rcp != y; ++i) {
          amax = std::nextafter(amax, amax * rcp < y ? std::numeric_limits<float>::max() : 0.0f);
        }
        if (amax * rcp == y && std::isfinite(amax)) out.push_back({y, amax});
      }
    }
    return out;
  }();
  return table;
}

void fill_block(ValueClass c, std::mt19937_64& rng, std::span<float> out) {
  if (out.empty()) return;
  switch (c) {
    case ValueClass::kInts:
      for (float& v : out) v = small_int(rng);
      return;
    case ValueClass::kNormal:
      for (float& v : out) v = normal_value(rng);
      return;
    case ValueClass::kNarrow: {
      const int e = in_range(rng, -20, 20);
      for (float& v : out) v = sign(rng) * std::ldexp(mantissa(rng), e);
      return;
    }
    case ValueClass::kWide:
      for (float& v : out) v = sign(rng) * std::ldexp(mantissa(rng), in_range(rng, -40, 40));
      return;
    case ValueClass::kSubnormal: {
      const float amax = std::ldexp(mantissa(rng), in_range(rng, -10, 10));
      fill_below(rng, amax, out);
      for (std::size_t i = 1; i < out.size(); ++i)
        out[i] = std::ldexp(out[i], -in_range(rng, 9, 13));
      return;
    }
    case ValueClass::kTies: {
      // amax = 384 x 2^t: FLOOR and RCEIL both pick the scale 2^t. The others are midpoints
      // (1 + (2j+1)/16) x 2^e of the E4M3 grid (3 mantissa bits) and subnormal midpoints
      // (2j+1) x 2^-10, all times 2^t.
      const int t = in_range(rng, -20, 20);
      out[0] = sign(rng) * std::ldexp(384.0f, t);
      for (std::size_t i = 1; i < out.size(); ++i) {
        const float odd = static_cast<float>(2 * below(rng, 8) + 1);
        const float mid = (rng() & 3) == 0 ? std::ldexp(odd, -10)
                                           : std::ldexp(1.0f + odd / 16.0f, in_range(rng, -6, 7));
        out[i] = sign(rng) * std::ldexp(mid, t);
      }
      return;
    }
    case ValueClass::kSaturation: {
      // Scaled by FLOOR's 2^t the block max lands in [448, 512): at and past E4M3FN's 448.
      const int t = in_range(rng, -20, 20);
      fill_below(rng, std::ldexp(448.0f + static_cast<float>(below(rng, 64)), t), out);
      for (std::size_t i = 1; i < out.size(); i += 3) {
        out[i] = sign(rng) * std::ldexp(448.0f + static_cast<float>(below(rng, 4)) * 16.0f, t);
      }
      return;
    }
    case ValueClass::kZero:
      for (float& v : out) v = (rng() & 1) ? -0.0f : 0.0f;
      return;
    case ValueClass::kNanInf: {
      fill_block(ValueClass::kNormal, rng, out);
      const float special = (rng() & 1) ? std::numeric_limits<float>::quiet_NaN()
                                        : sign(rng) * std::numeric_limits<float>::infinity();
      out[below(rng, out.size())] = special;
      return;
    }
    case ValueClass::kLog2Hazard: {
      const std::vector<Log2Hazard>& h = log2_hazards();
      fill_below(rng, h[below(rng, h.size())].amax, out);
      return;
    }
    case ValueClass::kBf16Carry: {
      // FLOOR: mantissa >= 0x7F8000 rounds up to the next binade in bf16. RCEIL: amax a little
      // above 448 x 2^e rounds down onto it in bf16 (y = 2^e instead of just above).
      const int e = in_range(rng, -60, 60);
      float amax;
      if (rng() & 1) {
        amax = float_of(static_cast<uint32_t>((e + 127) << 23) | 0x7F8000u |
                        static_cast<uint32_t>(below(rng, 0x8000)));
      } else {
        const uint32_t base = bits_of(std::ldexp(448.0f, e));
        amax = float_of(base + 1 + static_cast<uint32_t>(below(rng, 0x7FFF)));
      }
      fill_below(rng, amax, out);
      return;
    }
    case ValueClass::kTiny: {
      const float amax = std::ldexp(mantissa(rng), in_range(rng, -136, -118));
      fill_below(rng, amax, out);
      return;
    }
    case ValueClass::kPow2Ratio: {
      // 448 x 2^e: amax / 448 is exactly 2^e, and so is amax x fl32(1/448), the RCEIL form
      // (fl32(448 x fl32(1/448)) = 1).
      fill_below(rng, std::ldexp(448.0f, in_range(rng, -40, 40)), out);
      return;
    }
  }
}

namespace {

// Moves the largest finite |x| of `blk` to `where` (swap). The middle index comes from a hash of
// (seed, row, block), so it consumes no random numbers: the values stay those of the seed.
void place_max(std::span<float> blk, MaxAt where, uint64_t seed, std::size_t row,
               std::size_t block) {
  if (blk.size() < 2) return;
  std::size_t at = blk.size();
  for (std::size_t i = 0; i < blk.size(); ++i) {
    if (!std::isfinite(blk[i])) continue;
    if (at == blk.size() || std::fabs(blk[i]) > std::fabs(blk[at])) at = i;
  }
  if (at == blk.size() || blk[at] == 0.0f) return;
  std::size_t to = 0;
  if (where == MaxAt::kLast) {
    to = blk.size() - 1;
  } else if (where == MaxAt::kMiddle) {
    uint64_t h = seed * 0x9E3779B97F4A7C15ull + row * 0xBF58476D1CE4E5B9ull + block + 1;
    h ^= h >> 31;
    to = blk.size() <= 2 ? 1 : 1 + static_cast<std::size_t>(h % (blk.size() - 2));
  }
  std::swap(blk[at], blk[to]);
}

}  // namespace

std::vector<float> make_values(ValueClass primary, std::size_t rows, std::size_t cols,
                               uint64_t seed, MaxAt max_at, std::size_t block) {
  std::vector<float> v =
      block == 32 ? make_values(primary, rows, cols, seed) : std::vector<float>{};
  if (block != 32) {
    // Classes per `block` columns: the MX fill with the block as its unit.
    std::mt19937_64 rng(seed);
    v.resize(rows * cols);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t b = 0; b * block < cols; ++b) {
        const std::size_t len = std::min(block, cols - b * block);
        fill_block(primary, rng, std::span<float>(v.data() + r * cols + b * block, len));
      }
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t b = 0; b * block < cols; ++b) {
      const std::size_t len = std::min(block, cols - b * block);
      place_max(std::span<float>(v.data() + r * cols + b * block, len), max_at, seed, r, b);
    }
  }
  return v;
}

std::vector<float> make_values(ValueClass primary, std::size_t rows, std::size_t cols,
                               uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t b = 0; b * 32 < cols; ++b) {
      // The filler never draws the two single-value hazards (log2f, bf16 carry): a fault they
      // reveal is then revealed by block 0 too, and the case shrinks to that one block.
      static constexpr ValueClass kFiller[] = {
          ValueClass::kInts,      ValueClass::kNormal, ValueClass::kNarrow,     ValueClass::kWide,
          ValueClass::kSubnormal, ValueClass::kTies,   ValueClass::kSaturation, ValueClass::kZero,
          ValueClass::kNanInf,    ValueClass::kTiny};
      ValueClass c = primary;
      if (b > 0 && (rng() & 1)) c = kFiller[below(rng, std::size(kFiller))];
      const std::size_t len = std::min<std::size_t>(32, cols - b * 32);
      fill_block(c, rng, std::span<float>(v.data() + r * cols + b * 32, len));
    }
  }
  return v;
}

}  // namespace mxgate::properties
