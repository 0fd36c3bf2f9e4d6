// Reading and shaping the arrays of the tensor verbs (verbs/tensor_ops.h): dtype and shape checks
// with the CLI's messages, E2M1 codes packed two per byte (reference/fp4_pack.h, docs/fp4.md §5),
// scales in a physical layout. Internal to verbs/: the verbs' files include it, nothing else does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reference/format.h"
#include "reference/npy.h"
#include "reference/scale_layout.h"
#include "verbs/tensor_ops.h"

namespace mxgate::verbs {

// check_npy with its NpyError as a UsageError.
void expect(const NpyArray& array, const std::string& role, NpyDtype dtype,
            std::initializer_list<NpyDim> shape);
// "ROLE: DIMS must be positive, got shape (...)" unless the array has elements.
void require_nonempty(const NpyArray& array, const std::string& role, const char* dims);
// K of an operand array: its columns, or for packed E2M1 `k` (default twice the columns).
std::size_t operand_k(std::optional<std::size_t> k_given, const NpyArray& array, Format f);
// The codes of an operand, one per byte: E2M1 arrays are (rows, ceil(K/2)) packed, element 2i in
// the low nibble (an odd K leaves a padding nibble); the others (rows, K).
std::vector<uint8_t> read_codes(const NpyArray& array, const std::string& role, Format f,
                                std::size_t rows, std::size_t k);
// The codes as returned: E2M1 packed, two per byte, low nibble first; the others one per byte.
NpyArray codes_array(Format f, std::size_t m, std::size_t k, const std::vector<uint8_t>& codes);
// A float32 (1,) input: a global scale of NVFP4.
float scalar_input(const ArrayReader& read, const std::string& option);

// The scales as returned: logical row-major (rows, cols), or the physical layout as 1-D storage
// with zero padding.
template <class T>
NpyArray scales_array(std::optional<ScaleLayout> layout, std::size_t rows, std::size_t cols,
                      const std::vector<T>& logical) {
  if (!layout) return NpyArray({rows, cols}, logical);
  std::vector<T> stored = pack_scales(*layout, rows, cols, std::span<const T>(logical), T(0));
  const std::size_t n = stored.size();
  return NpyArray({n}, stored);
}

}  // namespace mxgate::verbs
