// Verbs on tensors held in .npy files: quantize, dequantize, gemm, check-gemm. They are how users
// reach the reference from Python (np.save the operands, run the verb, np.load the result) and how
// a GEMM dumped from any kernel is checked against the exact oracle.
//
// Every input is read and validated, and every result computed, before the first output file is
// written, so a bad input (exit 2) never leaves a partial output behind.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "reference/accumulator.h"
#include "reference/accumulator_bounds.h"
#include "reference/accumulator_exact.h"
#include "reference/block_quant.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/gemm_oracle.h"
#include "reference/mx_quant.h"
#include "reference/npy.h"
#include "reference/quant_conventions.h"
#include "reference/scale_layout.h"
#include "reference/verdict.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/verbs.h"

namespace mxgate::cli {
namespace {

constexpr const char* kFp8FormatList = "e4m3fn e5m2 e4m3fnuz e5m2fnuz";

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

void no_positionals(const Args& a) {
  if (!a.positionals().empty()) {
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  }
}

// --format: an FP8 element format (e8m0 and the 16-bit formats carry no MX / block elements).
Format fp8_format(const Args& a, std::optional<Format> fallback) {
  const std::optional<std::string> text = a.get("format");
  if (!text) {
    if (fallback) return *fallback;
    throw UsageError("missing required option --format");
  }
  const std::optional<Format> f = parse_format(*text);
  if (!f || info(*f).bits != 8 || *f == Format::kE8M0) {
    throw UsageError("--format: '" + *text +
                     "' is not an FP8 element format (formats: " + kFp8FormatList + ")");
  }
  return *f;
}

const Convention& convention(const Args& a, const char* fallback) {
  const std::optional<std::string> text = a.get("convention");
  if (!text && !fallback) throw UsageError("missing required option --convention");
  const std::string name_text = text ? *text : std::string(fallback);
  const Convention* c = find_convention(name_text);
  if (!c) {
    throw UsageError("--convention: unknown convention '" + name_text +
                     "' (conventions: " + convention_names() + ")");
  }
  return *c;
}

// Element codes decode exactly, but only formats the convention defines are meaningful under it
// (as in `mxgate decode`).
void require_defines(const Convention& c, Format f) {
  if (!defines(c, f)) {
    throw UsageError("--format: convention '" + std::string(c.name) + "' does not define " +
                     std::string(info(f).name) + " (see `mxgate conventions`)");
  }
}

OutputFormat output_dtype(const Args& a) {
  const std::string d = a.get("dtype").value_or("float32");
  if (d == "float32") return OutputFormat::kFp32;
  if (d == "bf16") return OutputFormat::kBf16;
  throw UsageError("--dtype: '" + d + "' is not an output dtype (float32 or bf16)");
}

// NpyError (missing file, malformed header) as a usage error that names the option.
NpyArray read_input(const Args& a, const std::string& option) {
  const std::string path = a.require(option);
  try {
    return read_npy(path);
  } catch (const NpyError& e) {
    throw UsageError("--" + option + ": " + e.what());
  }
}

void expect(const NpyArray& array, const std::string& role, NpyDtype dtype,
            std::initializer_list<NpyDim> shape) {
  try {
    check_npy(array, role, dtype, shape);
  } catch (const NpyError& e) {
    throw UsageError(e.what());
  }
}

void require_nonempty(const NpyArray& array, const std::string& role, const char* dims) {
  if (array.size() == 0) {
    throw UsageError(role + ": " + dims + " must be positive, got shape " +
                     npy_shape_string(array.shape));
  }
}

// Fails before any work when the output cannot be written (missing directory), so that the
// second of two outputs does not fail after the first was written.
void check_output_path(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw UsageError("--" + option + ": directory '" + dir.string() + "' does not exist");
  }
  if (fs::is_directory(path, ec)) {
    throw UsageError("--" + option + ": '" + path + "' is a directory");
  }
}

void write_output(const std::string& option, const std::string& path, const NpyArray& array) {
  try {
    write_npy(path, array);
  } catch (const NpyError& e) {
    throw UsageError("--" + option + ": " + e.what());
  }
}

// Options that one scheme does not use are rejected rather than silently ignored.
void reject_options(const Args& a, std::initializer_list<const char*> options, const char* why) {
  for (const char* o : options) {
    if (a.get(o)) throw UsageError("--" + std::string(o) + " " + why);
  }
}

// "a, b, c": the conventions that have an MX (or block) quantizer.
std::string conventions_with_quantizer(bool mx) {
  std::string out;
  for (const Convention& c : all_conventions()) {
    const bool has =
        mx ? mx_policy(c).has_value() : block_policy(c, Format::kE4M3FN, false).has_value();
    if (has) out += (out.empty() ? "" : ", ") + std::string(c.name);
  }
  return out;
}

enum class QuantScheme { kMx, kAct1x128, kW128x128 };

QuantScheme quant_scheme(const Args& a) {
  const std::string s = a.require("scheme");
  if (s == "mx") return QuantScheme::kMx;
  if (s == "act1x128") return QuantScheme::kAct1x128;
  if (s == "w128x128") return QuantScheme::kW128x128;
  throw UsageError("--scheme: unknown scheme '" + s + "' (schemes: mx act1x128 w128x128)");
}

std::optional<ScaleLayout> scale_layout_option(const Args& a) {
  const std::optional<std::string> text = a.get("scale-layout");
  if (!text) return std::nullopt;
  const std::optional<ScaleLayout> l = parse_scale_layout(*text);
  if (!l) {
    std::string names;
    for (ScaleLayout x : all_scale_layouts()) {
      names += (names.empty() ? "" : " ") + std::string(to_string(x));
    }
    throw UsageError("--scale-layout: unknown scale layout '" + *text + "' (layouts: " + names +
                     ")");
  }
  return l;
}

// The scales as written: logical row-major (rows, cols), or the physical layout as 1-D storage
// with zero padding.
template <class T>
NpyArray scales_array(std::optional<ScaleLayout> layout, std::size_t rows, std::size_t cols,
                      const std::vector<T>& logical) {
  if (!layout) return NpyArray({rows, cols}, logical);
  std::vector<T> stored = pack_scales(*layout, rows, cols, std::span<const T>(logical), T(0));
  const std::size_t n = stored.size();
  return NpyArray({n}, stored);
}

}  // namespace

