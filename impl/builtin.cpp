#include "impl/builtin.h"

#include <optional>
#include <variant>

#include "common/dtypes.h"
#include "gpu/kernel.h"

namespace mxgate::impl {
namespace {

using gpu::QuantConvention;

std::optional<QuantConvention> quant_convention(const std::string& name) {
  if (name == "ocp_mx") return QuantConvention::kOcpMx;
  if (name == "torchao_rceil") return QuantConvention::kTorchaoRceil;
  return std::nullopt;
}

// The kernels' dtype parameters carry the ABI codes of common/dtypes.h (gpu/kernels/params.h),
// so a call's dtype converts with a cast; the contract check before every run (impl/harness.cpp)
// admits only the dtypes a kernel declares.
template <class KernelDtype>
KernelDtype kernel_dtype(Dtype d) {
  return static_cast<KernelDtype>(static_cast<uint32_t>(d));
}

std::optional<gpu::Fp8Format> fp8_format(Dtype d) {
  const dtypes::ElementType* t = dtypes::element_type(static_cast<unsigned>(d));
  if (t == nullptr || t->bits != 8 || t->mantissa_bits == 0) return std::nullopt;
  return kernel_dtype<gpu::Fp8Format>(d);
}

// The FP4 kernels (docs/fp4.md §12): their own argument structs, one translation per kind of
// entry (an MX family holds FP8 and FP4 kernels), nullopt (with `why`) when the entry is another.
std::optional<gpu::KernelArgs> fp4_launch_args(gpu::Kernel k, const Call& call, std::string& why) {
  if (std::holds_alternative<gpu::Fp4QuantizeEntry>(k->host)) {
    gpu::Fp4QuantizeArgs a;
    a.in = call.a.buffer;
    a.global = call.a_global.buffer;
    a.codes = call.out.buffer;
    a.scales = call.out_scale.buffer;
    a.p.rows = call.m;
    a.p.cols = call.k;
    a.p.input = kernel_dtype<gpu::InputDtype>(call.a.dtype);
    a.p.global_dtype = kernel_dtype<gpu::GlobalDtype>(call.a_global.dtype);
    a.p.swizzled_scales = call.out_scale.layout == Layout::kNvSwizzle128x4;
    a.p.faults = call.kernel_faults;
    return a;
  }
  if (std::holds_alternative<gpu::Fp4DequantEntry>(k->host)) {
    gpu::Fp4DequantArgs a;
    a.codes = call.a.buffer;
    a.scales = call.a_scale.buffer;
    a.global = call.a_global.buffer;
    a.out = call.out.buffer;
    a.p.rows = call.m;
    a.p.cols = call.k;
    a.p.out = kernel_dtype<gpu::OutDtype>(call.out.dtype);
    a.p.faults = call.kernel_faults;
    if (call.a_scale.layout == Layout::kRowMajor) a.p.scales_ld = call.a_scale.ld;
    return a;
  }
  if (std::holds_alternative<gpu::Fp4GemmEntry>(k->host)) {
    if (call.a_scale.layout != call.b_scale.layout) {
      why = "A and B scales must share a layout";
      return std::nullopt;
    }
    gpu::Fp4GemmArgs a;
    a.a = call.a.buffer;
    a.a_scale = call.a_scale.buffer;
    a.b = call.b.buffer;
    a.b_scale = call.b_scale.buffer;
    a.a_global = call.a_global.buffer;
    a.b_global = call.b_global.buffer;
    a.out = call.out.buffer;
    a.p.m = call.m;
    a.p.n = call.n;
    a.p.k = call.k;
    a.p.a_format = kernel_dtype<gpu::Fp4Operand>(call.a.dtype);
    a.p.out = kernel_dtype<gpu::OutDtype>(call.out.dtype);
    a.p.swizzled_scales = call.a_scale.layout == Layout::kNvSwizzle128x4;
    a.p.faults = call.kernel_faults;
    if (call.a_scale.layout == Layout::kRowMajor) a.p.sa_ld = call.a_scale.ld;
    if (call.b_scale.layout == Layout::kRowMajor) a.p.sb_ld = call.b_scale.ld;
    return a;
  }
  why = std::string(k.name()) + " has no FP4 entry";
  return std::nullopt;
}

bool is_fp4_kernel(gpu::Kernel k) {
  return std::holds_alternative<gpu::Fp4QuantizeEntry>(k->host) ||
         std::holds_alternative<gpu::Fp4DequantEntry>(k->host) ||
         std::holds_alternative<gpu::Fp4GemmEntry>(k->host);
}

// The launch arguments of `call` for kernel `k` of family `f`: one translation per family, none
// per kernel. nullopt (with `why`) for a call the kernel cannot express.
std::optional<gpu::KernelArgs> launch_args(gpu::Kernel k, const Call& call, std::string& why) {
  const Contract& c = k->contract;
  if (is_fp4_kernel(k)) return fp4_launch_args(k, call, why);
  switch (*k->family) {
    case Family::kQuantizeMx: {
      const std::string& conv = call.convention.empty() ? c.conventions.front() : call.convention;
      const auto qc = quant_convention(conv);
      if (!qc) {
        why = "no quantize_mx convention " + conv;
        return std::nullopt;
      }
      gpu::QuantizeArgs a;
      a.in = call.a.buffer;
      a.codes = call.out.buffer;
      a.scales = call.out_scale.buffer;
      a.p = {call.m, call.k, kernel_dtype<gpu::InputDtype>(call.a.dtype), *qc};
      a.p.faults = call.kernel_faults;
      return a;
    }
    case Family::kDequantize: {
      const auto element = fp8_format(call.a.dtype);
      if (!element) {
        why = "dequantize reads FP8 codes, not " + std::string(to_string(call.a.dtype));
        return std::nullopt;
      }
      gpu::DequantArgs a;
      a.codes = call.a.buffer;
      a.scales = call.a_scale.buffer;
      a.out = call.out.buffer;
      a.p = {call.m, call.k, gpu::E8m0Upcast::kCorrect};
      a.p.element = *element;
      a.p.faults = call.kernel_faults;
      if (call.a_scale.layout == Layout::kRowMajor) a.p.scales_ld = call.a_scale.ld;
      return a;
    }
    case Family::kUpcastE8m0: {
      gpu::UpcastArgs a;
      a.in = call.a.buffer;
      a.out = call.out.buffer;
      a.p = {call.m * call.k, gpu::E8m0Upcast::kCorrect};
      a.p.faults = call.kernel_faults;
      return a;
    }
    case Family::kQuantizeBlock: {
      // One built-in block quantizer (quantize_act1x128_ue8m0): its one convention, 1x128.
      if (!call.convention.empty() && call.convention != c.conventions.front()) {
        why = "no quantize_block convention " + call.convention;
        return std::nullopt;
      }
      gpu::QuantizeBlockArgs a;
      a.in = call.a.buffer;
      a.codes = call.out.buffer;
      a.scales = call.out_scale.buffer;
      a.p = {call.m, call.k, kernel_dtype<gpu::InputDtype>(call.a.dtype)};
      a.p.faults = call.kernel_faults;
      return a;
    }
    case Family::kPreshuffle: {
      gpu::PreshuffleArgs a;
      a.in = call.a.buffer;
      a.out = call.out.buffer;
      a.p = {call.m, call.k};
      return a;
    }
    case Family::kGemmMx:
    case Family::kGemmBlock:
    case Family::kGemmBf16: {
      gpu::GemmArgs a;
      a.a = call.a.buffer;
      a.a_scale = call.a_scale.buffer;
      a.b = call.b.buffer;
      a.b_scale = call.b_scale.buffer;
      a.out = call.out.buffer;
      a.out_scale = call.out_scale.buffer;  // FP8 output: scale_result (contract check: 1 x 1 f32)
      a.p = {call.m, call.n, call.k, kernel_dtype<gpu::OutDtype>(call.out.dtype)};
      a.p.faults = call.kernel_faults;
      a.p.n_offset = call.n_offset;
      // Row-major scale grids at the leading dimension their tensors give (plugin.h: ld = cols
      // unless set); the kernels read a padded or strided grid as it lies.
      if (call.a_scale.layout == Layout::kRowMajor) a.p.sa_ld = call.a_scale.ld;
      if (call.b_scale.layout == Layout::kRowMajor) a.p.sb_ld = call.b_scale.ld;
      if (call.family == Family::kGemmMx) {
        // One flag lays out both scale grids: the kernels read A's and B's alike.
        if (call.b_scale.present() && call.a_scale.layout != call.b_scale.layout) {
          why = "A and B scales must share a layout";
          return std::nullopt;
        }
        a.p.mx_scales_swizzled = call.a_scale.layout == Layout::kNvSwizzle128x4;
      } else if (call.family == Family::kGemmBlock) {
        // The FNUZ kernel reads the codes the call names; the others' contracts take E4M3FN only.
        a.p.a_format = fp8_format(call.a.dtype).value_or(gpu::Fp8Format::kE4m3fn);
        a.p.b_format = fp8_format(call.b.dtype).value_or(gpu::Fp8Format::kE4m3fn);
        const bool col = call.a_scale.layout == Layout::kColMajor;
        if (call.a_scale.layout == Layout::kTmaColMajor ||
            (col && call.a_scale.ld != 0 && call.a_scale.ld != call.m)) {
          a.p.as_ld = call.a_scale.ld;
        }
      }
      return a;
    }
    case Family::kGroupedGemmBlock:
    case Family::kGroupedGemmMx: {
      // The grouped clause (contract.h GroupedClause) names what the offsets are; the contract
      // check before the run admitted them.
      const contract::GroupedClause& g = *c.grouped;
      gpu::GroupedGemmArgs a;
      a.a = call.a.buffer;
      a.a_scale = call.a_scale.buffer;
      a.b = call.b.buffer;
      a.b_scale = call.b_scale.buffer;
      a.offsets = call.group_offsets.buffer;
      a.out = call.out.buffer;
      a.p.g = {call.m, call.n, call.k, kernel_dtype<gpu::OutDtype>(call.out.dtype)};
      a.p.g.faults = call.kernel_faults;
      if (call.a_scale.layout == Layout::kRowMajor) a.p.g.sa_ld = call.a_scale.ld;
      if (call.b_scale.layout == Layout::kRowMajor) a.p.g.sb_ld = call.b_scale.ld;
      if (call.a_scale.layout != call.b_scale.layout) {
        why = "A and B scales must share a layout";
        return std::nullopt;
      }
      a.p.g.mx_scales_swizzled = call.a_scale.layout == Layout::kNvSwizzle128x4;
      a.p.groups = call.offsets.size();
      a.p.offsets = g.layout == contract::GroupLayout::kKGrouped ? gpu::GroupedOffsets::kKEnds
                    : g.layout == contract::GroupLayout::kMasked
                        ? gpu::GroupedOffsets::kMaskedCounts
                    : g.offsets == contract::OffsetsKind::kStarts ? gpu::GroupedOffsets::kStarts
                                                                  : gpu::GroupedOffsets::kEnds;
      return a;
    }
    case Family::kCast:
    case Family::kQuantizeNvfp4:  // FP4 kernels only (above)
    case Family::kDequantizeNvfp4:
    case Family::kGemmNvfp4:
      break;
  }
  why = "family " + std::string(to_string(*k->family)) + " has no built-in launch";
  return std::nullopt;
}

Implementation make_builtin() {
  Implementation impl;
  impl.name = "builtin";
  impl.description = "mxgate's own kernels (gpu/kernels) on the backend under test";
  impl.origin = "built in";
  impl.spec = "builtin";
  impl.builtin = true;
  for (const gpu::KernelDef& def : gpu::all_kernels()) {
    if (!def.family) continue;
    const gpu::Kernel k(def);
    Op op;
    op.name = std::string(def.name);
    op.family = *def.family;
    op.memory = Memory::kBackend;
    op.contract = def.contract;
    op.impl = impl.name;
    op.available = [k](const gpu::Backend& be) { return be.supports(k); };
    op.run = [k](gpu::Backend& be, const Call& call, std::string& message) {
      std::optional<gpu::KernelArgs> args = launch_args(k, call, message);
      if (!args) return Status::kUnsupported;
      be.run({k, *args});  // poisons, launches, synchronizes, checks guards; throws GpuError
      return Status::kDone;
    };
    impl.ops.push_back(std::move(op));
  }
  return impl;
}

}  // namespace

const Op* Implementation::find_op(std::string_view op) const {
  for (const Op& o : ops) {
    if (o.name == op) return &o;
  }
  return nullptr;
}

bool is_planted_fault_description(std::string_view description) {
  return description.starts_with(MXGATE_PLANTED_FAULT_PREFIX);
}

FamilyMask Implementation::families() const {
  FamilyMask m = 0;
  for (const Op& o : ops) m |= family_bit(o.family);
  return m;
}

const Implementation& builtin() {
  static const Implementation kBuiltin = make_builtin();
  return kBuiltin;
}

}  // namespace mxgate::impl
