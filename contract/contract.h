// The C++ form of an op's contract (include/mxgate/plugin.h mxgate_contract, plus what the
// built-in kernels declare beyond the ABI) and of one call, with the check that names the first
// violated clause. Data only: no buffers, no backend. It sits beside the C ABI it mirrors, below
// gpu/ (whose kernel table declares contracts) and impl/ (which checks calls against them). The
// enums carry the ABI's values, so a plugin's numbers convert with a cast after validation
// (impl/plugin.cpp). docs/plugins.md §3 explains every field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mxgate/plugin.h"

namespace mxgate::contract {

// The op families (what a call's tensors hold: plugin.h mxgate_op_family).
enum class Family : uint32_t {
  kCast = MXGATE_OP_CAST,
  kQuantizeMx = MXGATE_OP_QUANTIZE_MX,
  kQuantizeBlock = MXGATE_OP_QUANTIZE_BLOCK,
  kDequantize = MXGATE_OP_DEQUANTIZE,
  kUpcastE8m0 = MXGATE_OP_UPCAST_E8M0,
  kPreshuffle = MXGATE_OP_PRESHUFFLE,
  kGemmMx = MXGATE_OP_GEMM_MX,
  kGemmBlock = MXGATE_OP_GEMM_BLOCK,
  kGemmBf16 = MXGATE_OP_GEMM_BF16,
  kQuantizeNvfp4 = MXGATE_OP_QUANTIZE_NVFP4,
  kDequantizeNvfp4 = MXGATE_OP_DEQUANTIZE_NVFP4,
  kGemmNvfp4 = MXGATE_OP_GEMM_NVFP4,
  kGroupedGemmBlock = MXGATE_OP_GROUPED_GEMM_BLOCK,
  kGroupedGemmMx = MXGATE_OP_GROUPED_GEMM_MX,
};
using FamilyMask = uint32_t;
constexpr FamilyMask family_bit(Family f) { return 1u << static_cast<uint32_t>(f); }
std::span<const Family> all_families();
std::string_view to_string(Family f);  // "cast", "quantize_mx", ..., "gemm_nvfp4"
std::optional<Family> parse_family(std::string_view s);
bool is_gemm(Family f);  // the grouped GEMMs included
// The grouped (mixture-of-experts) GEMMs: grouped_gemm_block, grouped_gemm_mx (docs/grouped.md).
bool is_grouped(Family f);
// The dense family whose operands (dtypes, scale blocks, summation) one group of a grouped family
// has: gemm_block for grouped_gemm_block, gemm_mx for grouped_gemm_mx, `f` itself otherwise.
Family dense_family(Family f);
// The NVFP4 families: E4M3 block scales of 1 x 16 and 1 x 1 global-scale tensors (plugin.h).
bool is_nvfp4(Family f);

// Where an op's buffers live. kBackend: the built-in ops run on whichever backend is under test
// (host models, HIP, CUDA) and use its memory.
enum class Memory : uint32_t {
  kHost = MXGATE_MEMORY_HOST,
  kCuda = MXGATE_MEMORY_CUDA,
  kHip = MXGATE_MEMORY_HIP,
  kBackend = 0x100,
};
std::string_view to_string(Memory m);  // "host", "cuda", "hip", "backend"

// The element types of common/dtypes.h, by their ABI codes.
enum class Dtype : uint32_t {
  kNone = MXGATE_DTYPE_NONE,
  kF32 = MXGATE_DTYPE_F32,
  kBf16 = MXGATE_DTYPE_BF16,
  kFp16 = MXGATE_DTYPE_FP16,
  kE4m3fn = MXGATE_DTYPE_E4M3FN,
  kE5m2 = MXGATE_DTYPE_E5M2,
  kE4m3fnuz = MXGATE_DTYPE_E4M3FNUZ,
  kE5m2fnuz = MXGATE_DTYPE_E5M2FNUZ,
  kE8m0 = MXGATE_DTYPE_E8M0,
  kE2m1 = MXGATE_DTYPE_E2M1,
  kE2m3 = MXGATE_DTYPE_E2M3,
  kE3m2 = MXGATE_DTYPE_E3M2,
  kE3m4 = MXGATE_DTYPE_E3M4,
  kE4m3ieee = MXGATE_DTYPE_E4M3IEEE,
  kE4m3b11fnuz = MXGATE_DTYPE_E4M3B11FNUZ,
  kMxint8 = MXGATE_DTYPE_MXINT8,
};
using DtypeMask = uint64_t;
constexpr DtypeMask dtype_bit(Dtype d) { return uint64_t{1} << static_cast<uint32_t>(d); }
std::span<const Dtype> all_dtypes();  // kNone excluded
std::string_view to_string(Dtype d);  // "f32", "bf16", "fp16", "e4m3fn", ..., "e3m2"
std::optional<Dtype> parse_dtype(std::string_view s);
// Bytes per stored element (common/dtypes.h): 4, 2 or 1; 0 for kNone and for the packed E2M1
// (tensor_bytes).
std::size_t dtype_bytes(Dtype d);
// Bytes of a rows x cols row-major tensor of `d` without padding: rows * ceil(cols / 2) for the
// packed E2M1 (two per byte, every row starting on a byte: plugin.h), rows * cols * dtype_bytes
// otherwise.
uint64_t tensor_bytes(Dtype d, uint64_t rows, uint64_t cols);
std::vector<Dtype> dtypes_in(DtypeMask mask);

// FP8 GEMM output (plugin.h revision 4): the families that may write it (gemm_mx, gemm_block)
// and the dtypes it may have (E4M3FN, E5M2). Such a call carries out_scale, a 1 x 1 F32
// scale_result, and writes cast(fl32(v * scale_result)), v the fp32 output.
bool takes_fp8_out(Family f);
bool is_fp8_out(Dtype d);
inline constexpr DtypeMask kFp8OutDtypes = dtype_bit(Dtype::kE4m3fn) | dtype_bit(Dtype::kE5m2);

enum class Layout : uint32_t {
  kRowMajor = MXGATE_LAYOUT_ROW_MAJOR,
  kColMajor = MXGATE_LAYOUT_COL_MAJOR,
  kTmaColMajor = MXGATE_LAYOUT_TMA_COL_MAJOR,
  kNvSwizzle128x4 = MXGATE_LAYOUT_NV_SWIZZLE_128X4,
  kAiterShuffle16x16 = MXGATE_LAYOUT_AITER_SHUFFLE_16X16,
};
using LayoutMask = uint32_t;
constexpr LayoutMask layout_bit(Layout l) { return 1u << static_cast<uint32_t>(l); }
std::span<const Layout> all_layouts();
std::string_view to_string(Layout l);  // "row_major", ..., "aiter_shuffle_16x16"
std::optional<Layout> parse_layout(std::string_view s);
std::vector<Layout> layouts_in(LayoutMask mask);  // in enum order

// One dimension's clause: a multiple of `align`, within [min, max] (max 0: unbounded).
struct Dim {
  uint64_t align = 1;
  uint64_t min = 1;
  uint64_t max = 0;
  bool admits(uint64_t v) const;
};

// A GEMM's bit-exact summation order (built-in kernels declare one, gpu/kernels/gemm.h): partial
// sums of `block_k` consecutive k (0: all of K) in increasing k, scales applied per partial
// (fl(fl(part*sa)*sb), then acc += ...) or per product (fl(fl(fl(a*b)*sa)*sb)), partials added
// in increasing k. The roundings feed the accumulator model's bound (impl/accumulator.h).
struct DeclaredOrder {
  std::size_t block_k = 0;
  bool per_partial = true;
  int product_roundings = 1;
  int partial_roundings = 2;
};

// The grouped GEMMs' clause (docs/grouped.md §6). A call multiplies E row groups of A by E
// experts stacked in B ((E * N) x K, expert e rows e*N .. e*N + N - 1, B's scale grid stacked the
// same way); the group of a row comes from the call's offsets (Call::offsets, one per expert):
//   kContiguous  A and out are M x K / M x N; group e is rows [start_e, end_e). kEnds: offsets[e]
//                = end_e (cumulative, torch._grouped_mm's offs: start_0 = 0, start_e = end_{e-1});
//                kStarts: offsets[e] = start_e, end_e = start_{e+1} or the last offset's end, which
//                is M. Rows past the last group (offs[-1] < M) are never written.
//   kMasked      A and out are (E * max_m) x K / N, M = E * max_m; offsets[e] = the valid rows of
//                expert e (masked_m, <= max_m): rows past it are never read and never written.
//   kKGrouped    the MoE weight gradient (K = tokens): A is M x K, B is N x K (one, not stacked),
//                out is (E * M) x N, group e's M x N slice at row e * M; offsets[e] = the
//                cumulative K end of group e (kEnds), group e is K columns [end_{e-1}, end_e)
//                (an empty group, equal ends, is written: +0). A's and B's scale grids are one
//                per group, concatenated in group order (docs/grouped.md §3).
// offset_align: every group boundary (contiguous: every offset; masked: every count) a multiple
// of it (1, 16, 32 or 128; DeepGEMM's contiguous layout 128, MXFP8 32: MSLK PR #63). groups: E.
enum class GroupLayout : uint32_t { kContiguous = 1, kMasked = 2, kKGrouped = 3 };
enum class OffsetsKind : uint32_t { kEnds = 1, kStarts = 2 };
std::string_view to_string(GroupLayout l);  // "contiguous", "masked", "k_grouped"
std::string_view to_string(OffsetsKind k);  // "ends", "starts"
struct GroupedClause {
  GroupLayout layout = GroupLayout::kContiguous;
  OffsetsKind offsets = OffsetsKind::kEnds;
  uint32_t offset_align = 1;
  Dim groups;
};

// Mirrors mxgate_contract field by field (0 = "any" / "whole dimension" as there), plus:
//   conventions        a plugin op claims one; a built-in kernel with a convention parameter
//                      claims each it implements and the call picks one (Call::convention)
//   element_convention MX quantizers whose element cast follows another convention than their
//                      scale rule (quantize_mx_hw: cuda_satfinite elements, torchao_rceil scales);
//                      GEMMs with FP8 output: the convention of that output cast
//                      (fp8_out_convention)
//   order, n_offset    built-in only: a declared summation order; Call::n_offset (the B rows are
//                      a TP shard of a larger weight whose 128-row scale blocks start at
//                      n_offset / 128)
//   simulated_order    built-in only, instead of `order`: the GEMM's result is its accumulator
//                      model's simulation bit for bit (reference/accumulator_simulation.h; the
//                      FNUZ GEMMs' CDNA3 MFMA steps, gpu/kernels/mfma_cdna3.h)
struct Contract {
  Dim m, n, k;
  DtypeMask a_dtypes = 0;
  DtypeMask b_dtypes = 0;
  DtypeMask out_dtypes = 0;
  LayoutMask a_scale_layouts = 0;  // a_scale, or out_scale of a quantizer
  LayoutMask b_scale_layouts = 0;
  LayoutMask b_layouts = 0;
  Dtype scale_dtype = Dtype::kNone;
  uint32_t a_block_rows = 0, a_block_cols = 0;
  uint32_t b_block_rows = 0, b_block_cols = 0;
  uint32_t a_scale_ld_align = 1;
  uint32_t b_scale_ld_align = 1;
  // MXGATE_CONTRACT_PACKED_SCALES: scale grids only at the ld their align gives, never views.
  bool packed_scales = false;
  std::vector<std::string> conventions;
  std::string element_convention;
  std::string accumulator;  // GEMMs: the accumulator model's name ("fp32_rn"); "" otherwise
  std::string notes;
  std::optional<DeclaredOrder> order;
  bool simulated_order = false;
  bool n_offset = false;
  // Built-in only, from the detection work (docs/bug_classes.md §2):
  //   m_tile            GEMMs: rows per M tile (wave) of the kernel; generators draw M past it
  //   b_scale_optional  gemm_mx: b_scale may be absent, B then unscaled (tl.dot_scaled
  //                     rhs_scale=None: the unit scale, E8M0 127)
  //   ue8m0_scales      quantize_block: the fp32 scales written are powers of two (UE8M0);
  //                     gemm_block: the fp32 scales read are consumed as UE8M0, the E8M0 value of
  //                     each one's exponent byte (DeepGEMM's packing, docs/formats.md §5.2)
  uint32_t m_tile = 0;
  bool b_scale_optional = false;
  bool ue8m0_scales = false;
  DtypeMask global_dtypes = 0;  // NVFP4: dtypes of the 1 x 1 a_global / b_global (0: none)
  // Built-in only: the grouped families' clause (set exactly for them).
  std::optional<GroupedClause> grouped;
};

// The convention whose element cast a GEMM's FP8 output follows (plugin.h revision 4): its
// element_convention, else the convention it claims (its first), else kDefaultFp8OutConvention.
inline constexpr std::string_view kDefaultFp8OutConvention = "cuda_satfinite";
std::string_view fp8_out_convention(const Contract& c);

// Rows x cols of the scale grid of a rows x cols operand under blocks of block_rows x block_cols
// (0 = the whole dimension).
uint64_t scale_grid(uint64_t extent, uint32_t block);

// The scale blocks of the quantizer families, as data: an op declares its block in the contract
// (a_block_rows x a_block_cols) and its scale grid is scale_grid(rows, block_rows) x
// scale_grid(cols, block_cols), row-major unless its scale layout says otherwise. The table names
// the blocks real recipes use, so tools and properties speak of "mx_2d_32x32" rather than of two
// numbers; a block not in it is still a valid contract (a plugin may declare any).
struct ScaleBlock {
  std::string_view name;
  Family family;
  uint32_t rows = 0, cols = 0;
  Dtype scale_dtype = Dtype::kNone;
  std::string_view source;  // the recipe that uses it and the docs section describing it
};
std::span<const ScaleBlock> scale_blocks();
// The named block `family` uses with this shape; nullptr when the table names none.
const ScaleBlock* find_scale_block(Family family, uint32_t rows, uint32_t cols);

// One operand or result of a call: a buffer of the harness (gpu::BufferId; 0 = absent) and its
// logical description (plugin.h mxgate_tensor).
struct Tensor {
  uint32_t buffer = 0;
  uint64_t bytes = 0;
  uint64_t rows = 0, cols = 0;
  uint64_t ld = 0;
  Dtype dtype = Dtype::kNone;
  Layout layout = Layout::kRowMajor;
  bool present() const { return buffer != 0; }
};

// One call (plugin.h mxgate_call). GEMM: C is m x n, inner k; others: rows m, cols k, n = 1.
// convention, kernel_faults and n_offset are built-in extensions a plugin never sees.
struct Call {
  Family family = Family::kCast;
  uint64_t m = 1, n = 1, k = 1;
  Tensor a, a_scale, b, b_scale, out, out_scale;
  Tensor a_global, b_global;   // NVFP4 families: 1 x 1 global scales (plugin.h mxgate_call)
  std::string convention;      // one of the contract's conventions ("": its first)
  uint64_t kernel_faults = 0;  // zoo faults of the built-in kernels (gpu::kernel_fault bits)
  uint64_t n_offset = 0;
  // Grouped families (GroupedClause): E = offsets.size(); `offsets` holds the group offsets (or
  // masked counts) as data, checked by check_call; `group_offsets` is the same E values as int32
  // in a buffer of the op's memory, the one the kernel reads (dtype none, 1 x E, 4 bytes each).
  std::vector<uint32_t> offsets;
  Tensor group_offsets;
};

// nullopt when `call` is inside `c`; otherwise the first violated clause, prefixed by `op`:
// "gemm_x: K % 128 == 0 violated (K = 160)", "gemm_x: a_scale layout tma_col_major not in
// {row_major}", ...
std::optional<std::string> check_call(std::string_view op, const Contract& c, const Call& call);
// The grouped clause alone (contract/grouped.cpp): a grouped family's call carries E offsets
// inside GroupedClause (count, monotone, aligned, within M; masked: M = E * max_m) and their
// buffer; any other call carries none.
std::optional<std::string> check_grouped(const Contract& c, const Call& call);
// The dimension clauses only (M, N, K > 0, alignment, min, max).
std::optional<std::string> check_dims(std::string_view op, const Contract& c, uint64_t m,
                                      uint64_t n, uint64_t k);

// Text forms for `mxgate impls` and error messages: "{f32,bf16}", "{row_major,nv_swizzle_128x4}",
// "K % 32 == 0, 1 <= K", ...
std::string describe_dtypes(DtypeMask mask);
std::string describe_layouts(LayoutMask mask);
std::string describe_dim(char letter, const Dim& d);

}  // namespace mxgate::contract
