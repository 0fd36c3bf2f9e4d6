// The accumulator probe (docs/accumulators.md §7): measures how an FP8 GEMM implementation adds
// its products, with crafted inputs in the manner of Fasi, Higham, Mikaitis and Pranesh,
// "Numerical behavior of NVIDIA tensor cores", PeerJ Computer Science 7:e330 (2021): one nonzero
// row of A and of B, products that are exact powers of two (or 1.5 times one) placed at chosen
// k, and the observed C[0][0] compared with what each hypothesis predicts. Searches measure the
// exact sub-sums, the group, the precision kept relative to a group's largest term (with a
// cancelling pair, so beyond the fp32 output's 24 bits), the rounding of the bits shifted out
// (truncate, round_down, nearest_even, ...) and the promotion chunk; a battery of crafted calls
// then decides the structure no single search isolates (odd/even halves, a late C and its bits,
// the rounding of the halves and the late C, the fp32 store, renormalisation) by keeping the
// candidate models whose simulation predicts every observed result.
//
// The implementation is a callable (M, N, K, FP8 codes and scales in, fp32 C out), so the
// software simulations (simulated_fp8_gemm) and a real implementation (`--impl`) plug in the same
// way. Nothing here depends on the implementation model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "reference/accumulator.h"
#include "reference/format.h"

namespace mxgate {

enum class ProbeScaling : unsigned char {
  kPerTensor,  // one fp32 scale for A and one for B
  kBlock,      // fp32 scales: A 1x128 groups (M x ceil(K/128)), B 128x128 blocks
};

// One GEMM the probe asks for: C = (A * sa) (B * sb)^T, fp32 out.
struct Fp8GemmCall {
  std::size_t m = 0;
  std::size_t n = 0;
  std::size_t k = 0;
  Format format = Format::kE4M3FN;
  ProbeScaling scaling = ProbeScaling::kPerTensor;
  std::vector<std::uint8_t> a;  // M x K codes, row-major
  std::vector<std::uint8_t> b;  // N x K codes, row-major
  std::vector<float> a_scale;   // per-tensor: 1 value; block: M x ceil(K/128), row-major
  std::vector<float> b_scale;   // per-tensor: 1 value; block: ceil(N/128) x ceil(K/128)
};

// Returns C, M x N fp32 row-major. Throwing aborts the probe with that exception.
using Fp8Gemm = std::function<std::vector<float>(const Fp8GemmCall&)>;

struct ProbeOptions {
  std::size_t m = 16;  // the shape of every call (only row 0 of A and of B is nonzero)
  std::size_t n = 16;
  std::size_t k = 1024;  // chunks and groups up to K are found; a multiple of 128 for kBlock
  Format format = Format::kE4M3FN;
  ProbeScaling scaling = ProbeScaling::kPerTensor;
};

struct ProbeResult {
  // Significant bits kept relative to the largest term; 24 with precision_at_output_limit when
  // nothing is lost up to the fp32 output's own 24 bits.
  int precision_bits = 0;
  bool precision_at_output_limit = false;
  // "truncate", "nearest_even", "round_down", "nearest_away", "toward_positive".
  std::string rounding;
  // The chunk after which partials are promoted to fp32; 0 when no promotion was seen within K
  // (or the accumulator keeps fp32 precision, where there is nothing to promote).
  std::size_t chunk_k = 0;
  bool chunk_verified = false;  // the next chunk boundary is where the first one predicts
  // Products added at once; 0 when not measurable (fp32 precision). 2 means "1 or 2": an aligned
  // sum of two terms and two sequential additions cannot be told apart this way.
  std::size_t group_size = 0;
  // true: a group sum is renormalised (its carry bits rounded away); false: they are kept;
  // nullopt: not measurable (fp32 precision, groups of fewer than 3 products, or both fit).
  std::optional<bool> normalize_group_sum;
  // Products summed exactly in runs of this many k before alignment (1: none seen).
  std::size_t sub_sum = 1;
  // true when the precision search kept every term the format can express: at least
  // precision_bits (the model is then not identified).
  bool precision_beyond_format = false;
  // The battery's verdicts (§7 step 6); nullopt / empty where it did not run (fp32 precision,
  // a rounding no model has). late_c_bits 0: early C.
  std::optional<bool> halves;
  std::optional<int> late_c_bits;
  std::string late_rounding;  // the halves' and late C's rounding
  std::string store;          // exact, nearest_even, truncate
  int candidates = 0;         // candidate models the battery left (1: identified)
  // The matching registry model's name, or the spec of a new model with every measured
  // parameter (parse_accumulator_spec accepts both); empty when none matches.
  std::string model;
  bool new_model = false;        // `model` is a spec no registry row has
  std::vector<std::string> log;  // one line per conclusion, with its evidence
  int calls = 0;                 // GEMM calls made
};

// A call of the options' shape with every code zero and every scale 1 (per-tensor: one each;
// block: M x ceil(K/128) for A, ceil(N/128) x ceil(K/128) for B). The probe writes its terms into
// row 0 of A and B; `mxgate probe-accumulator --impl` first asks whether an op can take it.
Fp8GemmCall zero_call(const ProbeOptions& options);

// Runs the experiments (docs/accumulators.md §7). Throws std::invalid_argument for bad options
// and std::runtime_error when the implementation fails the sanity call (a single product 2^16 at
// k = 0 must come back exactly) or gives results no hypothesis explains.
ProbeResult probe_accumulator(const Fp8Gemm& gemm, const ProbeOptions& options = {});

// The result as text, one line per parameter, for `mxgate probe-accumulator`.
std::string format_probe_result(const ProbeResult& result);

// A callable that decodes the call's codes and scales exactly and runs simulate_gemm with
// `model` (fp32 output).
Fp8Gemm simulated_fp8_gemm(const AccumulatorModel& model);

}  // namespace mxgate
