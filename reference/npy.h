// NumPy .npy files: the way users hand arrays to the reference from Python and get results back.
//
// Reads format versions 1.0, 2.0 and 3.0 and writes 1.0 (2.0 when the header needs more than 64
// KiB), byte for byte what np.save writes. Only little-endian, C-order arrays of uint8, uint16,
// float32 and float64 are supported; anything else is rejected with an NpyError that says what to
// change. The parser treats its input as hostile: it is exercised by a fuzzer.
//
// Implemented in npy_*.cpp, one file per job: _dtype (names, descrs, sizes), _array (NpyArray and
// check_npy), _header (the header dict's parser), _read, _write, _common (what they share).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mxgate {

// Every failure to read, write or validate a .npy array; what() names the problem precisely.
class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// kInt32 / kInt64 carry index arrays (group offsets, counts), never values or codes.
enum class NpyDtype : uint8_t { kUint8, kUint16, kFloat32, kFloat64, kInt32, kInt64 };

std::string_view npy_dtype_name(NpyDtype dtype);  // NumPy's name: "uint8", "float32", ...
std::string_view npy_dtype_descr(
    NpyDtype dtype);                    // header descr as np.save writes it: "|u1", "<f4"
size_t npy_dtype_size(NpyDtype dtype);  // bytes per element
// The dtype of a header descr as NumPy spells it (`arr.dtype.str`: "|u1", "<u2", "<f4", "<f8");
// anything else throws the NpyError a .npy file with that descr gets (unsupported, big-endian).
NpyDtype npy_dtype_from_descr(std::string_view descr);

// The six C++ element types an array holds, and the dtype of each.
template <typename T>
concept NpyElement =
    std::same_as<T, uint8_t> || std::same_as<T, uint16_t> || std::same_as<T, float> ||
    std::same_as<T, double> || std::same_as<T, int32_t> || std::same_as<T, int64_t>;
template <NpyElement T>
inline constexpr NpyDtype kNpyDtypeOf = std::same_as<T, uint8_t>    ? NpyDtype::kUint8
                                        : std::same_as<T, uint16_t> ? NpyDtype::kUint16
                                        : std::same_as<T, float>    ? NpyDtype::kFloat32
                                        : std::same_as<T, double>   ? NpyDtype::kFloat64
                                        : std::same_as<T, int32_t>  ? NpyDtype::kInt32
                                                                    : NpyDtype::kInt64;

// Number of elements of `shape` (1 for the scalar shape ()). Throws NpyError when the extents,
// zero extents aside, multiply past PTRDIFF_MAX (NumPy's limit, too).
size_t npy_element_count(std::span<const size_t> shape);

// A shape as Python prints it: "()", "(3,)", "(3, 4)".
std::string npy_shape_string(std::span<const size_t> shape);

// An array in memory. Invariant: bytes.size() == size() * npy_dtype_size(dtype); the
// constructors establish it, and everything that consumes an NpyArray checks it.
struct NpyArray {
  NpyDtype dtype = NpyDtype::kFloat32;
  std::vector<size_t> shape = {0};  // empty means a 0-d array (scalar) of one element
  std::vector<uint8_t> bytes;       // elements, little-endian, C (row-major) order

  NpyArray() = default;  // an empty float32 array of shape (0,)
  // Typed constructors; throw NpyError unless values.size() equals the element count of shape.
  NpyArray(std::vector<size_t> shape, const std::vector<uint8_t>& values);
  NpyArray(std::vector<size_t> shape, const std::vector<uint16_t>& values);
  NpyArray(std::vector<size_t> shape, const std::vector<float>& values);
  NpyArray(std::vector<size_t> shape, const std::vector<double>& values);

  template <NpyElement T>
  static NpyArray from(std::vector<size_t> shape, std::span<const T> values);
  // Raw little-endian element bytes; throws NpyError if their count does not fit shape and dtype.
  static NpyArray from_bytes(NpyDtype dtype, std::vector<size_t> shape, std::vector<uint8_t> bytes);

  size_t size() const { return npy_element_count(shape); }  // number of elements
  size_t rank() const { return shape.size(); }
  size_t itemsize() const { return npy_dtype_size(dtype); }

  // The elements as T; throws NpyError if T is not this array's dtype (no silent conversion).
  template <NpyElement T>
  std::vector<T> values() const;

  // Throws NpyError if the invariant above does not hold (for arrays assembled field by field).
  void validate() const;

  bool operator==(const NpyArray&) const = default;  // same dtype, shape and bytes
};

// Parses a whole .npy file held in memory. Never reads outside file_bytes and allocates only after
// the declared size has been checked against the bytes present.
NpyArray parse_npy(std::span<const uint8_t> file_bytes);

// Reads and parses the file at path; error messages start with the path.
NpyArray read_npy(const std::string& path);

// The exact bytes np.save writes for this array.
std::vector<uint8_t> serialize_npy(const NpyArray& array);

// Writes serialize_npy(array) to a temporary file next to path, then renames it over path: on
// failure the old file, if any, is left untouched and no partial file remains.
void write_npy(const std::string& path, const NpyArray& array);

// One expected extent for check_npy: a name alone matches any extent ("M"), a number only itself
// (32), both only that number but print as the name: NpyDim("K", 64) prints "K=64".
struct NpyDim {
  // Implicit on purpose, so that shapes read like {"M", "K"} or {"M", 32}.
  NpyDim(const char* dim_name) : name(dim_name) {}
  NpyDim(std::integral auto dim_extent) : extent(static_cast<size_t>(dim_extent)) {
    if (std::cmp_less(dim_extent, 0)) {
      throw std::invalid_argument("NpyDim: negative extent");
    }
  }
  NpyDim(const char* dim_name, size_t dim_extent) : name(dim_name), extent(dim_extent) {}

  std::string name;
  std::optional<size_t> extent;
};

// Checks that an input array has the expected dtype and shape; otherwise throws NpyError naming
// its role, e.g. "--a: expected uint8 (M, K), got float32 (3,)".
void check_npy(const NpyArray& array, std::string_view role, NpyDtype dtype,
               std::initializer_list<NpyDim> shape);

}  // namespace mxgate
