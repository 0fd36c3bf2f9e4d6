// Per-family call builders: each declares on an Invocation the outputs of one call of its family
// (poisoned, sized by tensor_bytes) and returns the Call with the family's dimensions. The caller
// gives the inputs (their bytes and layouts are its own) and runs it (Invocation::run_and_read).
// The call of each family is include/mxgate/plugin.h's.
#pragma once

#include <cstdint>
#include <span>

#include "impl/contract.h"
#include "impl/harness.h"

namespace mxgate::impl {

// The stored form of a scale output: cols scale columns per row, in `layout` with leading
// dimension `ld` (0: none), `bytes` in all (layout padding included).
struct ScaleOut {
  uint64_t cols = 0;
  uint64_t ld = 0;
  uint64_t bytes = 0;
  Dtype dtype = Dtype::kE8m0;
  Layout layout = Layout::kRowMajor;
};

// The GEMM families: out, m x n row-major of `out` (f32 or bf16).
Call gemm_call(Invocation& inv, uint64_t m, uint64_t n, uint64_t k, Dtype out);
// The grouped GEMM families (contract.h GroupedClause): out m x n row-major of `out`, and the E
// group offsets (or masked counts) both as the call's data and as an int32 input buffer
// (Call::group_offsets), the one the kernel reads.
Call grouped_call(Invocation& inv, uint64_t m, uint64_t n, uint64_t k, Dtype out,
                  std::span<const uint32_t> offsets);
// One output of rows x cols (dequantize, upcast, cast, preshuffle): out of `out`, row-major with
// leading dimension cols unless `layout` says otherwise (the AITER shuffle has none).
Call rows_call(Invocation& inv, uint64_t rows, uint64_t cols, Dtype out,
               Layout layout = Layout::kRowMajor);
// The quantizers: codes (out) rows x cols of `codes`, row-major, and their scales (out_scale).
Call quantize_call(Invocation& inv, uint64_t rows, uint64_t cols, Dtype codes, const ScaleOut& s);

}  // namespace mxgate::impl
