// Packing of E2M1 codes, two per byte, and the nibble order as a named layout policy.
//
// Every implementation read for docs/fp4.md §5 puts element 2i in the low nibble and 2i+1 in the
// high nibble (torchao pack_uint4, AITER pack_uint4, Triton downcast_to_mxfp `evens | odds << 4`,
// TransformerEngine cast_to_fp4x2, FlashInfer / PTX cvt.rn.satfinite.e2m1x2.f32 with the even
// element as operand b, ml_dtypes' float4_e2m1fn is one code per byte and packs nothing). The swap
// is the bug class "nibble order swapped". An odd row length leaves the last high nibble as
// padding. FP6 has no packing here: docs/fp4.md §5.2 says which implementations define one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace mxgate {

enum class NibbleOrder : uint8_t {
  kLowFirst,   // "low_first": element 2i in bits 0-3, 2i+1 in bits 4-7 (every implementation)
  kHighFirst,  // "high_first": the swap
};

std::string_view name(NibbleOrder order);
std::optional<NibbleOrder> parse_nibble_order(std::string_view text);

// Bytes per packed row of `cols` E2M1 codes: ceil(cols / 2).
std::size_t packed_fp4_cols(std::size_t cols);

// Packs a row-major rows x cols matrix of 4-bit codes (one per byte, high nibble zero) into
// rows x ceil(cols/2) bytes; the padding nibble of an odd row is `pad`. Throws
// std::invalid_argument on a size mismatch or a code above 0xF.
std::vector<uint8_t> pack_fp4(std::span<const uint8_t> codes, std::size_t rows, std::size_t cols,
                              NibbleOrder order, uint8_t pad = 0);

// The inverse: rows x ceil(cols/2) bytes to rows x cols codes (padding nibbles dropped).
std::vector<uint8_t> unpack_fp4(std::span<const uint8_t> packed, std::size_t rows, std::size_t cols,
                                NibbleOrder order);

}  // namespace mxgate