int cmd_quantize(const Argv& argv) {
  const Args a(argv, {"scheme", "format", "convention", "in", "out", "scale-layout"}, {"ue8m0"});
  no_positionals(a);
  const QuantScheme scheme = quant_scheme(a);
  const Format f = fp8_format(a, std::nullopt);
  const Convention& c = convention(a, nullptr);
  require_defines(c, f);
  const std::optional<ScaleLayout> layout = scale_layout_option(a);
  const bool ue8m0 = a.flag("ue8m0");
  if (ue8m0 && scheme == QuantScheme::kMx) {
    throw UsageError("--ue8m0 applies to --scheme act1x128 and w128x128 only (MX scales are e8m0)");
  }
  std::optional<MxPolicy> mx;
  std::optional<BlockPolicy> block;
  if (scheme == QuantScheme::kMx) {
    mx = mx_policy(c);
    if (!mx) {
      throw UsageError(
          "--convention: '" + std::string(c.name) +
          "' has no MX quantizer (conventions with one: " + conventions_with_quantizer(true) + ")");
    }
  } else {
    block = block_policy(c, f, ue8m0);
    if (!block) {
      throw UsageError("--convention: '" + std::string(c.name) +
                       "' has no block FP8 quantizer (conventions with one: " +
                       conventions_with_quantizer(false) + ")");
    }
  }
  const std::string prefix = a.require("out");
  const std::string data_path = prefix + ".data.npy";
  const std::string scales_path = prefix + ".scales.npy";
  check_output_path("out", data_path);

  const NpyArray in = read_input(a, "in");
  if (in.rank() != 2 || (in.dtype != NpyDtype::kFloat32 && in.dtype != NpyDtype::kFloat64)) {
    throw UsageError("--in: expected float32 or float64 (M, K), got " +
                     std::string(npy_dtype_name(in.dtype)) + " " + npy_shape_string(in.shape) +
                     (in.dtype == NpyDtype::kUint16 ? " (bf16 bits? convert them to float32 "
                                                      "first: that is exact)"
                                                    : ""));
  }
  require_nonempty(in, "--in", "M and K");
  const std::size_t m = in.shape[0], k = in.shape[1];
  std::vector<float> x;
  if (in.dtype == NpyDtype::kFloat32) {
    x = in.values<float>();
  } else {
    // float64 -> fp32: one round-to-nearest-even conversion (the default floating-point mode).
    for (double v : in.values<double>()) x.push_back(static_cast<float>(v));
  }

  NpyArray data, scales;
  if (mx) {
    const MxQuantized q = quantize_mx(x, m, k, f, *mx);
    data = NpyArray({m, k}, q.data);
    scales = scales_array(layout, m, q.scale_cols(), q.scales);
  } else {
    const std::size_t block_rows = scheme == QuantScheme::kW128x128 ? kBlockK : 1;
    const BlockQuantized q = quantize_block(x, m, k, block_rows, kBlockK, f, *block);
    data = NpyArray({m, k}, q.data);
    scales = scales_array(layout, q.scale_rows(), q.scale_cols(), q.scales);
  }
  write_output("out", data_path, data);
  try {
    write_output("out", scales_path, scales);
  } catch (const UsageError&) {
    std::error_code ignored;  // no data file without its scales
    std::filesystem::remove(data_path, ignored);
    throw;
  }
  return 0;
}

