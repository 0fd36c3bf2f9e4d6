#include "impl/calls.h"

#include <vector>

namespace mxgate::impl {

Call gemm_call(Invocation& inv, uint64_t m, uint64_t n, uint64_t k, Dtype out) {
  inv.output(&Call::out, tensor_bytes(out, m, n), m, n, n, out, Layout::kRowMajor);
  Call call;
  call.m = m;
  call.n = n;
  call.k = k;
  return call;
}

Call grouped_call(Invocation& inv, uint64_t m, uint64_t n, uint64_t k, Dtype out,
                  std::span<const uint32_t> offsets) {
  std::vector<uint8_t> bytes(offsets.size() * 4);
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    for (std::size_t b = 0; b < 4; ++b)
      bytes[i * 4 + b] = static_cast<uint8_t>(offsets[i] >> (8 * b));
  }
  inv.input(&Call::group_offsets, bytes, 1, offsets.size(), offsets.size(), Dtype::kNone,
            Layout::kRowMajor);
  Call call = gemm_call(inv, m, n, k, out);
  call.offsets.assign(offsets.begin(), offsets.end());
  return call;
}

Call rows_call(Invocation& inv, uint64_t rows, uint64_t cols, Dtype out, Layout layout) {
  const uint64_t ld = layout == Layout::kAiterShuffle16x16 ? 0 : cols;
  inv.output(&Call::out, tensor_bytes(out, rows, cols), rows, cols, ld, out, layout);
  Call call;
  call.m = rows;
  call.k = cols;
  return call;
}

Call quantize_call(Invocation& inv, uint64_t rows, uint64_t cols, Dtype codes, const ScaleOut& s) {
  inv.output(&Call::out, tensor_bytes(codes, rows, cols), rows, cols, cols, codes,
             Layout::kRowMajor);
  inv.output(&Call::out_scale, s.bytes, rows, s.cols, s.ld, s.dtype, s.layout);
  Call call;
  call.m = rows;
  call.k = cols;
  return call;
}

}  // namespace mxgate::impl
