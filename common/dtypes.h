// The element types of mxgate, one table every layer reads: name (the ABI's spelling), ABI code
// (include/mxgate/plugin.h mxgate_dtype; contract/contract.cpp checks each against its
// MXGATE_DTYPE_ value), bits, storage and the scaled formats each belongs to. Constexpr and free
// of the standard library like blocks.h, so device code can read it too. The C API hands it to
// Python (mxgate_api_vocabulary). Adding an element format: docs/architecture.md §2.11.
#pragma once

#include "common/blocks.h"

namespace mxgate::dtypes {

// The scaled formats (OCP MX v1.0, NVIDIA NVFP4: docs/formats.md, docs/fp4.md), as bits of an
// element type's `element_of` / `scale_of`.
inline constexpr unsigned kMxfp8 = 1u << 0;
inline constexpr unsigned kMxfp6 = 1u << 1;
inline constexpr unsigned kMxfp4 = 1u << 2;
inline constexpr unsigned kNvfp4 = 1u << 3;
inline constexpr unsigned kMxint8 = 1u << 4;  // OCP MX v1.0 §5.3 (docs/formats.md §1.5)

struct ScaledFormat {
  const char* name;
  unsigned bit;
  block_size_t block;  // elements per scale along a row
};
inline constexpr ScaledFormat kScaledFormats[] = {
    {"mxfp8", kMxfp8, kMxBlock},    {"mxfp6", kMxfp6, kMxBlock},   {"mxfp4", kMxfp4, kMxBlock},
    {"nvfp4", kNvfp4, kNvfp4Block}, {"mxint8", kMxint8, kMxBlock},
};

// The ABI codes (mxgate_dtype), by name: the enums that must stay (the kernels' launch
// parameters, gpu/kernels/params.h) take their values from these.
inline constexpr unsigned kF32 = 1, kBf16 = 2, kFp16 = 3, kE4m3fn = 4, kE5m2 = 5, kE4m3fnuz = 6,
                          kE5m2fnuz = 7, kE8m0 = 8, kE2m1 = 9, kE2m3 = 10, kE3m2 = 11, kE3m4 = 12,
                          kE4m3ieee = 13, kE4m3b11fnuz = 14, kMxint8Element = 15;

struct ElementType {
  const char* name;        // "f32", "bf16", ..., "e3m2" (contract::to_string, the Python names)
  unsigned code;           // mxgate_dtype
  unsigned bits;           // bits of one value
  unsigned exponent_bits;  // 0 for none
  unsigned mantissa_bits;  // stored fraction bits (mxint8: the 6 bits below its binary point)
  unsigned storage_bytes;  // bytes per stored element; 0: packed two per byte (E2M1)
  unsigned element_of;     // scaled formats whose elements it is
  unsigned scale_of;       // scaled formats whose block scales it is
};

// In code order, from 1 (0 is MXGATE_DTYPE_NONE, no element type).
inline constexpr ElementType kElementTypes[] = {
    {"f32", kF32, 32, 8, 23, 4, 0, 0},
    {"bf16", kBf16, 16, 8, 7, 2, 0, 0},
    {"fp16", kFp16, 16, 5, 10, 2, 0, 0},
    {"e4m3fn", kE4m3fn, 8, 4, 3, 1, kMxfp8, kNvfp4},
    {"e5m2", kE5m2, 8, 5, 2, 1, kMxfp8, 0},
    {"e4m3fnuz", kE4m3fnuz, 8, 4, 3, 1, 0, 0},
    {"e5m2fnuz", kE5m2fnuz, 8, 5, 2, 1, 0, 0},
    {"e8m0", kE8m0, 8, 8, 0, 1, 0, kMxfp8 | kMxfp6 | kMxfp4 | kMxint8},
    {"e2m1", kE2m1, 4, 2, 1, 0, kMxfp4 | kNvfp4, 0},
    {"e2m3", kE2m3, 6, 2, 3, 1, kMxfp6, 0},
    {"e3m2", kE3m2, 6, 3, 2, 1, kMxfp6, 0},
    {"e3m4", kE3m4, 8, 3, 4, 1, 0, 0},
    {"e4m3ieee", kE4m3ieee, 8, 4, 3, 1, 0, 0},
    {"e4m3b11fnuz", kE4m3b11fnuz, 8, 4, 3, 1, 0, 0},
    // Two's complement int8 with an implicit 2^-6 (OCP MX v1.0 §5.3; docs/formats.md §1.5).
    {"mxint8", kMxint8Element, 8, 0, 6, 1, kMxint8, 0},
};
inline constexpr unsigned kElementTypeCount = sizeof(kElementTypes) / sizeof(kElementTypes[0]);

// The row of `code`; nullptr for 0 and unknown codes.
constexpr const ElementType* element_type(unsigned code) {
  return code >= 1 && code <= kElementTypeCount ? &kElementTypes[code - 1] : nullptr;
}

constexpr bool same_name(const char* a, const char* b) {
  while (*a != 0 && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

// The row named `name` (the ABI spelling); nullptr when none.
constexpr const ElementType* element_type(const char* name) {
  for (const ElementType& t : kElementTypes) {
    if (same_name(t.name, name)) return &t;
  }
  return nullptr;
}

// The table is in code order with no gaps, so element_type(code) is an index.
constexpr bool codes_in_order() {
  for (unsigned i = 0; i < kElementTypeCount; ++i) {
    if (kElementTypes[i].code != i + 1) return false;
  }
  return true;
}
static_assert(codes_in_order(), "kElementTypes must list codes 1, 2, ... in order");

}  // namespace mxgate::dtypes
