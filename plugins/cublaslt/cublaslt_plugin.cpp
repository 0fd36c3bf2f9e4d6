// mxgate plugin `cublaslt`: cuBLASLt FP8 GEMMs on sm_90 as MXGATE_OP_GEMM_BLOCK device ops
// (include/mxgate/plugin.h). Y (M x N, row-major) = X (M x K) . W (N x K)^T is the column-major
// cuBLAS product D (N x M) = W^T' (op T, stored K x N) . X' (op N, stored K x M): the "TN" form
// FP8 requires, with mxgate's A (activations) as cuBLAS B and mxgate's B (weights) as cuBLAS A.
// Scale modes per op: per tensor (SCALAR_32F), outer vector (OUTER_VEC_32F, one scale per row of
// X and of W), 1x128 activations x 128x128 weights (VEC128_32F x BLK128x128_32F) and 1x128 x
// 1x128 (VEC128_32F x VEC128_32F). Scale pointers go to cuBLASLt unchanged: the contract states
// the layouts cuBLASLt documents and mxgate allocates exactly those. Contracts and their sources:
// docs/nvidia.md §3. Tactics (plugin.h revision 3, docs/plugins.md §3.6): tactic i of a call is
// the i-th algorithm cublasLtMatmulAlgoGetHeuristic returns for that case (at most kMaxTactics
// asked); a case whose list is shorter answers MXGATE_NO_TACTIC for the tactics past its end.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "mxgate/plugin.h"

namespace {

enum class Mode { kTensor, kRowwise, kBlock, kVec128 };

struct GemmSpec {
  Mode mode;
  mxgate_dtype a;  // activations X: cuBLAS B
  mxgate_dtype b;  // weights W: cuBLAS A
  mxgate_dtype out;
};

constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // cuBLAS's recommendation for sm_90
constexpr int kMaxTactics = 8;  // heuristic results asked per case: the op's tactics

struct Library {
  std::mutex lock;
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::string log;  // cuBLASLt logger lines captured while diagnosing a refusal
};

Library& lib() {
  static Library l;
  return l;
}

void capture_log(int level, const char* function, const char* message) {
  std::string& log = lib().log;
  if (log.size() > 4096) return;
  log += "[" + std::to_string(level) + "][" + (function ? function : "") + "] " +
         (message ? message : "") + "\n";
}

void say(char* message, size_t size, const std::string& text) {
  if (message != nullptr && size > 0) std::snprintf(message, size, "%s", text.c_str());
}

cudaDataType_t cuda_type(uint32_t d) {
  switch (d) {
    case MXGATE_DTYPE_E4M3FN:
      return CUDA_R_8F_E4M3;
    case MXGATE_DTYPE_E5M2:
      return CUDA_R_8F_E5M2;
    case MXGATE_DTYPE_BF16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

int32_t cublas_mode(Mode m, bool weights) {
  switch (m) {
    case Mode::kTensor:
      return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    case Mode::kRowwise:
      return CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    case Mode::kBlock:
      return weights ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F
                     : CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    case Mode::kVec128:
      return CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  }
  return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t round_up(uint64_t a, uint64_t b) { return ceil_div(a, b) * b; }
bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// The physical scale shape cuBLASLt reads for mxgate's A (weights == false) or B scale: the
// logical rows x cols and the only leading dimension it can read (it takes no scale ld).
struct ScaleShape {
  uint64_t rows, cols, ld;
  uint32_t layout_bits;
};

ScaleShape scale_shape(Mode m, bool weights, uint64_t rows, uint64_t k) {
  const uint64_t l = ceil_div(k, 128);
  switch (m) {
    case Mode::kTensor:
      return {1, 1, 1, MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_ROW_MAJOR)};
    case Mode::kRowwise:  // one scale per row: a contiguous vector, row- or column-major alike
      return {
          rows, 1, 0,
          MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_ROW_MAJOR) | MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_COL_MAJOR)};
    case Mode::kBlock:
      if (weights) {  // BLK128x128: K-major, (ceil(N/128) x L) row-major, row stride L rounded to 4
        return {ceil_div(rows, 128), l, round_up(l, 4), MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_ROW_MAJOR)};
      }
      [[fallthrough]];
    case Mode::kVec128:  // VEC128: outer-dimension major, (rows x L) column-major, ld = rows
      return {rows, l, rows, MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_COL_MAJOR)};
  }
  return {1, 1, 1, 0};
}

