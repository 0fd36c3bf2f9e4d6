// Test helper: torch's `x.view(shape).permute(perm).contiguous()` on a contiguous buffer, written
// independently of the layout code it checks. Used by the layout tests to build each layout as
// the source libraries compose it (docs/layouts.md §1, §4).
#pragma once

#include <cstddef>
#include <vector>

namespace mxgate::test_support {

// For each element of the permuted, contiguous output, the index of the source element it
// copies. Output dim i is input dim perm[i].
inline std::vector<std::size_t> permute_source_index(const std::vector<std::size_t>& shape,
                                                     const std::vector<std::size_t>& perm) {
  const std::size_t rank = shape.size();
  std::vector<std::size_t> in_stride(rank, 1);
  for (std::size_t i = rank - 1; i > 0; --i) {
    in_stride[i - 1] = in_stride[i] * shape[i];
  }
  std::vector<std::size_t> out_shape(rank), out_stride(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    out_shape[i] = shape[perm[i]];
    out_stride[i] = in_stride[perm[i]];
  }
  const std::size_t total = in_stride[0] * shape[0];
  std::vector<std::size_t> src_of(total);
  std::vector<std::size_t> idx(rank, 0);
  for (std::size_t n = 0; n < total; ++n) {
    std::size_t off = 0;
    for (std::size_t i = 0; i < rank; ++i) {
      off += idx[i] * out_stride[i];
    }
    src_of[n] = off;
    for (std::size_t i = rank; i-- > 0;) {  // odometer over the output shape
      if (++idx[i] < out_shape[i]) {
        break;
      }
      idx[i] = 0;
    }
  }
  return src_of;
}

}  // namespace mxgate::test_support
