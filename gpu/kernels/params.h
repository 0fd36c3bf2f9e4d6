// Launch parameters of every kernel: plain structs that compile as host and device code (no
// std types), shared by the Backend API, the host models and the .hip kernels.
#pragma once

#include <stdint.h>

#include "common/dtypes.h"

namespace mxgate::gpu {

// The dtype parameters are enums of the dtypes each kernel takes, valued by the ABI codes of the
// element type table (common/dtypes.h), so impl/builtin.cpp converts a call's dtype with a cast.
enum class InputDtype : uint8_t { kFp32 = dtypes::kF32, kBf16 = dtypes::kBf16 };
// kE4m3fn: FP8 GEMM output (plugin.h revision 4), fl32(acc * scale_result) cast with
// cuda_satfinite (GemmParams::out_scale); the GEMMs only.
enum class OutDtype : uint8_t {
  kFp32 = dtypes::kF32,
  kBf16 = dtypes::kBf16,
  kE4m3fn = dtypes::kE4m3fn
};

// The MX quantizer conventions implemented (reference/quant_conventions.cpp names them):
// ocp_mx = FLOOR scale, elements RNE, finite overflow -> +-448, Inf -> NaN, NaN keeps its sign;
// torchao_rceil = RCEIL scale without satfinite, elements RNE saturating (Inf -> +-448).
enum class QuantConvention : uint8_t { kOcpMx, kTorchaoRceil };

// E8M0 -> fp32: correct (0x00 = 2^-127, 0xFF = NaN) or the shift (byte << 23).
enum class E8m0Upcast : uint8_t { kCorrect, kShift };

// Planted kernel bugs of the zoo (docs/bug_classes.md §2, Z8-Z16; dispatch/faults.h names them
// and maps each dispatch Fault to one bit here). 0 = the kernel as written; each bit re-creates
// one class.
namespace kernel_fault {
inline constexpr uint64_t kLog2Ceil = uint64_t{1} << 0;  // Z8: RCEIL exponent via ceilf(log2f(y))
inline constexpr uint64_t kDropTailBlock = uint64_t{1} << 1;  // Z9: K loop over floor(K/128) blocks
inline constexpr uint64_t kReadScalePadding = uint64_t{1}
                                              << 2;     // Z10: padded swizzle columns applied
inline constexpr uint64_t kFnuzMax = uint64_t{1} << 3;  // Z11: elements clamped to +-240 (FNUZ)
inline constexpr uint64_t kIgnoreAsStride = uint64_t{1}
                                            << 4;  // Z12: column-major As read with stride M
inline constexpr uint64_t kSwizzleReadLinear = uint64_t{1}
                                               << 5;  // Z13: swizzled scales read row-major
inline constexpr uint64_t kUnroundedScalePayload = uint64_t{1} << 6;  // Z14: payload x * 448/amax
inline constexpr uint64_t kBf16Amax = uint64_t{1} << 7;  // Z15: amax rounded to bf16 first
inline constexpr uint64_t kShardBlockIndex = uint64_t{1}
                                             << 8;  // Z16: weight block of local row n is n/128
// Z17-Z30 (docs/bug_classes.md §2, detection work).
inline constexpr uint64_t kSplitKSlice0Scales = uint64_t{1}
                                                << 9;  // Z17: slices use slice 0's scales
inline constexpr uint64_t kWaveReappliesAScale = uint64_t{1}
                                                 << 10;  // Z18: wave w reapplies w-1's As
inline constexpr uint64_t kTruncateScaleExponent = uint64_t{1}
                                                   << 11;  // Z20: fp32 scale -> its exponent
inline constexpr uint64_t kMinClampAfterPow2 = uint64_t{1}
                                               << 12;           // Z21: min clamp after pow2 round
inline constexpr uint64_t kUe8m0PackLeak = uint64_t{1} << 13;   // Z22: 4 exponents OR-ed unmasked
inline constexpr uint64_t kE8m0NanOnValue = uint64_t{1} << 14;  // Z23: NaN test on 2^(b-127) == 128
inline constexpr uint64_t kFnuzNanAsNegZero = uint64_t{1} << 15;  // Z24: FNUZ 0x80 -> -0.0
inline constexpr uint64_t kE4m3NanAs480 = uint64_t{1} << 16;  // Z25: E4M3FN 0x7F / 0xFF -> +-480
inline constexpr uint64_t kE5m2InfAsFinite = uint64_t{1}
                                             << 17;  // Z26: E5M2 exponent 31 read as normal
inline constexpr uint64_t kDefaultScaleByteOne = uint64_t{1}
                                                 << 18;  // Z27: absent scale = byte 1, not 127
inline constexpr uint64_t kKTailScaleUnmasked = uint64_t{1}
                                                << 19;       // Z28: K-tail tile's scales unmasked
inline constexpr uint64_t kOffset32Bit = uint64_t{1} << 20;  // Z29: element offsets wrap at 2^31
inline constexpr uint64_t kLaunchCounterOrder = uint64_t{1}
                                                << 21;  // Z30: K order flips every launch
inline constexpr uint64_t kFnuzDecodedAsOcp = uint64_t{1}
                                              << 22;  // Z38: FNUZ codes read as E4M3FN/E5M2
// The FP4 kernels' classes (docs/bug_classes.md §2, Z31-Z37), bits 24-30.
inline constexpr uint64_t kNibbleSwap = uint64_t{1} << 24;    // Z31: element 2i packed high
inline constexpr uint64_t kE2m1TiesAway = uint64_t{1} << 25;  // Z32: E2M1 ties away from zero
inline constexpr uint64_t kE4m3SubnormalAsNormal = uint64_t{1}
                                                   << 26;         // Z33: exp field 0 read as normal
inline constexpr uint64_t kNvfp4Amax32 = uint64_t{1} << 27;       // Z34: NVFP4 block amax over 32
inline constexpr uint64_t kGlobalReadAsFp32 = uint64_t{1} << 28;  // Z35: a bf16 global read as fp32
inline constexpr uint64_t kZeroAmaxNanScale = uint64_t{1}
                                              << 29;  // Z36: zero amax -> 1, unclamped cast
inline constexpr uint64_t kScaleTailUnmasked = uint64_t{1}
                                               << 30;  // Z37: K-tail scales read unmasked
// The extreme scale codes (docs/bug_classes.md §2, Z39).
inline constexpr uint64_t kE8m0ZeroAsZero = uint64_t{1} << 23;  // Z39: E8M0 0x00 decoded as +0
// Z40-Z49 (docs/bug_classes.md §2): bits 31 on, which is why the mask is 64 bits wide.
inline constexpr uint64_t kScalePad127 = uint64_t{1} << 31;       // Z40: K-pad scales 127, not 0
inline constexpr uint64_t kE8m0Bias125 = uint64_t{1} << 32;       // Z41: MXFP4 scale bias 125
inline constexpr uint64_t kScaleFnuzMax = uint64_t{1} << 33;      // Z42: 1x128 scale amax / 240
inline constexpr uint64_t kScaleSliceFixed = uint64_t{1} << 34;   // Z43: K-block scale index 0
inline constexpr uint64_t kOneTileMinScale = uint64_t{1} << 39;   // Z44: K = 128 tile, min A scale
inline constexpr uint64_t kScaleLdIgnored = uint64_t{1} << 35;    // Z46: scale ld from the shape
inline constexpr uint64_t kSwizzleOtherArch = uint64_t{1} << 36;  // Z47: another tile order
inline constexpr uint64_t kUe4m3TopBinade = uint64_t{1} << 37;    // Z48: UE4M3 exp 15 as Inf
inline constexpr uint64_t kFp32ScaleDaz = uint64_t{1} << 38;      // Z49: subnormal scale -> 0
// Z45 (docs/bug_classes.md §2): bit 40 (39 is left to Z44, unplanted).
inline constexpr uint64_t kScaleResultDropped = uint64_t{1} << 40;  // Z45: FP8 out, scale 1
// E8M0 NaN scale decode (docs/bug_classes.md §2, Z50, Z51): bits 41, 42.
inline constexpr uint64_t kE8m0NanAsInf = uint64_t{1} << 41;  // Z50: E8M0 0xFF decoded as +Inf
inline constexpr uint64_t kE8m0NanAsMax = uint64_t{1} << 42;  // Z51: E8M0 0xFF decoded as 2^127
// The grouped GEMMs' classes (docs/bug_classes.md §2, Z52-Z59; gpu/kernels/grouped_gemm.h):
// bits 48-55, clear of the bits below and of those taken after Z49.
inline constexpr uint64_t kGroupedStaleEmpty = uint64_t{1} << 48;   // Z52: empty expert stores acc
inline constexpr uint64_t kGroupedStopAtEmpty = uint64_t{1} << 49;  // Z53: walk stops at an empty
inline constexpr uint64_t kGroupedTileFirstRowExpert = uint64_t{1}
                                                       << 50;  // Z54: expert of the tile's row 0
inline constexpr uint64_t kGroupedTileFirstGroupOnly = uint64_t{1}
                                                       << 51;  // Z55: tile computes group 1 only
inline constexpr uint64_t kMaskedRowsPastCount = uint64_t{1} << 52;  // Z56: 64-row masked stores
inline constexpr uint64_t kGroupedSwizzleUnpadded = uint64_t{1}
                                                    << 53;  // Z57: one swizzle over all groups
inline constexpr uint64_t kNextExpertTailScales = uint64_t{1}
                                                  << 54;  // Z58: tail K tile, next expert's sb
inline constexpr uint64_t kKGroupedStaleAcc = uint64_t{1}
                                              << 55;  // Z59: empty K group stores the last acc
}  // namespace kernel_fault

// The FP8 element formats a kernel reads (dequant_mx_to_bf16; docs/formats.md §1).
enum class Fp8Format : uint8_t {
  kE4m3fn = dtypes::kE4m3fn,
  kE5m2 = dtypes::kE5m2,
  kE4m3fnuz = dtypes::kE4m3fnuz,
  kE5m2fnuz = dtypes::kE5m2fnuz,
};

// (rows x cols) row-major input; codes rows x cols, scales rows x ceil(cols/32) row-major.
struct QuantizeParams {
  uint64_t rows = 0;
  uint64_t cols = 0;
  InputDtype input = InputDtype::kFp32;
  QuantConvention convention = QuantConvention::kOcpMx;
  uint64_t faults = 0;  // kernel_fault bits (Z8, Z11, Z14, Z15, Z21)
};

// quantize_act1x128_ue8m0 (DeepGEMM per_token_cast_to_fp8 with UE8M0 scales, docs/formats.md
// §5.2): (rows x cols) fp32 or bf16 -> E4M3FN codes rows x cols and fp32 power-of-two scales
// rows x ceil(cols/128) row-major.
struct QuantizeBlockParams {
  uint64_t rows = 0;
  uint64_t cols = 0;
  InputDtype input = InputDtype::kFp32;
  uint64_t faults = 0;  // kernel_fault bits (Z21)
};

// codes rows x cols + scales rows x ceil(cols/32) -> bf16 rows x cols.
struct DequantParams {
  uint64_t rows = 0;
  uint64_t cols = 0;
  E8m0Upcast upcast = E8m0Upcast::kCorrect;
  Fp8Format element = Fp8Format::kE4m3fn;  // the format of the codes
  uint64_t faults = 0;                     // kernel_fault bits (Z24, Z25, Z26, Z29)
  uint64_t scales_ld = 0;  // leading dimension of the row-major scales (0: ceil(cols/32))
};

struct UpcastParams {
  uint64_t count = 0;
  E8m0Upcast upcast = E8m0Upcast::kCorrect;
  uint64_t faults = 0;  // kernel_fault bits (Z23)
};

// Row-major n x k bytes -> AITER shuffle_weight(layout=(16,16)) bytes.
struct PreshuffleParams {
  uint64_t n = 0;
  uint64_t k = 0;
};

// C (m x n) = A (m x k) * B (n x k)^T; operand layouts are the kernel's contract (contract.h).
// Optional operand layouts (all default to the plain layouts of each kernel's contract):
//   mx_scales_swizzled  MX GEMMs: sa and sb in the NVIDIA 128x4 swizzle (rows padded to 128,
//                       scale columns to 4; docs/layouts.md §4) instead of row-major
//   as_ld               gemm_blockscale_bpreshuffle: leading dimension of the column-major As
//                       (0 = M; align4(M) for DeepGEMM's TMA-aligned As, docs/layouts.md §3.2)
//   n_offset            blockscale GEMMs on a TP shard: global row of local row 0; bs then holds
//                       the 128-row weight blocks from n_offset/128 on
//   launch_index        set by the launcher (host model, device launcher): how many launches of
//                       this kernel came before; only the planted Z30 reads it
//   a_format, b_format  gemm_blockscale_fnuz: the FNUZ format of A's and B's codes (the call's
//                       dtypes); the other FP8 GEMMs read E4M3FN whatever these say
// gemm_mx_dot_scaled takes sb == nullptr (tl.dot_scaled rhs_scale=None): B unscaled, unit scale.
struct GemmParams {
  uint64_t m = 0;
  uint64_t n = 0;
  uint64_t k = 0;
  OutDtype out = OutDtype::kFp32;
  uint64_t faults = 0;  // kernel_fault bits (Z9, Z10, Z12, Z13, Z16, Z17, Z18, Z20, Z22, Z27,
                        // Z28, Z30, Z38)
  bool mx_scales_swizzled = false;
  uint64_t as_ld = 0;
  uint64_t n_offset = 0;
  uint64_t launch_index = 0;
  Fp8Format a_format = Fp8Format::kE4m3fn;
  Fp8Format b_format = Fp8Format::kE4m3fn;
  // Row-major scale grids (MX GEMMs' sa / sb, block GEMMs' As / Bs): the leading dimension in
  // elements (0 = the grid's column count; plugin.h: ld = cols unless the tensor's ld says
  // otherwise). Z46 (planted) reads with the column count whatever these say.
  uint64_t sa_ld = 0;
  uint64_t sb_ld = 0;
  // FP8 output (out == kE4m3fn, plugin.h revision 4): the 1 x 1 fp32 scale_result in the
  // launch's memory (the call's out_scale; the backend sets it from GemmArgs::out_scale). Z45
  // (planted) never reads it.
  const float* out_scale = nullptr;
  // Leading dimensions of A's and B's code rows in elements (0 = k): the k-grouped GEMM runs the
  // dense body on a group's K columns of rows K_total long (kernels/grouped_gemm.h).
  uint64_t a_ld = 0;
  uint64_t b_ld = 0;
};

// ---- FP4 kernels (docs/fp4.md §12) ------------------------------------------------------------
// MXFP4: E2M1 elements, blocks of 32, E8M0 scales (OCP rule); NVFP4: E2M1, blocks of 16, E4M3
// scales, a per-tensor global scale. E2M1 codes are packed two per byte, element 2i in the low
// nibble, every row starting on a byte (ceil(cols/2) bytes per row). Which of the two a launch
// is, is its kernel's (one row per scheme), never a parameter.
enum class GlobalDtype : uint8_t { kFp32 = dtypes::kF32, kBf16 = dtypes::kBf16 };
// The element format of a GEMM operand: packed E2M1, or E4M3FN one per byte (MXFP8 x MXFP4).
enum class Fp4Operand : uint8_t { kE2m1 = dtypes::kE2m1, kE4m3fn = dtypes::kE4m3fn };

// rows x cols fp32 / bf16 input -> packed codes rows x ceil(cols/2) bytes and scales rows x
// ceil(cols/block): MXFP4 ocp_mx (FLOOR with emax 2, RNE, a NaN block's codes 0) row-major;
// NVFP4 te_nvfp4_ref 1x16 (the global amax from `global`, one element of `global_dtype`), scales
// row-major or in the 128x4 swizzle.
struct Fp4QuantizeParams {
  uint64_t rows = 0;
  uint64_t cols = 0;
  InputDtype input = InputDtype::kFp32;
  GlobalDtype global_dtype = GlobalDtype::kFp32;
  bool swizzled_scales = false;
  uint64_t faults = 0;  // kernel_fault bits (Z31, Z32, Z34, Z35, Z36)
};

// Packed codes + scales (+ the fp32 global decode scale for NVFP4) -> fp32 or bf16 rows x cols.
struct Fp4DequantParams {
  uint64_t rows = 0;
  uint64_t cols = 0;
  OutDtype out = OutDtype::kBf16;
  uint64_t faults = 0;
  uint64_t scales_ld = 0;  // leading dimension of the row-major scales (0: their column count)
};

// C (m x n) = A (m x k) * B (n x k)^T: MXFP4 (A packed E2M1 or E4M3FN, B packed E2M1, E8M0
// scales) or NVFP4 (both packed E2M1, E4M3 scales, alpha = fl(global_a * global_b)); scales
// row-major or both in the 128x4 swizzle.
struct Fp4GemmParams {
  uint64_t m = 0;
  uint64_t n = 0;
  uint64_t k = 0;
  Fp4Operand a_format = Fp4Operand::kE2m1;
  OutDtype out = OutDtype::kFp32;
  bool swizzled_scales = false;
  uint64_t faults = 0;  // kernel_fault bits (Z33, Z37, Z48)
  // Leading dimensions of row-major sa / sb (0: the grid's column count), as GemmParams.
  uint64_t sa_ld = 0;
  uint64_t sb_ld = 0;
};

// ---- Grouped GEMMs (mixture of experts; contract.h GroupedClause, gpu/kernels/grouped_gemm.h) --
// `g` is the GEMM of one group: m = the rows of A and out (all groups; masked: E * max_m), n =
// N per expert, k = K, out, faults, mx_scales_swizzled (per group: each group's scale rows padded
// to 128, docs/grouped.md §7), sa_ld / sb_ld. B is (E * N) x K, its scales stacked likewise.
// offsets (E int32, device memory): kEnds / kStarts / kMasked as the contract's GroupedClause.
// kKEnds (k-grouped, the MoE wgrad): A is m x k and B n x k (k = K_total), the offsets are the
// groups' cumulative K ends, out is (E * m) x n (group e's m x n at row e * m); A's scales one
// m x (K_e / 128) grid per group and B's one ceil(n / 128) x (K_e / 128) grid per group, each
// row-major, concatenated in group order (docs/grouped.md §3).
enum class GroupedOffsets : uint8_t { kEnds, kStarts, kMaskedCounts, kKEnds };
struct GroupedGemmParams {
  GemmParams g;
  uint64_t groups = 0;
  GroupedOffsets offsets = GroupedOffsets::kEnds;
};

// Planted faults for testing the harness: fp32 output of `count` elements.
struct FaultParams {
  uint64_t count = 0;
  uint64_t skip = 0;  // the element the skip fault leaves unwritten
};

}  // namespace mxgate::gpu