// Checks one scale tensor against what cuBLASLt will read; empty string when it matches.
std::string check_scale(const mxgate_tensor& t, const ScaleShape& want, const char* which) {
  char buf[256];
  if (t.data == nullptr) {
    std::snprintf(buf, sizeof buf, "%s: missing", which);
    return buf;
  }
  if (t.dtype != MXGATE_DTYPE_F32 || (MXGATE_LAYOUT_BIT(t.layout) & want.layout_bits) == 0) {
    std::snprintf(buf, sizeof buf, "%s: want fp32 in layout mask 0x%x, got dtype %u layout %u",
                  which, want.layout_bits, t.dtype, t.layout);
    return buf;
  }
  if (t.rows != want.rows || t.cols != want.cols) {
    std::snprintf(buf, sizeof buf, "%s: want %llu x %llu, got %llu x %llu", which,
                  static_cast<unsigned long long>(want.rows),
                  static_cast<unsigned long long>(want.cols),
                  static_cast<unsigned long long>(t.rows), static_cast<unsigned long long>(t.cols));
    return buf;
  }
  const uint64_t packed = t.layout == MXGATE_LAYOUT_COL_MAJOR ? t.rows : t.cols;
  const uint64_t ld = t.ld == 0 ? packed : t.ld;
  // A vector's stride counts too: cuBLASLt reads rows x 1 (row-major) or 1 x cols (column-major)
  // as contiguous, so an ld other than 1 there puts another tensor's bytes in its scales.
  const uint64_t lines = t.layout == MXGATE_LAYOUT_COL_MAJOR ? t.cols : t.rows;
  const uint64_t want_ld = want.ld != 0 ? want.ld : packed;
  if (lines > 1 && ld != want_ld) {
    std::snprintf(buf, sizeof buf,
                  "%s: cuBLASLt reads this scale with leading dimension %llu, the tensor has %llu",
                  which, static_cast<unsigned long long>(want_ld),
                  static_cast<unsigned long long>(ld));
    return buf;
  }
  const uint64_t need = ((t.layout == MXGATE_LAYOUT_COL_MAJOR ? t.cols : t.rows) - 1) * ld +
                        (t.layout == MXGATE_LAYOUT_COL_MAJOR ? t.rows : t.cols);
  if (t.bytes < need * sizeof(float)) {
    std::snprintf(buf, sizeof buf, "%s: %llu bytes, cuBLASLt reads %llu", which,
                  static_cast<unsigned long long>(t.bytes),
                  static_cast<unsigned long long>(need * sizeof(float)));
    return buf;
  }
  if (!aligned16(t.data)) {
    std::snprintf(buf, sizeof buf, "%s: start address not 16-byte aligned", which);
    return buf;
  }
  return {};
}

// RAII for the cuBLASLt descriptors of one call.
struct Descriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~Descriptors() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

std::string status_text(cublasStatus_t s) {
  return std::string(cublasLtGetStatusName(s)) + " (" + cublasLtGetStatusString(s) + ")";
}

// Which kernel cuBLASLt chose, written into `message` on success (mxgate ignores it; probes and
// tests print it: split-K changes the summation structure).
std::string algo_note(const cublasLtMatmulAlgo_t& algo) {
  int32_t id = -1, splitk = -1;
  uint32_t tile = 0, reduction = 0, stages = 0, swizzle = 0;
  uint16_t cluster = 0;
  size_t w = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                       sizeof splitk, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &reduction,
                                       sizeof reduction, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                       sizeof stages, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle,
                                       sizeof swizzle, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster,
                                       sizeof cluster, &w);
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "cuBLASLt %zu algo id=%d tile=%u splitk=%d reduction=%u stages=%u swizzle=%u "
                "cluster=%u",
                cublasLtGetVersion(), id, tile, splitk, reduction, stages, swizzle,
                static_cast<unsigned>(cluster));
  return buf;
}

