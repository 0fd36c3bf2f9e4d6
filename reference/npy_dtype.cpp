// The six supported dtypes: NumPy's names, header descrs and sizes, one row each.
#include <iterator>
#include <string>

#include "reference/npy.h"
#include "reference/npy_common.h"

namespace mxgate {

using npy_detail::kSupported;
using npy_detail::printable;

namespace {

struct DtypeRow {
  NpyDtype dtype;
  std::string_view name;   // NumPy's name
  std::string_view descr;  // as np.save writes it
  size_t size;             // bytes per element
};

// In NpyDtype order, so that a dtype's row is kDtypes[dtype].
constexpr DtypeRow kDtypes[] = {
    {NpyDtype::kUint8, "uint8", "|u1", 1},      // values and codes
    {NpyDtype::kUint16, "uint16", "<u2", 2},    // values and codes
    {NpyDtype::kFloat32, "float32", "<f4", 4},  // values and codes
    {NpyDtype::kFloat64, "float64", "<f8", 8},  // values and codes
    {NpyDtype::kInt32, "int32", "<i4", 4},      // index arrays only (group offsets, counts)
    {NpyDtype::kInt64, "int64", "<i8", 8},      // index arrays only
};

constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < std::size(kDtypes); ++i) {
    if (kDtypes[i].dtype != static_cast<NpyDtype>(i)) {
      return false;
    }
  }
  return true;
}
static_assert(rows_in_enum_order(), "kDtypes must list every NpyDtype in enum order");

// The row of `dtype`; NpyError for a value outside the enum.
const DtypeRow& row_of(NpyDtype dtype) {
  const auto i = static_cast<size_t>(dtype);
  if (i >= std::size(kDtypes)) {
    throw NpyError("invalid NpyDtype value " + std::to_string(static_cast<int>(dtype)));
  }
  return kDtypes[i];
}

std::optional<NpyDtype> dtype_from_descr(std::string_view descr) {
  if (descr == "<u1") {
    return NpyDtype::kUint8;  // a one-byte type has no byte order; NumPy accepts either spelling
  }
  for (const DtypeRow& row : kDtypes) {
    if (row.descr == descr) {
      return row.dtype;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view npy_dtype_name(NpyDtype dtype) {
  return static_cast<size_t>(dtype) < std::size(kDtypes) ? row_of(dtype).name : "invalid dtype";
}

std::string_view npy_dtype_descr(NpyDtype dtype) { return row_of(dtype).descr; }

size_t npy_dtype_size(NpyDtype dtype) { return row_of(dtype).size; }

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
