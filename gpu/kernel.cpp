#include "gpu/kernel.h"

#include <stdexcept>
#include <string>

#include "common/blocks.h"
#include "common/overloaded.h"
#include "gpu/kernels/fp4_bits.h"

namespace mxgate::gpu {

// gpu/kernel_table.cpp.
std::span<const KernelDef> builtin_kernel_table();

namespace {

// Whether `args` is the argument struct of the entry's kind.
bool args_fit(const KernelEntry& entry, const KernelArgs& args) {
  return std::visit(Overloaded{[](QuantizeEntry, const QuantizeArgs&) { return true; },
                               [](DequantEntry, const DequantArgs&) { return true; },
                               [](UpcastEntry, const UpcastArgs&) { return true; },
                               [](PreshuffleEntry, const PreshuffleArgs&) { return true; },
                               [](GemmMxEntry, const GemmArgs&) { return true; },
                               [](GemmBlockEntry, const GemmArgs&) { return true; },
                               [](GemmBf16Entry, const GemmArgs&) { return true; },
                               [](FaultEntry, const FaultArgs&) { return true; },
                               [](QuantizeBlockEntry, const QuantizeBlockArgs&) { return true; },
                               [](Fp4QuantizeEntry, const Fp4QuantizeArgs&) { return true; },
                               [](Fp4DequantEntry, const Fp4DequantArgs&) { return true; },
                               [](Fp4GemmEntry, const Fp4GemmArgs&) { return true; },
                               [](GroupedGemmBlockEntry, const GroupedGemmArgs&) { return true; },
                               [](GroupedGemmMxEntry, const GroupedGemmArgs&) { return true; },
                               [](const auto&, const auto&) { return false; }},
                    entry, args);
}

// Packed codes rows x ceil(cols/2); scales rows x ceil(cols/block) (the kernel's block: 32 for
// MXFP4, 16 for NVFP4), or the swizzle's padded grid.
std::vector<OutputSpec> fp4_quantize_outputs(const Fp4QuantizeArgs& a, uint32_t block) {
  const std::size_t scale_cols = ceil_div(a.p.cols, block == 0 ? 1u : block);
  const std::size_t scale_bytes =
      a.p.swizzled_scales ? fp4::swizzle_128x4_bytes(a.p.rows, scale_cols) : a.p.rows * scale_cols;
  return {{a.codes, a.p.rows * ((a.p.cols + 1) / 2), "codes"}, {a.scales, scale_bytes, "scales"}};
}

}  // namespace

std::span<const KernelDef> all_kernels() { return builtin_kernel_table(); }

std::optional<Kernel> find_kernel(std::string_view name) {
  for (const KernelDef& d : all_kernels()) {
    if (d.name == name) return Kernel(d);
  }
  return std::nullopt;
}

Kernel kernel(std::string_view name) {
  if (auto k = find_kernel(name)) return *k;
  throw std::logic_error("no built-in kernel named '" + std::string(name) + "'");
}

std::vector<OutputSpec> launch_outputs(const Launch& l) {
  if (!args_fit(l.kernel->host, l.args)) {
    throw std::invalid_argument("launch of " + std::string(l.kernel.name()) +
                                ": argument struct does not belong to this kernel");
  }
  const contract::Contract& c = l.kernel->contract;
  return std::visit(
      Overloaded{[](const QuantizeArgs& a) -> std::vector<OutputSpec> {
                   return {{a.codes, a.p.rows * a.p.cols, "codes"},
                           {a.scales, a.p.rows * ((a.p.cols + 31) / 32), "scales"}};
                 },
                 [](const DequantArgs& a) -> std::vector<OutputSpec> {
                   return {{a.out, a.p.rows * a.p.cols * 2, "out"}};
                 },
                 [](const UpcastArgs& a) -> std::vector<OutputSpec> {
                   return {{a.out, a.p.count * 4, "out"}};
                 },
                 [&c](const PreshuffleArgs& a) -> std::vector<OutputSpec> {
                   // The (16,16) index math writes outside N x K otherwise (found by
                   // fuzz_dispatch with Z4): the contract's alignments are enforced
                   // here, before any launch.
                   if (a.p.n % c.m.align != 0 || a.p.k % c.k.align != 0) {
                     throw std::invalid_argument(
                         "preshuffle needs N % " + std::to_string(c.m.align) + " == 0 and K % " +
                         std::to_string(c.k.align) + " == 0 (N = " + std::to_string(a.p.n) +
                         ", K = " + std::to_string(a.p.k) + ")");
                   }
                   return {{a.out, a.p.n * a.p.k, "out"}};
                 },
                 [](const GemmArgs& a) -> std::vector<OutputSpec> {
                   // The FP8 epilogue reads scale_result through p.out_scale: never launched
                   // without it (the contract check refuses such a call; a direct launch here).
                   if (a.p.out == OutDtype::kE4m3fn && a.out_scale == kNoBuffer) {
                     throw std::invalid_argument(
                         "GEMM with e4m3fn output needs its scale_result (out_scale)");
                   }
                   const std::size_t elem = a.p.out == OutDtype::kBf16     ? 2
                                            : a.p.out == OutDtype::kE4m3fn ? 1
                                                                           : 4;
                   return {{a.out, a.p.m * a.p.n * elem, "out"}};
                 },
                 [](const FaultArgs& a) -> std::vector<OutputSpec> {
                   return {{a.out, a.p.count * 4, "out"}};
                 },
                 [&c](const Fp4QuantizeArgs& a) -> std::vector<OutputSpec> {
                   return fp4_quantize_outputs(a, c.a_block_cols);
                 },
                 [](const Fp4DequantArgs& a) -> std::vector<OutputSpec> {
                   const std::size_t elem = a.p.out == OutDtype::kBf16 ? 2 : 4;
                   return {{a.out, a.p.rows * a.p.cols * elem, "out"}};
                 },
                 [](const Fp4GemmArgs& a) -> std::vector<OutputSpec> {
                   const std::size_t elem = a.p.out == OutDtype::kBf16 ? 2 : 4;
                   return {{a.out, a.p.m * a.p.n * elem, "out"}};
                 },
                 [](const GroupedGemmArgs& a) -> std::vector<OutputSpec> {
                   const std::size_t elem = a.p.g.out == OutDtype::kBf16 ? 2 : 4;
                   return {{a.out, a.p.g.m * a.p.g.n * elem, "out"}};
                 },
                 [](const QuantizeBlockArgs& a) -> std::vector<OutputSpec> {
                   return {{a.codes, a.p.rows * a.p.cols, "codes"},
                           {a.scales, a.p.rows * ((a.p.cols + 127) / 128) * 4, "scales"}};
                 }},
      l.args);
}

}  // namespace mxgate::gpu
