// The built-in kernel table: one row per kernel. Adding a kernel is one row here plus its own
// sources (the per-element body in gpu/kernels/*.h, the device launcher in gpu/kernels/NAME.hip
// declared in launch.h, the host model in gpu/host declared in models.h; a block-scale GEMM
// variant is one more instance of gemm_blockscale.hip's and models.h's templates); the backends,
// the built-in implementation (impl/builtin.h), the contracts, the properties, the launch
// counters and `mxgate impls` pick it up from the row. docs/plugins.md §2.
//
// Each contract is the kernel's as data: the dimensions, dtypes and layouts it reads and writes,
// the convention(s) it claims, and for GEMMs the declared summation order (the comments of
// gpu/kernels/gemm.h, bit for bit) with the accumulator model its bound uses.
#define MXGATE_DEVICE_ENTRY __attribute__((weak))
#include "gpu/kernels/launch.h"
#undef MXGATE_DEVICE_ENTRY

#include <vector>

#include "gpu/host/models.h"
#include "gpu/kernel.h"

namespace mxgate::gpu {
namespace {

using contract::Contract;
using contract::DeclaredOrder;
using contract::Dtype;
using contract::dtype_bit;
using contract::Family;
using contract::GroupLayout;
using contract::Layout;
using contract::layout_bit;
using contract::OffsetsKind;

constexpr contract::DtypeMask kF32 = dtype_bit(Dtype::kF32);
constexpr contract::DtypeMask kBf16 = dtype_bit(Dtype::kBf16);
constexpr contract::DtypeMask kE4m3 = dtype_bit(Dtype::kE4m3fn);
constexpr contract::DtypeMask kE8m0 = dtype_bit(Dtype::kE8m0);
constexpr contract::DtypeMask kFp8 = dtype_bit(Dtype::kE4m3fn) | dtype_bit(Dtype::kE5m2) |
                                     dtype_bit(Dtype::kE4m3fnuz) | dtype_bit(Dtype::kE5m2fnuz);
constexpr contract::DtypeMask kBytes = kFp8 | dtype_bit(Dtype::kE8m0);
constexpr contract::LayoutMask kRow = layout_bit(Layout::kRowMajor);
constexpr contract::LayoutMask kRowOrSwizzle = kRow | layout_bit(Layout::kNvSwizzle128x4);
constexpr contract::LayoutMask kColOrTma =
    layout_bit(Layout::kColMajor) | layout_bit(Layout::kTmaColMajor);
constexpr contract::LayoutMask kPreshuffled = layout_bit(Layout::kAiterShuffle16x16);
constexpr contract::DtypeMask kE2m1 = dtype_bit(Dtype::kE2m1);

// Orders mirror the comments in kernels/gemm.h.
constexpr DeclaredOrder kMxPerPartial32{32, true, 1, 2};
constexpr DeclaredOrder kMxPerProduct32{32, false, 3, 0};
constexpr DeclaredOrder kBlockPerPartial128{128, true, 1, 2};
constexpr DeclaredOrder kWholeK{0, true, 1, 0};
// Rows per M tile of the production kernels the GEMMs model (CUTLASS / CK block-scaled tiles,
// tl.dot_scaled BLOCK_M): kernels/gemm.h kGemmWaveRows.
constexpr uint32_t kMTile = 128;
constexpr DeclaredOrder kNvPerPartial16{16, true, 1, 2};

// The FNUZ block GEMMs' shared clauses: A and B E4M3FNUZ or E5M2FNUZ, fp32 scales of 1x128 (A)
// and 128x128 (B, row-major, TP shards by n_offset), f32 or bf16 out, 128-row M waves, each
// 128-block summed by CDNA3 MFMA steps of 16 k from zero and then scaled into an fp32
// accumulator, bit for bit the model's simulation; `c` sets the layouts that differ and the notes
// (plain B: row-major unless set).
Contract fnuz_block_gemm(Contract c) {
  c.a_dtypes = c.b_dtypes = dtype_bit(Dtype::kE4m3fnuz) | dtype_bit(Dtype::kE5m2fnuz);
  c.out_dtypes = kF32 | kBf16;
  c.b_scale_layouts = kRow;
  if (c.b_layouts == 0) c.b_layouts = kRow;
  c.scale_dtype = Dtype::kF32;
  c.a_block_rows = 1;
  c.a_block_cols = c.b_block_rows = c.b_block_cols = 128;
  c.accumulator = "cdna3_fp8_mfma:chunk_k=128";
  c.simulated_order = true;
  c.n_offset = true;
  c.m_tile = kMTile;
  return c;
}

// The grouped FP8 block GEMMs' shared clauses: gemm_blockscale's per group (E4M3FN A and B, fp32
// scales of 1x128 (A, row-major) and 128x128 (B, each expert's grid stacked), f32 or bf16 out, its
// order); `c` sets the grouped clause and the notes.
Contract grouped_block_gemm(Contract c) {
  c.a_dtypes = c.b_dtypes = kE4m3;
  c.out_dtypes = kF32 | kBf16;
  c.a_scale_layouts = c.b_scale_layouts = c.b_layouts = kRow;
  c.scale_dtype = Dtype::kF32;
  c.a_block_rows = 1;
  c.a_block_cols = c.b_block_rows = c.b_block_cols = 128;
  c.accumulator = "fp32_rn";
  c.order = kBlockPerPartial128;
  c.m_tile = kMTile;
  return c;
}

// One row; `host` and `device` must have the same signature (the kind of the kernel).
template <class Entry>
KernelDef row(std::string_view name, std::optional<Family> family, Entry host, Entry device,
              Contract contract, bool (*device_available)() = nullptr) {
  return {name, family, host, device, device_available, std::move(contract)};
}

// Each row's contract names only the clauses it sets (designated initializers); every other
// field keeps its default, which is what -Wmissing-field-initializers would flag.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const std::vector<KernelDef>& table() {
  static const std::vector<KernelDef> kTable = {
      row("quantize_mx", Family::kQuantizeMx, &host::quantize_mx, &device::launch_quantize_mx,
          {.a_dtypes = kF32 | kBf16,
           .out_dtypes = kE4m3,
           .a_scale_layouts = kRow,
           .scale_dtype = Dtype::kE8m0,
           .a_block_rows = 1,
           .a_block_cols = 32,
           .conventions = {"ocp_mx", "torchao_rceil"},
           .notes =
               "blocks of 32 along K; a short last block is padded with 0 (docs/formats.md §3)"}),
      row("quantize_mx_hw", Family::kQuantizeMx, &host::quantize_mx_hw,
          &device::launch_quantize_mx_hw,
          {.a_dtypes = kF32 | kBf16,
           .out_dtypes = kE4m3,
           .a_scale_layouts = kRow,
           .scale_dtype = Dtype::kE8m0,
           .a_block_rows = 1,
           .a_block_cols = 32,
           .conventions = {"torchao_rceil"},
           .element_convention = "cuda_satfinite",
           .notes = "as quantize_mx, RCEIL scales; elements by cvt.rn.satfinite.e4m3x2.f32 "
                    "(NVIDIA sm_89+; docs/formats.md §1.2.1)"},
          &device::quantize_mx_hw_available),
      row("dequant_mx_to_bf16", Family::kDequantize, &host::dequant_mx_to_bf16,
          &device::launch_dequant_mx_to_bf16,
          {.a_dtypes = kFp8,
           .out_dtypes = kBf16,
           .a_scale_layouts = kRow,
           .scale_dtype = Dtype::kE8m0,
           .a_block_rows = 1,
           .a_block_cols = 32,
           .conventions = {"ocp_mx"},
           .notes = "E4M3FN, E5M2, E4M3FNUZ or E5M2FNUZ codes (docs/formats.md §1.1); fp32 "
                    "product, one RNE to bf16 (docs/formats.md §3.5)"}),
      row("upcast_e8m0", Family::kUpcastE8m0, &host::upcast_e8m0, &device::launch_upcast_e8m0,
          {.a_dtypes = kE8m0,
           .out_dtypes = kF32,
           .conventions = {"ocp_mx"},
           .notes = "the correct rule (0x00 = 2^-127, 0xFF = NaN); dispatch's zoo fault Z5 "
                    "launches it with the shift rule (docs/formats.md §2.2)"}),
      row("preshuffle_weight", Family::kPreshuffle, &host::preshuffle_weight,
          &device::launch_preshuffle_weight,
          {.m = {.align = 16},
           .k = {.align = 32},
           .a_dtypes = kBytes,
           .out_dtypes = kBytes,
           .notes = "AITER shuffle_weight asserts N % 16 == 0 and K % 32 == 0 (rows = N; "
                    "docs/layouts.md §1)"}),
      // The GEMMs, the most permissive contract first: generators shrink toward it.
      row("gemm_mx_dequant", Family::kGemmMx, &host::gemm_mx_dequant,
          &device::launch_gemm_mx_dequant,
          {.k = {.align = 32},
           .a_dtypes = kE4m3,
           .b_dtypes = kE4m3,
           .out_dtypes = kF32 | kBf16,
           .a_scale_layouts = kRowOrSwizzle,
           .b_scale_layouts = kRowOrSwizzle,
           .b_layouts = kRow,
           .scale_dtype = Dtype::kE8m0,
           .a_block_rows = 1,
           .a_block_cols = 32,
           .b_block_rows = 1,
           .b_block_cols = 32,
           .conventions = {"ocp_mx"},
           .accumulator = "fp32_rn",
           .notes = "one E8M0 scale per 32 along K; K masked; A and B scales share a layout",
           .order = kMxPerProduct32,
           .m_tile = kMTile}),
      row("gemm_blockscale", Family::kGemmBlock, &host::blockscale_gemm<false, false, false>,
          &device::launch_gemm_blockscale,
          {.a_dtypes = kE4m3,
           .b_dtypes = kE4m3,
           .out_dtypes = kF32 | kBf16 | kE4m3,
           .a_scale_layouts = kRow,
           .b_scale_layouts = kRow,
           .b_layouts = kRow,
           .scale_dtype = Dtype::kF32,
           .a_block_rows = 1,
           .a_block_cols = 128,
           .b_block_rows = 128,
           .b_block_cols = 128,
           .element_convention = "cuda_satfinite",
           .accumulator = "fp32_rn",
           .notes = "AITER gemm_a8w8_blockscale (docs/layouts.md §2.1); K masked; E4M3FN output "
                    "fl32(v * scale_result) cast satfinite (torch._scaled_mm scale_result)",
           .order = kBlockPerPartial128,
           .n_offset = true,
           .m_tile = kMTile}),
      row("gemm_blockscale_bpreshuffle", Family::kGemmBlock,
          &host::blockscale_gemm<true, false, false>, &device::launch_gemm_blockscale_bpreshuffle,
          {.n = {.align = 16},
           .k = {.align = 32},
           .a_dtypes = kE4m3,
           .b_dtypes = kE4m3,
           .out_dtypes = kF32 | kBf16,
           .a_scale_layouts = kColOrTma,
           .b_scale_layouts = kRow,
           .b_layouts = kPreshuffled,
           .scale_dtype = Dtype::kF32,
           .a_block_rows = 1,
           .a_block_cols = 128,
           .b_block_rows = 128,
           .b_block_cols = 128,
           .accumulator = "fp32_rn",
           .notes = "AITER gemm_a8w8_blockscale_bpreshuffle: As column-major, ld = M or "
                    "align4(M) (TMA); B shuffle_weight (16,16) (docs/layouts.md §1.1, §2.1)",
           .order = kBlockPerPartial128,
           .n_offset = true,
           .m_tile = kMTile}),
      row("gemm_mx_dot_scaled", Family::kGemmMx, &host::gemm_mx_dot_scaled,
          &device::launch_gemm_mx_dot_scaled,
          {.k = {.align = 128},
           .a_dtypes = kE4m3,
           .b_dtypes = kE4m3,
           .out_dtypes = kF32 | kBf16,
           .a_scale_layouts = kRowOrSwizzle,
           .b_scale_layouts = kRowOrSwizzle,
           .b_layouts = kRow,
           .scale_dtype = Dtype::kE8m0,
           .a_block_rows = 1,
           .a_block_cols = 32,
           .b_block_rows = 1,
           .b_block_cols = 32,
           .conventions = {"ocp_mx"},
           .accumulator = "fp32_rn",
           .notes =
               "tl.dot_scaled with BLOCK_K = 128, unmasked K tiles (docs/formats.md §4); A and "
               "B scales share a layout; B scales may be absent (rhs_scale=None: unit scale)",
           .order = kMxPerPartial32,
           .m_tile = kMTile,
           .b_scale_optional = true}),
      row("gemm_bf16", Family::kGemmBf16, &host::gemm_bf16, &device::launch_gemm_bf16,
          {.a_dtypes = kBf16,
           .b_dtypes = kBf16,
           .out_dtypes = kF32 | kBf16,
           .b_layouts = kRow,
           .accumulator = "fp32_rn",
           .notes = "bf16 x bf16, fp32 accumulation",
           .order = kWholeK}),
      // The harness's own test kernels (no op): planted bugs the guard check and the poison
      // must catch (tests/test_gpu_checks.h).
      row("fault_write_past_end", std::nullopt, &host::fault_write_past_end,
          &device::launch_fault_write_past_end,
          {.notes = "planted fault: writes one element past its output (tests only)"}),
      row("fault_skip_element", std::nullopt, &host::fault_skip_element,
          &device::launch_fault_skip_element,
          {.notes = "planted fault: leaves one output element unwritten (tests only)"}),
      // Detection work (docs/bug_classes.md §2): the DeepGEMM UE8M0 recipe.
      row("quantize_act1x128_ue8m0", Family::kQuantizeBlock, &host::quantize_act1x128_ue8m0,
          &device::launch_quantize_act1x128_ue8m0,
          {.a_dtypes = kF32 | kBf16,
           .out_dtypes = kE4m3,
           .a_scale_layouts = kRow,
           .scale_dtype = Dtype::kF32,
           .a_block_rows = 1,
           .a_block_cols = 128,
           .conventions = {"deepgemm"},
           .notes = "DeepGEMM per_token_cast_to_fp8(use_ue8m0): amax clamped at 1e-4, "
                    "ceil_to_ue8m0(amax / 448), x * (1 / sf), satfinite cast "
                    "(docs/formats.md §5.2)",
           .ue8m0_scales = true}),
      row("gemm_blockscale_ue8m0", Family::kGemmBlock, &host::blockscale_gemm<false, true, false>,
          &device::launch_gemm_blockscale_ue8m0,
          {.a_dtypes = kE4m3,
           .b_dtypes = kE4m3,
           .out_dtypes = kF32 | kBf16,
           .a_scale_layouts = kRow,
           .b_scale_layouts = kRow,
           .b_layouts = kRow,
           .scale_dtype = Dtype::kF32,
           .a_block_rows = 1,
           .a_block_cols = 128,
           .b_block_rows = 128,
           .b_block_cols = 128,
           .accumulator = "fp32_rn",
           .notes = "DeepGEMM's SM100 recipe: fp32 scales packed four to a word as UE8M0 (each "
                    "the E8M0 value of its exponent byte; docs/formats.md §5.2); K masked",
           .order = kBlockPerPartial128,
           .m_tile = kMTile,
           .ue8m0_scales = true}),
      // AITER's MI300 (CDNA3) path: FNUZ codes summed by the FP8 MFMA, whose model is the
      // registry's cdna3_fp8_mfma (docs/accumulators.md §4.2) promoted once per 128-block.
      row("gemm_blockscale_fnuz", Family::kGemmBlock, &host::blockscale_gemm<false, false, true>,
          &device::launch_gemm_blockscale_fnuz,
          fnuz_block_gemm({.a_scale_layouts = kRow,
                           .notes = "AITER gemm_a8w8_blockscale on MI300 (gfx942): each 128-block "
                                    "summed by CDNA3 MFMA steps of 16 k, then scaled into fp32 "
                                    "(docs/layouts.md §2.1); K masked"})),
      row("gemm_blockscale_fnuz_bpreshuffle", Family::kGemmBlock,
          &host::blockscale_gemm<true, false, true>,
          &device::launch_gemm_blockscale_fnuz_bpreshuffle,
          fnuz_block_gemm({.n = {.align = 16},
                           .k = {.align = 32},
                           .a_scale_layouts = kColOrTma,
                           .b_layouts = kPreshuffled,
                           .notes = "AITER gemm_a8w8_blockscale_bpreshuffle on MI300: As "
                                    "column-major, ld = M or align4(M); B shuffle_weight (16,16) "
                                    "(docs/layouts.md §1.1, §2.1)"})),
      // The FP4 kernels (gpu/kernels/fp4_*.h, docs/fp4.md §12): E2M1 packed two per byte, element
      // 2i in the low nibble; any K (odd K ends a packed row in a padding nibble).
      row("quantize_mxfp4", Family::kQuantizeMx, &host::quantize_mxfp4,
          &device::launch_quantize_mxfp4,
          {.a_dtypes = kF32 | kBf16,
           .out_dtypes = kE2m1,
           .a_scale_layouts = kRow,
           .scale_dtype = Dtype::kE8m0,
           .a_block_rows = 1,
           .a_block_cols = 32,
           .conventions = {"ocp_mx"},
           .notes = "MXFP4: FLOOR with emax 2, E2M1 RNE saturating at 6, a NaN block's codes 0 "
                    "(docs/fp4.md §4.1)"}),
      row("quantize_nvfp4", Family::kQuantizeNvfp4, &host::quantize_nvfp4,
          &device::launch_quantize_nvfp4,
          {.a_dtypes = kF32 | kBf16,
           .out_dtypes = kE2m1,
           .a_scale_layouts = kRowOrSwizzle,
           .scale_dtype = Dtype::kE4m3fn,
           .a_block_rows = 1,
           .a_block_cols = 16,
           .conventions = {"te_nvfp4_ref"},
           .notes = "NVFP4 1x16, TE reference recipe from the global amax (fp32 or bf16): "
                    "ge = min(2688 / amax, FLT_MAX), E4M3 scales clamped to 448 (docs/fp4.md §6.1)",
           .global_dtypes = kF32 | kBf16}),
      row("dequant_mxfp4", Family::kDequantize, &host::dequant_mxfp4, &device::launch_dequant_mxfp4,
          {.a_dtypes = kE2m1,
           .out_dtypes = kF32 | kBf16,
           .a_scale_layouts = kRow,
           .scale_dtype = Dtype::kE8m0,
           .a_block_rows = 1,
           .a_block_cols = 32,
           .conventions = {"ocp_mx"},
           .notes = "fl32(code * 2^(byte - 127)), OCP E8M0 rule; bf16 rounds that once more"}),
      row("dequant_nvfp4", Family::kDequantizeNvfp4, &host::dequant_nvfp4,
          &device::launch_dequant_nvfp4,
          {.a_dtypes = kE2m1,
           .out_dtypes = kF32 | kBf16,
           .a_scale_layouts = kRow,
           .scale_dtype = Dtype::kE4m3fn,
           .a_block_rows = 1,
           .a_block_cols = 16,
           .conventions = {"te_nvfp4_ref"},
           .notes = "fl32(fl32(code * scale) * global_decode); bf16 rounds that once more "
                    "(docs/fp4.md §6.6)",
           .global_dtypes = kF32}),
      row("gemm_mxfp4", Family::kGemmMx, &host::gemm_mxfp4, &device::launch_gemm_mxfp4,
          {.a_dtypes = kE2m1 | kE4m3,
           .b_dtypes = kE2m1,
           .out_dtypes = kF32 | kBf16,
           .a_scale_layouts = kRowOrSwizzle,
           .b_scale_layouts = kRowOrSwizzle,
           .b_layouts = kRow,
           .scale_dtype = Dtype::kE8m0,
           .a_block_rows = 1,
           .a_block_cols = 32,
           .b_block_rows = 1,
           .b_block_cols = 32,
           .conventions = {"ocp_mx"},
           .accumulator = "fp32_rn",
           .notes = "MXFP4 x MXFP4 and MXFP8 x MXFP4 (A e4m3fn); K tiles of 128, data and scales "
                    "masked; A and B scales share a layout",
           .order = kMxPerPartial32}),
      row("gemm_nvfp4", Family::kGemmNvfp4, &host::gemm_nvfp4, &device::launch_gemm_nvfp4,
          {.a_dtypes = kE2m1,
           .b_dtypes = kE2m1,
           .out_dtypes = kF32 | kBf16,
           .a_scale_layouts = kRowOrSwizzle,
           .b_scale_layouts = kRowOrSwizzle,
           .b_layouts = kRow,
           .scale_dtype = Dtype::kE4m3fn,
           .a_block_rows = 1,
           .a_block_cols = 16,
           .b_block_rows = 1,
           .b_block_cols = 16,
           .accumulator = "fp32_rn",
           .notes = "NVFP4 x NVFP4: E4M3 1x16 scales, C = fl32(fl32(ga * gb) * acc) "
                    "(docs/fp4.md §8); A and B scales share a layout",
           .order = kNvPerPartial16,
           .global_dtypes = kF32}),
      // The grouped (mixture-of-experts) GEMMs (kernels/grouped_gemm.h, docs/grouped.md): each
      // group the dense kernel above it on its rows, so the same order and accumulator.
      row("grouped_gemm_blockscale_contiguous", Family::kGroupedGemmBlock,
          &host::grouped_gemm_block, &device::launch_grouped_gemm_block,
          grouped_block_gemm({.notes = "m-grouped contiguous FP8 block (DeepSeek 1x128 / 128x128 "
                                       "fp32 scales): cumulative end offsets (torch._grouped_mm "
                                       "offs), any alignment; rows past the last end not written",
                              .grouped = contract::GroupedClause{.layout = GroupLayout::kContiguous,
                                                                 .offsets = OffsetsKind::kEnds,
                                                                 .offset_align = 1}})),
      row("grouped_gemm_blockscale_masked", Family::kGroupedGemmBlock, &host::grouped_gemm_block,
          &device::launch_grouped_gemm_block,
          grouped_block_gemm({.notes = "masked / batched FP8 block (DeepGEMM masked decode, vLLM "
                                       "batched experts): A (E * max_m) x K, a valid-row count "
                                       "per expert; rows past it never read, never written",
                              .grouped = contract::GroupedClause{.layout = GroupLayout::kMasked,
                                                                 .offsets = OffsetsKind::kEnds,
                                                                 .offset_align = 1}})),
      row("grouped_gemm_blockscale_kgrouped", Family::kGroupedGemmBlock, &host::grouped_gemm_block,
          &device::launch_grouped_gemm_block,
          grouped_block_gemm({.k = {.align = 128},
                              .notes = "k-grouped FP8 block (the MoE weight gradient, DeepGEMM "
                                       "k-grouped wgrad): A M x K, B N x K, out E x M x N; "
                                       "cumulative K ends, each a multiple of 128; an empty "
                                       "group's slice written +0; scales one grid per group",
                              .grouped = contract::GroupedClause{.layout = GroupLayout::kKGrouped,
                                                                 .offsets = OffsetsKind::kEnds,
                                                                 .offset_align = 128}})),
      row("grouped_gemm_mx_contiguous", Family::kGroupedGemmMx, &host::grouped_gemm_mx,
          &device::launch_grouped_gemm_mx,
          {.k = {.align = 32},
           .a_dtypes = kE4m3,
           .b_dtypes = kE4m3,
           .out_dtypes = kF32 | kBf16,
           .a_scale_layouts = kRowOrSwizzle,
           .b_scale_layouts = kRowOrSwizzle,
           .b_layouts = kRow,
           .scale_dtype = Dtype::kE8m0,
           .a_block_rows = 1,
           .a_block_cols = 32,
           .b_block_rows = 1,
           .b_block_cols = 32,
           .conventions = {"ocp_mx"},
           .accumulator = "fp32_rn",
           .notes = "m-grouped contiguous MXFP8 (gemm_mx_dequant per group): start offsets, each a "
                    "multiple of 32 (MSLK PR #63); scales row-major or the 128x4 swizzle per "
                    "group, each group's rows padded to 128 (TransformerEngine PR #2924)",
           .order = kMxPerProduct32,
           .m_tile = kMTile,
           .grouped = contract::GroupedClause{.layout = GroupLayout::kContiguous,
                                              .offsets = OffsetsKind::kStarts,
                                              .offset_align = 32}}),
  };
  return kTable;
}
#pragma GCC diagnostic pop

}  // namespace

std::span<const KernelDef> builtin_kernel_table() { return table(); }

}  // namespace mxgate::gpu
