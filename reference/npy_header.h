// The header of a .npy file: the Python dict literal after the preamble, e.g.
// "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }". Internal to the reader
// (npy_read.cpp); npy.h is the API.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "reference/npy.h"

namespace mxgate::npy_detail {

struct Header {
  NpyDtype dtype;
  std::vector<size_t> shape;
};

// Parses the header text (padding and the final '\n' included). The input is hostile: NpyError
// names what is wrong and where; an unsupported dtype, Fortran order or an overflowing size is
// refused too.
Header parse_header(std::string_view text);

}  // namespace mxgate::npy_detail
