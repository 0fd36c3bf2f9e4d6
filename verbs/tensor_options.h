// Option parsing shared by the tensor verbs (verbs/tensor_ops.h): element formats, conventions,
// schemes, --k, --scale-layout, options a scheme does not use. Internal to verbs/: the verbs'
// files include it, nothing else does. Every problem is a UsageError naming the option.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "reference/convention.h"
#include "reference/format.h"
#include "reference/nvfp4_quant.h"
#include "reference/scale_layout.h"
#include "verbs/args.h"
#include "verbs/tensor_ops.h"

namespace mxgate::verbs {

// --format: an FP8 element format (e8m0 and the 16-bit formats carry no MX / block elements).
Format fp8_format(const Args& a, std::optional<Format> fallback);
// --convention, or `fallback` (nullptr: the option is required).
const Convention& convention(const Args& a, const char* fallback);
// Element codes decode exactly, but only formats the convention defines are meaningful under it
// (as in `mxgate decode`).
void require_defines(const Convention& c, Format f);
// An MX element format (FP8, FP6 or FP4) from `option`, or `fallback`.
Format mx_format(const Args& a, const char* option, std::optional<Format> fallback);
// --k: the codes per row of packed E2M1 operands (range-checked here, matched to the arrays when
// they are read).
std::optional<std::size_t> k_option(const Args& a);
// Options that one scheme does not use are rejected rather than silently ignored.
void reject_options(const Args& a, std::initializer_list<const char*> options, const char* why);
// "a, b, c": the conventions that have an MX quantizer for `element` (or a block quantizer).
std::string conventions_with_quantizer(bool mx, Format element = Format::kE4M3FN);
// mxfp4 and nvfp4 imply e2m1 elements (`implied`); mxfp6 leaves e2m3 / e3m2 to --format.
QuantScheme quant_scheme(const Args& a, std::optional<Format>* implied);
// The element format of a quantize / dequantize scheme, checked against the scheme.
Format scheme_format(const Args& a, QuantScheme scheme, std::optional<Format> implied);
// The NVFP4 recipe of the convention with --tile and --pow2-scales applied.
NvFp4Policy nvfp4_recipe(const Args& a, const Convention& c);
// The MX element formats of A and B: --a-format / --b-format, else --format, else the scheme's.
std::pair<Format, Format> operand_formats(const Args& a, const std::string& scheme);
// --scale-layout, or none (the logical layout).
std::optional<ScaleLayout> scale_layout_option(const Args& a);

}  // namespace mxgate::verbs
