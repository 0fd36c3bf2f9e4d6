// E8M0 (UE8M0) scale bytes: the encode and decode rules found in the wild, each named.
//
// E8M0 is an unsigned power of two: byte e in [0, 254] is 2^(e-127), 0xFF is NaN, there is no
// zero and no Inf (docs/formats.md §2). Implementations disagree on everything at the edges
// (docs/formats.md §2.1, §2.2, §6 items 6-10, 15); each rule below cites its source. All rules work
// on fp32 bits; none goes through log2 (kCeilViaLog2f *models* the log2 bug, see e8m0.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace mxgate {

enum class E8m0Encode : uint8_t {
  kFloor,            // floor(log2|x|); Inf/NaN -> 0xFF. OCP/torchao FLOOR; oneDNN truncation
  kFloorSat,         // floor; Inf -> 0xFE. CUDA __nv_cvt_float_to_e8m0(cudaRoundZero, SATFINITE)
  kCeilSat,          // ceil; overflow and Inf -> 0xFE. CUDA RoundPosInf+SATFINITE, TE float_to_e8m0
  kCeilNoSat,        // ceil; overflow and Inf -> 0xFF. torchao _f32_to_e8m0_rceil, CUDA NOSAT
  kNearestTorch,     // nearest, ties up; 0 -> 0x00, sign ignored. PyTorch .to(float8_e8m0fnu)
  kNearestMlDtypes,  // as PyTorch, but 0 and negatives -> 0xFF. ml_dtypes ConvertImpl
  kDeepGemmClamp,    // ceil on |x| then clamp to [1, 254] (NaN/Inf -> 0xFE). DeepGEMM ceil_to_ue8m0
  kAiterCeil,        // ceil with any nonzero subnormal -> 0x01. AITER fp_f32_to_e8m0_scale<RoundUp>
  kAiterTritonBump,  // (bits + 0x200000) & 0xFF800000: up iff significand >= 1.75. AITER Triton
  kCeilViaLog2f,     // exp2f(ceilf(log2f(x))) with a correctly rounded log2f. vLLM group quant
};

enum class E8m0Decode : uint8_t {
  kOcp,           // 0x00 = 2^-127, 0xFF = NaN (PyTorch, CUDA, TE, torchao)
  kShift,         // byte << 23: 0x00 = +0.0, 0xFF = +Inf (vLLM _upcast_e8m0_to_fp32, AITER HIP)
  kExp2Cuda,      // exp2f(e - 127) on CUDA: 0x00 = 0x1.fffff8p-128, 0xFF = +Inf (vLLM dequant)
  kShiftMaskNan,  // Triton dot_scaled emulation: shift, then select NaN for 0xFF: 0x00 = +0.0
};

uint8_t encode_e8m0(float x, E8m0Encode rule);
float decode_e8m0(uint8_t byte, E8m0Decode rule);

std::string_view name(E8m0Encode r);
std::string_view name(E8m0Decode r);
std::optional<E8m0Encode> parse_e8m0_encode(std::string_view s);
std::optional<E8m0Decode> parse_e8m0_decode(std::string_view s);
std::span<const E8m0Encode> all_e8m0_encodes();
std::span<const E8m0Decode> all_e8m0_decodes();

// True when fp32 log2f (correctly rounded) of a positive finite `y` that is not a power of two
// rounds down onto the integer floor(log2 y), so exp2(ceil(log2 y)) misses by one binade
// (docs/formats.md §5.3: 3654 such normal y on the device).
bool log2f_rounds_to_floor(float y);

}  // namespace mxgate
