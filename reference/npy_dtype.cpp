// The four supported dtypes: NumPy's names, header descrs and sizes.
#include <string>

#include "reference/npy.h"
#include "reference/npy_common.h"

namespace mxgate {

using npy_detail::kSupported;
using npy_detail::printable;

namespace {

std::optional<NpyDtype> dtype_from_descr(std::string_view descr) {
  if (descr == "|u1" || descr == "<u1") {
    return NpyDtype::kUint8;
  }
  if (descr == "<u2") {
    return NpyDtype::kUint16;
  }
  if (descr == "<f4") {
    return NpyDtype::kFloat32;
  }
  if (descr == "<f8") {
    return NpyDtype::kFloat64;
  }
  return std::nullopt;
}

}  // namespace

std::string_view npy_dtype_name(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::kUint8:
      return "uint8";
    case NpyDtype::kUint16:
      return "uint16";
    case NpyDtype::kFloat32:
      return "float32";
    case NpyDtype::kFloat64:
      return "float64";
  }
  return "invalid dtype";
}

std::string_view npy_dtype_descr(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::kUint8:
      return "|u1";
    case NpyDtype::kUint16:
      return "<u2";
    case NpyDtype::kFloat32:
      return "<f4";
    case NpyDtype::kFloat64:
      return "<f8";
  }
  throw NpyError("invalid NpyDtype value " + std::to_string(static_cast<int>(dtype)));
}

size_t npy_dtype_size(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::kUint8:
      return 1;
    case NpyDtype::kUint16:
      return 2;
    case NpyDtype::kFloat32:
      return 4;
    case NpyDtype::kFloat64:
      return 8;
  }
  throw NpyError("invalid NpyDtype value " + std::to_string(static_cast<int>(dtype)));
}

NpyDtype npy_dtype_from_descr(std::string_view descr) {
  if (const auto dtype = dtype_from_descr(descr)) {
    return *dtype;
  }
  if (!descr.empty() && descr[0] == '>') {
    throw NpyError("big-endian dtype '" + printable(descr) +
                   "' is not supported; convert with a.astype(a.dtype.newbyteorder('<')) (" +
                   kSupported + ")");
  }
  throw NpyError("unsupported dtype '" + printable(descr) + "' (" + kSupported + ")");
}

}  // namespace mxgate
