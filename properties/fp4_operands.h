// Operands of the FP4 GEMMs (MXFP4 x MXFP4, MXFP8 x MXFP4, NVFP4 x NVFP4) and one call of an op
// of family gemm_mx (E2M1 B) or gemm_nvfp4 through the harness. Operands are logical: codes one
// per byte, scale bytes as the row-major grid, the two NVFP4 global decode scales; the decoded
// problem is what the reference sees (alpha = fl32(global_a * global_b), docs/fp4.md §8).
// Layouts are applied when the buffers are built: E2M1 packed by reference/fp4_pack.h (element
// 2i low, padding nibble 0xF), scales by properties/scale_io.h. docs/fp4.md §12.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/backend.h"
#include "impl/harness.h"
#include "impl/op.h"
#include "reference/gemm_oracle.h"

namespace mxgate::properties {

// The FP4 GEMM an op is: MXFP4 (family gemm_mx with an E2M1 B, e8m0 1x32 scales) or NVFP4
// (family gemm_nvfp4: E2M1 A and B, E4M3 1x16 scales, global scales).
bool is_fp4_gemm(const impl::Op& op);

struct Fp4Operands {
  bool nvfp4 = false;
  impl::Dtype a_dtype = impl::Dtype::kE2m1;  // kE2m1, or kE4m3fn for MXFP8 x MXFP4
  std::size_t m = 0, n = 0, k = 0;
  std::vector<uint8_t> a, b;                // codes, one per byte
  std::vector<uint8_t> a_scales, b_scales;  // logical row-major scale grids (e8m0 / e4m3 bytes)
  float a_global = 1.0f, b_global = 1.0f;   // NVFP4 global decode scales
  GemmProblem problem;
};

// How a case picks the NVFP4 global decode scales (field `global`): "one", "pow2" (2^i, 2^j),
// "random" (amax / 2688-like), "max" (FLT_MAX times ~1: alpha overflows), "tiny" (2^-149 times
// up to 2^20: alpha underflows).
std::vector<std::string> fp4_global_modes();
void pick_globals(const std::string& mode, uint64_t seed, float& a, float& b);

// Exact-mode operands (every partial sum exact in fp32 in any order; checked with
// reference/gemm_oracle.h is_exact_mode): random E2M1 codes (every code), for MXFP8 A E4M3 codes of
// multiples of 0.5 in [-8, 8]; power-of-two scales in a fingerprint window (every K block of a
// row its own exponent) centred at a random exponent: E8M0 bytes, or the E4M3 powers of two
// 2^-9..2^8 (0x01, 0x02, 0x04 subnormal). Globals by `global_mode`, rounded to bf16 when the
// op reads them as bf16 (`global_dtype`); alpha is applied once, after the exact sum.
Fp4Operands fp4_exact_operands(const impl::Op& op, impl::Dtype a_dtype, std::size_t m,
                               std::size_t n, std::size_t k, uint64_t seed,
                               const std::string& global_mode, impl::Dtype global_dtype);
// General data: random codes; E8M0 bytes in [96, 158]; every E4M3 scale code 0x00..0x7E.
Fp4Operands fp4_general_operands(const impl::Op& op, impl::Dtype a_dtype, std::size_t m,
                                 std::size_t n, std::size_t k, uint64_t seed,
                                 const std::string& global_mode, impl::Dtype global_dtype);

// Recomputes o.problem (the decoded problem the reference sees) from the logical codes, scales
// and globals, after a generator changed them (the extreme-scale regime, extreme_scales.h).
void rebuild_fp4_problem(Fp4Operands& o);

// One call of `op`: A's and B's scales in `scales` (B's in the same layout when its contract has
// it), padding slots `pad`, globals as 1 x 1 tensors of `global_dtype`. Throws impl::Unsupported
// or impl::InvocationError as the harness does.
GemmOutput run_fp4_gemm_op(const impl::RunContext& run, const impl::Op& op, const Fp4Operands& o,
                           OutputFormat format, impl::Layout scales, impl::Dtype global_dtype,
                           uint8_t pad = 0xFF, std::size_t ld_extra = 0);

// One launch of built-in FP4 GEMM `kernel` (gemm_mxfp4, gemm_nvfp4) through Backend::run, no
// contract check: packed operands, both scale grids row-major or in the 128x4 swizzle (padding
// `pad`), fp32 globals. The backend checks of tests/test_gpu_checks_fp4.h use it.
GemmOutput run_fp4_gemm_kernel(gpu::Backend& be, gpu::Kernel kernel, const Fp4Operands& o,
                               OutputFormat format, bool swizzled, uint64_t faults = 0,
                               uint8_t pad = 0xFF);

// The bytes of one 1 x 1 global-scale tensor of `dtype` (F32 or BF16) holding `v`.
std::vector<uint8_t> global_bytes(float v, impl::Dtype dtype);

}  // namespace mxgate::properties
