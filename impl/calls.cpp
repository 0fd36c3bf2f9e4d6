#include "impl/calls.h"

namespace mxgate::impl {

Call gemm_call(Invocation& inv, uint64_t m, uint64_t n, uint64_t k, Dtype out) {
  inv.output(&Call::out, tensor_bytes(out, m, n), m, n, n, out, Layout::kRowMajor);
  Call call;
  call.m = m;
  call.n = n;
  call.k = k;
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
