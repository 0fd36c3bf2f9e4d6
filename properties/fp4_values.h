// Value classes of the FP4 quantizer property (quantize_fp4.bit_exact): what the blocks of an
// MXFP4 (32) or NVFP4 (16) quantizer's input look like. Each class aims at one hazard of
// docs/fp4.md: exact E2M1 ties (the rounding rule), every scale code (E8M0 bytes 0x00..0xFC,
// every E4M3 code 0x00..0x7E including the subnormals), saturation at 6, zero blocks and zero
// tensors (NVFP4 amax 0), NaN / Inf, fp32 subnormal inputs. Data is a pure function of
// (class, shape, block, gexp, seed) through std::mt19937_64, so a case replays anywhere.
//
// `gexp` is the exponent e of NVFP4's exact global amax 2688 * 2^e (global mode "pow2"): with it
// the global encode and decode scales are powers of two, a block whose amax is 6 * s * 2^e gets
// the E4M3 scale s exactly (fl(6 * fl(1/6)) rounds to 1), and x / (s * 2^e) is exact when s is a
// power of two, so the ties class lands exactly on E2M1 midpoints after scaling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace mxgate::properties {

enum class Fp4ValueClass : uint8_t {
  kInts,         // "ints": integers in [-8, 8]
  kNormal,       // "normal": random mantissas, exponents in [-3, 3]
  kWide,         // "wide": exponents over [-40, 40] in one block
  kTies,         // "ties": block amax 6 * 2^t, the others E2M1 midpoints or codes times 2^t
  kScaleCodes,   // "scale_codes": each block's amax picks a random scale code (E8M0 or E4M3)
  kSaturation,   // "saturation": MXFP4 amax in (6, 8) * 2^s: elements saturate at 6
  kZeroBlock,    // "zero_block": block 0 of every row (and some others) +-0, the rest normal
  kZeroTensor,   // "zero_tensor": every element +-0 (NVFP4: global amax 0)
  kNanInf,       // "nan_inf": one NaN or +-Inf among normal elements
  kSubnormalIn,  // "subnormal_in": fp32 subnormal and tiny normal inputs
  kMixed,        // "mixed": every block a random other class
};
inline constexpr std::size_t kFp4ValueClassCount = 11;

std::span<const Fp4ValueClass> all_fp4_value_classes();
std::string_view to_string(Fp4ValueClass c);
std::optional<Fp4ValueClass> parse_fp4_value_class(std::string_view s);

// rows x cols row-major inputs in blocks of `block` (32: MXFP4, 16: NVFP4) along cols.
std::vector<float> make_fp4_values(Fp4ValueClass c, std::size_t rows, std::size_t cols,
                                   std::size_t block, int gexp, uint64_t seed);

}  // namespace mxgate::properties