int cmd_dequantize(const Argv& argv) {
  const Args a(argv, {"scheme", "format", "convention", "data", "scales", "out", "dtype"});
  no_positionals(a);
  const QuantScheme scheme = quant_scheme(a);
  const Format f = fp8_format(a, std::nullopt);
  const Convention& c = convention(a, nullptr);
  require_defines(c, f);
  const OutputFormat dtype = output_dtype(a);
  const std::string out = a.require("out");
  a.require("data");
  a.require("scales");
  check_output_path("out", out);

  const NpyArray data = read_input(a, "data");
  expect(data, "--data", NpyDtype::kUint8, {"M", "K"});
  require_nonempty(data, "--data", "M and K");
  const std::size_t m = data.shape[0], k = data.shape[1];
  const NpyArray scales = read_input(a, "scales");
  std::vector<float> fp32;
  std::vector<uint16_t> bf16;
  if (scheme == QuantScheme::kMx) {
    expect(scales, "--scales", NpyDtype::kUint8,
           {NpyDim("M", m), NpyDim("ceil(K/32)", ceil_div(k, kMxBlock))});
    MxQuantized q;
    q.rows = m;
    q.cols = k;
    q.element = f;
    q.data = data.values<uint8_t>();
    q.scales = scales.values<uint8_t>();
    if (dtype == OutputFormat::kFp32) {
      fp32 = dequantize_mx(q, c.e8m0_decode);
    } else {
      bf16 = dequantize_mx_bf16(q, c.e8m0_decode);
    }
  } else {
    const std::size_t block_rows = scheme == QuantScheme::kW128x128 ? kBlockK : 1;
    if (block_rows == 1) {
      expect(scales, "--scales", NpyDtype::kFloat32,
             {NpyDim("M", m), NpyDim("ceil(K/128)", ceil_div(k, kBlockK))});
    } else {
      expect(scales, "--scales", NpyDtype::kFloat32,
             {NpyDim("ceil(M/128)", ceil_div(m, kBlockK)),
              NpyDim("ceil(K/128)", ceil_div(k, kBlockK))});
    }
    BlockQuantized q;
    q.rows = m;
    q.cols = k;
    q.block_rows = block_rows;
    q.block_cols = kBlockK;
    q.element = f;
    q.data = data.values<uint8_t>();
    q.scales = scales.values<float>();
    if (dtype == OutputFormat::kFp32) {
      fp32 = dequantize_block(q);
    } else {
      bf16 = dequantize_block_bf16(q);
    }
  }
  write_output("out", out,
               dtype == OutputFormat::kFp32 ? NpyArray({m, k}, fp32) : NpyArray({m, k}, bf16));
  return 0;
}

