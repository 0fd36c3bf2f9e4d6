// One call of a built-in grouped GEMM (docs/grouped.md) on the host backend, through the harness
// (contract check, poisoned output, guard bands), with hand-made operands: the tests of
// test_grouped_gemm.cpp and test_grouped_kernel_faults.cpp spell their bytes beside the literals.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "gpu/host/host_backend.h"
#include "impl/builtin.h"
#include "impl/calls.h"
#include "impl/harness.h"

namespace mxgate::test_support {

struct GroupedCall {
  std::vector<uint8_t> a, b;    // E4M3FN codes, row-major M x K and (E * N) x K
  std::vector<float> as, bs;    // block GEMMs: fp32 scales, M x Kb and (E * ceil(N/128)) x Kb
  std::vector<uint8_t> sa, sb;  // MX GEMM: E8M0 scales (row-major or per-group swizzle)
  bool swizzled = false;
  std::vector<uint32_t> offsets;  // the grouped clause's offsets or counts
  uint64_t m = 0, n = 0, k = 0;
  uint64_t faults = 0;  // gpu::kernel_fault bits
};

// The fp32 output words (M x N) the op wrote; 0xFFFFFFFF where it wrote nothing (the poison).
inline std::vector<uint32_t> run_grouped(const char* op_name, const GroupedCall& g) {
  static gpu::HostBackend be;
  const impl::Op& op = *impl::builtin().find_op(op_name);
  impl::Invocation inv(op, impl::RunContext{be, g.faults});
  using impl::Call;
  using impl::Dtype;
  using impl::Layout;
  const uint64_t e = g.offsets.size();
  inv.input(&Call::a, g.a, g.m, g.k, g.k, Dtype::kE4m3fn, Layout::kRowMajor);
  inv.input(&Call::b, g.b, e * g.n, g.k, g.k, Dtype::kE4m3fn, Layout::kRowMajor);
  if (g.sa.empty()) {
    const uint64_t kb = (g.k + 127) / 128;
    std::vector<uint8_t> as(g.as.size() * 4), bs(g.bs.size() * 4);
    std::memcpy(as.data(), g.as.data(), as.size());
    std::memcpy(bs.data(), g.bs.data(), bs.size());
    inv.input(&Call::a_scale, as, g.m, kb, kb, Dtype::kF32, Layout::kRowMajor);
    inv.input(&Call::b_scale, bs, g.bs.size() / kb, kb, kb, Dtype::kF32, Layout::kRowMajor);
  } else {
    const uint64_t kb = (g.k + 31) / 32;
    const Layout l = g.swizzled ? Layout::kNvSwizzle128x4 : Layout::kRowMajor;
    inv.input(&Call::a_scale, g.sa, g.m, kb, g.swizzled ? 0 : kb, Dtype::kE8m0, l);
    inv.input(&Call::b_scale, g.sb, e * g.n, kb, g.swizzled ? 0 : kb, Dtype::kE8m0, l);
  }
  const Call call = impl::grouped_call(inv, g.m, g.n, g.k, Dtype::kF32, g.offsets);
  const std::vector<uint8_t> raw = inv.run_and_read(call, &Call::out);
  std::vector<uint32_t> out(g.m * g.n);
  std::memcpy(out.data(), raw.data(), out.size() * 4);
  return out;
}

// E4M3FN codes used by the hand-made operands: 1 = 0x38 (exponent 7 = bias), 2 = 0x40, 3 = 0x44
// (1.5 x 2), 0.5 = 0x30, -1 = 0xB8; 0x7F is a NaN.
inline constexpr uint8_t kOne = 0x38, kTwo = 0x40, kThree = 0x44, kHalf = 0x30, kMinusOne = 0xB8,
                         kNan = 0x7F;
// fp32 words: 2.0 = 0x40000000, 3.0 = 0x40400000, -3.0 = 0xC0400000, 1.0 = 0x3F800000.
inline constexpr uint32_t kPoison = 0xFFFFFFFFu;

}  // namespace mxgate::test_support
