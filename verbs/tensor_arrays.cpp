// Reading and shaping the tensor verbs' arrays (tensor_arrays.h): the checks and packing every
// verb shares, with the CLI's messages.
#include "verbs/tensor_arrays.h"

#include "reference/fp4_pack.h"

namespace mxgate::verbs {

void expect(const NpyArray& array, const std::string& role, NpyDtype dtype,
            std::initializer_list<NpyDim> shape) {
  try {
    check_npy(array, role, dtype, shape);
  } catch (const NpyError& e) {
    throw UsageError(e.what());
  }
}

void require_nonempty(const NpyArray& array, const std::string& role, const char* dims) {
  if (array.size() == 0) {
    throw UsageError(role + ": " + dims + " must be positive, got shape " +
                     npy_shape_string(array.shape));
  }
}

std::size_t operand_k(std::optional<std::size_t> k_given, const NpyArray& array, Format f) {
  if (f != Format::kE2M1) return array.shape[1];
  const std::size_t k = k_given.value_or(2 * array.shape[1]);
  if (packed_fp4_cols(k) != array.shape[1]) {
    throw UsageError("--k " + std::to_string(k) + " needs " + std::to_string(packed_fp4_cols(k)) +
                     " packed e2m1 columns, the array has " + std::to_string(array.shape[1]));
  }
  return k;
}

std::vector<uint8_t> read_codes(const NpyArray& array, const std::string& role, Format f,
                                std::size_t rows, std::size_t k) {
  if (f != Format::kE2M1) {
    expect(array, role, NpyDtype::kUint8, {NpyDim("rows", rows), NpyDim("K", k)});
    return array.values<uint8_t>();
  }
  expect(array, role, NpyDtype::kUint8,
         {NpyDim("rows", rows), NpyDim("ceil(K/2) (packed e2m1)", packed_fp4_cols(k))});
  return unpack_fp4(array.values<uint8_t>(), rows, k, NibbleOrder::kLowFirst);
}

NpyArray codes_array(Format f, std::size_t m, std::size_t k, const std::vector<uint8_t>& codes) {
  if (f != Format::kE2M1) return NpyArray({m, k}, codes);
  return NpyArray({m, packed_fp4_cols(k)}, pack_fp4(codes, m, k, NibbleOrder::kLowFirst));
}

float scalar_input(const ArrayReader& read, const std::string& option) {
  const NpyArray g = read(option);
  expect(g, "--" + option, NpyDtype::kFloat32, {NpyDim(1)});
  return g.values<float>()[0];
}

}  // namespace mxgate::verbs
