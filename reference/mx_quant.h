// MX quantization: blocks of 32 along K, FP8 / FP6 / FP4 / INT8 elements, one E8M0 scale per block
// (MXFP8, MXFP6, MXFP4, MXINT8: OCP MX v1.0; FP4 / FP6 rules: docs/fp4.md §4; MXINT8:
// docs/formats.md §1.5).
//
// Each implementation chooses the block's scale differently (docs/formats.md §3, table
// §3.7): FLOOR (OCP), RCEIL (TE / cuBLAS / torchao RCEIL / AITER HIP), torchao CEIL and EVEN,
// AITER Triton's 0x200000 bump, vLLM gen-2 / ROCm Triton without the emax offset, and vLLM
// gen-3's log2-based RCEIL. NaN in a block, all-zero blocks and the padding of a short last
// block are explicit policies. The payload is always requantized with the final scale.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/blocks.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/fp_encode.h"

namespace mxgate {

enum class MxScaleRule : uint8_t {
  kFloor,        // floor(log2 amax) - emax_elem (OCP MX §6.3, torchao FLOOR, microxcaling)
  kRceil,        // e8m0 ceil of fl32(amax * fl32(1/max)) (TE, cuBLAS, torchao RCEIL, AITER HIP)
  kCeil,         // ceil(log2 amax) - emax_elem (torchao CEIL)
  kEven,         // (bits + 2^(22 - mbits)) & 0xFF800000, then FLOOR (torchao EVEN)
  kAiterTriton,  // (bits + 0x200000) & 0xFF800000, floor - emax, clamp +-127 (AITER Triton)
  kNoOffset,     // floor(log2 amax) + 127, no emax offset (vLLM gen-2, vLLM ROCm Triton)
  kRceilLog2f,   // ceil(log2(amax / max)) through log2f (vLLM gen-3 torch, docs/formats.md §5.3)
  // Triton triton_kernels downcast_to_mxfp on the fp32 quotient q = fl32(amax / max) (docs/fp4.md
  // §4.2): ROUND_UP (bits(q) + 0x7FFFFF) & 0x7F800000, ROUND_DOWN bits(q) & 0x7F800000.
  kCeilOfQuotient,
  kFloorOfQuotient,
};

// How the element multiplier 1/scale is formed from the scale byte.
enum class MxReciprocal : uint8_t {
  kExactPow2,        // 2^(127 - byte); 0xFF makes every element NaN (torchao, TE, the OCP rule)
  kZeroForZeroByte,  // dequant float = byte << 23, multiplier = that == 0 ? 0 : 1 / that: byte 0
                     // gives 0, 0xFF (Inf) gives 1/Inf = 0 (Triton downcast_to_mxfp, AITER fp4)
};

enum class AmaxNan : uint8_t {
  kPropagate,  // a NaN makes amax NaN: scale 0xFF, whole block NaN (torchao, microxcaling)
  kIgnore,     // fmaxf skips NaN (TE, vLLM CUDA); the NaN element is cast on its own
};

struct MxPolicy {
  MxScaleRule rule = MxScaleRule::kFloor;
  E8m0Encode rceil_encode = E8m0Encode::kCeilSat;  // kRceil: saturating (TE) or not (torchao)
  AmaxNan amax_nan = AmaxNan::kPropagate;
  float amax_floor = 0.0f;  // amax = max(amax, floor): AITER HIP seeds 1e-10, vLLM gen-2 FLT_MIN
  std::optional<uint8_t> zero_block_byte;  // fixed byte for an all-zero block
  EncodePolicy element;                    // the element cast after scaling
  float pad_value = 0.0f;                  // fills a short last block (K % 32 != 0)
  MxReciprocal reciprocal = MxReciprocal::kExactPow2;
  // Elements of a block whose scale byte is 0xFF: the OCP rule leaves them undefined (the scale
  // alone says NaN), so a convention that follows it names the code it writes (docs/fp4.md §4).
  std::optional<uint8_t> nan_block_code;
  bool truncate_below_one_to_2m23 = false;  // Triton's e2m1 pre-rounding step (convention.h)
};

std::string_view name(MxScaleRule r);

// The scale byte the rule picks for a block with this amax (|x| max, after the NaN policy).
uint8_t mx_scale_byte(float amax, Format element, const MxPolicy& policy);
// A block's scale byte from the NaN-ignoring max of its |x| and whether it held a NaN: the
// policy's NaN rule (a NaN amax) or its amax floor, then mx_scale_byte. Shared by the 1 x 32 and
// the 32 x 32 (mx_quant_2d.h) quantizers.
uint8_t mx_block_byte(float amax, bool saw_nan, Format element, const MxPolicy& policy);
// One element's code under a block scale byte `byte` (the step after mx_scale_byte): x times the
// exact reciprocal 2^(127 - byte) (0 under kZeroForZeroByte for bytes 0x00 and 0xFF), a 0xFF
// block's NaN (or its named code), then the element policy's cast.
uint8_t mx_element_code(float x, uint8_t byte, Format element, const MxPolicy& policy);

// Row-major (rows x cols) input, blocks of 32 along cols. Scales are logical row-major
// (rows x ceil(cols/32)); layouts are applied separately (scale_layout.h). E2M1 codes are one per
// byte here; fp4_pack.h packs two per byte.
struct MxQuantized {
  std::size_t rows = 0;
  std::size_t cols = 0;
  Format element = Format::kE4M3FN;
  std::vector<uint8_t> data;    // rows x cols codes
  std::vector<uint8_t> scales;  // rows x ceil(cols/32) e8m0 bytes
  std::size_t scale_cols() const { return ceil_div(cols, kMxBlock); }
};

MxQuantized quantize_mx(std::span<const float> x, std::size_t rows, std::size_t cols,
                        Format element, const MxPolicy& policy);

// Largest power-of-two exponent of the element format's max finite (8 for E4M3FN, 15 for E5M2,
// 7 for E4M3FNUZ, 2 for E2M1 and E2M3, 4 for E3M2, 0 for MXINT8's 127/64): the "emax_elem" of the
// OCP rule, read off the bits of max_finite.
int element_emax(Format element);

}  // namespace mxgate
