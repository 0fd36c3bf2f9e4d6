// The block-scaled GEMM oracles: C = A * B^T with per-block scales (docs/architecture.md §4), in
// three modes:
//   1. exact:   every C[m,n] = sum_k a[m,k]*sa*b[n,k]*sb computed exactly, rounded ONCE (RNE) to
//               fp32 or bf16. On exact-mode operands (below) every correct kernel equals it bit
//               for bit, whatever its summation order.
//   2. bound:   a rigorous forward-error bound for a declared accumulation model (AccumModel);
//               a kernel element outside its bound is wrong, no hand-tuned atol/rtol.
//   3. ordered: bit-exact emulation of a declared fp32 summation order (OrderModel).
//
// Operands are DECODED values: the caller decodes fp8 / e8m0 / bf16 bytes with the format codecs
// (exact in float), and lays scales out as the logical row-major grid. The oracle never sees a
// kernel's physical layout (docs/architecture.md §5.1).
//
// Implemented in gemm_oracle_*.cpp, one file per job: _problem (shape checks), _dot (the SIMD dot
// engines and CPU detection), _engine (the tiled parallel exact engine), _exact, _bound and
// _ordered (the three modes), _operands (exact-mode operands and the exact-mode check).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/blocks.h"
#include "reference/verdict.h"

namespace mxgate {

// Scale-block shapes: one A scale covers a_m rows x a_k columns of A; one B scale covers b_n rows
// x b_k columns of B (B is N x K).
struct BlockSizes {
  std::size_t a_m = 1;
  std::size_t a_k = 32;
  std::size_t b_n = 1;
  std::size_t b_k = 32;
};
// MXFP8 x MXFP8 (OCP MX, tl.dot_scaled): 1x32 blocks on both operands, e8m0 scales.
inline constexpr BlockSizes kMxfp8Blocks{1, kMxBlock, 1, kMxBlock};
// DeepSeek-style block FP8: activations 1x128, weights 128x128 (fp32 or e8m0 scales).
inline constexpr BlockSizes kDeepSeekBlocks{1, kBlockK, kBlockK, kBlockK};

struct GemmProblem {
  std::size_t m = 0;  // M
  std::size_t n = 0;  // N
  std::size_t k = 0;  // K
  BlockSizes blocks;
  std::vector<float> a;        // M x K, row-major
  std::vector<float> a_scale;  // ceil(M/a_m) x ceil(K/a_k), row-major; empty = every scale 1.0
  std::vector<float> b;        // N x K, row-major
  std::vector<float> b_scale;  // ceil(N/b_n) x ceil(K/b_k), row-major; empty = every scale 1.0
  // Per-problem global factor (NVFP4: global_decode_a * global_decode_b) applied the way kernels
  // apply it, as the epilogue's alpha: C = fl32(alpha * acc), acc the fp32 accumulator, then the
  // output conversion. alpha == 1 skips that step (docs/fp4.md §8).
  float alpha = 1.0f;

