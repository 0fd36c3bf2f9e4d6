// The extreme-scale regime of the GEMM properties (gemm.exact, case field `scales=extreme`): the
// scale codes at the ends of each scale format (E8M0 0x00 = 2^-127, 0x01 = 2^-126, 0xFE = 2^127,
// 0xFF = NaN; fp32 2^-127 subnormal, 2^-126, 2^127, NaN) planted into exact-mode operands so that
// a wrong decode of one code changes a located output element, while a correct kernel still
// produces the exact result in every order (docs/bug_classes.md §2, Z39).
//
// Why the partners: an extreme scale alone would make the result underflow or overflow, so the
// case would test the output format, not the decode. The planted K block pairs a tiny scale
// with a huge one so that their product is 1 or 2, and holds the only
// nonzero term (+-1 times +-1 at one k shared by every row and column): every intermediate a
// kernel may form (a * sa, b * sb, a partial times either scale, sa * sb) is an fp32 value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/op.h"
#include "properties/fp4_operands.h"
#include "properties/gemm_operands.h"
#include "reference/accumulator.h"

namespace mxgate::properties {

// Plants extreme scales into one K block (seed-chosen) of `o` (MX or block GEMM operands): the
// scales of one operand's rows alternate 2^-127 (0x00) and 2^-126 (0x01) from its first row, the
// other operand's are 2^127 (0xFE); A's other blocks are zero. The seed picks which operand holds
// the tiny codes (A in three cases of four), and in one case of four the last A row's scale is
// NaN (0xFF), set after the exactness self-check. Throws std::logic_error when the problem it
// leaves (planted or not) is not exact-mode in `model` (a generator bug, never a verdict): the
// caller may skip exact_operands' own self-check. Returns the names of the
// planted codes, e.g. {"0x00", "0xFE"} (coverage tags, family-qualified by the caller); none for
// an op whose A and B scale blocks along K differ.
std::vector<std::string> plant_extreme_scales(const impl::Op& op, Operands& o, uint64_t seed,
                                              const AccumulatorModel& model);

// The extreme-element regime (gemm.exact, case field `elements=extreme`): every code of the
// holder operand's FP8 format at an end of its range (+-max, the smallest normal, every positive
// subnormal, +0 and, where it is a number, -0) planted in each of the holder's rows, one code per
// k, inside one scale block; the rest of those rows zero. Paired so the exact sum stays
// representable in any order: the partner's element at the k of code x is a power of two near
// 1 / |x| (in the partner's format), so every nonzero product lies within a few binades of 1 and
// the scales are one block's. The seed picks the holder (A in three cases of four), the block and
// where in it the codes start; a row narrower than the code list gets a rotating slice of it.
// Where the block holds both operands' code lists, the other operand holds its own format's codes
// right after the holder's (the holder its partner there; both operands zero elsewhere), so one
// case reaches the extremes of both element formats (E4M3FNUZ x E5M2FNUZ).
// Throws std::logic_error when the result is not exact-mode in `model`. Returns the planted
// classes ("max", "min_normal", "subnormal", "zero", "neg_zero"), each prefixed by its
// format ("e4m3fn:max"; coverage tags, family-qualified by the caller); none for a bf16 GEMM.
std::vector<std::string> plant_extreme_elements(const impl::Op& op, Operands& o, uint64_t seed,
                                                const AccumulatorModel& model);
// The same for FP4 GEMM operands (gemm_fp4.exact, field `elements=extreme`): the E2M1 codes at
// the ends of its range (+-6, 1, 0.5, +0, -0), or E4M3FN's for an MXFP8 A holder, in one scale
// block (16 for NVFP4, 32 for MXFP4), partners E2M1 powers of two (0.5 .. 4) near 1 / |x|, the
// scales the exact operands' powers of two; o.problem rebuilt. Returns "e2m1:max", ... (the
// holder's format first); throws std::logic_error when the result is not exact-mode.
std::vector<std::string> plant_extreme_fp4_elements(Fp4Operands& o, uint64_t seed);

// One element code at an end of its format's range: its byte, its value and its class (the
// coverage tag's last word: "max", "min_normal", "subnormal", "zero", "neg_zero", "nan", "inf").
struct ElementCode {
  uint8_t code;
  float value;
  const char* name;
};

// The end-of-range codes of an element format (FP4, FP6 or FP8), from its bit fields: +-max, the
// smallest normal, every positive subnormal, +0, -0 where it is a number (FNUZ: 0x80 is the
// NaN); with `specials` also the first NaN and the first Inf code of each sign the format has
// (E4M3FN 0x7F / 0xFF, E5M2 0x7C / 0x7D / ..., FNUZ 0x80; FP4 / FP6 none).
std::vector<ElementCode> extreme_element_codes(Format f, bool specials);
// The same for NVFP4 operands (gemm_fp4.exact, field `scales=extreme`): in one K block (seed-
// chosen) the UE4M3 scales of one operand's rows alternate 2^-9 (0x01, the smallest subnormal)
// and 0 (0x00) from its first row, the other operand's are 448 (0x7E, the largest): products
// 0.875 and 0; E2M1 +-1 at one k shared by every row and column, A's other elements 0. In one
// case of two the fp32 global decode scales are 2^-127 (subnormal) and 2^127, so alpha is 1.
// Returns the planted codes as tags ("ue4m3:0x01", "ue4m3:0x00", "ue4m3:0x7E",
// "global:subnormal", "global:2^127"); none for MXFP4 operands. Throws std::logic_error when the
// result is not exact-mode (a generator bug).
std::vector<std::string> plant_extreme_nvfp4_scales(Fp4Operands& o, uint64_t seed);

// The element codes of a dequantize case with field `elements=every` (dequantize.bit_exact,
// dequantize_fp4.bit_exact), `count` of them row-major: extreme_element_codes(f, true) first, then
// every other code of the format in an order rotated by the seed, repeated; so a case of at least
// 2^bits elements holds every code, and one of a dozen the ends of the range.
std::vector<uint8_t> every_element_code(Format f, std::size_t count, uint64_t seed);

// The classes of extreme_element_codes(f, true) that `codes` hold, as "<format>:<class>"
// (coverage tags, family-qualified by the caller).
std::vector<std::string> element_classes_present(Format f, const std::vector<uint8_t>& codes);

}  // namespace mxgate::properties
