// The bug zoo (docs/bug_classes.md §2): named switches that re-create, in the dispatch framework,
// the silent bug classes that live there. Off by default; a layer carries its own set, chosen at
// run time (tests, `mxgate zoo`, `MXGATE_FAULTS`). Each fault changes behaviour on its minimal case
// (tests/test_dispatch_faults.cpp). Z1-Z7 and Z19 live in the dispatch logic; Z8-Z18, Z20-Z30,
// Z31-Z37 (the FP4 kernels), Z38 (the FNUZ GEMM), Z39 (the MX GEMM), Z40-Z51 and Z52-Z59 (the
// grouped GEMMs) live in the quantizers, dequantizers and GEMM kernels under test (gpu/kernels,
// switched by the 64-bit kernel_fault mask of gpu/kernels/params.h: kernel_fault_bits maps a set
// to it), never in reference/. A fault's number is its name's ("z31_..." is Z31), not its place
// in the enum.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mxgate::dispatch {

enum class Fault : uint8_t {
  kZ1NoPerStepFallback,       // apply drops the third branch: an fp8 weight goes to dot_scaled
  kZ2IgnoreActScaleOrder,     // a pre-quantized activation's scales are used whatever their order
  kZ3NoPreshuffleGuard,       // model and linear kernel both shuffle, no weight_already_preshuffled
                              // check
  kZ4RelayoutDirectlyRead,    // is_bmm / skip_weight_relayout ignored: the weight is preshuffled
  kZ5ShiftE8m0Upcast,         // e8m0 weight scales upcast by byte << 23 (0x00 -> 0, 0xFF -> Inf)
  kZ6PerStepRematerialize,    // unaligned-K MXFP8 weight dequantized on every apply, not at load
  kZ7EarlyReturnSkipsUpcast,  // a directly-read layer returns before the e8m0 upcast; apply reads
                              // the e8m0 bytes as fp32
  kZ8Log2ExponentCeil,        // RCEIL scale byte through ceilf(log2f(amax/448)) (quantize_mx)
  kZ9DropTrailingKBlock,      // blockscale GEMMs loop over floor(K/128): partial last block lost
  kZ10ReadScalePadding,       // swizzled MX GEMM applies the padded scale columns (0 * garbage)
  kZ11WrongFp8Max,            // quantize_mx clamps E4M3FN elements to the FNUZ max 240, not 448
  kZ12IgnoreAsStride,         // TMA-aligned column-major As (stride align4(M)) read with stride M
  kZ13SwizzleReadLinear,      // NVIDIA 128x4 swizzled MX scales read as plain row-major
  kZ14UnroundedScalePayload,  // payload quantized with amax/448, stored scale a power of two
  kZ15Bf16AmaxDoubleRound,    // amax rounded fp32 -> bf16 before the e8m0 scale is chosen
  kZ16ShardBlockIndex,        // TP shard with N % 128 != 0: weight block of local row n is n/128
  // Detection work (docs/bug_classes.md §2): Z19 in dispatch, the others in gpu/kernels.
  kZ17SplitKSlice0Scales,     // bpreshuffle split-K: every K slice applies slice 0's scales
  kZ18WaveReappliesAScale,    // blockscale: M wave w > 0 applies wave w-1's A scale again
  kZ19Fp32ScaleAsUe8m0,       // fp32 block weight scales upcast as if they were e8m0 bytes
  kZ20TruncateScaleExponent,  // blockscale: each fp32 scale reduced to its exponent
  kZ21MinClampAfterPow2,      // UE8M0 quantizer: min-scale clamp after pow2 rounding
  kZ22Ue8m0PackLeak,          // UE8M0 GEMM: 4 exponents packed with mantissa bits leaking in
  kZ23E8m0NanOnValue,         // e8m0 upcast: NaN tested on the decoded value (128.0 -> NaN)
  kZ24FnuzNanAsNegZero,       // dequantize: FNUZ NaN 0x80 -> -0.0
  kZ25E4m3NanAs480,           // dequantize: E4M3FN 0x7F / 0xFF -> +-480
  kZ26E5m2InfAsFinite,        // dequantize: E5M2 +Inf -> 65536 (exponent 31 as normal)
  kZ27DefaultScaleByteOne,    // dot_scaled: an absent scale becomes byte 1, not 127
  kZ28KTailScaleUnmasked,     // MX dequant GEMM: K-tail tile's scale loads unmasked
  kZ29Offset32Bit,            // dequantize: element offsets wrap at 2^31 (device only)
  kZ30LaunchCounterOrder,     // gemm_bf16: summation order flips on every other launch
  // The FP4 kernels (docs/bug_classes.md §2).
  kZ31NibbleOrderSwapped,     // quantize_mxfp4 packs element 2i in the high nibble
  kZ32E2m1TiesAway,           // quantize_mxfp4 rounds E2M1 ties away from zero
  kZ33E4m3SubnormalAsNormal,  // gemm_nvfp4 decodes a subnormal E4M3 block scale as a normal
  kZ34Nvfp4Amax32,            // quantize_nvfp4 takes each block's amax over 32 elements
  kZ35Bf16GlobalAsFp32,       // quantize_nvfp4 reads a bf16 global amax as fp32
  kZ36ZeroAmaxNanScale,       // quantize_nvfp4: zero block amax -> 1, unclamped E4M3 cast (NaN)
  kZ37ScaleTailUnmasked,      // gemm_mxfp4 reads the scale columns of its last K tile unmasked
  // The FNUZ block GEMM (docs/bug_classes.md §2).
  kZ38FnuzDecodedAsOcp,  // gemm_blockscale_fnuz decodes FNUZ codes as E4M3FN / E5M2 (2x values)
  kZ39E8m0ZeroAsZero,    // gemm_mx_dequant decodes an E8M0 0x00 scale as +0
  // Scale padding, encoding, indexing and decode (docs/bug_classes.md §2, Z40-Z49).
  kZ40ScalePad127,            // gemm_mx_dequant pads K to 256 with unmasked data, scale byte 127
  kZ41E8m0Bias125,            // quantize_mxfp4 stores its scale bytes with bias 125
  kZ42FnuzSizedScale,         // quantize_act1x128_ue8m0 sizes its scale for the FNUZ max 240
  kZ43ScaleSliceNotAdvanced,  // row-major block GEMMs apply K block 0's scales to every block
  kZ44ZeroRowOneKTile,        // block GEMMs, K = 128: a tiny row scale scales the whole M tile
  kZ45ScaleResultDropped,     // gemm_blockscale's FP8 output ignores scale_result (out_scale)
  kZ46ScaleLdIgnored,         // FP8 GEMMs read row-major scales with ld = their column count
  kZ47SwizzleOtherArch,       // MX GEMMs read the 128x4 tile with lane and sub-block exchanged
  kZ48Ue4m3TopBinadeInf,      // gemm_nvfp4 decodes UE4M3 exponent field 15 as Inf / NaN
  kZ49Fp32ScaleDaz,           // block GEMMs flush a subnormal fp32 scale to zero
  // E8M0 NaN scale decode (docs/bug_classes.md §6)
  kZ50E8m0NanAsInf,  // MX GEMMs decode an E8M0 0xFF scale as +Inf, not NaN
  kZ51E8m0NanAsMax,  // MX GEMMs decode an E8M0 0xFF scale as 2^127, not NaN
  // MoE grouped GEMMs (Z52-Z59)
  kZ52EmptyGroupStaleAccumulator,  // masked: an expert with count 0 stores a stale tile
  kZ53WalkStopsAtEmptyExpert,      // contiguous: experts after a zero-token one never written
  kZ54TileExpertFromFirstRow,      // contiguous: a 128-row tile uses its first row's expert
  kZ55StraddlingTileFirstGroup,    // contiguous MX: a tile across two groups computes the first
  kZ56MaskedRowsPastCount,         // masked: rows past the count up to a multiple of 64 written
  kZ57GroupSwizzleUnpadded,        // per-group 128x4 scales read as one swizzle over all rows
  kZ58NextExpertTailScales,        // the last K tile reads the next expert's B scales
  kZ59KEmptyStaleAccumulator,      // k-grouped: an empty K group stores the last accumulator
};
inline constexpr std::size_t kFaultCount = 59;

