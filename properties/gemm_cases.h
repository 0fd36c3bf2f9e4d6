// The case pieces the GEMM properties (props_gemm.cpp) share: which GEMM ops they can feed, the
// shapes (contract clauses and the production catalog), scale layouts, output formats and FP8
// element types a case picks, and reading them back from a case. Shapes, dtypes, scale layouts
// and block shapes come from each op's contract (props.h gen_m / gen_n / gen_k) and from the
// production catalog (corpus/shapes/production_shapes.tsv): per-rank N x K of TP-sharded models.
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
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
// What `op` lacks for gemm_accepts ("" when nothing): the clause, e.g. "fp32 block scales".
std::string gemm_declines(const impl::Op& op);
// Whether `op` writes fp32 or bf16; whether it writes FP8 only (plugin.h revision 4).
bool plain_out(const impl::Op& op);
bool fp8_out_only(const impl::Op& op);
bool fp32_out(const impl::Op& op);
// gemm_declines, then fp32 output (gemm_fp32_accepts).
std::string gemm_fp32_declines(const impl::Op& op);
bool gemm_fp32_accepts(const impl::Op& op);
// The swizzle and TMA-aligned layouts: they pad.
bool padded_layout(impl::Layout l);

// N % 128 residues of TP-sharded per-rank N in the catalog (the sub-block shards of Z16).
const std::vector<std::size_t>& catalog_n_residues();

// The output formats a case picks from: fp32 three times as often as bf16. With `fp8` (gemm.exact;
// gemm.ordered_bound for an op with a declared order) an op whose contract lists FP8 output
// (plugin.h revision 4) also picks it: fp32, fp32, bf16 and three times its first FP8 dtype.
rc::Gen<std::string> gen_out(const impl::Op& op, bool fp8 = false);
// FP8 output: the factor of case field `out_scale` (powers of two 2^-4..2^4 but 1, and 0.75, 1.5,
// 3, 0.3: the product fl32(v * scale_result) then rounds before the cast), shrinking toward 2.
rc::Gen<std::string> gen_out_scale();
// The FP8 output dtype a case names in field `out` (nullopt: fp32 or bf16).
std::optional<impl::Dtype> case_fp8_out(const Case& c);
// Case field `out_scale`: a finite positive decimal (CaseError otherwise).
float out_scale_factor(const Case& c);
// The scale_result of an FP8-output case: factor * 2^t, t = 3 - the exponent of the largest
// finite |v| (on the bits), clamped to [-120, 120], so that the largest |v * scale_result| lies
// in [8, 16) * factor, inside the finite range of E4M3FN and E5M2 (t = 0 when every v is zero or
// not finite). The exponent comes from the reference's fp32 result, never from the op's.
float scale_result_for(std::span<const float> v, float factor);
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
