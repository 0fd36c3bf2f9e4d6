// The kernels every backend runs, and the arguments of one launch: a small struct per kernel
// naming its buffers (handles from Backend::allocate) and its parameters (kernels/params.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "gpu/kernels/params.h"

namespace mxgate::gpu {

enum class Kernel : uint8_t {
  kQuantizeMx,                 // bf16/fp32 -> E4M3FN codes + E8M0 scales, software casts
  kQuantizeMxHw,               // same, elements cast by cvt.rn.satfinite.e4m3x2.f32 (sm_89+)
  kDequantMxToBf16,            // codes + E8M0 scales -> bf16
  kUpcastE8m0,                 // E8M0 bytes -> fp32 (correct or shift)
  kPreshuffleWeight,           // AITER shuffle_weight (16,16), 1-byte elements
  kGemmMxDotScaled,            // MXFP8 GEMM, unmasked K tiles of 128
  kGemmMxDequant,              // MXFP8 GEMM, any K % 32 == 0
  kGemmBlockscale,             // fp8 GEMM, row-major As, plain B
  kGemmBlockscaleBpreshuffle,  // fp8 GEMM, column-major As, preshuffled B
  kGemmBf16,                   // bf16 GEMM
  kFaultWritePastEnd,          // planted fault: writes one element past its output
  kFaultSkipElement,           // planted fault: leaves one output element unwritten
};
inline constexpr std::size_t kKernelCount = 12;

std::string_view kernel_name(Kernel k);
std::optional<Kernel> parse_kernel(std::string_view name);
std::span<const Kernel> all_kernels();

// Handle of a guarded allocation; kNoBuffer for an unused operand.
using BufferId = uint32_t;
inline constexpr BufferId kNoBuffer = 0;

// kQuantizeMx, kQuantizeMxHw. in: rows x cols fp32 or bf16.
struct QuantizeArgs {
  BufferId in = kNoBuffer, codes = kNoBuffer, scales = kNoBuffer;
  QuantizeParams p;
};
struct DequantArgs {
  BufferId codes = kNoBuffer, scales = kNoBuffer, out = kNoBuffer;
  DequantParams p;
};
struct UpcastArgs {
  BufferId in = kNoBuffer, out = kNoBuffer;
  UpcastParams p;
};
struct PreshuffleArgs {
  BufferId in = kNoBuffer, out = kNoBuffer;
  PreshuffleParams p;
};
// Every GEMM; a_scale / b_scale are kNoBuffer for kGemmBf16.
struct GemmArgs {
  BufferId a = kNoBuffer, a_scale = kNoBuffer, b = kNoBuffer, b_scale = kNoBuffer;
  BufferId out = kNoBuffer;
  GemmParams p;
};
struct FaultArgs {
  BufferId out = kNoBuffer;
  FaultParams p;
};

using KernelArgs =
    std::variant<QuantizeArgs, DequantArgs, UpcastArgs, PreshuffleArgs, GemmArgs, FaultArgs>;

struct Launch {
  Kernel kernel;
  KernelArgs args;
};

// An output buffer of a launch and the bytes the kernel writes into it.
struct OutputSpec {
  BufferId buffer;
  std::size_t bytes;
  std::string_view role;  // "codes", "scales", "out"
};

// The outputs of `launch`; throws std::invalid_argument when the args do not fit the kernel.
std::vector<OutputSpec> launch_outputs(const Launch& launch);

}  // namespace mxgate::gpu
