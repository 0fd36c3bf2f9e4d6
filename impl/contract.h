// impl/'s names for the contract vocabulary of contract/contract.h (the types live there, below
// gpu/, so the kernel table can declare contracts without including impl/). The aliases keep
// `impl::Dtype`, `impl::check_call`, ... meaning what they meant for the code above impl/.
#pragma once

#include "contract/contract.h"

namespace mxgate::impl {

using contract::all_dtypes;
using contract::all_families;
using contract::all_layouts;
using contract::Call;
using contract::check_call;
using contract::check_dims;
using contract::Contract;
using contract::DeclaredOrder;
using contract::dense_family;
using contract::describe_dim;
using contract::describe_dtypes;
using contract::describe_layouts;
using contract::Dim;
using contract::Dtype;
using contract::dtype_bit;
using contract::dtype_bytes;
using contract::DtypeMask;
using contract::dtypes_in;
using contract::Family;
using contract::family_bit;
using contract::FamilyMask;
using contract::fp8_out_convention;
using contract::GroupedClause;
using contract::GroupLayout;
using contract::is_fp8_out;
using contract::is_gemm;
using contract::is_grouped;
using contract::is_nvfp4;
using contract::kFp8OutDtypes;
using contract::Layout;
using contract::layout_bit;
using contract::LayoutMask;
using contract::layouts_in;
using contract::Memory;
using contract::OffsetsKind;
using contract::parse_dtype;
using contract::parse_family;
using contract::parse_layout;
using contract::scale_grid;
using contract::takes_fp8_out;
using contract::Tensor;
using contract::tensor_bytes;
using contract::to_string;

}  // namespace mxgate::impl
