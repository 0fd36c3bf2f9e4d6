// The property families (one file each) and the generator pieces they share.
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "impl/contract.h"
#include "properties/property.h"

namespace mxgate::properties {

// The op vocabulary every property file names unqualified.
using impl::Dtype;
using impl::dtype_bit;
using impl::Family;
using impl::family_bit;
using impl::Layout;
using impl::layout_bit;
using impl::Op;

void add_cast_properties(std::vector<Property>& out);      // props_cast.cpp
void add_quant_properties(std::vector<Property>& out);     // props_quant.cpp
void add_quant_2d_properties(std::vector<Property>& out);  // props_quant_2d.cpp
void add_gemm_properties(std::vector<Property>& out);      // props_gemm.cpp
void add_layout_properties(std::vector<Property>& out);    // props_layout.cpp
void add_dispatch_properties(std::vector<Property>& out);  // props_dispatch.cpp
// props_detect.cpp: quantize_block.bit_exact, gemm.default_scale, dequantize.large_offsets
// (docs/bug_classes.md §2, detection work).
void add_detect_properties(std::vector<Property>& out);
void add_determinism_properties(std::vector<Property>& out);    // props_determinism.cpp
void add_fp4_properties(std::vector<Property>& out);            // props_fp4.cpp
void add_grouped_properties(std::vector<Property>& out);        // props_grouped.cpp
void add_grouped_split_properties(std::vector<Property>& out);  // props_grouped_split.cpp
// The coverage tags the grouped properties must reach (properties.coverage).
std::vector<std::string> grouped_coverage_tags();
// props_grouped_k.cpp: the grouped properties extended to the k-grouped layout (run after
// add_grouped_properties), and the coverage tags of that layout.
void extend_grouped_properties_k(std::vector<Property>& out);
std::vector<std::string> kgrouped_coverage_tags();

// Size-independent choices: RapidCheck scales inRange and container sizes with a size that grows
// over the run (case i of 100 has size i), which would make the first cases all minimal. These
// pick uniformly from the first case on and shrink toward the first element / `lo`.
template <class T>
rc::Gen<T> pick(std::vector<T> v) {
  const std::size_t n = v.size();
  return rc::gen::map(rc::gen::resize(100, rc::gen::inRange<std::size_t>(0, n)),
                      [v = std::move(v)](std::size_t i) { return v[i]; });
}
rc::Gen<std::size_t> range(std::size_t lo, std::size_t hi_exclusive);

// Dimensions inside a contract's clause (impl::Dim: alignment, min, max). Each generator draws
// from fixed candidates and moves each onto the clause (fit_dim); with the default clause (any
// value) they are the candidates themselves.
// M: small values first (shrinks toward 1), sometimes at and around the row-padding units of the
// scale layouts kernels read (TMA align4, swizzle 128-row tiles; from scale_storage_size); one
// case in 8 past the contract's M tile (`tile`, impl::Contract::m_tile: tile + 1 first, the shrink
// target, then 2 tile + 1, tile - 1, tile) and past 256 (257, 300).
rc::Gen<std::size_t> gen_m(const impl::Dim& d = {}, uint32_t tile = 0);
// N: a multiple of the alignment: align x [1, 6], or around one and two 128-row weight blocks.
rc::Gen<std::size_t> gen_n(const impl::Dim& d);
// K = 128 x kb + r, r from k_residues(align): the residues a contract's K alignment allows.
// Shrinks toward one small block.
rc::Gen<std::size_t> gen_k(const impl::Dim& d, int max_blocks = 3);
std::vector<std::size_t> k_residues(std::size_t align);
// The nearest value the clause admits: v rounded up to the alignment, raised to the minimum,
// lowered to the maximum.
std::size_t fit_dim(std::size_t v, const impl::Dim& d);
rc::Gen<uint64_t> gen_seed();

// Picks one of `ops` (shrinking toward the first) and hands it to `make`.
template <class F>
rc::Gen<Case> gen_over_ops(const Ops& ops, F make) {
  return rc::gen::mapcat(pick(ops), make);
}

// The op's first FP8 element type in `mask` (nullopt: none).
std::optional<impl::Dtype> first_fp8(impl::DtypeMask mask);
// Row-major where the op takes it, else its first layout (the scale buffers of one call).
impl::Layout first_scale_layout(impl::LayoutMask mask);

// Tags shared by the families (n = 0: not a GEMM, no N tags).
void tag_shape(const Context& ctx, std::size_t m, std::size_t n, std::size_t k);
// The E8M0 extreme codes among `bytes` ("e8m0:0x00"); with `family`, also per family
// ("dequantize:e8m0:0x00": every family that consumes scales must reach every code).
void tag_e8m0(const Context& ctx, std::span<const uint8_t> bytes, std::string_view family = {});

// Scale grids as views into wider tensors (field `scale_ld`: slots added to every line of a
// row- or column-major grid, the tensor's ld saying so, as a sliced or strided scale tensor is).
// The generator: absent (0) half the time, else 1 or 3 slots; always absent for an op whose
// contract reads packed scale grids only (packed_scales). The field: 0 when absent, 1..64
// (CaseError otherwise), tagged "layout:padded_scale_ld".
rc::Gen<int> gen_scale_ld(const impl::Op& op);
std::size_t scale_ld_field(const Context& ctx, const Case& c);

}  // namespace mxgate::properties