  std::size_t a_scale_rows() const { return ceil_div(m, blocks.a_m); }
  std::size_t a_scale_cols() const { return ceil_div(k, blocks.a_k); }
  std::size_t b_scale_rows() const { return ceil_div(n, blocks.b_n); }
  std::size_t b_scale_cols() const { return ceil_div(k, blocks.b_k); }
  // Element and scale access by logical coordinates (no bounds checks).
  float& a_at(std::size_t row, std::size_t kk) { return a[row * k + kk]; }
  float& b_at(std::size_t col, std::size_t kk) { return b[col * k + kk]; }
  // The scale applied to a[row, kk] / b[col, kk] (1.0 when the scale vector is empty).
  float scale_a(std::size_t row, std::size_t kk) const;
  float scale_b(std::size_t col, std::size_t kk) const;
};

// A problem of the given shape with zero values and, when `scaled`, every scale 1.0 (empty scale
// vectors otherwise: BF16 x BF16).
GemmProblem make_gemm_problem(std::size_t m, std::size_t n, std::size_t k, BlockSizes blocks,
                              bool scaled);

// Throws std::invalid_argument naming the first problem: a zero dimension or block size, or a
// value / scale vector of the wrong length.
void validate_gemm_problem(const GemmProblem& problem);

struct GemmOutput {
  std::size_t rows = 0;  // M
  std::size_t cols = 0;  // N
  OutputFormat format = OutputFormat::kFp32;
  std::vector<float> fp32;     // rows x cols when format == kFp32
  std::vector<uint16_t> bf16;  // rows x cols bf16 bits when format == kBf16
};

// ---- 1. Exact mode ------------------------------------------------------------------------------

// Counters of the exact engine's paths (for tests and benchmarks).
struct ExactStats {
  std::size_t direct_elements = 0;   // whole-K double sum, exact, rounded directly
  std::size_t range_sums = 0;        // exact double range sums added to a superaccumulator
  std::size_t general_products = 0;  // products added one by one (general path)
};

// The dot engine: the SIMD double dot product of the fast path (docs/architecture.md §4.1). Every
// engine is exact under the same condition (FMA or not, any order); they differ only in speed.
// kAuto picks the widest the CPU supports.
enum class DotEngine { kAuto, kPortable, kAvx2, kAvx512 };

// Whether `engine` can run here (kAuto and kPortable always can).
bool dot_engine_available(DotEngine engine);

struct ExactOptions {
  bool force_general_path = false;  // every product through ExactSum (the slow, obvious path)
  ExactStats* stats = nullptr;      // filled when non-null
  DotEngine dot_engine = DotEngine::kAuto;  // std::invalid_argument when not available
  // Worker threads (0: parallel.h thread_count(), i.e. MXGATE_THREADS or every core, one below
  // kSerialWork products). Each output element is computed by one worker the same way, so the
  // result never depends on it.
  unsigned threads = 0;
};

// The exact result rounded once (RNE) to `format`. Zero results are +0.0 (every kernel starts its
// accumulator at +0.0, and x + (-x) is +0.0 under RNE); NaN/Inf follow exact_sum.h.
// With alpha != 1: the exact sum rounded once to fp32 (the accumulator; exact on exact-mode
// operands), times alpha rounded to fp32 (the epilogue), then converted to `format` (RNE).
// Speed: power-of-two scales are folded into the values and runs of k whose products provably
// fit a double are summed by a SIMD double dot product (exact, see gemm_oracle_engine.cpp); on
// quantized MX data that is all of K, so the cost is about that of a double GEMM. Other data
// degrades to exact range sums in an ExactSum, then to one ExactSum add per product.
GemmOutput exact_gemm(const GemmProblem& problem, OutputFormat format,
                      const ExactOptions& options = {});
// The exact result rounded once to double, times alpha in double (the bound mode's reference).
std::vector<double> exact_gemm_fp64(const GemmProblem& problem, const ExactOptions& options = {});

// ---- 2. Bound mode ------------------------------------------------------------------------------

// A declared accumulation model. The kernel computes, for each output element, terms
// t_i = a_i*b_i*sa*sb, each through `product_roundings` roundings (fl(a*b) = 1; per-product
// scaling fl(fl(fl(a*b)*sa)*sb) = 3), sums them in partial sums of at most `block_k` consecutive
// k (0: one partial over all K) in ANY order, passes every partial through `partial_roundings`
// roundings (vLLM's fl(fl(part*sa)*sb) = 2; 0 when scales are applied per product), and sums the
// partials in ANY order. Every rounding has unit roundoff `unit_roundoff` (fp32 RN: 2^-24;
// directed/truncating accumulators: 2^-23) and, near underflow, an absolute error of at most
// `underflow_eta` (fp32 RN with gradual underflow: half the smallest subnormal, 2^-150;
// flush-to-zero: the smallest normal, 2^-126). The result is finally rounded to `output`.
struct AccumModel {
  double unit_roundoff = 0x1p-24;
  double underflow_eta = 0x1p-150;
  // Values at or above this round to Inf in the accumulator (fp32 RN: (2 - 2^-24) * 2^127).
  double overflow_threshold = 0x1.ffffffp127;
  std::size_t block_k = 128;
  int product_roundings = 1;
  int partial_roundings = 2;
  OutputFormat output = OutputFormat::kFp32;
};

struct GemmBounds {
  std::size_t rows = 0;
  std::size_t cols = 0;
  OutputFormat output = OutputFormat::kFp32;
  std::vector<double> exact;    // exact result rounded to double (NaN / +-Inf when special)
  std::vector<double> abs_sum;  // sum_i |t_i| rounded to double
  std::vector<double> bound;    // allowed |actual - exact|; +Inf where overflow is possible
};

// Derivation (Higham, "Accuracy and Stability of Numerical Algorithms", §2.2 and Lemma 3.1).
// Model every rounding as fl(x) = x(1 + d) + e with |d| <= u, |e| <= eta. Follow one term: it goes
// through r product roundings, at most L - 1 additions inside its partial (L = min(block_k, K);
// any summation tree of L leaves has depth <= L - 1), s partial roundings, and at most B - 1
// additions among the B = ceil(K / L) partials. So the computed sum is
//   sum_i t_i * prod_{j <= N} (1 + d_ij)  +  (absolute terms),   N = r + (L - 1) + s + (B - 1),
// and |prod (1 + d) - 1| <= gamma_N = N u / (1 - N u) for any N u < 1. Hence
//   |c_hat - c| <= gamma_N * sum_i |t_i|  +  (1 + gamma_N) * eta * ops * S,
// where the absolute errors e (one per rounding, ops = K*r + B*s + K + B counts every product,
// scaling and addition -- additions only contribute under flush-to-zero, counting them keeps the
// bound valid there) are later multiplied by at most N factors (1 + d) <= 1 + gamma_N and by the
// scales not yet applied, at most S = max(1, max|sa|) * max(1, max|sb|) over the row / column.
// This holds for every summation order inside the model and assumes no overflow: if
// (1 + gamma_N) sum|t_i| + eta*ops*S reaches `overflow_threshold`, some order may overflow and
// the bound is +Inf. When the accumulator is finer than `output` (unit_roundoff < output's:
// 2^-24 for fp32, 2^-8 for bf16) the final rounding adds u_out (|c| + E) + eta_out (eta_out:
// 2^-150 / 2^-134), and a bound reaching the output's overflow threshold is +Inf. The computed
// bound is inflated by 2^-40 (relative) to cover the double arithmetic that evaluates it.
// NaN / Inf exact results get bound 0: the kernel must produce NaN / the same Inf.
// alpha != 1 adds the epilogue's fp32 multiply before the output rounding: the accumulator bound B
// becomes |alpha| B + 2^-24 |alpha| (|c| + B) + 2^-150, and c becomes alpha c.
GemmBounds compute_bounds(const GemmProblem& problem, const AccumModel& model);

// The elements of a kernel's output outside their bound (verdict.h, check_within_bound).
// Throws std::invalid_argument when the output's shape or format does not match.
BoundVerdict check_bound(const GemmBounds& bounds, const GemmOutput& actual);

// ---- 3. Ordered emulation -----------------------------------------------------------------------

enum class ScaleApplication {
  // vLLM Triton w8a8 (docs/formats.md §5.5): part = sum fl(a*b); acc += fl(fl(part*sa)*sb).
  kPerPartial,
  // Scale each product: p = fl(fl(fl(a*b)*sa)*sb) (left to right); part = sum p; acc += part.
  kPerProduct,
};

// The order, bit for bit, in fp32 with every operation rounded separately (never fused):
//   for each (m, n):
//     acc = +0.0f
//     for each K-block [k0, min(k0 + block_k, K)) in increasing k0 (block_k = 0: one block):
//       part = +0.0f
//       for k in the block, increasing:  part = fl(part + fl(a*b))        (kPerPartial)
//                                        part = fl(part + fl(fl(fl(a*b)*sa)*sb))  (kPerProduct)
//       acc = fl(acc + fl(fl(part*sa)*sb))                                (kPerPartial)
//       acc = fl(acc + part)                                              (kPerProduct)
//     C[m, n] = acc (fp32) or RNE(acc) to bf16; acc = fl(alpha * acc) first when alpha != 1.
// kPerPartial needs each K-block inside one A scale block and one B scale block (the scale must
// be constant over the partial); otherwise std::invalid_argument.
struct OrderModel {
  std::size_t block_k = 128;
  ScaleApplication scale_application = ScaleApplication::kPerPartial;
  OutputFormat output = OutputFormat::kFp32;
};

GemmOutput ordered_gemm(const GemmProblem& problem, const OrderModel& order);

// ---- Exact-mode operands ------------------------------------------------------------------------

struct ExactModeOperands {
  std::uint64_t seed = 0;  // std::mt19937_64 seed that reproduces `problem`
  GemmProblem problem;
};

// Random operands on which fp32 accumulation in ANY order is exact: values are integers in
// {-v..v} (v = 8, or less when K is too large: v*v*K <= 2^24), exactly representable in E4M3,
// E5M2 and bf16; scales (when `scaled`) are powers of two 2^e with e in a window chosen so that
// the condition checked by is_exact_mode holds. Throws std::invalid_argument when K > 2^24.
ExactModeOperands make_exact_mode_operands(std::size_t m, std::size_t n, std::size_t k,
                                           BlockSizes blocks, bool scaled, std::uint64_t seed);

// The exact-mode condition. For every output element, with terms t = a*b*sa*sb:
//   (1) every value and scale is finite, every nonzero scale is a power of two;
//   (2) every nonzero term is an integer multiple of 2^e0 (e0 = the smallest exponent of a
//       nonzero term's lowest set bit), and sum |t| <= 2^24 * 2^e0.
// Then every partial sum of any subset of terms is a multiple of 2^e0 of magnitude <= 2^24 * 2^e0:
// an fp32 value, so every addition is exact in any order; and scaling a partial by the power-of-
// two scales is exact provided no intermediate leaves fp32's range. (3) checks that range for
// every form a kernel may compute: a*sa, b*sb, sa*sb, a*b, partial sums before scaling (units
// 2^(e0-ea-eb)), after one scale (2^(e0-ea), 2^(e0-eb)) and after both (2^e0) must all have units
// >= 2^-149 and magnitude <= S units < 2^128 (S = sum |t| / 2^e0 <= 2^24: no partial of any subset
// of the terms exceeds it). Cost O(M N K). `why` (optional) receives the first violation.
bool is_exact_mode(const GemmProblem& problem, std::string* why = nullptr);

}  // namespace mxgate
