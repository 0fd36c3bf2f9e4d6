#include "properties/fp4_values.h"

#include <array>
#include <cmath>
#include <limits>
#include <random>

#include "common/name_table.h"
#include "properties/random_draws.h"
#include "reference/format.h"

namespace mxgate::properties {

namespace {

constexpr std::array<std::string_view, kFp4ValueClassCount> kNames = {
    "ints",       "normal",      "wide",    "ties",         "scale_codes", "saturation",
    "zero_block", "zero_tensor", "nan_inf", "subnormal_in", "mixed"};

// The E2M1 midpoints and magnitudes (docs/fp4.md §1): a tie of each rounding boundary.
constexpr std::array<float, 7> kMidpoints = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
constexpr std::array<float, 8> kMagnitudes = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

using namespace draw;

// out[0] = +-amax, the others random magnitudes below it (some exactly 0).
void fill_below(std::mt19937_64& rng, float amax, std::span<float> out) {
  for (std::size_t i = 1; i < out.size(); ++i) {
    out[i] = below(rng, 8) == 0
                 ? 0.0f
                 : sign(rng) * amax * std::ldexp(mantissa(rng), -in_range(rng, 1, 5));
  }
  out[0] = sign(rng) * amax;
}

void fill_block(Fp4ValueClass c, std::size_t block, int gexp, std::mt19937_64& rng,
                std::span<float> out) {
  const bool nv = block == 16;
  switch (c) {
    case Fp4ValueClass::kInts:
      for (float& v : out) v = small_int(rng);
      return;
    case Fp4ValueClass::kNormal:
      for (float& v : out) v = normal_value(rng);
      return;
    case Fp4ValueClass::kWide:
      for (float& v : out) v = sign(rng) * std::ldexp(mantissa(rng), in_range(rng, -40, 40));
      return;
    case Fp4ValueClass::kTies: {
      // NVFP4: t = gexp + q with the E4M3 power of two 2^q, q in [-9, 8] (0x01 .. 0x78).
      const int t = nv ? gexp + in_range(rng, -9, 8) : in_range(rng, -20, 20);
      for (float& v : out) {
        const float m = below(rng, 3) == 0 ? kMagnitudes[below(rng, 8)] : kMidpoints[below(rng, 7)];
        v = sign(rng) * std::ldexp(m, t);
      }
      out[0] = sign(rng) * std::ldexp(6.0f, t);
      return;
    }
    case Fp4ValueClass::kScaleCodes: {
      float amax;
      if (nv) {
        // E4M3 code c in 0x00..0x7E: amax 6 * decode(c) * 2^gexp gives scale byte c exactly.
        const uint32_t code = static_cast<uint32_t>(below(rng, 127));
        amax = std::ldexp(6.0f * decode(Format::kE4M3FN, code), gexp);
      } else {
        // E8M0 byte b in 0x00..0xFC: amax in [4, 8) * 2^(b - 127) (FLOOR, emax 2).
        const int b = static_cast<int>(below(rng, 253));
        amax = std::ldexp(4.0f * (1.0f + 0.999f * (mantissa(rng) - 1.0f)), b - 127);
      }
      fill_below(rng, amax, out);
      return;
    }
    case Fp4ValueClass::kSaturation: {
      const int t = in_range(rng, -10, 10);
      fill_below(rng, std::ldexp(6.0f + 2.0f * (mantissa(rng) - 1.0f), t), out);
      return;
    }
    case Fp4ValueClass::kZeroBlock:
    case Fp4ValueClass::kZeroTensor:
      for (float& v : out) v = (rng() & 1) ? -0.0f : 0.0f;
      return;
    case Fp4ValueClass::kNanInf:
      fill_block(Fp4ValueClass::kNormal, block, gexp, rng, out);
      out[below(rng, out.size())] =
          below(rng, 3) == 0 ? std::numeric_limits<float>::quiet_NaN() : sign(rng) * INFINITY;
      return;
    case Fp4ValueClass::kSubnormalIn:
      for (float& v : out) {
        v = below(rng, 2) == 0 ? sign(rng) * float_of(static_cast<uint32_t>(rng() & 0x7FFFFFu))
                               : sign(rng) * std::ldexp(mantissa(rng), in_range(rng, -130, -120));
      }
      return;
    case Fp4ValueClass::kMixed:
      fill_block(static_cast<Fp4ValueClass>(below(rng, kFp4ValueClassCount - 2)), block, gexp, rng,
                 out);
      return;
  }
}

}  // namespace

std::span<const Fp4ValueClass> all_fp4_value_classes() {
  static constexpr auto kAll = enum_values<Fp4ValueClass, kFp4ValueClassCount>();
  return kAll;
}

std::string_view to_string(Fp4ValueClass c) { return kNames[static_cast<std::size_t>(c)]; }

std::optional<Fp4ValueClass> parse_fp4_value_class(std::string_view s) {
  return parse_index<Fp4ValueClass>(kNames, s);
}

std::vector<float> make_fp4_values(Fp4ValueClass c, std::size_t rows, std::size_t cols,
                                   std::size_t block, int gexp, uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0xF4F4F4F4F4F4F4F4ull);
  std::vector<float> x(rows * cols);
  std::vector<float> buf(block);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t k0 = 0; k0 < cols; k0 += block) {
      const std::size_t len = std::min(block, cols - k0);
      Fp4ValueClass cls = c;
      // zero_block: block 0 and a random third of the others zero, the rest normal.
      if (c == Fp4ValueClass::kZeroBlock && k0 != 0 && below(rng, 3) != 0) {
        cls = Fp4ValueClass::kNormal;
      }
      fill_block(cls, block, gexp, rng, std::span<float>(buf.data(), len));
      for (std::size_t i = 0; i < len; ++i) x[r * cols + k0 + i] = buf[i];
    }
  }
  return x;
}

}  // namespace mxgate::properties
