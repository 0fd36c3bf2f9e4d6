#include "gpu/kernel.h"

#include <array>
#include <stdexcept>
#include <string>

namespace mxgate::gpu {
namespace {

constexpr std::array<Kernel, kKernelCount> kAll = {
    Kernel::kQuantizeMx,    Kernel::kQuantizeMxHw,      Kernel::kDequantMxToBf16,
    Kernel::kUpcastE8m0,    Kernel::kPreshuffleWeight,  Kernel::kGemmMxDotScaled,
    Kernel::kGemmMxDequant, Kernel::kGemmBlockscale,    Kernel::kGemmBlockscaleBpreshuffle,
    Kernel::kGemmBf16,      Kernel::kFaultWritePastEnd, Kernel::kFaultSkipElement};

bool is_gemm(Kernel k) {
  return k == Kernel::kGemmMxDotScaled || k == Kernel::kGemmMxDequant ||
         k == Kernel::kGemmBlockscale || k == Kernel::kGemmBlockscaleBpreshuffle ||
         k == Kernel::kGemmBf16;
}

template <class T>
const T& args_as(const Launch& l) {
  const T* a = std::get_if<T>(&l.args);
  if (a == nullptr) {
    throw std::invalid_argument("launch of " + std::string(kernel_name(l.kernel)) +
                                ": argument struct does not belong to this kernel");
  }
  return *a;
}

}  // namespace

std::string_view kernel_name(Kernel k) {
  switch (k) {
    case Kernel::kQuantizeMx:
      return "quantize_mx";
    case Kernel::kQuantizeMxHw:
      return "quantize_mx_hw";
    case Kernel::kDequantMxToBf16:
      return "dequant_mx_to_bf16";
    case Kernel::kUpcastE8m0:
      return "upcast_e8m0";
    case Kernel::kPreshuffleWeight:
      return "preshuffle_weight";
    case Kernel::kGemmMxDotScaled:
      return "gemm_mx_dot_scaled";
    case Kernel::kGemmMxDequant:
      return "gemm_mx_dequant";
    case Kernel::kGemmBlockscale:
      return "gemm_blockscale";
    case Kernel::kGemmBlockscaleBpreshuffle:
      return "gemm_blockscale_bpreshuffle";
    case Kernel::kGemmBf16:
      return "gemm_bf16";
    case Kernel::kFaultWritePastEnd:
      return "fault_write_past_end";
    case Kernel::kFaultSkipElement:
      return "fault_skip_element";
  }
  return "?";
}

std::optional<Kernel> parse_kernel(std::string_view name) {
  for (Kernel k : kAll) {
    if (kernel_name(k) == name) return k;
  }
  return std::nullopt;
}

std::span<const Kernel> all_kernels() { return kAll; }

std::vector<OutputSpec> launch_outputs(const Launch& l) {
  switch (l.kernel) {
    case Kernel::kQuantizeMx:
    case Kernel::kQuantizeMxHw: {
      const auto& a = args_as<QuantizeArgs>(l);
      return {{a.codes, a.p.rows * a.p.cols, "codes"},
              {a.scales, a.p.rows * ((a.p.cols + 31) / 32), "scales"}};
    }
    case Kernel::kDequantMxToBf16: {
      const auto& a = args_as<DequantArgs>(l);
      return {{a.out, a.p.rows * a.p.cols * 2, "out"}};
    }
    case Kernel::kUpcastE8m0: {
      const auto& a = args_as<UpcastArgs>(l);
      return {{a.out, a.p.count * 4, "out"}};
    }
    case Kernel::kPreshuffleWeight: {
      const auto& a = args_as<PreshuffleArgs>(l);
      // The (16,16) index math writes outside N x K otherwise (found by fuzz_dispatch with Z4).
      if (a.p.n % 16 != 0 || a.p.k % 32 != 0) {
        throw std::invalid_argument("preshuffle needs N % 16 == 0 and K % 32 == 0 (N = " +
                                    std::to_string(a.p.n) + ", K = " + std::to_string(a.p.k) + ")");
      }
      return {{a.out, a.p.n * a.p.k, "out"}};
    }
    case Kernel::kFaultWritePastEnd:
    case Kernel::kFaultSkipElement: {
      const auto& a = args_as<FaultArgs>(l);
      return {{a.out, a.p.count * 4, "out"}};
    }
    default:
      break;
  }
  if (!is_gemm(l.kernel)) throw std::invalid_argument("launch_outputs: unknown kernel");
  const auto& a = args_as<GemmArgs>(l);
  const std::size_t elem = a.p.out == OutDtype::kBf16 ? 2 : 4;
  return {{a.out, a.p.m * a.p.n * elem, "out"}};
}

}  // namespace mxgate::gpu