mxgate_status run_gemm(void* state, const mxgate_call* call, char* message, size_t message_size) {
  const GemmSpec& spec = *static_cast<const GemmSpec*>(state);
  if (call == nullptr || call->struct_size < sizeof(mxgate_call) ||
      call->family != MXGATE_OP_GEMM_BLOCK) {
    say(message, message_size, "cublaslt: not a gemm_block call (family or struct_size)");
    return MXGATE_ERROR;
  }
  const uint64_t m = call->m, n = call->n, k = call->k;
  const mxgate_tensor &x = call->a, &w = call->b, &y = call->out;
  if (x.dtype != spec.a || w.dtype != spec.b || y.dtype != spec.out) {
    say(message, message_size, "cublaslt: operand or output dtype is not this op's");
    return MXGATE_UNSUPPORTED;
  }
  if (m == 0 || n == 0 || k == 0 || x.rows != m || x.cols != k || w.rows != n || w.cols != k ||
      y.rows != m || y.cols != n) {
    say(message, message_size, "cublaslt: tensor shapes disagree with m, n, k");
    return MXGATE_ERROR;
  }
  if (x.layout != MXGATE_LAYOUT_ROW_MAJOR || w.layout != MXGATE_LAYOUT_ROW_MAJOR ||
      y.layout != MXGATE_LAYOUT_ROW_MAJOR) {
    say(message, message_size, "cublaslt: A, B and the output must be row-major");
    return MXGATE_UNSUPPORTED;
  }
  const uint64_t lda = x.ld ? x.ld : k, ldb = w.ld ? w.ld : k, ldd = y.ld ? y.ld : n;
  const uint64_t out_size = spec.out == MXGATE_DTYPE_BF16 ? 2 : 4;
  if (lda < k || ldb < k || ldd < n || x.bytes < ((m - 1) * lda + k) ||
      w.bytes < ((n - 1) * ldb + k) || y.bytes < ((m - 1) * ldd + n) * out_size) {
    say(message, message_size, "cublaslt: a buffer is smaller than its shape and ld");
    return MXGATE_ERROR;
  }
  if (!aligned16(x.data) || !aligned16(w.data) || !aligned16(y.data)) {
    say(message, message_size,
        "cublaslt: FP8 cuBLASLt needs 16-byte aligned matrix pointers (cuBLAS docs, "
        "cublasLtMatmul FP8 requirements)");
    return MXGATE_UNSUPPORTED;
  }
  std::string bad = check_scale(call->a_scale, scale_shape(spec.mode, false, m, k), "a_scale");
  if (bad.empty()) bad = check_scale(call->b_scale, scale_shape(spec.mode, true, n, k), "b_scale");
  if (!bad.empty()) {
    say(message, message_size, "cublaslt: " + bad);
    return MXGATE_UNSUPPORTED;
  }

  Library& L = lib();
  std::lock_guard<std::mutex> guard(L.lock);
  if (L.handle == nullptr) {
    say(message, message_size, "cublaslt: plugin not initialised (init() failed or not called)");
    return MXGATE_ERROR;
  }
  Descriptors ds;
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  auto fail = [&](const char* what) {
    say(message, message_size, std::string("cublaslt: ") + what + ": " + status_text(st));
    return MXGATE_ERROR;
  };
  const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
  const int32_t mode_w = cublas_mode(spec.mode, true), mode_x = cublas_mode(spec.mode, false);
  const int8_t fast_accum = 0;
  const void* scale_w = call->b_scale.data;
  const void* scale_x = call->a_scale.data;
  if ((st = cublasLtMatmulDescCreate(&ds.op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) ||
      (st = cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_TRANSA, &op_t,
                                           sizeof op_t)) ||
      (st = cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_TRANSB, &op_n,
                                           sizeof op_n)) ||
      (st = cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum,
                                           sizeof fast_accum)) ||
      (st = cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_w,
                                           sizeof mode_w)) ||
      (st = cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode_x,
                                           sizeof mode_x)) ||
      (st = cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_w,
                                           sizeof scale_w)) ||
      (st = cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_x,
                                           sizeof scale_x))) {
    return fail("matmul descriptor");
  }
  if ((st =
           cublasLtMatrixLayoutCreate(&ds.a, cuda_type(spec.b), k, n, static_cast<int64_t>(ldb))) ||
      (st =
           cublasLtMatrixLayoutCreate(&ds.b, cuda_type(spec.a), k, m, static_cast<int64_t>(lda))) ||
      (st = cublasLtMatrixLayoutCreate(&ds.d, cuda_type(spec.out), n, m,
                                       static_cast<int64_t>(ldd)))) {
    return fail("matrix layout");
  }
  if ((st = cublasLtMatmulPreferenceCreate(&ds.pref)) ||
      (st = cublasLtMatmulPreferenceSetAttribute(ds.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &kWorkspaceBytes, sizeof kWorkspaceBytes))) {
    return fail("preference");
  }
  cublasLtMatmulHeuristicResult_t results[kMaxTactics];
  std::memset(results, 0, sizeof results);
  cublasLtMatmulHeuristicResult_t& heuristic = results[0];
  int found = 0;
  st = cublasLtMatmulAlgoGetHeuristic(L.handle, ds.op, ds.a, ds.b, ds.d, ds.d, ds.pref, kMaxTactics,
                                      results, &found);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
    // Ask again with the logger on: its lines name the requirement that failed.
    const cublasStatus_t first = st;
    L.log.clear();
    cublasLtLoggerSetCallback(&capture_log);
    cublasLtLoggerSetMask(1 | 2 | 4 | 8);
    (void)cublasLtMatmulAlgoGetHeuristic(L.handle, ds.op, ds.a, ds.b, ds.d, ds.d, ds.pref, 1,
                                         &heuristic, &found);
    cublasLtLoggerSetMask(0);
    std::string reason = "cublaslt: cuBLASLt has no algorithm for this case: heuristic " +
                         status_text(first) + ", " + std::to_string(found) + " results";
    if (!L.log.empty()) reason += "; log: " + L.log;
    say(message, message_size, reason);
    return MXGATE_UNSUPPORTED;
  }
  // The tactic: an index into this case's heuristic list (0 from an mxgate before revision 3).
  const uint32_t tactic = call->struct_size >= offsetof(mxgate_call, reserved1) ? call->tactic : 0;
  if (tactic >= static_cast<uint32_t>(found)) {
    say(message, message_size,
        "cublaslt: the heuristic returned " + std::to_string(found) +
            " algorithm(s) for this "
            "case; no tactic " +
            std::to_string(tactic));
    return MXGATE_NO_TACTIC;
  }
  const cublasLtMatmulHeuristicResult_t& chosen = results[tactic];
  if (chosen.state != CUBLAS_STATUS_SUCCESS) {
    say(message, message_size,
        "cublaslt: heuristic result " + std::to_string(tactic) + " has state " +
            status_text(chosen.state));
    return MXGATE_NO_TACTIC;
  }
  const float alpha = 1.0f, beta = 0.0f;
  st = cublasLtMatmul(L.handle, ds.op, &alpha, w.data, ds.a, x.data, ds.b, &beta, y.data, ds.d,
                      y.data, ds.d, &chosen.algo, L.workspace, kWorkspaceBytes,
                      static_cast<cudaStream_t>(call->stream));
  if (st != CUBLAS_STATUS_SUCCESS) return fail("cublasLtMatmul");
  say(message, message_size, algo_note(chosen.algo));
  return MXGATE_DONE;
}