namespace {

const std::set<std::string> kGemmOptions = {"scheme", "a",     "a-scales", "b",         "b-scales",
                                            "out",    "dtype", "format",   "convention"};

// The decoded problem of `gemm` and `check-gemm`, from --scheme, --a, --a-scales, --b, --b-scales,
// --format and --convention; every dtype and shape checked against A's (M, K).
GemmProblem load_gemm_problem(const Args& a, std::string* what) {
  const std::string scheme = a.require("scheme");
  if (scheme != "mx" && scheme != "block" && scheme != "bf16") {
    throw UsageError("--scheme: unknown scheme '" + scheme + "' (schemes: mx block bf16)");
  }
  const bool bf16 = scheme == "bf16";
  std::optional<Format> f;
  const Convention* c = nullptr;
  if (bf16) {
    reject_options(a, {"a-scales", "b-scales", "format", "convention"},
                   "is not used by --scheme bf16 (bf16 operands carry no scales)");
  } else {
    f = fp8_format(a, Format::kE4M3FN);
    a.require("a-scales");
    a.require("b-scales");
    if (scheme == "mx") {
      c = &convention(a, "ocp_mx");
      require_defines(*c, *f);
    } else {
      reject_options(a, {"convention"},
                     "is not used by --scheme block (its fp32 scales are used as stored)");
    }
  }
  a.require("a");
  a.require("b");

  const NpyDtype value_dtype = bf16 ? NpyDtype::kUint16 : NpyDtype::kUint8;
  const NpyArray an = read_input(a, "a");
  expect(an, "--a", value_dtype, {"M", "K"});
  require_nonempty(an, "--a", "M and K");
  const std::size_t m = an.shape[0], k = an.shape[1];
  const NpyArray bn = read_input(a, "b");
  expect(bn, "--b", value_dtype, {"N", "K"});
  if (bn.shape[1] != k) {
    throw UsageError("--b: K mismatch: B is (N, K) = " + npy_shape_string(bn.shape) +
                     " but --a has K=" + std::to_string(k) + " (C = A * B^T needs the same K)");
  }
  require_nonempty(bn, "--b", "N and K");
  const std::size_t n = bn.shape[0];
  if (what) {
    *what =
        scheme + " M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k);
  }

  if (bf16) {
    return bf16_gemm_problem(an.values<uint16_t>(), bn.values<uint16_t>(), m, n, k);
  }
  const NpyArray as = read_input(a, "a-scales");
  const NpyArray bs = read_input(a, "b-scales");
  if (scheme == "mx") {
    const std::size_t kb = ceil_div(k, kMxBlock);
    expect(as, "--a-scales", NpyDtype::kUint8, {NpyDim("M", m), NpyDim("ceil(K/32)", kb)});
    expect(bs, "--b-scales", NpyDtype::kUint8, {NpyDim("N", n), NpyDim("ceil(K/32)", kb)});
    MxQuantized qa, qb;
    qa.rows = m;
    qb.rows = n;
    qa.cols = qb.cols = k;
    qa.element = qb.element = *f;
    qa.data = an.values<uint8_t>();
    qb.data = bn.values<uint8_t>();
    qa.scales = as.values<uint8_t>();
    qb.scales = bs.values<uint8_t>();
    return mx_gemm_problem(qa, qb, c->e8m0_decode);
  }
  const std::size_t kb = ceil_div(k, kBlockK);
  expect(as, "--a-scales", NpyDtype::kFloat32, {NpyDim("M", m), NpyDim("ceil(K/128)", kb)});
  expect(bs, "--b-scales", NpyDtype::kFloat32,
         {NpyDim("ceil(N/128)", ceil_div(n, kBlockK)), NpyDim("ceil(K/128)", kb)});
  BlockQuantized qa, qb;
  qa.rows = m;
  qb.rows = n;
  qa.cols = qb.cols = k;
  qa.block_rows = 1;
  qb.block_rows = kBlockK;
  qa.block_cols = qb.block_cols = kBlockK;
  qa.element = qb.element = *f;
  qa.data = an.values<uint8_t>();
  qb.data = bn.values<uint8_t>();
  qa.scales = as.values<float>();
  qb.scales = bs.values<float>();
  return block_gemm_problem(qa, qb);
}

}  // namespace

int cmd_gemm(const Argv& argv) {
  const Args a(argv, kGemmOptions);
  no_positionals(a);
  const OutputFormat dtype = output_dtype(a);
  const std::string out = a.require("out");
  check_output_path("out", out);
  const GemmProblem problem = load_gemm_problem(a, nullptr);
  const GemmOutput c = exact_gemm(problem, dtype);
  write_output("out", out,
               dtype == OutputFormat::kFp32 ? NpyArray({c.rows, c.cols}, c.fp32)
                                            : NpyArray({c.rows, c.cols}, c.bf16));
  return 0;
}

