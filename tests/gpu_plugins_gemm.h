// Shared by the GEMM tests of test_gpu_plugins (test_gpu_plugins_gemm.cpp, _scales.cpp,
// _accumulator.cpp): what the H200 measured of the Hopper FP8 accumulator (docs/nvidia.md §4; a
// change here is a change of documented fact), an op's view of a GEMM from its contract, GEMM
// cases as codes plus their decoded problem (reference/gemm_oracle.h), and one run of a cuBLASLt
// op on them through the plugin ABI with every buffer guard-banded and scales in the op's layout.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/blocks.h"
#include "reference/format.h"
#include "reference/fp_encode.h"
#include "reference/gemm_oracle.h"
#include "reference/verdict.h"
#include "tests/gpu_plugins_support.h"

namespace mxgate::plugin_test {

// The Hopper FP8 accumulation through cuBLASLt (docs/nvidia.md §4): significant bits kept
// relative to the largest term inside a promotion chunk, how the dropped bits go, and the K
// chunk after which partials are promoted to fp32.
inline constexpr int kAccumBitsKept = 14;
inline constexpr const char* kAccumRounding = "truncate";
inline constexpr int kAccumChunk = 128;

inline std::optional<Format> element_format(uint32_t d) {
  if (d == MXGATE_DTYPE_E4M3FN) return Format::kE4M3FN;
  if (d == MXGATE_DTYPE_E5M2) return Format::kE5M2;
  return std::nullopt;
}

inline uint32_t first_bit(uint64_t mask) {
  for (uint32_t i = 0; i < 64; ++i) {
    if (mask & (uint64_t{1} << i)) return i;
  }
  return 0;
}

struct GemmShape {
  size_t m, n, k;
};

struct Grid {
  size_t rows, cols;
};

inline Grid scale_grid(uint32_t block_rows, uint32_t block_cols, size_t rows, size_t k) {
  return {block_rows ? ceil_div(rows, block_rows) : 1, block_cols ? ceil_div(k, block_cols) : 1};
}

// An op's view of one GEMM: element formats, output, scale grids and block sizes.
struct GemmOpInfo {
  Format fa, fb;
  OutputFormat out;
  bool scaled;
  BlockSizes blocks(const GemmShape& s, const mxgate_contract& c) const {
    return {c.a_block_rows ? c.a_block_rows : s.m, c.a_block_cols ? c.a_block_cols : s.k,
            c.b_block_rows ? c.b_block_rows : s.n, c.b_block_cols ? c.b_block_cols : s.k};
  }
};

inline GemmOpInfo info_of(const mxgate_op& op) {
  GemmOpInfo i{};
  i.fa = *element_format(first_bit(op.contract.a_dtypes));
  i.fb = *element_format(first_bit(op.contract.b_dtypes));
  i.out = first_bit(op.contract.out_dtypes) == MXGATE_DTYPE_BF16 ? OutputFormat::kBf16
                                                                 : OutputFormat::kFp32;
  i.scaled = op.contract.scale_dtype == MXGATE_DTYPE_F32;
  return i;
}

inline bool in_contract(const mxgate_contract& c, const GemmShape& s) {
  auto ok = [](uint64_t v, uint64_t align, uint64_t lo, uint64_t hi) {
    return (align <= 1 || v % align == 0) && v >= std::max<uint64_t>(lo, 1) && (hi == 0 || v <= hi);
  };
  return ok(s.m, c.m_align, c.m_min, c.m_max) && ok(s.n, c.n_align, c.n_min, c.n_max) &&
         ok(s.k, c.k_align, c.k_min, c.k_max);
}

// A GEMM case as codes and logical (row-major) fp32 scale grids, plus its decoded problem.
struct GemmCase {
  GemmShape s;
  std::vector<uint8_t> a, b;  // codes, M x K and N x K row-major
  GemmProblem problem;        // decoded values and the same scale grids
};

inline GemmCase make_case(const mxgate_op& op, const GemmShape& s) {
  const GemmOpInfo i = info_of(op);
  GemmCase c;
  c.s = s;
  c.a.assign(s.m * s.k, 0);
  c.b.assign(s.n * s.k, 0);
  c.problem = make_gemm_problem(s.m, s.n, s.k, i.blocks(s, op.contract), true);
  return c;
}

inline void set_a(GemmCase& c, Format f, size_t row, size_t kk, float v) {
  c.a[row * c.s.k + kk] = static_cast<uint8_t>(encode(f, v, EncodePolicy{}));
  c.problem.a_at(row, kk) = decode(f, c.a[row * c.s.k + kk]);
}
inline void set_b(GemmCase& c, Format f, size_t col, size_t kk, float v) {
  c.b[col * c.s.k + kk] = static_cast<uint8_t>(encode(f, v, EncodePolicy{}));
  c.problem.b_at(col, kk) = decode(f, c.b[col * c.s.k + kk]);
}

struct GemmRun {
  mxgate_status status = MXGATE_ERROR;
  std::string message;
  GemmOutput out;
  bool guards_ok = true;
};

// The scale grid in the first layout the op accepts, padding poisoned with NaN (a kernel that
// reads padding turns its outputs NaN).
inline std::vector<float> pack_scale(const std::vector<float>& logical, Grid g, uint32_t layout,
                                     uint32_t ld_align, uint64_t* ld_out) {
  const bool col = layout == MXGATE_LAYOUT_COL_MAJOR;
  const size_t packed = col ? g.rows : g.cols;
  const size_t ld = ld_align > 1 ? ceil_div(packed, ld_align) * ld_align : packed;
  const size_t outer = col ? g.cols : g.rows;
  std::vector<float> out(outer * ld, std::nanf(""));
  for (size_t r = 0; r < g.rows; ++r) {
    for (size_t c = 0; c < g.cols; ++c) {
      out[col ? c * ld + r : r * ld + c] = logical[r * g.cols + c];
    }
  }
  *ld_out = ld;
  return out;
}

inline mxgate_tensor tensor(const DeviceBuffer& d, uint64_t rows, uint64_t cols, uint64_t ld,
                            uint32_t dtype, uint32_t layout) {
  return mxgate_tensor{.data = d.data(),
                       .bytes = d.bytes(),
                       .rows = rows,
                       .cols = cols,
                       .ld = ld,
                       .dtype = dtype,
                       .layout = layout};
}

inline cudaStream_t test_stream() {
  static cudaStream_t s = [] {
    cudaStream_t st = nullptr;
    cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    return st;
  }();
  return s;
}

inline GemmRun run_gemm(const mxgate_op& op, const GemmCase& c) {
  const mxgate_contract& k = op.contract;
  const GemmOpInfo i = info_of(op);
  const GemmShape& s = c.s;
  const Grid ga{c.problem.a_scale_rows(), c.problem.a_scale_cols()};
  const Grid gb{c.problem.b_scale_rows(), c.problem.b_scale_cols()};
  const uint32_t la = first_bit(k.a_scale_layouts), lb = first_bit(k.b_scale_layouts);
  uint64_t lda_s = 0, ldb_s = 0;
  const std::vector<float> sa = pack_scale(c.problem.a_scale, ga, la, k.a_scale_ld_align, &lda_s);
  const std::vector<float> sb = pack_scale(c.problem.b_scale, gb, lb, k.b_scale_ld_align, &ldb_s);
  const size_t out_size = i.out == OutputFormat::kBf16 ? 2 : 4;
  DeviceBuffer A(c.a.size(), 0), B(c.b.size(), 0), SA(sa.size() * 4, 0), SB(sb.size() * 4, 0),
      Y(s.m * s.n * out_size, 0xFF);
  A.upload(c.a.data(), c.a.size());
  B.upload(c.b.data(), c.b.size());
  SA.upload(sa.data(), sa.size() * 4);
  SB.upload(sb.data(), sb.size() * 4);
  mxgate_call call;
  std::memset(&call, 0, sizeof call);
  call.struct_size = sizeof call;
  call.family = MXGATE_OP_GEMM_BLOCK;
  call.m = s.m;
  call.n = s.n;
  call.k = s.k;
  call.a = tensor(A, s.m, s.k, 0, first_bit(k.a_dtypes), MXGATE_LAYOUT_ROW_MAJOR);
  call.b = tensor(B, s.n, s.k, 0, first_bit(k.b_dtypes), MXGATE_LAYOUT_ROW_MAJOR);
  call.a_scale = tensor(SA, ga.rows, ga.cols, lda_s, MXGATE_DTYPE_F32, la);
  call.b_scale = tensor(SB, gb.rows, gb.cols, ldb_s, MXGATE_DTYPE_F32, lb);
  call.out = tensor(Y, s.m, s.n, 0, first_bit(k.out_dtypes), MXGATE_LAYOUT_ROW_MAJOR);
  call.stream = test_stream();
  GemmRun r;
  char message[4096] = {0};
  r.status = op.run(op.state, &call, message, sizeof message);
  r.message = message;
  if (r.status != MXGATE_DONE) return r;
  const cudaError_t e = cudaStreamSynchronize(test_stream());
  if (e != cudaSuccess) {
    r.status = MXGATE_ERROR;
    r.message = std::string("after the call: ") + cudaGetErrorString(e);
    return r;
  }
  r.out.rows = s.m;
  r.out.cols = s.n;
  r.out.format = i.out;
  if (i.out == OutputFormat::kFp32) {
    r.out.fp32.resize(s.m * s.n);
    Y.download(r.out.fp32.data(), r.out.fp32.size() * 4);
  } else {
    r.out.bf16.resize(s.m * s.n);
    Y.download(r.out.bf16.data(), r.out.bf16.size() * 2);
  }
  r.guards_ok = A.guards_intact() && B.guards_intact() && SA.guards_intact() &&
                SB.guards_intact() && Y.guards_intact();
  return r;
}

inline double value_at(const GemmOutput& o, size_t r, size_t c) {
  if (o.format == OutputFormat::kFp32) return o.fp32[r * o.cols + c];
  return float_of_bf16(o.bf16[r * o.cols + c]);
}

inline BitExactVerdict compare_exact(const GemmOutput& want, const GemmOutput& got) {
  return want.format == OutputFormat::kFp32
             ? compare_fp32(want.rows, want.cols, want.fp32, got.fp32)
             : compare_bf16(want.rows, want.cols, want.bf16, got.bf16);
}

// Exact-mode operands small enough for ANY accumulator of at least 11 bits: integers in
// {-3..3} (|a b| <= 9, a 128-chunk sums to at most 1152 < 2^11), power-of-two scales 2^[-2, 2].
inline GemmCase exact_case(const mxgate_op& op, const GemmShape& s, uint64_t seed) {
  const GemmOpInfo i = info_of(op);
  GemmCase c = make_case(op, s);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> v(-3, 3), e(-2, 2);
  for (size_t r = 0; r < s.m; ++r) {
    for (size_t kk = 0; kk < s.k; ++kk) set_a(c, i.fa, r, kk, static_cast<float>(v(rng)));
  }
  for (size_t r = 0; r < s.n; ++r) {
    for (size_t kk = 0; kk < s.k; ++kk) set_b(c, i.fb, r, kk, static_cast<float>(v(rng)));
  }
  for (float& x : c.problem.a_scale) x = std::ldexp(1.0f, e(rng));
  for (float& x : c.problem.b_scale) x = std::ldexp(1.0f, e(rng));
  return c;
}

inline std::string shape_text(const GemmShape& s) {
  return "m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k);
}

// The first shapes of `candidates` inside the op's contract.
inline std::vector<GemmShape> shapes_in_contract(const mxgate_op& op,
                                                 const std::vector<GemmShape>& candidates,
                                                 size_t want) {
  std::vector<GemmShape> out;
  for (const GemmShape& s : candidates) {
    if (out.size() < want && in_contract(op.contract, s)) out.push_back(s);
  }
  return out;
}

}  // namespace mxgate::plugin_test