// Tactic i: the i-th heuristic result of the call's case; each claims the op's accumulator.
const mxgate_tactic kTactics[kMaxTactics] = {
    {"heuristic0", nullptr, "cublasLtMatmulAlgoGetHeuristic result 0 (cuBLASLt's own choice)"},
    {"heuristic1", nullptr, "heuristic result 1"},
    {"heuristic2", nullptr, "heuristic result 2"},
    {"heuristic3", nullptr, "heuristic result 3"},
    {"heuristic4", nullptr, "heuristic result 4"},
    {"heuristic5", nullptr, "heuristic result 5"},
    {"heuristic6", nullptr, "heuristic result 6"},
    {"heuristic7", nullptr, "heuristic result 7"},
};

// Contract, as the cuBLAS documentation states it (docs/nvidia.md §3 quotes each clause):
//   FP8: TN only, 16-byte aligned pointers, leading dimensions and (op N) row counts multiples of
//   16 bytes -> K % 16 (A and B are K-contiguous), N * sizeof(out) % 16 (D's leading dimension);
//   VEC128 / BLK128 block scaling: M and N multiples of 4 as well (cuBLAS M = our N, n = our M).
mxgate_contract gemm_contract(const GemmSpec& s, const char* notes) {
  mxgate_contract c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof(mxgate_contract);
  const bool blocked = s.mode == Mode::kBlock || s.mode == Mode::kVec128;
  const uint64_t out_align = s.out == MXGATE_DTYPE_BF16 ? 8 : 4;
  c.m_align = blocked ? 4 : 1;
  c.n_align = out_align;
  c.k_align = 16;
  c.a_dtypes = MXGATE_DTYPE_BIT(s.a);
  c.b_dtypes = MXGATE_DTYPE_BIT(s.b);
  c.out_dtypes = MXGATE_DTYPE_BIT(s.out);
  c.a_scale_layouts = scale_shape(s.mode, false, 8, 256).layout_bits;
  c.b_scale_layouts = scale_shape(s.mode, true, 8, 256).layout_bits;
  c.b_layouts = MXGATE_LAYOUT_BIT(MXGATE_LAYOUT_ROW_MAJOR);
  c.scale_dtype = MXGATE_DTYPE_F32;
  switch (s.mode) {
    case Mode::kTensor:
      break;  // {0, 0} x {0, 0}: one scale for the whole tensor
    case Mode::kRowwise:
      c.a_block_rows = 1;
      c.b_block_rows = 1;
      break;
    case Mode::kBlock:
      c.a_block_rows = 1;
      c.a_block_cols = 128;
      c.b_block_rows = 128;
      c.b_block_cols = 128;
      c.b_scale_ld_align = 4;
      break;
    case Mode::kVec128:
      c.a_block_rows = 1;
      c.a_block_cols = 128;
      c.b_block_rows = 1;
      c.b_block_cols = 128;
      break;
  }
  c.convention = nullptr;
  c.accumulator = "sm90_fp8_mma";
  c.notes = notes;
  c.tactic_count = kMaxTactics;
  c.tactics = kTactics;
  // cuBLASLt takes no scale stride: every scale at the ld scale_shape gives, never a view.
  c.flags = MXGATE_CONTRACT_PACKED_SCALES;
  return c;
}

