// The case pieces the GEMM properties (props_gemm.cpp) share: which GEMM ops they can feed, the
// shapes (contract clauses and the production catalog), scale layouts, output formats and FP8
// element types a case picks, and reading them back from a case. Shapes, dtypes, scale layouts
// and block shapes come from each op's contract (props.h gen_m / gen_n / gen_k) and from the
// production catalog (corpus/shapes/production_shapes.tsv): per-rank N x K of TP-sharded models.
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "impl/op.h"
#include "properties/gemm_operands.h"
#include "properties/property.h"

namespace mxgate::properties {

using Shape3 = std::tuple<std::size_t, std::size_t, std::size_t>;

inline constexpr impl::FamilyMask kGemmFamilies = impl::family_bit(impl::Family::kGemmMx) |
                                                  impl::family_bit(impl::Family::kGemmBlock) |
                                                  impl::family_bit(impl::Family::kGemmBf16);

// The scale layouts the properties can build (every scale layout of the ABI); row-major for an
// unscaled GEMM.
std::vector<impl::Layout> scale_layouts(const impl::Op& op);
// Whether the op reads only the AITER-shuffled B.
bool preshuffled_b(const impl::Op& op);
// A GEMM op the properties can feed (gemm_cases.cpp says what that takes).
bool gemm_accepts(const impl::Op& op);
bool fp32_out(const impl::Op& op);
bool gemm_fp32_accepts(const impl::Op& op);
// The swizzle and TMA-aligned layouts: they pad.
bool padded_layout(impl::Layout l);

// N % 128 residues of TP-sharded per-rank N in the catalog (the sub-block shards of Z16).
const std::vector<std::size_t>& catalog_n_residues();

// The output formats a case picks from: fp32 three times as often as bf16.
rc::Gen<std::string> gen_out(const impl::Op& op);
// The case's layout fields as an OpLayout (tags them).
OpLayout op_layout(const Case& c, const impl::Op& op, const Context& ctx);
// Case field "out": fp32 or bf16.
OutputFormat out_format(const Case& c);

// Indexes into the FP8 element types of A and B a case of `op` picks (E4M3FN first).
using TypePick = std::pair<std::size_t, std::size_t>;
rc::Gen<TypePick> gen_types(const impl::Op& op);
// A case of a GEMM property: op, shape, scale layout (`layout_pick` into scale_layouts), output
// format, seed and, where the op takes more than E4M3FN, the element types.
Case gemm_case(std::string_view property, const impl::Op& op, Shape3 s, int layout_pick,
               std::string_view out, uint64_t seed, TypePick types = {0, 0});
// M x N x K from the contract's clauses.
rc::Gen<Shape3> gen_contract_shape(const impl::Contract& c, int max_blocks = 3);
// The element types a case names (E4M3FN where it names none); tags them.
ElementTypes case_types(const Context& ctx, const Case& c, const impl::Op& op);
// Shapes of `op`: contract-derived random shapes, or (1 in 8) a catalog per-rank shape.
rc::Gen<Shape3> gen_shape(const impl::Op& op);

void tag_op(const Context& ctx, const impl::Op& op);

}  // namespace mxgate::properties
