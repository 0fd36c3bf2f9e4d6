// NpyArray in memory: element counts, shape text, typed construction and access, and the
// dtype / shape check of an input array (check_npy).
#include <cstring>
#include <string>
#include <utility>

#include "reference/npy.h"
#include "reference/npy_common.h"

namespace mxgate {

using npy_detail::byte_count;
using npy_detail::checked_byte_count;

namespace {

void check_count(size_t expected, size_t got, const std::vector<size_t>& shape) {
  if (expected != got) {
    throw NpyError("shape " + npy_shape_string(shape) + " has " + std::to_string(expected) +
                   " elements but " + std::to_string(got) + " values were given");
  }
}

}  // namespace

size_t npy_element_count(std::span<const size_t> shape) {
  const auto count = checked_byte_count(1, shape);
  if (!count) {
    throw NpyError("element count overflow: shape " + npy_shape_string(shape) +
                   " has more than 2^63-1 elements");
  }
  return *count;
}

std::string npy_shape_string(std::span<const size_t> shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) {
      out += ", ";
    }
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) {
    out += ",";
  }
  return out + ")";
}

template <NpyElement T>
NpyArray NpyArray::from(std::vector<size_t> shape, std::span<const T> values) {
  check_count(npy_element_count(shape), values.size(), shape);
  NpyArray array;
  array.dtype = kNpyDtypeOf<T>;
  array.shape = std::move(shape);
  array.bytes.resize(values.size_bytes());
  if (!values.empty()) {
    std::memcpy(array.bytes.data(), values.data(), values.size_bytes());
  }
  return array;
}

template NpyArray NpyArray::from<uint8_t>(std::vector<size_t>, std::span<const uint8_t>);
template NpyArray NpyArray::from<uint16_t>(std::vector<size_t>, std::span<const uint16_t>);
template NpyArray NpyArray::from<float>(std::vector<size_t>, std::span<const float>);
template NpyArray NpyArray::from<double>(std::vector<size_t>, std::span<const double>);
template NpyArray NpyArray::from<int32_t>(std::vector<size_t>, std::span<const int32_t>);
template NpyArray NpyArray::from<int64_t>(std::vector<size_t>, std::span<const int64_t>);

NpyArray::NpyArray(std::vector<size_t> shape, const std::vector<uint8_t>& values)
    : NpyArray(from<uint8_t>(std::move(shape), values)) {}
NpyArray::NpyArray(std::vector<size_t> shape, const std::vector<uint16_t>& values)
    : NpyArray(from<uint16_t>(std::move(shape), values)) {}
NpyArray::NpyArray(std::vector<size_t> shape, const std::vector<float>& values)
    : NpyArray(from<float>(std::move(shape), values)) {}
NpyArray::NpyArray(std::vector<size_t> shape, const std::vector<double>& values)
    : NpyArray(from<double>(std::move(shape), values)) {}

NpyArray NpyArray::from_bytes(NpyDtype dtype, std::vector<size_t> shape,
                              std::vector<uint8_t> bytes) {
  NpyArray array;
  array.dtype = dtype;
  array.shape = std::move(shape);
  array.bytes = std::move(bytes);
  array.validate();
  return array;
}

void NpyArray::validate() const {
  const size_t expected = byte_count(dtype, shape);
  if (bytes.size() != expected) {
    throw NpyError("inconsistent NpyArray: " + std::string(npy_dtype_name(dtype)) + " " +
                   npy_shape_string(shape) + " needs " + std::to_string(expected) +
                   " bytes, holds " + std::to_string(bytes.size()));
  }
}

template <NpyElement T>
std::vector<T> NpyArray::values() const {
  if (kNpyDtypeOf<T> != dtype) {
    throw NpyError("array is " + std::string(npy_dtype_name(dtype)) + ", read as " +
                   std::string(npy_dtype_name(kNpyDtypeOf<T>)));
  }
  validate();
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) {
    std::memcpy(out.data(), bytes.data(), bytes.size());
  }
  return out;
}

template std::vector<uint8_t> NpyArray::values<uint8_t>() const;
template std::vector<uint16_t> NpyArray::values<uint16_t>() const;
template std::vector<float> NpyArray::values<float>() const;
template std::vector<double> NpyArray::values<double>() const;
template std::vector<int32_t> NpyArray::values<int32_t>() const;
template std::vector<int64_t> NpyArray::values<int64_t>() const;

void check_npy(const NpyArray& array, std::string_view role, NpyDtype dtype,
               std::initializer_list<NpyDim> shape) {
  bool ok = array.dtype == dtype && array.shape.size() == shape.size();
  std::string expected = "(";
  size_t i = 0;
  for (const NpyDim& dim : shape) {
    if (i > 0) {
      expected += ", ";
    }
    if (dim.name.empty()) {
      expected += dim.extent ? std::to_string(*dim.extent) : "?";
    } else {
      expected += dim.name;
      if (dim.extent) {
        expected += '=';
        expected += std::to_string(*dim.extent);
      }
    }
    if (ok && dim.extent && array.shape[i] != *dim.extent) {
      ok = false;
    }
    ++i;
  }
  expected += shape.size() == 1 ? ",)" : ")";
  if (!ok) {
    throw NpyError(std::string(role) + ": expected " + std::string(npy_dtype_name(dtype)) + " " +
                   expected + ", got " + std::string(npy_dtype_name(array.dtype)) + " " +
                   npy_shape_string(array.shape));
  }
}

}  // namespace mxgate
