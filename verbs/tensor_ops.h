// The tensor verbs of the reference (quantize, dequantize, gemm, check-gemm) on arrays in memory,
// with the option checks and error texts of the CLI. tools/mxgate/tensor_cli.cpp adds files (it
// reads the .npy each input option names and writes the outputs); capi/ passes arrays in memory.
// Both run these functions, so a bad input reads the same from the shell and from Python.
//
// Each verb is two steps: *_spec checks the options (scheme, format, convention, which inputs are
// present) and throws UsageError; the verb then reads its inputs through an ArrayReader, in the
// CLI's order, and throws UsageError naming the option of a malformed input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "reference/accumulator.h"
#include "reference/block_quant.h"
#include "reference/convention.h"
#include "reference/format.h"
#include "reference/gemm_oracle.h"
#include "reference/grouped_gemm.h"
#include "reference/mx_quant.h"
#include "reference/npy.h"
#include "reference/nvfp4_quant.h"
#include "reference/scale_layout.h"
#include "reference/verdict.h"
#include "verbs/args.h"

namespace mxgate::verbs {

// The input array an option stands for (CLI: the .npy file it names; C API: the array passed
// under its name). Throws UsageError naming the option when there is none or it cannot be read.
using ArrayReader = std::function<NpyArray(const std::string& option)>;

// --dtype float32 | bf16 (default float32).
OutputFormat output_dtype(const Args& a);

// Fails before any work when an output file cannot be written (missing directory, a directory in
// its place), so that no verb leaves a partial result behind.
void check_output_path(const std::string& option, const std::string& path);

// ---- quantize: (M, K) float32 / float64 -> codes and scales ------------------------------------

// --scheme mxfp4 is kMx with e2m1 elements, mxfp6 kMx with e2m3 / e3m2; nvfp4 has its own recipes.
enum class QuantScheme { kMx, kAct1x128, kW128x128, kNvfp4 };

// E2M1 codes travel packed, two per byte, element 2i in the low nibble (reference/fp4_pack.h,
// docs/fp4.md §5): an (M, ceil(K/2)) uint8 array. Every other element format is one code a byte.

// What quantize and dequantize both take: --scheme, the element format (--format or the
// scheme's) and a --convention that defines it.
struct SchemeSpec {
  QuantScheme scheme = QuantScheme::kMx;
  Format format = Format::kE4M3FN;
  const Convention* convention = nullptr;
};

// Options: scheme format convention in scale-layout global-amax tile, flags ue8m0 pow2-scales
// (the CLI adds --out).
const std::set<std::string>& quantize_options();
const std::set<std::string>& quantize_flags();

struct QuantizeSpec : SchemeSpec {
  std::optional<ScaleLayout> layout;  // physical layout as 1-D storage; none: logical (rows, cols)
  std::optional<MxPolicy> mx;         // schemes mx, mxfp4, mxfp6
  std::optional<BlockPolicy> block;   // schemes act1x128, w128x128
  std::optional<NvFp4Policy> nvfp4;   // scheme nvfp4, with --tile and --pow2-scales applied
  std::optional<float> global_amax;   // nvfp4: --global-amax (absent: the amax of the input)
};
QuantizeSpec quantize_spec(const Args& a);

struct QuantizeResult {
  NpyArray data;    // uint8 (M, K); e2m1 packed (M, ceil(K/2))
  NpyArray scales;  // mx: uint8 e8m0 (M, ceil(K/32)); nvfp4: uint8 E4M3 (M, ceil(K/16)) (E8M0
                    // with --pow2-scales); block: float32 scale grid; or 1-D storage
  std::optional<NpyArray> global;  // nvfp4: float32 (1,), the global decode scale
};
// Reads "in". A NaN the convention leaves undefined for FP4 is a UsageError naming --in.
QuantizeResult quantize(const QuantizeSpec& spec, const ArrayReader& read);

// ---- dequantize: codes and logical scales -> float32 or bf16 bits ------------------------------

// Options: scheme format convention data scales dtype k global, flag pow2-scales (the CLI adds
// --out).
const std::set<std::string>& dequantize_options();
const std::set<std::string>& dequantize_flags();

struct DequantizeSpec : SchemeSpec {
  OutputFormat dtype = OutputFormat::kFp32;
  std::optional<std::size_t> k;  // e2m1: --k, the codes per packed row (default 2 * columns)
  bool pow2_scales = false;      // nvfp4: the scales are E8M0 bytes
};
DequantizeSpec dequantize_spec(const Args& a);
// Reads "data", then "scales", then (nvfp4) "global", a float32 (1,) global decode scale.
NpyArray dequantize(const DequantizeSpec& spec, const ArrayReader& read);

// ---- gemm: the exact oracle C = A * B^T --------------------------------------------------------

// Options: scheme a a-scales b b-scales dtype format a-format b-format convention k a-global
// b-global (the CLI adds --out).
const std::set<std::string>& gemm_options();

struct GemmSpec {
  std::string scheme;  // mx | mxfp4 | mxfp6 | nvfp4 | block | bf16
  // The element formats of A and B (mx: --a-format / --b-format, else --format, else e4m3fn;
  // mxfp4, nvfp4: e2m1; block: --format); unused by bf16.
  Format a_format = Format::kE4M3FN;
  Format b_format = Format::kE4M3FN;
  const Convention* convention = nullptr;  // MX: decodes the e8m0 scales (default ocp_mx)
  std::optional<std::size_t> k;            // --k: K when every operand is packed e2m1
  // block: the scale blocks of A and B, rows x cols (--a-block / --b-block; 0: the whole
  // dimension, e.g. 1x0 one scale per row, 0x0 one per tensor). Default 1x128 and 128x128.
  std::size_t a_block_rows = 1, a_block_cols = 128, b_block_rows = 128, b_block_cols = 128;
};
GemmSpec gemm_spec(const Args& a);

struct LoadedGemm {
  GemmProblem problem;
  std::string what;  // "mx M=2 N=3 K=64"
};
// Reads "a", "b", then "a-scales", "b-scales" (nvfp4: then "a-global", "b-global", whose product
// is the GEMM's alpha, docs/fp4.md §8); checks every dtype and shape against A's (M, K).
LoadedGemm load_gemm(const GemmSpec& spec, const ArrayReader& read);
// The exact result rounded once: float32 (M, N), or uint16 bf16 bits.
NpyArray exact_gemm_array(const GemmProblem& problem, OutputFormat dtype);

// ---- check-gemm: a kernel's C against the oracle -----------------------------------------------

// gemm's options but dtype's meaning (it must match C), plus c mode acc-bits block-k accumulator
// heatmap, and the grouped dumps' offsets offsets-kind offsets-alignment masked-counts c-before.
const std::set<std::string>& check_gemm_options();

enum class CheckMode { kExact, kBound };

// A grouped dump (reference/grouped_gemm.h, docs/grouped.md): --offsets FILE (int32 / int64, one
// entry per expert; --offsets-kind ends (default) | starts; --offsets-alignment 1 (default) | N)
// for an m-contiguous A (rows, K) with B (E, N, K), or --masked-counts FILE for a masked A
// (E, max_m, K) with C (E, max_m, N). --c-before FILE (C's shape and dtype): the buffer before
// the kernel ran; rows no group writes must keep its bits.
struct GroupedCheckSpec {
  bool masked = false;
  OffsetsPolicy policy = OffsetsPolicy::kEnds;
  std::size_t alignment = 1;
  bool c_before = false;
};

struct CheckGemmSpec {
  GemmSpec gemm;
  CheckMode mode = CheckMode::kExact;
  // --accumulator NAME[:PARAM=V,...], a model of reference/accumulator.h. Bound mode: the model
  // of the bound; exact mode: the model whose exactness on the operands is reported.
  std::optional<AccumulatorModel> accumulator;
  int acc_bits = 24;  // bound mode without --accumulator: the manual float model
  std::size_t block_k = 128;
  std::optional<std::string> heatmap;       // .svg or .png file to draw the mismatches into
  std::optional<std::string> dtype;         // --dtype as given: must name C's dtype
  std::optional<GroupedCheckSpec> grouped;  // --offsets or --masked-counts given
};
CheckGemmSpec check_gemm_spec(const Args& a);

// One located element. Exact mode: expected is the correctly rounded oracle value. Bound mode:
// expected_bits / ulp still compare with the correctly rounded value; `exact` is the exact result
// rounded to double, `bound` the allowed |actual - exact| and `excess` how far outside it is.
struct LocatedElement {
  std::size_t row = 0;
  std::size_t col = 0;
  uint32_t expected_bits = 0;  // fp32 pattern, or the 16-bit bf16 pattern
  uint32_t actual_bits = 0;
  uint64_t ulp = 0;  // verdict.h's distance; kNanUlpDistance for NaN vs a number
  double expected = 0;
  double actual = 0;
  double exact = 0;   // bound mode only (NaN in exact mode)
  double bound = 0;   // bound mode only (NaN in exact mode)
  double excess = 0;  // bound mode only (NaN in exact mode)
  // Grouped dumps: the group and the row within it (`row` is then the global row of C's rows,
  // masked: expert * max_m + row).
  std::optional<std::size_t> group;
  std::size_t group_row = 0;
};

struct CheckGemmResult {
  CheckMode mode = CheckMode::kExact;
  OutputFormat output = OutputFormat::kFp32;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t mismatches = 0;  // exact: bit mismatches; bound: elements outside their bound
  std::optional<LocatedElement> first;  // row-major first
  std::optional<LocatedElement> worst;  // exact: largest ULP distance; bound: largest excess
  // What the CLI prints: the header line, (exact mode with --accumulator) whether the operands
  // are exact in that accumulator, the summary, PASS or FAIL.
  std::string text;
  bool ok() const { return mismatches == 0; }
};
// Reads gemm's inputs, then "c"; writes the heatmap when asked. A grouped spec reads the offsets
// (or masked counts) first, then gemm's inputs, "c" and "c-before" (check_grouped_gemm).
CheckGemmResult check_gemm(const CheckGemmSpec& spec, const ArrayReader& read);
CheckGemmResult check_grouped_gemm(const CheckGemmSpec& spec, const ArrayReader& read);

}  // namespace mxgate::verbs