std::span<const Fault> all_faults();
std::string_view to_string(Fault f);  // "z1_no_per_step_fallback", ...
std::optional<Fault> parse_fault(std::string_view s);
// The class number of docs/bug_classes.md §2, from the name: 31 for "z31_nibble_order_swapped".
int fault_number(Fault f);

class Faults {
 public:
  Faults() = default;
  Faults(std::initializer_list<Fault> faults) {
    for (Fault f : faults) enable(f);
  }
  void enable(Fault f) { bits_ |= bit(f); }
  void enable(const Faults& other) { bits_ |= other.bits_; }
  bool has(Fault f) const { return (bits_ & bit(f)) != 0; }
  bool none() const { return bits_ == 0; }
  // The enabled faults in all_faults() order.
  std::vector<Fault> list() const {
    std::vector<Fault> out;
    for (Fault f : all_faults()) {
      if (has(f)) out.push_back(f);
    }
    return out;
  }

 private:
  static uint64_t bit(Fault f) { return uint64_t{1} << static_cast<uint32_t>(f); }
  uint64_t bits_ = 0;
};

// The gpu::kernel_fault bits (gpu/kernels/params.h) of the kernel faults in `faults`; the
// dispatch apply path puts them into every launch's params, and a test can launch a kernel with
// them directly.
uint64_t kernel_fault_bits(const Faults& faults);

// "z1_no_per_step_fallback,z5_shift_e8m0_upcast" -> Faults; throws std::invalid_argument naming
// an unknown fault.
Faults parse_faults(std::string_view list);

// Faults planted in every new layer of this process: the comma list in the environment variable
// MXGATE_FAULTS (unset or empty: none). How a person reproduces a zoo bug in any program that
// runs dispatch; `mxgate gate` refuses to run while it is set. Throws std::invalid_argument
// naming an unknown fault.
inline constexpr const char* kFaultsEnv = "MXGATE_FAULTS";
Faults faults_from_environment();

}  // namespace mxgate::dispatch