int cmd_check_gemm(const Argv& argv) {
  std::set<std::string> options = kGemmOptions;
  options.erase("out");
  options.insert({"c", "mode", "acc-bits", "block-k", "accumulator"});
  const Args a(argv, options);
  no_positionals(a);
  const std::string mode = a.get("mode").value_or("exact");
  if (mode != "exact" && mode != "bound") {
    throw UsageError("--mode: unknown mode '" + mode + "' (modes: exact bound)");
  }
  if (mode == "exact") {
    reject_options(a, {"acc-bits", "block-k"}, "applies to --mode bound only");
  }
  const int acc_bits = static_cast<int>(a.integer("acc-bits", 24, 8, 24));
  const std::size_t block_k = static_cast<std::size_t>(a.integer("block-k", 128, 0, 1LL << 40));
  std::optional<AccumulatorModel>
      named;  // --accumulator: a registered model (docs/accumulators.md)
  if (const std::optional<std::string> spec = a.get("accumulator")) {
    reject_options(a, {"acc-bits", "block-k"},
                   "and --accumulator both choose the accumulator model: give one");
    try {
      named = parse_accumulator_spec(*spec);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--accumulator: ") + e.what());
    }
  }
  a.require("c");

  std::string what;
  const GemmProblem problem = load_gemm_problem(a, &what);
  const NpyArray cn = read_input(a, "c");
  if (cn.dtype != NpyDtype::kFloat32 && cn.dtype != NpyDtype::kUint16) {
    throw UsageError("--c: expected float32 or uint16 (bf16 bits) (M=" + std::to_string(problem.m) +
                     ", N=" + std::to_string(problem.n) + "), got " +
                     std::string(npy_dtype_name(cn.dtype)) + " " + npy_shape_string(cn.shape));
  }
  expect(cn, "--c", cn.dtype, {NpyDim("M", problem.m), NpyDim("N", problem.n)});
  const OutputFormat format =
      cn.dtype == NpyDtype::kFloat32 ? OutputFormat::kFp32 : OutputFormat::kBf16;
  if (a.get("dtype") && output_dtype(a) != format) {
    throw UsageError("--dtype " + *a.get("dtype") + " does not match --c, which is " +
                     std::string(npy_dtype_name(cn.dtype)) +
                     " (the dtype is taken from C: float32, or uint16 for bf16 bits)");
  }
  GemmOutput actual;
  actual.rows = problem.m;
  actual.cols = problem.n;
  actual.format = format;
  if (format == OutputFormat::kFp32) {
    actual.fp32 = cn.values<float>();
  } else {
    actual.bf16 = cn.values<uint16_t>();
  }

  const char* format_name = format == OutputFormat::kFp32 ? "fp32" : "bf16";
  bool ok = false;
  std::string summary;
  if (mode == "exact") {
    const GemmOutput expected = exact_gemm(problem, format);
    const BitExactVerdict v = format == OutputFormat::kFp32
                                  ? compare_fp32(problem.m, problem.n, expected.fp32, actual.fp32)
                                  : compare_bf16(problem.m, problem.n, expected.bf16, actual.bf16);
    ok = v.ok();
    summary = v.summary();
    std::printf("check-gemm %s, %s output, exact mode (correctly rounded)\n", what.c_str(),
                format_name);
    if (named) {
      // Whether a correct kernel with this accumulator is bound to equal the oracle on these
      // operands (docs/accumulators.md §6); the verdict itself is the comparison above.
      std::string why, answer;
      // The condition is checked term by term on one core: O(M N K).
      constexpr double kMaxTerms = 0x1p28;
      const double terms = static_cast<double>(problem.m) * static_cast<double>(problem.n) *
                           static_cast<double>(problem.k);
      if (terms > kMaxTerms) {
        answer = "not checked (M*N*K above 2^28 terms)";
      } else {
        try {
          answer = is_exact_mode(problem, *named, &why)
                       ? "yes (every summation order it allows is exact)"
                       : "no (" + why +
                             "): a correct kernel may differ from the correctly rounded result; "
                             "use --mode bound";
        } catch (const std::invalid_argument& e) {
          answer = std::string("not modelled (") + e.what() + ")";
        }
      }
      std::printf("operands exact in accumulator %s: %s\n", named->name.c_str(), answer.c_str());
    }
  } else {
    // The manual form: a float accumulator of --acc-bits bits (2^-126 * u near underflow: half
    // the fp32 subnormal spacing for u = 2^-24 (RN), the whole spacing for u = 2^-23 (directed)).
    const AccumulatorModel model = named ? *named : manual_float_accumulator(acc_bits, block_k);
    const BoundVerdict v = check_bound(compute_bounds(problem, model, format), actual);
    ok = v.ok();
    summary = v.summary();
    if (named) {
      std::printf("check-gemm %s, %s output, bound mode (accumulator %s)\n", what.c_str(),
                  format_name, named->name.c_str());
    } else {
      std::printf("check-gemm %s, %s output, bound mode (acc-bits %d, block-k %zu)\n", what.c_str(),
                  format_name, acc_bits, block_k);
    }
  }
  std::printf("%s\n%s\n", summary.c_str(), ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

}  // namespace mxgate::cli
