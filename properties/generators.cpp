// Shape and seed generators shared by the property families (props.h).
#include <rapidcheck.h>

#include <algorithm>
#include <string>

#include "properties/cast_values.h"
#include "properties/props.h"
#include "reference/gemm_oracle.h"
#include "reference/mx_quant.h"
#include "reference/scale_layout.h"

namespace mxgate::properties {

namespace {

// The block sizes of the formats under test (reference/): MX scale blocks of 32 along K, DeepSeek
// weight blocks of 128 x 128 and activation groups of 1 x 128. Tile boundaries are these, the
// kernels' contract alignments, and the padding units of the scale layouts kernels read.
constexpr std::size_t kTile = std::max({kMxBlock, kDeepSeekBlocks.a_k, kDeepSeekBlocks.b_n});

// Rows at which a scale layout pads (TMA-aligned: align4; NVIDIA swizzle: 128-row tiles), read
// from scale_storage_size rather than written down.
std::vector<std::size_t> layout_row_units() {
  std::vector<std::size_t> units;
  for (ScaleLayout l : {ScaleLayout::kTmaColMajor, ScaleLayout::kNvSwizzle128x4}) {
    const std::size_t base = scale_storage_size(l, 1, 1);
    std::size_t r = 1;
    while (r < 4096 && scale_storage_size(l, r + 1, 1) == base) ++r;
    if (r > 1 && r < 4096) units.push_back(r);
  }
  return units;
}

}  // namespace

rc::Gen<std::size_t> range(std::size_t lo, std::size_t hi_exclusive) {
  return rc::gen::resize(100, rc::gen::inRange<std::size_t>(lo, hi_exclusive));
}

std::size_t fit_dim(std::size_t v, const impl::Dim& d) {
  const std::size_t align = std::max<std::size_t>(1, d.align);
  const auto up = [align](std::size_t x) { return (x + align - 1) / align * align; };
  v = std::max(up(std::max<std::size_t>(v, 1)), up(std::max<std::size_t>(d.min, 1)));
  if (d.max != 0 && v > d.max) v = std::max(align, d.max / align * align);
  return v;
}

rc::Gen<std::size_t> gen_m(const impl::Dim& d, uint32_t tile) {
  std::vector<std::size_t> v = {1, 2, 3, 4, 5, 6, 7, 2, 3};
  for (std::size_t u : layout_row_units()) {
    for (std::size_t m : {u - 1, u, u + 1}) v.push_back(m);
  }
  for (std::size_t& m : v) m = fit_dim(m, d);
  std::vector<std::size_t> large;
  if (tile > 1) {
    for (std::size_t m : {tile + 1u, 2u * tile + 1u, tile - 1u, tile + 0u}) large.push_back(m);
  }
  for (std::size_t m : {257, 300}) large.push_back(m);
  for (std::size_t& m : large) m = fit_dim(m, d);
  // 1 case in 8 takes a large M; the choice shrinks toward the small ones.
  return rc::gen::mapcat(range(0, 8), [small = pick(std::move(v)), big = pick(std::move(large))](
                                          std::size_t i) { return i < 7 ? small : big; });
}

rc::Gen<std::size_t> gen_n(const impl::Dim& d) {
  const std::size_t align = std::max<std::size_t>(1, d.align);
  std::vector<std::size_t> v;
  for (std::size_t j = 1; j <= 6; ++j) v.push_back(j * align);
  // Around one and two weight blocks: partial blocks on either side of the boundary.
  for (std::size_t b : {kDeepSeekBlocks.b_n, 2 * kDeepSeekBlocks.b_n}) {
    for (std::size_t n : {b - align, b, b + align}) v.push_back(std::max(align, n / align * align));
  }
  for (std::size_t& n : v) n = fit_dim(n, d);
  return pick(std::move(v));
}

std::vector<std::size_t> k_residues(std::size_t align) {
  // Every multiple of the alignment below the largest tile, the smallest nonzero one first (the
  // shrink target), 0 after it: K % 128 in {32, 64, 96, 0} for K % 32 == 0 kernels, {0} for a
  // K % 128 == 0 kernel. A kernel that takes any K also gets the neighbours of every block
  // boundary (K % 32 != 0).
  std::vector<std::size_t> r;
  const std::size_t step = std::max(align, kMxBlock);
  for (std::size_t x = step; x < kTile; x += step) r.push_back(x);
  r.push_back(0);
  if (align < kMxBlock) {
    for (std::size_t b = kMxBlock; b <= kTile; b += kMxBlock) {
      for (std::size_t x : {b - 1, (b + 1) % kTile}) {
        if (x % align == 0 && std::find(r.begin(), r.end(), x) == r.end()) r.push_back(x);
      }
    }
  }
  return r;
}

rc::Gen<std::size_t> gen_k(const impl::Dim& d, int max_blocks) {
  return rc::gen::apply(
      [d](std::size_t kb, std::size_t r) {
        return fit_dim(kb * kTile + r == 0 ? kTile : kb * kTile + r, d);
      },
      range(0, static_cast<std::size_t>(max_blocks) + 1),
      pick(k_residues(std::max<std::size_t>(1, d.align))));
}

rc::Gen<uint64_t> gen_seed() {
  return rc::gen::resize(100, rc::gen::inRange<uint64_t>(0, 1u << 20));
}

rc::Gen<int> gen_scale_ld(const impl::Op& op) {
  if (op.contract.packed_scales) return rc::gen::just(0);
  return pick<int>({0, 1, 0, 3});
}

std::size_t scale_ld_field(const Context& ctx, const Case& c) {
  if (!c.has("scale_ld")) return 0;
  const std::size_t extra = c.num("scale_ld");
  if (extra == 0 || extra > 64) throw CaseError("case field 'scale_ld' must be in 1..64");
  ctx.tag("layout:padded_scale_ld");
  return extra;
}

void tag_shape(const Context& ctx, std::size_t m, std::size_t n, std::size_t k) {
  ctx.tag(m == 1 ? "m=1" : "m>1");
  if (m > 128) ctx.tag("m>128");
  if (m > 256) ctx.tag("m>256");
  if (k % 32 != 0) ctx.tag("k%32!=0");
  if (k % 32 == 0) ctx.tag("k%128=" + std::to_string(k % 128));
  if (n != 0 && n % 128 != 0) ctx.tag("tile:partial_n");
  if (m % 128 != 0 && m > 1) ctx.tag("tile:partial_m");
}

void tag_e8m0(const Context& ctx, std::span<const uint8_t> bytes, std::string_view family) {
  if (ctx.coverage == nullptr) return;
  bool seen[4] = {false, false, false, false};
  for (uint8_t b : bytes) {
    if (b == 0x00) seen[0] = true;
    if (b == 0x01) seen[1] = true;
    if (b == 0xFE) seen[2] = true;
    if (b == 0xFF) seen[3] = true;
  }
  static const char* kNames[4] = {"e8m0:0x00", "e8m0:0x01", "e8m0:0xFE", "e8m0:0xFF"};
  for (int i = 0; i < 4; ++i) {
    if (!seen[i]) continue;
    ctx.tag(kNames[i]);
    if (!family.empty()) ctx.tag(std::string(family) + ":" + kNames[i]);
  }
}

std::optional<impl::Dtype> first_fp8(impl::DtypeMask mask) {
  for (impl::Dtype d : impl::dtypes_in(mask)) {
    if (fp8_format(d)) return d;
  }
  return std::nullopt;
}

impl::Layout first_scale_layout(impl::LayoutMask mask) {
  const auto all = impl::layouts_in(mask);
  if (std::find(all.begin(), all.end(), impl::Layout::kRowMajor) != all.end())
    return impl::Layout::kRowMajor;
  return all.empty() ? impl::Layout::kRowMajor : all.front();
}

}  // namespace mxgate::properties
