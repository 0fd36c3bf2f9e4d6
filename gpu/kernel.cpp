#include "gpu/kernel.h"

#include <stdexcept>
#include <string>

namespace mxgate::gpu {

// gpu/kernel_table.cpp.
std::span<const KernelDef> builtin_kernel_table();

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

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
                               [](const auto&, const auto&) { return false; }},
                    entry, args);
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
  const impl::Contract& c = l.kernel->contract;
  return std::visit(Overloaded{[](const QuantizeArgs& a) -> std::vector<OutputSpec> {
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
                                       "preshuffle needs N % " + std::to_string(c.m.align) +
                                       " == 0 and K % " + std::to_string(c.k.align) +
                                       " == 0 (N = " + std::to_string(a.p.n) +
                                       ", K = " + std::to_string(a.p.k) + ")");
                                 }
                                 return {{a.out, a.p.n * a.p.k, "out"}};
                               },
                               [](const GemmArgs& a) -> std::vector<OutputSpec> {
                                 const std::size_t elem = a.p.out == OutDtype::kBf16 ? 2 : 4;
                                 return {{a.out, a.p.m * a.p.n * elem, "out"}};
                               },
                               [](const FaultArgs& a) -> std::vector<OutputSpec> {
                                 return {{a.out, a.p.count * 4, "out"}};
                               }},
                    l.args);
}

}  // namespace mxgate::gpu