#define SPEC(mode, a, b, out) \
  { Mode::mode, MXGATE_DTYPE_##a, MXGATE_DTYPE_##b, MXGATE_DTYPE_##out }
// Index order: mode-major, then (a, b) pairs e4m3.e4m3, e4m3.e5m2, e5m2.e4m3 (cuBLASLt's FP8
// A/B table has no e5m2 x e5m2), then output f32, bf16.
GemmSpec kSpecs[] = {
    SPEC(kTensor, E4M3FN, E4M3FN, F32),  SPEC(kTensor, E4M3FN, E4M3FN, BF16),
    SPEC(kTensor, E4M3FN, E5M2, F32),    SPEC(kTensor, E4M3FN, E5M2, BF16),
    SPEC(kTensor, E5M2, E4M3FN, F32),    SPEC(kTensor, E5M2, E4M3FN, BF16),
    SPEC(kRowwise, E4M3FN, E4M3FN, F32), SPEC(kRowwise, E4M3FN, E4M3FN, BF16),
    SPEC(kRowwise, E4M3FN, E5M2, F32),   SPEC(kRowwise, E4M3FN, E5M2, BF16),
    SPEC(kRowwise, E5M2, E4M3FN, F32),   SPEC(kRowwise, E5M2, E4M3FN, BF16),
    SPEC(kBlock, E4M3FN, E4M3FN, F32),   SPEC(kBlock, E4M3FN, E4M3FN, BF16),
    SPEC(kBlock, E4M3FN, E5M2, F32),     SPEC(kBlock, E4M3FN, E5M2, BF16),
    SPEC(kBlock, E5M2, E4M3FN, F32),     SPEC(kBlock, E5M2, E4M3FN, BF16),
    SPEC(kVec128, E4M3FN, E4M3FN, F32),  SPEC(kVec128, E4M3FN, E4M3FN, BF16),
    SPEC(kVec128, E4M3FN, E5M2, F32),    SPEC(kVec128, E4M3FN, E5M2, BF16),
    SPEC(kVec128, E5M2, E4M3FN, F32),    SPEC(kVec128, E5M2, E4M3FN, BF16),
};
#undef SPEC

constexpr const char* kNotesTensor =
    "SCALAR_32F x SCALAR_32F; FP8 TN, 16-byte aligned pointers and leading dimensions (cuBLAS "
    "docs, cublasLtMatmul FP8 requirements); fast accumulation off";
constexpr const char* kNotesRowwise =
    "OUTER_VEC_32F: one fp32 scale per row of A (M) and of B (N) (cublasLt.h); FP8 TN rules";
constexpr const char* kNotesBlock =
    "VEC128_32F activations (M x ceil(K/128), column-major, ld M) x BLK128x128_32F weights "
    "(ceil(N/128) x ceil(K/128), row-major, row stride a multiple of 4); M, N multiples of 4 "
    "(cuBLAS docs, block scaling; CUDALibrarySamples LtBlk128x128Fp8Matmul)";
constexpr const char* kNotesVec128 =
    "VEC128_32F x VEC128_32F: 1x128 scales on both operands, each (rows x ceil(K/128)) "
    "column-major with ld rows; M, N multiples of 4 (cuBLAS docs, block scaling)";

const char* op_name(int i) {
  static const char* const kNames[] = {
      "tensor_e4m3_e4m3_f32",   "tensor_e4m3_e4m3_bf16",  "tensor_e4m3_e5m2_f32",
      "tensor_e4m3_e5m2_bf16",  "tensor_e5m2_e4m3_f32",   "tensor_e5m2_e4m3_bf16",
      "rowwise_e4m3_e4m3_f32",  "rowwise_e4m3_e4m3_bf16", "rowwise_e4m3_e5m2_f32",
      "rowwise_e4m3_e5m2_bf16", "rowwise_e5m2_e4m3_f32",  "rowwise_e5m2_e4m3_bf16",
      "block_e4m3_e4m3_f32",    "block_e4m3_e4m3_bf16",   "block_e4m3_e5m2_f32",
      "block_e4m3_e5m2_bf16",   "block_e5m2_e4m3_f32",    "block_e5m2_e4m3_bf16",
      "vec128_e4m3_e4m3_f32",   "vec128_e4m3_e4m3_bf16",  "vec128_e4m3_e5m2_f32",
      "vec128_e4m3_e5m2_bf16",  "vec128_e5m2_e4m3_f32",   "vec128_e5m2_e4m3_bf16",
  };
  return kNames[i];
}

constexpr int kOpCount = sizeof(kSpecs) / sizeof(kSpecs[0]);

struct OpTable {
  mxgate_op ops[kOpCount];
  OpTable() {
    for (int i = 0; i < kOpCount; ++i) {
      const GemmSpec& s = kSpecs[i];
      const char* notes = s.mode == Mode::kTensor    ? kNotesTensor
                          : s.mode == Mode::kRowwise ? kNotesRowwise
                          : s.mode == Mode::kBlock   ? kNotesBlock
                                                     : kNotesVec128;
      std::memset(&ops[i], 0, sizeof ops[i]);
      ops[i].name = op_name(i);
      ops[i].family = MXGATE_OP_GEMM_BLOCK;
      ops[i].memory = MXGATE_MEMORY_CUDA;
      ops[i].contract = gemm_contract(s, notes);
      ops[i].run = &run_gemm;
      ops[i].state = &kSpecs[i];
    }
  }
};

const OpTable kOps;

const mxgate_impl kImpls[] = {
    {"cublaslt",
     "cuBLASLt FP8 GEMMs (CUDA 13), sm_90: per-tensor, rowwise, 1x128 x 128x128, "
     "1x128 x 1x128 fp32 scales; fp32 / bf16 out",
     static_cast<uint32_t>(kOpCount), kOps.ops},
};

const char* init_plugin() {
  static char why[256];
  static bool done = false;
  static const char* result = nullptr;
  Library& L = lib();
  std::lock_guard<std::mutex> guard(L.lock);
  if (done) return result;
  done = true;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    std::snprintf(why, sizeof why, "cublaslt: no CUDA device (%s)",
                  e == cudaSuccess ? "count 0" : cudaGetErrorString(e));
    return result = why;
  }
  int dev = 0;
  cudaDeviceProp p;
  if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
      (e = cudaGetDeviceProperties(&p, dev)) != cudaSuccess) {
    std::snprintf(why, sizeof why, "cublaslt: cannot query the device (%s)", cudaGetErrorString(e));
    return result = why;
  }
  if (p.major != 9 || p.minor != 0) {
    std::snprintf(why, sizeof why,
                  "cublaslt: the VEC128 / BLK128x128 scale modes are sm_90 only; device is sm_%d%d",
                  p.major, p.minor);
    return result = why;
  }
  const cublasStatus_t st = cublasLtCreate(&L.handle);
  if (st != CUBLAS_STATUS_SUCCESS) {
    std::snprintf(why, sizeof why, "cublaslt: cublasLtCreate: %s", status_text(st).c_str());
    L.handle = nullptr;
    return result = why;
  }
  if ((e = cudaMalloc(&L.workspace, kWorkspaceBytes)) != cudaSuccess) {
    std::snprintf(why, sizeof why, "cublaslt: workspace: %s", cudaGetErrorString(e));
    cublasLtDestroy(L.handle);
    L.handle = nullptr;
    return result = why;
  }
  return result = nullptr;
}

const mxgate_plugin kPlugin = {
    MXGATE_PLUGIN_ABI_VERSION, sizeof(mxgate_plugin), "cublaslt", &init_plugin, 1, kImpls};

}  // namespace

extern "C" MXGATE_PLUGIN_EXPORT const mxgate_plugin* mxgate_plugin_v1(void) { return &kPlugin; }
