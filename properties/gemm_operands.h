// GEMM operands in the input formats of each kernel under test, and one launch of a GEMM on a
// gpu::Backend with the operand layouts its contract (or a property) asks for. Shared by the
// property suites and the backend checks (tests/test_gpu_checks.h). Operands keep the logical
// (row-major) form next to the decoded problem the reference sees; layouts are applied only at
// launch, by the layout functions of reference/scale_layout.h and weight_shuffle.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "gpu/backend.h"
#include "gpu/contract.h"
#include "reference/block_quant.h"
#include "reference/gemm_oracle.h"
#include "reference/mx_quant.h"
#include "reference/verdict.h"

namespace mxgate::properties {

using Bytes = std::vector<uint8_t>;

template <class T>
std::span<const T> sp(const std::vector<T>& v) {
  return {v.data(), v.size()};
}

// Logical operands (A m x k, B n x k row-major; scales as logical row-major grids) and the
// decoded problem the reference sees.
struct Operands {
  std::size_t m = 0, n = 0, k = 0;
  Bytes a, b;  // E4M3FN codes, or bf16 bits (2 bytes per element)
  Bytes a_e8m0, b_e8m0;
  std::vector<float> a_f32, b_f32;
  GemmProblem problem;
};

Operands mx_operands(const MxQuantized& a, const MxQuantized& b);
Operands block_operands(const BlockQuantized& a, const BlockQuantized& b);
Operands bf16_operands(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                       std::size_t m, std::size_t n, std::size_t k);

bool is_mx(gpu::Kernel k);     // e8m0 1x32 scales
bool is_block(gpu::Kernel k);  // fp32 1x128 / 128x128 scales
bool is_gemm(gpu::Kernel k);

// E4M3FN code of a small integer (exact) or any float (RNE, saturating).
uint8_t e4m3_code(float v);

// Random finite E4M3FN codes (NaN codes 0x7F / 0xFF replaced by 0).
Bytes random_codes(std::size_t count, std::mt19937_64& rng);

// The first m rows of A (with their scales): still valid operands of the same kind.
Operands first_rows(const Operands& o, std::size_t m);

// Exact-mode operands (gemm_oracle.h) in the kernel's input formats. `fingerprint`: every scale
// block along K of a row gets its own power of two, and neighbouring rows other ones (values
// in {-2..2} so the wider exponent window stays exact), so a scale read from a wrong slot
// changes the result by a power of two at a located element.
Operands exact_operands(gpu::Kernel kernel, std::size_t m, std::size_t n, std::size_t k,
                        uint64_t seed, bool fingerprint = false);

// General data: random finite codes; MX scale bytes in [118, 136]; fp32 scales with random
// mantissas in [2^-8, 2^-2); bf16 values with random mantissas. Products round, sums round.
Operands general_operands(gpu::Kernel kernel, std::size_t m, std::size_t n, std::size_t k,
                          uint64_t seed);

// Operand layouts of one launch beyond the contract's defaults (gpu/kernels/params.h).
struct LaunchLayout {
  // Activation-scale order handed to a block GEMM; kNone = the contract's order.
  gpu::ActScaleOrder as_order = gpu::ActScaleOrder::kNone;
  bool tma_aligned_as = false;      // column-major As with leading dimension align4(M)
  bool swizzled_mx_scales = false;  // MX GEMMs: both scale grids in the NVIDIA 128x4 swizzle
  uint8_t mx_pad = 0xFF;            // swizzle padding bytes (0xFF: NaN)
  float as_pad = 0.0f;              // TMA padding rows of As
  uint32_t faults = 0;              // gpu::kernel_fault bits
  // TP column shard: B holds rows [n_offset, n_offset + n) of a larger weight whose 128-row
  // scale blocks start at n_offset / 128 (block GEMMs; bs must hold those blocks).
  uint64_t n_offset = 0;
};

// Lays the operands out as `kernel` reads them (its contract: column-major As, preshuffled B)
// with `layout`'s overrides, uploads, runs, downloads and releases the buffers.
GemmOutput run_gemm(gpu::Backend& be, gpu::Kernel kernel, const Operands& o, OutputFormat format,
                    const LaunchLayout& layout = {});

// Bit-exact verdict of `actual` against `expected`, in `expected`'s output format.
BitExactVerdict compare(const GemmOutput& expected, const GemmOutput& actual);

OrderModel order_model(gpu::Kernel kernel, OutputFormat format);
AccumModel accum_model(gpu::Kernel kernel, OutputFormat format);

}  // namespace mxgate::properties
