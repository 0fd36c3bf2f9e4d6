#include "contract/contract.h"

#include <algorithm>
#include <array>
#include <utility>

#include "common/dtypes.h"
#include "common/name_table.h"

namespace mxgate::contract {
namespace {

constexpr NameTable<Family, 14> kFamilies = {{
    {Family::kCast, "cast"},
    {Family::kQuantizeMx, "quantize_mx"},
    {Family::kQuantizeBlock, "quantize_block"},
    {Family::kDequantize, "dequantize"},
    {Family::kUpcastE8m0, "upcast_e8m0"},
    {Family::kPreshuffle, "preshuffle"},
    {Family::kGemmMx, "gemm_mx"},
    {Family::kGemmBlock, "gemm_block"},
    {Family::kGemmBf16, "gemm_bf16"},
    {Family::kQuantizeNvfp4, "quantize_nvfp4"},
    {Family::kDequantizeNvfp4, "dequantize_nvfp4"},
    {Family::kGemmNvfp4, "gemm_nvfp4"},
    {Family::kGroupedGemmBlock, "grouped_gemm_block"},
    {Family::kGroupedGemmMx, "grouped_gemm_mx"},
}};

// The dtypes are the element types of common/dtypes.h, whose codes are the ABI's
// (tests/test_dtypes.cpp holds each to plugin.h); a code must fit a DtypeMask.
static_assert(dtypes::kElementTypeCount < 64, "DtypeMask has 64 bits");

constexpr std::array<Dtype, dtypes::kElementTypeCount> kAllDtypes = [] {
  std::array<Dtype, dtypes::kElementTypeCount> a{};
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<Dtype>(dtypes::kElementTypes[i].code);
  return a;
}();

constexpr NameTable<Layout, 5> kLayouts = {{
    {Layout::kRowMajor, "row_major"},
    {Layout::kColMajor, "col_major"},
    {Layout::kTmaColMajor, "tma_col_major"},
    {Layout::kNvSwizzle128x4, "nv_swizzle_128x4"},
    {Layout::kAiterShuffle16x16, "aiter_shuffle_16x16"},
}};

constexpr std::array<ScaleBlock, 5> kScaleBlocks = {{
    {"mx_1x32", Family::kQuantizeMx, 1, 32, Dtype::kE8m0,
     "OCP MX v1.0: 32 consecutive elements along K (docs/formats.md §3)"},
    {"mx_2d_32x32", Family::kQuantizeMx, 32, 32, Dtype::kE8m0,
     "TransformerEngine MXFP8BlockScaling(enable_2d_quantization=True), weights: one scale per "
     "32 x 32 tile, shared by the rowwise and columnwise copies (docs/layouts.md §9)"},
    {"block_1x128", Family::kQuantizeBlock, 1, 128, Dtype::kF32,
     "DeepSeek-style activations, 1x128 per-token groups (docs/formats.md §5)"},
    {"block_128x128", Family::kQuantizeBlock, 128, 128, Dtype::kF32,
     "DeepSeek-style weights, 128x128 blocks (docs/formats.md §5)"},
    {"nvfp4_1x16", Family::kQuantizeNvfp4, 1, 16, Dtype::kE4m3fn,
     "NVFP4: 16 elements along K share one E4M3 scale (docs/fp4.md §6)"},
}};

std::string prefixed(std::string_view op, const std::string& text) {
  return std::string(op) + ": " + text;
}

std::optional<std::string> check_dim(char letter, const Dim& d, uint64_t v) {
  const std::string l(1, letter);
  const std::string got = " violated (" + l + " = " + std::to_string(v) + ")";
  if (v == 0) return l + " > 0" + got;
  if (d.align > 1 && v % d.align != 0) return l + " % " + std::to_string(d.align) + " == 0" + got;
  if (d.min > 1 && v < d.min) return l + " >= " + std::to_string(d.min) + got;
  if (d.max != 0 && v > d.max) return l + " <= " + std::to_string(d.max) + got;
  return std::nullopt;
}

std::optional<std::string> check_tensor(std::string_view role, const Tensor& t, DtypeMask dtypes,
                                        std::optional<LayoutMask> layouts, uint32_t ld_align,
                                        bool packed = false) {
  if (!t.present()) return std::nullopt;
  if ((dtypes & dtype_bit(t.dtype)) == 0) {
    return std::string(role) + " dtype " + std::string(to_string(t.dtype)) + " not in " +
           describe_dtypes(dtypes);
  }
  if (layouts && (*layouts & layout_bit(t.layout)) == 0) {
    return std::string(role) + " layout " + std::string(to_string(t.layout)) + " not in " +
           describe_layouts(*layouts);
  }
  const bool strided = t.layout == Layout::kRowMajor || t.layout == Layout::kColMajor;
  if (strided && ld_align > 1 && t.ld % ld_align != 0) {
    return std::string(role) + " leading dimension " + std::to_string(t.ld) +
           " is not a multiple of " + std::to_string(ld_align);
  }
  if (strided && packed) {
    // The one ld the op reads: the line length rounded up to the alignment.
    const uint64_t line = t.layout == Layout::kRowMajor ? t.cols : t.rows;
    const uint64_t align = std::max<uint32_t>(1, ld_align);
    const uint64_t want = (line + align - 1) / align * align;
    const bool one_line = (t.layout == Layout::kRowMajor ? t.rows : t.cols) <= 1;
    if (t.ld != 0 && t.ld != want && !one_line) {
      return std::string(role) + " leading dimension " + std::to_string(t.ld) +
             ": the op reads packed scale grids only (ld " + std::to_string(want) + ")";
    }
  }
  return std::nullopt;
}

}  // namespace

std::span<const Family> all_families() {
  static constexpr std::array<Family, kFamilies.size()> kAll = values_in(kFamilies);
  return kAll;
}

std::string_view to_string(Family f) { return name_in(kFamilies, f); }

std::optional<Family> parse_family(std::string_view s) { return parse_in(kFamilies, s); }

bool is_gemm(Family f) {
  return f == Family::kGemmMx || f == Family::kGemmBlock || f == Family::kGemmBf16 ||
         f == Family::kGemmNvfp4 || is_grouped(f);
}

bool is_grouped(Family f) { return f == Family::kGroupedGemmBlock || f == Family::kGroupedGemmMx; }

Family dense_family(Family f) {
  if (f == Family::kGroupedGemmBlock) return Family::kGemmBlock;
  if (f == Family::kGroupedGemmMx) return Family::kGemmMx;
  return f;
}

bool is_nvfp4(Family f) {
  return f == Family::kQuantizeNvfp4 || f == Family::kDequantizeNvfp4 || f == Family::kGemmNvfp4;
}

bool takes_fp8_out(Family f) { return f == Family::kGemmMx || f == Family::kGemmBlock; }

bool is_fp8_out(Dtype d) { return (kFp8OutDtypes & dtype_bit(d)) != 0; }

std::string_view fp8_out_convention(const Contract& c) {
  if (!c.element_convention.empty()) return c.element_convention;
  if (!c.conventions.empty()) return c.conventions.front();
  return kDefaultFp8OutConvention;
}

std::string_view to_string(Memory m) {
  switch (m) {
    case Memory::kHost:
      return "host";
    case Memory::kCuda:
      return "cuda";
    case Memory::kHip:
      return "hip";
    case Memory::kBackend:
      return "backend";
  }
  return "?";
}

std::span<const Dtype> all_dtypes() { return kAllDtypes; }

std::string_view to_string(Dtype d) {
  const dtypes::ElementType* t = dtypes::element_type(static_cast<unsigned>(d));
  return t != nullptr ? t->name : "none";
}

std::optional<Dtype> parse_dtype(std::string_view s) {
  for (const dtypes::ElementType& t : dtypes::kElementTypes) {
    if (t.name == s) return static_cast<Dtype>(t.code);
  }
  return std::nullopt;
}

std::size_t dtype_bytes(Dtype d) {
  const dtypes::ElementType* t = dtypes::element_type(static_cast<unsigned>(d));
  return t != nullptr ? t->storage_bytes : 0;
}

uint64_t tensor_bytes(Dtype d, uint64_t rows, uint64_t cols) {
  const dtypes::ElementType* t = dtypes::element_type(static_cast<unsigned>(d));
  if (t != nullptr && t->storage_bytes == 0) return rows * ((cols + 1) / 2);  // packed
  return rows * cols * dtype_bytes(d);
}

std::vector<Dtype> dtypes_in(DtypeMask mask) {
  std::vector<Dtype> out;
  for (Dtype d : kAllDtypes) {
    if (mask & dtype_bit(d)) out.push_back(d);
  }
  return out;
}

std::span<const Layout> all_layouts() {
  static constexpr std::array<Layout, kLayouts.size()> kAll = values_in(kLayouts);
  return kAll;
}

std::string_view to_string(Layout l) { return name_in(kLayouts, l); }

std::optional<Layout> parse_layout(std::string_view s) { return parse_in(kLayouts, s); }

std::vector<Layout> layouts_in(LayoutMask mask) {
  std::vector<Layout> out;
  for (const auto& [layout, name] : kLayouts) {
    if (mask & layout_bit(layout)) out.push_back(layout);
  }
  return out;
}

bool Dim::admits(uint64_t v) const {
  return v != 0 && (align <= 1 || v % align == 0) && v >= min && (max == 0 || v <= max);
}

uint64_t scale_grid(uint64_t extent, uint32_t block) {
  if (block == 0) return extent == 0 ? 0 : 1;
  return (extent + block - 1) / block;
}

std::span<const ScaleBlock> scale_blocks() { return kScaleBlocks; }

const ScaleBlock* find_scale_block(Family family, uint32_t rows, uint32_t cols) {
  for (const ScaleBlock& b : kScaleBlocks) {
    if (b.family == family && b.rows == rows && b.cols == cols) return &b;
  }
  return nullptr;
}

std::optional<std::string> check_dims(std::string_view op, const Contract& c, uint64_t m,
                                      uint64_t n, uint64_t k) {
  if (auto why = check_dim('M', c.m, m)) return prefixed(op, *why);
  if (auto why = check_dim('N', c.n, n)) return prefixed(op, *why);
  if (auto why = check_dim('K', c.k, k)) return prefixed(op, *why);
  return std::nullopt;
}

std::optional<std::string> check_call(std::string_view op, const Contract& c, const Call& call) {
  if (auto why = check_dims(op, c, call.m, call.n, call.k)) return why;
  const bool quantizer = call.family == Family::kQuantizeMx ||
                         call.family == Family::kQuantizeBlock ||
                         call.family == Family::kQuantizeNvfp4;
  const std::optional<LayoutMask> any;  // tensors whose layout the family fixes
  struct Clause {
    std::string_view role;
    const Tensor& t;
    DtypeMask dtypes;
    std::optional<LayoutMask> layouts;
    uint32_t ld_align;
    bool packed = false;
  };
  const DtypeMask scale = c.scale_dtype == Dtype::kNone ? 0 : dtype_bit(c.scale_dtype);
  // A GEMM with FP8 output reads its scale_result from out_scale (plugin.h revision 4), any other
  // GEMM takes no out_scale.
  const bool fp8_out =
      takes_fp8_out(call.family) && call.out.present() && is_fp8_out(call.out.dtype);
  const Clause clauses[] = {
      {"a", call.a, c.a_dtypes, any, 1},
      {"a_scale", call.a_scale, scale, c.a_scale_layouts, c.a_scale_ld_align, c.packed_scales},
      {"b", call.b, c.b_dtypes, c.b_layouts, 1},
      {"b_scale", call.b_scale, scale, c.b_scale_layouts, c.b_scale_ld_align, c.packed_scales},
      {"out", call.out, c.out_dtypes, any, 1},
      quantizer ? Clause{"out_scale", call.out_scale, scale, c.a_scale_layouts, c.a_scale_ld_align,
                         c.packed_scales}
                : Clause{"out_scale", call.out_scale, fp8_out ? dtype_bit(Dtype::kF32) : 0, any, 1},
      {"a_global", call.a_global, c.global_dtypes, any, 1},
      {"b_global", call.b_global, c.global_dtypes, any, 1},
  };
  for (const Clause& cl : clauses) {
    if (auto why = check_tensor(cl.role, cl.t, cl.dtypes, cl.layouts, cl.ld_align, cl.packed)) {
      return prefixed(op, *why);
    }
  }
  for (const auto& [role, t] :
       {std::pair<std::string_view, const Tensor&>{"a_global", call.a_global},
        {"b_global", call.b_global}}) {
    if (t.present() && (t.rows != 1 || t.cols != 1)) {
      return prefixed(op, std::string(role) + " must be 1 x 1, got " + std::to_string(t.rows) +
                              " x " + std::to_string(t.cols));
    }
  }
  if (fp8_out && !call.out_scale.present()) {
    return prefixed(op, "out dtype " + std::string(to_string(call.out.dtype)) +
                            " needs out_scale, a 1 x 1 f32 scale_result (plugin.h revision 4)");
  }
  if (fp8_out && (call.out_scale.rows != 1 || call.out_scale.cols != 1)) {
    return prefixed(op, "out_scale (scale_result) must be 1 x 1, got " +
                            std::to_string(call.out_scale.rows) + " x " +
                            std::to_string(call.out_scale.cols));
  }
  if (!call.convention.empty() && !c.conventions.empty()) {
    bool claimed = false;
    for (const std::string& name : c.conventions) claimed = claimed || name == call.convention;
    if (!claimed) {
      std::string list;
      for (const std::string& name : c.conventions) list += (list.empty() ? "" : ",") + name;
      return prefixed(op, "convention " + call.convention + " not in {" + list + "}");
    }
  }
  const bool scaled_gemm = call.family == Family::kGemmMx || call.family == Family::kGemmBlock ||
                           is_grouped(call.family);
  if (scaled_gemm && !call.b_scale.present() && !c.b_scale_optional) {
    return prefixed(op, "b_scale is absent and the contract requires it");
  }
  if (call.n_offset != 0 && !c.n_offset) {
    return prefixed(op, "n_offset " + std::to_string(call.n_offset) + " not supported");
  }
  if (auto why = check_grouped(c, call)) return prefixed(op, *why);
  return std::nullopt;
}

std::string describe_dtypes(DtypeMask mask) {
  std::string out;
  for (Dtype d : dtypes_in(mask)) out += (out.empty() ? "" : ",") + std::string(to_string(d));
  return "{" + out + "}";
}

std::string describe_layouts(LayoutMask mask) {
  std::string out;
  for (Layout l : layouts_in(mask)) out += (out.empty() ? "" : ",") + std::string(to_string(l));
  return "{" + out + "}";
}

std::string describe_dim(char letter, const Dim& d) {
  const std::string l(1, letter);
  std::string out = d.align > 1 ? l + " % " + std::to_string(d.align) + " == 0" : "any " + l;
  if (d.min > 1) out += ", " + l + " >= " + std::to_string(d.min);
  if (d.max != 0) out += ", " + l + " <= " + std::to_string(d.max);
  return out;
}

}  // namespace mxgate::contract
