// The case pieces the FP4 properties (props_fp4.cpp) share: which ops are NVFP4 and which
// conventions they claim, K around the 16- and 32-element blocks, the global scales' dtype, the
// scale layout and float dtype fields, and the coverage tags of K and E4M3 scales.
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "impl/op.h"
#include "properties/property.h"
#include "reference/convention.h"

namespace mxgate::properties {

inline constexpr impl::DtypeMask kE2m1 = impl::dtype_bit(impl::Dtype::kE2m1);
inline constexpr impl::DtypeMask kFloatIn =
    impl::dtype_bit(impl::Dtype::kF32) | impl::dtype_bit(impl::Dtype::kBf16);

bool nvfp4_op(const impl::Op& op);
// The scale block along K: 16 (NVFP4) or 32 (MX).
std::size_t block_of(const impl::Op& op);
// Whether every convention the op claims has what `has` asks (an FP4 policy of the reference).
bool claims_all(const impl::Op& op, bool (*has)(const Convention&));
bool has_mxfp4(const Convention& c);
bool has_nvfp4(const Convention& c);

// K = 128 kb + r, r around the NVFP4 (16) and MX (32) blocks and odd, where the contract's
// alignment allows; shrinks toward one 16-block.
rc::Gen<std::size_t> gen_k_fp4(const impl::Dim& d, int max_blocks);
// Case field "gdtype" (NVFP4 global scales: f32 three times as often as bf16) and its value.
rc::Gen<std::string> gen_global_dtype(const impl::Op& op);
impl::Dtype global_dtype_field(const Case& c);
// Case field "layout": a scale layout of the op (`pick_index` into them), read back.
std::string layout_name(const impl::Op& op, std::size_t pick_index);
impl::Layout layout_field(const Case& c);
// Case fields of a float dtype: "fp32" or "bf16" (fp32 three times as often).
bool bf16_field(const Case& c, std::string_view key);
rc::Gen<std::string> gen_float_dtype(impl::DtypeMask mask);

void tag_k(const Context& ctx, std::size_t k);
void tag_e4m3_scales(const Context& ctx, std::span<const uint8_t> bytes,
                     std::string_view family = {});

}  // namespace mxgate::properties
