// The dispatch side's value oracle (no decision model): the reference result of a dispatch layer's
// apply, shared by the dispatch property, the dispatch tests (host and device backends) and the
// fuzz_dispatch target: oracles that never touch a kernel's layout, exact_gemm for MXFP8 / bf16
// (integer data), ordered_gemm of the declared 128-block order for block FP8. Free of GoogleTest so
// the fuzzer can use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dispatch/layer.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/gemm_oracle.h"
#include "reference/quant_conventions.h"

namespace mxgate::dispatch::test_support {

inline LinearConfig config(Platform p, Scheme s, std::size_t n, std::size_t k,
                           WeightScaleDtype ws = WeightScaleDtype::kE8m0) {
  LinearConfig c;
  c.platform = p;
  c.scheme = s;
  c.n = n;
  c.k = k;
  c.weight_scale = ws;
  return c;
}

// The reference result of apply, through oracles that never touch a kernel's layout: exact_gemm
// for MXFP8 / bf16 (integer data), ordered_gemm of the declared 128-block order for block FP8.
inline GemmOutput reference(const LinearConfig& c, const QuantizedWeight& w, const Activation& x) {
  std::vector<float> xf;
  for (uint16_t h : x.bf16) xf.push_back(float_of_bf16(h));
  if (c.scheme == Scheme::kMxfp8) {
    const MxQuantized qa =
        quantize_mx(xf, x.m, x.k, Format::kE4M3FN, require_mx_policy(require_convention("ocp_mx")));
    const MxQuantized qw{c.n, c.k, Format::kE4M3FN, w.data, w.scales};
    return exact_gemm(mx_gemm_problem(qa, qw, E8m0Decode::kOcp), OutputFormat::kFp32);
  }
  if (c.scheme == Scheme::kBf16) {
    std::vector<uint16_t> wb(c.n * c.k);
    std::memcpy(wb.data(), w.data.data(), w.data.size());
    return exact_gemm(bf16_gemm_problem(x.bf16, wb, x.m, c.n, c.k), OutputFormat::kFp32);
  }
  const QuantizedActivation q = quantize_activation_1x128(x);
  const BlockQuantized qa{x.m, x.k, 1, kBlockK, Format::kE4M3FN, q.codes, q.scales};
  BlockQuantized qw{c.n, c.k, kBlockK, kBlockK, Format::kE4M3FN, w.data, {}};
  if (c.weight_scale == WeightScaleDtype::kE8m0) {
    for (uint8_t b : w.scales) qw.scales.push_back(decode_e8m0(b, E8m0Decode::kOcp));
  } else {
    qw.scales.resize(w.scales.size() / 4);
    std::memcpy(qw.scales.data(), w.scales.data(), w.scales.size());
  }
  return ordered_gemm(block_gemm_problem(qa, qw),
                      {kBlockK, ScaleApplication::kPerPartial, OutputFormat::kFp32});
}

// Index of the first element whose fp32 bits differ (0 on a size mismatch), or -1 when equal.
inline long first_difference(const GemmOutput& want, const GemmOutput& got) {
  if (want.fp32.size() != got.fp32.size()) return 0;
  for (std::size_t i = 0; i < want.fp32.size(); ++i) {
    if (bits_of(want.fp32[i]) != bits_of(got.fp32[i])) return static_cast<long>(i);
  }
  return -1;
}

}  // namespace mxgate::dispatch::test_support
