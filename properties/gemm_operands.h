// GEMM operands in the input formats of the GEMMs under test, and one GEMM run with the operand
// layouts a contract (or a property) asks for, on an op through the harness (impl/harness.h): the
// properties and the backend checks of tests/test_gpu_checks.h (built-in kernels as ops) alike.
// Operands keep the logical (row-major) form next to the decoded problem the reference sees;
// layouts are applied only when the buffers are built, by the layout functions of
// reference/scale_layout.h and weight_shuffle.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "dispatch/operand_layouts.h"
#include "gpu/backend.h"
#include "impl/harness.h"
#include "impl/op.h"
#include "reference/accumulator.h"
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

// The bytes of `v` (host byte order), as a tensor's stored bytes.
template <class T>
Bytes bytes_of(const std::vector<T>& v) {
  Bytes out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// The element types of A and B: E4M3FN, E5M2, E4M3FNUZ or E5M2FNUZ codes for the FP8 GEMMs (each
// operand its own), bf16 for gemm_bf16.
struct ElementTypes {
  impl::Dtype a = impl::Dtype::kE4m3fn;
  impl::Dtype b = impl::Dtype::kE4m3fn;
};
// The reference format of an FP8 element type (E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ);
// std::invalid_argument otherwise.
Format gemm_element_format(impl::Dtype d);
// The FP8 element types the properties generate (E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ) that `mask`
// accepts, in that order.
std::vector<impl::Dtype> fp8_element_types(impl::DtypeMask mask);

// Logical operands (A m x k, B n x k row-major; scales as logical row-major grids) and the
// decoded problem the reference sees (whose `blocks` are the scale-block shapes).
struct Operands {
  std::size_t m = 0, n = 0, k = 0;
  ElementTypes types;
  Bytes a, b;  // codes of types.a / types.b, or bf16 bits (2 bytes per element)
  Bytes a_e8m0, b_e8m0;
  std::vector<float> a_f32, b_f32;
  GemmProblem problem;
};

Operands mx_operands(const MxQuantized& a, const MxQuantized& b);
Operands block_operands(const BlockQuantized& a, const BlockQuantized& b);
Operands bf16_operands(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                       std::size_t m, std::size_t n, std::size_t k);

// The kind of GEMM, from a family: e8m0 1x32 scales (MX), fp32 scales of any block shape
// (block), bf16 without scales.
enum class GemmKind { kMx, kBlock, kBf16 };
GemmKind gemm_kind(impl::Family f);
bool is_mx(gpu::Kernel k);
bool is_block(gpu::Kernel k);
bool is_gemm(gpu::Kernel k);

// The scale-block shapes of `op` for an m x n x k problem (0 in the contract = the whole
// dimension).
BlockSizes op_blocks(const impl::Op& op, std::size_t m, std::size_t n, std::size_t k);

// A block GEMM that declares ue8m0_scales consumes each fp32 scale as the E8M0 value of its
// exponent byte (docs/formats.md §5.2): the reference sees the scales so reduced. No-op for
// other ops (and for power-of-two scales).
void apply_scale_rule(const impl::Op& op, Operands& o);

// E4M3FN code of a small integer (exact) or any float (RNE, saturating).
uint8_t e4m3_code(float v);
// The code of `v` in FP8 format `f` (RNE, saturating; exact for the small integers and powers of
// two the exact-mode operands hold).
uint8_t fp8_code(Format f, float v);

// Random finite E4M3FN codes (NaN codes 0x7F / 0xFF replaced by 0).
Bytes random_codes(std::size_t count, std::mt19937_64& rng);
// Random finite codes of FP8 format `f` (NaN and Inf codes replaced by 0).
Bytes random_codes(Format f, std::size_t count, std::mt19937_64& rng);

// The first m rows of A (with their scales): still valid operands of the same kind.
Operands first_rows(const Operands& o, std::size_t m);

// Exact-mode operands in the input formats of a GEMM of `kind` with scale blocks `blocks`, exact
// in accumulator `model` (reference/accumulator_exact.h: every summation the model allows is
// exact, so a correct kernel with that accumulator is bit-equal to exact_gemm whatever its
// order). `fingerprint`: every scale block along K of a row gets its own power of two, and
// neighbouring rows other ones (values in {-2..2} so the wider exponent window stays exact), so a
// scale read from a wrong slot changes the result by a power of two at a located element.
// Throws std::invalid_argument when the model admits no such operands for the shape. The
// fingerprint's construction is self-checked (is_exact_mode; std::logic_error) unless
// `self_check` is false: for a caller that changes the operands and checks what it made
// (plant_extreme_scales).
Operands exact_operands(GemmKind kind, const BlockSizes& blocks, std::size_t m, std::size_t n,
                        std::size_t k, uint64_t seed, bool fingerprint = false,
                        ElementTypes types = {},
                        const AccumulatorModel& model = *find_accumulator("fp32_rn"),
                        bool self_check = true);
Operands exact_operands(gpu::Kernel kernel, std::size_t m, std::size_t n, std::size_t k,
                        uint64_t seed, bool fingerprint = false);
// The op's kind, blocks and declared accumulator (impl/accumulator.h accum_model_for: throws
// impl::ContractError); impl::Unsupported when its model admits no exact-mode operands here.
Operands exact_operands(const impl::Op& op, std::size_t m, std::size_t n, std::size_t k,
                        uint64_t seed, bool fingerprint = false, ElementTypes types = {},
                        bool self_check = true);

// General data: random finite codes; MX scale bytes in [118, 136]; fp32 scales with random
// mantissas in [2^-8, 2^-2); bf16 values with random mantissas. Products round, sums round.
Operands general_operands(GemmKind kind, const BlockSizes& blocks, std::size_t m, std::size_t n,
                          std::size_t k, uint64_t seed, ElementTypes types = {});
Operands general_operands(gpu::Kernel kernel, std::size_t m, std::size_t n, std::size_t k,
                          uint64_t seed);
Operands general_operands(const impl::Op& op, std::size_t m, std::size_t n, std::size_t k,
                          uint64_t seed, ElementTypes types = {});

// The layouts of one op call: A's scales in `scales` (B's too when its contract takes that
// layout, else B's first), padding slots (layout padding, leading-dimension padding) filled
// with `e8m0_pad` / `f32_pad`; B row-major unless the op reads only the AITER shuffle.
struct OpLayout {
  impl::Layout scales = impl::Layout::kRowMajor;
  uint8_t e8m0_pad = 0xFF;
  float f32_pad = 0.0f;
  uint64_t n_offset = 0;  // built-in block ops: Call::n_offset
  // Bytes of allocator slack appended to each scale buffer (its Tensor::bytes grows; the logical
  // tensor does not), filled with e8m0_pad / f32_pad: what an unmasked load past the end reads.
  std::size_t slack = 0;
  bool omit_b_scale = false;  // B's scales absent (ops whose contract has b_scale_optional)
  // Slots added to every line of a row- / column-major scale grid (case field `scale_ld`): its
  // tensor's ld grows past the grid, the extra slots hold the pad value (plugin.h: ld counts
  // elements; a kernel that infers the layout from the shape reads them).
  std::size_t scale_ld_extra = 0;
};

// The layout B's scales get when A's are in `a_layout`.
impl::Layout b_scale_layout(const impl::Op& op, impl::Layout a_layout);

// One call of `op` on the harness (impl::Invocation): throws impl::Unsupported or
// impl::InvocationError as the harness does.
GemmOutput run_gemm_op(const impl::RunContext& run, const impl::Op& op, const Operands& o,
                       OutputFormat format, const OpLayout& layout);

// The same call with FP8 output (plugin.h revision 4): `out` E4M3FN or E5M2, `scale_result` in a
// 1 x 1 f32 out_scale; the m x n codes the op wrote, row-major.
Bytes run_gemm_op_fp8(const impl::RunContext& run, const impl::Op& op, const Operands& o,
                      impl::Dtype out, float scale_result, const OpLayout& layout);

// The output dtype of a GEMM that writes `format`.
impl::Dtype out_dtype(OutputFormat format);

// The m x n output an op wrote into `raw` (row-major fp32, or bf16 words), as a GemmOutput.
GemmOutput gemm_output_of(const Bytes& raw, std::size_t m, std::size_t n, OutputFormat format);

// Bit-exact verdict of `actual` against `expected`, in `expected`'s output format.
BitExactVerdict compare(const GemmOutput& expected, const GemmOutput& actual);

// A built-in kernel's declared order / its accumulator model's bound structure (the built-in
// kernels declare fp32_rn, a float model).
OrderModel order_model(gpu::Kernel kernel, OutputFormat format);
AccumModel accum_model(gpu::Kernel kernel, OutputFormat format);
// An op's declared order (it must declare one: DeclaredOrder).
OrderModel order_model(const impl::Op& op, OutputFormat format);

}  // namespace mxgate::properties
