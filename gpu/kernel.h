// The built-in kernels every backend runs, and the arguments of one launch. Every kernel is one
// row of the table in gpu/kernel_table.cpp (name, op family, entry points, contract); there is
// no enum, no kernel count and no switch over kernels anywhere: the backends call a row's entry
// point through the one signature of its argument struct (KernelEntry).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "contract/contract.h"
#include "gpu/kernels/params.h"

namespace mxgate::gpu {

// Handle of a guarded allocation; kNoBuffer for an unused operand.
using BufferId = uint32_t;
inline constexpr BufferId kNoBuffer = 0;

// The argument structs: the buffers of one launch and its parameters (kernels/params.h).
// quantize_mx, quantize_mx_hw. in: rows x cols fp32 or bf16.
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
// Every GEMM; a_scale / b_scale are kNoBuffer for gemm_bf16. out_scale: FP8 output only, the
// 1 x 1 fp32 scale_result (the backend hands its address to the kernel as p.out_scale).
struct GemmArgs {
  BufferId a = kNoBuffer, a_scale = kNoBuffer, b = kNoBuffer, b_scale = kNoBuffer;
  BufferId out = kNoBuffer;
  GemmParams p;
  BufferId out_scale = kNoBuffer;
};
struct FaultArgs {
  BufferId out = kNoBuffer;
  FaultParams p;
};
// quantize_act1x128_ue8m0: codes rows x cols, fp32 scales rows x ceil(cols/128).
struct QuantizeBlockArgs {
  BufferId in = kNoBuffer, codes = kNoBuffer, scales = kNoBuffer;
  QuantizeBlockParams p;
};
// The FP4 kernels (docs/fp4.md §12): packed E2M1 codes; `global` is NVFP4's 1 x 1 global scale
// (the quantizer's global amax, the dequantizer's and GEMM's fp32 decode scales), kNoBuffer for
// MXFP4.
struct Fp4QuantizeArgs {
  BufferId in = kNoBuffer, global = kNoBuffer, codes = kNoBuffer, scales = kNoBuffer;
  Fp4QuantizeParams p;
};
struct Fp4DequantArgs {
  BufferId codes = kNoBuffer, scales = kNoBuffer, global = kNoBuffer, out = kNoBuffer;
  Fp4DequantParams p;
};
struct Fp4GemmArgs {
  BufferId a = kNoBuffer, a_scale = kNoBuffer, b = kNoBuffer, b_scale = kNoBuffer;
  BufferId a_global = kNoBuffer, b_global = kNoBuffer, out = kNoBuffer;
  Fp4GemmParams p;
};

// The grouped GEMMs (kernels/grouped_gemm.h): offsets holds E int32 group offsets or counts.
struct GroupedGemmArgs {
  BufferId a = kNoBuffer, a_scale = kNoBuffer, b = kNoBuffer, b_scale = kNoBuffer;
  BufferId offsets = kNoBuffer, out = kNoBuffer;
  GroupedGemmParams p;
};

using KernelArgs =
    std::variant<QuantizeArgs, DequantArgs, UpcastArgs, PreshuffleArgs, GemmArgs, FaultArgs,
                 QuantizeBlockArgs, Fp4QuantizeArgs, Fp4DequantArgs, Fp4GemmArgs, GroupedGemmArgs>;

// Entry points, one signature per kind of kernel, shared by the host model (gpu/host) and the
// device launcher (gpu/kernels/*.hip, gpu/kernels/launch.h). Pointers are the user regions of
// the launch's buffers; the result is 0 or a launch status (hipError_t as int; < 0: the kernel
// is not built for this platform).
using QuantizeEntry = int (*)(const QuantizeParams&, const void* in, uint8_t* codes,
                              uint8_t* scales);
using DequantEntry = int (*)(const DequantParams&, const uint8_t* codes, const uint8_t* scales,
                             uint16_t* out);
using UpcastEntry = int (*)(const UpcastParams&, const uint8_t* in, float* out);
using PreshuffleEntry = int (*)(const PreshuffleParams&, const uint8_t* in, uint8_t* out);
using GemmMxEntry = int (*)(const GemmParams&, const uint8_t* a, const uint8_t* sa,
                            const uint8_t* b, const uint8_t* sb, void* out);
using GemmBlockEntry = int (*)(const GemmParams&, const uint8_t* a, const float* as,
                               const uint8_t* b, const float* bs, void* out);
using GemmBf16Entry = int (*)(const GemmParams&, const uint16_t* a, const uint16_t* b, void* out);
using FaultEntry = int (*)(const FaultParams&, float* out);
using QuantizeBlockEntry = int (*)(const QuantizeBlockParams&, const void* in, uint8_t* codes,
                                   float* scales);
using Fp4QuantizeEntry = int (*)(const Fp4QuantizeParams&, const void* in, const void* global,
                                 uint8_t* codes, uint8_t* scales);
using Fp4DequantEntry = int (*)(const Fp4DequantParams&, const uint8_t* codes,
                                const uint8_t* scales, const float* global, void* out);
using Fp4GemmEntry = int (*)(const Fp4GemmParams&, const uint8_t* a, const uint8_t* sa,
                             const uint8_t* b, const uint8_t* sb, const float* ga, const float* gb,
                             void* out);
using GroupedGemmBlockEntry = int (*)(const GroupedGemmParams&, const uint8_t* a, const float* as,
                                      const uint8_t* b, const float* bs, const uint32_t* offsets,
                                      void* out);
using GroupedGemmMxEntry = int (*)(const GroupedGemmParams&, const uint8_t* a, const uint8_t* sa,
                                   const uint8_t* b, const uint8_t* sb, const uint32_t* offsets,
                                   void* out);
using KernelEntry =
    std::variant<QuantizeEntry, DequantEntry, UpcastEntry, PreshuffleEntry, GemmMxEntry,
                 GemmBlockEntry, GemmBf16Entry, FaultEntry, QuantizeBlockEntry, Fp4QuantizeEntry,
                 Fp4DequantEntry, Fp4GemmEntry, GroupedGemmBlockEntry, GroupedGemmMxEntry>;

// One row of the built-in kernel table.
struct KernelDef {
  std::string_view name;
  // The family of its built-in op (impl/builtin.h); nullopt for the harness's own test kernels,
  // which are no op.
  std::optional<contract::Family> family;
  KernelEntry host;
  // The same alternative as `host`; holds a null pointer in a build without device kernels.
  KernelEntry device;
  // The device kernel's own check of the present hardware (quantize_mx_hw: NVIDIA sm_89+);
  // nullptr: runs on every device.
  bool (*device_available)() = nullptr;
  contract::Contract contract;
};

// A built-in kernel: a handle to its row.
class Kernel {
 public:
  Kernel(const KernelDef& def) : def_(&def) {}  // NOLINT(google-explicit-constructor)
  const KernelDef& def() const { return *def_; }
  const KernelDef* operator->() const { return def_; }
  std::string_view name() const { return def_->name; }
  friend bool operator==(Kernel a, Kernel b) { return a.def_ == b.def_; }

 private:
  const KernelDef* def_;
};

// Every row, in table order.
std::span<const KernelDef> all_kernels();
std::optional<Kernel> find_kernel(std::string_view name);
// The kernel `name`; std::logic_error when there is none (a misspelt name in code).
Kernel kernel(std::string_view name);
inline std::string_view kernel_name(Kernel k) { return k.name(); }

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
