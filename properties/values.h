// Value classes of the property generators: what a block of 32 quantizer inputs looks like.
// Each class aims at one hazard of docs/formats.md (subnormal outputs, RNE ties, saturation,
// zero blocks, NaN/Inf in a block, the log2f exponent-ceil values, bf16 double rounding of amax,
// scale bytes at the ends of the e8m0 range). Data is a pure function of (class, seed, shape)
// through std::mt19937_64 (specified bit for bit by the standard), so a case replays anywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string_view>
#include <vector>

namespace mxgate::properties {

enum class ValueClass : uint8_t {
  kInts,        // "ints": integers in [-8, 8]
  kNormal,      // "normal": random mantissas, exponents in [-3, 3]
  kNarrow,      // "narrow": every element in one binade
  kWide,        // "wide": exponents spread over [-40, 40] in one block
  kSubnormal,   // "subnormal": elements 2^-14..2^-18 of amax: E4M3 subnormal outputs
  kTies,        // "ties": elements exactly halfway between two E4M3 values after scaling
  kSaturation,  // "saturation": amax at and past 448 x 2^s
  kZero,        // "zero": a block of +-0
  kNanInf,      // "nan_inf": one NaN or +-Inf among normal elements
  kLog2Hazard,  // "log2_hazard": amax * fl(1/448) is a value whose log2f rounds onto the floor
  kBf16Carry,   // "bf16_carry": amax within half a bf16 ulp of a scale-changing boundary
  kTiny,        // "tiny": amax near 2^-127 (scale bytes 0x00 / 0x01)
  kPow2Ratio,   // "pow2_ratio": amax = 448 x 2^e exactly (amax/448 a power of two: FLOOR and
                // RCEIL agree, a ceil that bumps an exact power is one binade off)
};
inline constexpr std::size_t kValueClassCount = 13;

// Where the block maximum sits: "first", "last" or "middle" (an index inside the block derived
// from the seed, row and block). A kernel that finds amax by looking at the first element, or
// stops one short, is only caught when the maximum is elsewhere.
enum class MaxAt : uint8_t { kFirst, kLast, kMiddle };
std::string_view to_string(MaxAt m);
std::optional<MaxAt> parse_max_at(std::string_view s);

std::span<const ValueClass> all_value_classes();
std::string_view to_string(ValueClass c);
std::optional<ValueClass> parse_value_class(std::string_view s);

// One block of `len` values of class `c`.
void fill_block(ValueClass c, std::mt19937_64& rng, std::span<float> out);

// rows x cols row-major values in 32-column blocks: block 0 of every row and a random half of
// the others get `primary`, the rest a random class other than the log2f / bf16-carry hazards
// (so a case exercises its class even after shrinking to one block, and mixes classes when it
// is larger).
std::vector<float> make_values(ValueClass primary, std::size_t rows, std::size_t cols,
                               uint64_t seed);
// The same with the largest finite |value| of every block of `block` columns moved to `max_at`
// (a swap; blocks of one element, or of +-0 only, stay as they are), and the classes filled per
// block of `block` columns (32: MX blocks; 128: the 1x128 groups of block quantizers).
std::vector<float> make_values(ValueClass primary, std::size_t rows, std::size_t cols,
                               uint64_t seed, MaxAt max_at, std::size_t block = 32);

// Every fp32 y in the normal range whose correctly rounded log2f lands on an integer although y
// is not a power of two (e8m0.h log2f_rounds_to_floor), paired with an amax such that
// fl32(amax * fl32(1/448)) == y. The values where exp2(ceil(log2(y))) is one binade short (Z8).
struct Log2Hazard {
  float y;
  float amax;
};
const std::vector<Log2Hazard>& log2_hazards();

}  // namespace mxgate::properties
