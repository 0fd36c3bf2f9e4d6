// The verbs gemm and check-gemm (verbs/tensor_ops.h): the exact oracle C = A * B^T of the
// reference on MX, NVFP4, block FP8 and bf16 operands in memory, and a kernel's C checked against
// it bit for bit or within an accumulator model's bound, with the CLI's option checks and error
// texts. The located elements and the exactness line are check_gemm_verdict.h.
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/blocks.h"
#include "reference/accumulator_bounds.h"
#include "reference/dequant.h"
#include "reference/fp4_pack.h"
#include "report/heatmap.h"
#include "verbs/accumulator_ops.h"
#include "verbs/check_gemm_verdict.h"
#include "verbs/grouped_gemm_ops.h"
#include "verbs/tensor_arrays.h"
#include "verbs/tensor_ops.h"
#include "verbs/tensor_options.h"

namespace mxgate::verbs {
namespace {

// --a-block / --b-block: "RxC", each a count (0: the whole dimension).
std::pair<std::size_t, std::size_t> block_option(const Args& a, const std::string& name,
                                                 std::pair<std::size_t, std::size_t> fallback) {
  const std::optional<std::string> text = a.get(name);
  if (!text) return fallback;
  const std::size_t x = text->find('x');
  auto number = [&](const std::string& part) {
    if (part.empty() || part.size() > 9 ||
        part.find_first_not_of("0123456789") != std::string::npos) {
      throw UsageError("--" + name + ": '" + *text +
                       "' is not ROWSxCOLS (counts; 0: the whole dimension, e.g. 1x128, 1x0, 0x0)");
    }
    return static_cast<std::size_t>(std::stoul(part));
  };
  if (x == std::string::npos) number("");
  return {number(text->substr(0, x)), number(text->substr(x + 1))};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

// ---- gemm ---------------------------------------------------------------------------------------

const std::set<std::string>& gemm_options() {
  static const std::set<std::string> options = {
      "scheme",   "a",          "a-scales", "b",        "b-scales", "dtype",   "format", "a-format",
      "b-format", "convention", "k",        "a-global", "b-global", "a-block", "b-block"};
  return options;
}

GemmSpec gemm_spec(const Args& a) {
  GemmSpec spec;
  spec.scheme = a.require("scheme");
  const std::string& scheme = spec.scheme;
  const bool mx_family = scheme == "mx" || scheme == "mxfp4" || scheme == "mxfp6";
  if (!mx_family && scheme != "nvfp4" && scheme != "block" && scheme != "bf16") {
    throw UsageError("--scheme: unknown scheme '" + scheme +
                     "' (schemes: mx mxfp4 mxfp6 nvfp4 block bf16)");
  }
  if (scheme != "nvfp4") {
    reject_options(a, {"a-global", "b-global"}, "applies to --scheme nvfp4 only");
  }
  if (!mx_family) reject_options(a, {"a-format", "b-format"}, "applies to the MX schemes only");
  if (scheme != "block") {
    reject_options(a, {"a-block", "b-block"}, "applies to --scheme block only");
  } else {
    std::tie(spec.a_block_rows, spec.a_block_cols) = block_option(a, "a-block", {1, kBlockK});
    std::tie(spec.b_block_rows, spec.b_block_cols) = block_option(a, "b-block", {kBlockK, kBlockK});
  }
  if (scheme == "bf16") {
    reject_options(a, {"a-scales", "b-scales", "format", "convention", "k"},
                   "is not used by --scheme bf16 (bf16 operands carry no scales)");
  } else {
    a.require("a-scales");
    a.require("b-scales");
    if (mx_family || scheme == "nvfp4") {
      std::tie(spec.a_format, spec.b_format) = operand_formats(a, scheme);
      spec.convention = &convention(a, scheme == "nvfp4" ? "te_nvfp4_ref" : "ocp_mx");
      require_defines(*spec.convention, spec.a_format);
      require_defines(*spec.convention, spec.b_format);
    } else {
      spec.a_format = spec.b_format = fp8_format(a, Format::kE4M3FN);
      reject_options(a, {"convention", "k"},
                     "is not used by --scheme block (its fp32 scales are used as stored)");
    }
    if (spec.a_format != Format::kE2M1 && spec.b_format != Format::kE2M1) {
      reject_options(a, {"k"}, "applies to packed e2m1 operands only");
    }
    spec.k = k_option(a);
  }
  if (scheme == "nvfp4") {
    a.require("a-global");
    a.require("b-global");
  }
  a.require("a");
  a.require("b");
  return spec;
}

LoadedGemm load_gemm(const GemmSpec& spec, const ArrayReader& read) {
  const bool bf16 = spec.scheme == "bf16";
  const Format fa = spec.a_format, fb = spec.b_format;
  const bool a_packed = !bf16 && fa == Format::kE2M1, b_packed = !bf16 && fb == Format::kE2M1;
  const NpyDtype value_dtype = bf16 ? NpyDtype::kUint16 : NpyDtype::kUint8;
  const NpyArray an = read("a");
  expect(an, "--a", value_dtype, {"M", "K"});
  require_nonempty(an, "--a", "M and K");
  const NpyArray bn = read("b");
  expect(bn, "--b", value_dtype, {"N", "K"});
  require_nonempty(bn, "--b", "N and K");
  const std::size_t m = an.shape[0], n = bn.shape[0];
  // K from the first operand that is not packed E2M1, else from --k / twice the packed columns.
  const std::size_t k = !a_packed   ? an.shape[1]
                        : !b_packed ? bn.shape[1]
                                    : operand_k(spec.k, an, Format::kE2M1);
  if (spec.k && (!a_packed || !b_packed) && *spec.k != k) {  // --k may not contradict that K
    throw UsageError("--k " + std::to_string(*spec.k) + " disagrees with K=" + std::to_string(k) +
                     " of " + (a_packed ? "--b" : "--a") + ", the operand that is not packed");
  }
  if (!a_packed && !b_packed && bn.shape[1] != k) {
    throw UsageError("--b: K mismatch: B is (N, K) = " + npy_shape_string(bn.shape) +
                     " but --a has K=" + std::to_string(k) + " (C = A * B^T needs the same K)");
  }
  LoadedGemm loaded;
  loaded.what = spec.scheme + " M=" + std::to_string(m) + " N=" + std::to_string(n) +
                " K=" + std::to_string(k);
  if (bf16) {
    loaded.problem = bf16_gemm_problem(an.values<uint16_t>(), bn.values<uint16_t>(), m, n, k);
    return loaded;
  }
  const std::vector<uint8_t> ca = read_codes(an, "--a", fa, m, k);
  const std::vector<uint8_t> cb = read_codes(bn, "--b", fb, n, k);
  const NpyArray as = read("a-scales");
  const NpyArray bs = read("b-scales");
  if (spec.scheme == "nvfp4") {
    const std::size_t kb = ceil_div(k, kNvfp4Block);
    expect(as, "--a-scales", NpyDtype::kUint8, {NpyDim("M", m), NpyDim("ceil(K/16)", kb)});
    expect(bs, "--b-scales", NpyDtype::kUint8, {NpyDim("N", n), NpyDim("ceil(K/16)", kb)});
    GemmProblem& p = loaded.problem;
    p.m = m;
    p.n = n;
    p.k = k;
    p.blocks = {1, kNvfp4Block, 1, kNvfp4Block};
    for (uint8_t v : ca) p.a.push_back(decode(Format::kE2M1, v));
    for (uint8_t v : cb) p.b.push_back(decode(Format::kE2M1, v));
    for (uint8_t v : as.values<uint8_t>()) p.a_scale.push_back(nvfp4_scale_value(v, false));
    for (uint8_t v : bs.values<uint8_t>()) p.b_scale.push_back(nvfp4_scale_value(v, false));
    // The kernels' alpha: the product of both global decode scales, rounded to fp32.
    p.alpha = scalar_input(read, "a-global") * scalar_input(read, "b-global");
    validate_gemm_problem(p);
    return loaded;
  }
  if (spec.scheme != "block") {
    const std::size_t kb = ceil_div(k, kMxBlock);
    expect(as, "--a-scales", NpyDtype::kUint8, {NpyDim("M", m), NpyDim("ceil(K/32)", kb)});
    expect(bs, "--b-scales", NpyDtype::kUint8, {NpyDim("N", n), NpyDim("ceil(K/32)", kb)});
    const MxQuantized qa{m, k, fa, ca, as.values<uint8_t>()};
    const MxQuantized qb{n, k, fb, cb, bs.values<uint8_t>()};
    loaded.problem = mx_gemm_problem(qa, qb, spec.convention->e8m0_decode);
    return loaded;
  }
  // A block of 0 is the whole dimension; the scale grid's dimensions are named by the block.
  auto whole = [](std::size_t b, std::size_t dim) { return b == 0 ? dim : b; };
  const std::size_t ar = whole(spec.a_block_rows, m), ac = whole(spec.a_block_cols, k);
  const std::size_t br = whole(spec.b_block_rows, n), bc = whole(spec.b_block_cols, k);
  // The grid's dimension as the messages name it: M, ceil(K/128), 1 (a block of 0).
  auto grid = [](const char* dim, std::size_t block) {
    return block == 0   ? std::string("1")
           : block == 1 ? std::string(dim)
                        : "ceil(" + std::string(dim) + "/" + std::to_string(block) + ")";
  };
  const std::string am = grid("M", spec.a_block_rows), ak = grid("K", spec.a_block_cols);
  const std::string bn_ = grid("N", spec.b_block_rows), bk = grid("K", spec.b_block_cols);
  expect(as, "--a-scales", NpyDtype::kFloat32,
         {NpyDim(am.c_str(), ceil_div(m, ar)), NpyDim(ak.c_str(), ceil_div(k, ac))});
  expect(bs, "--b-scales", NpyDtype::kFloat32,
         {NpyDim(bn_.c_str(), ceil_div(n, br)), NpyDim(bk.c_str(), ceil_div(k, bc))});
  const BlockQuantized qa{m, k, ar, ac, fa, ca, as.values<float>()};
  const BlockQuantized qb{n, k, br, bc, fa, cb, bs.values<float>()};
  loaded.problem = block_gemm_problem(qa, qb);
  return loaded;
}

NpyArray exact_gemm_array(const GemmProblem& problem, OutputFormat dtype) {
  const GemmOutput c = exact_gemm(problem, dtype);
  return dtype == OutputFormat::kFp32 ? NpyArray({c.rows, c.cols}, c.fp32)
                                      : NpyArray({c.rows, c.cols}, c.bf16);
}

// ---- check-gemm ---------------------------------------------------------------------------------

const std::set<std::string>& check_gemm_options() {
  static const std::set<std::string> options = [] {
    std::set<std::string> o = gemm_options();
    o.insert({"c", "mode", "acc-bits", "block-k", "accumulator", "heatmap", "offsets",
              "offsets-kind", "offsets-alignment", "masked-counts", "c-before"});
    return o;
  }();
  return options;
}

CheckGemmSpec check_gemm_spec(const Args& a) {
  CheckGemmSpec spec;
  const std::string mode = a.get("mode").value_or("exact");
  if (mode != "exact" && mode != "bound") {
    throw UsageError("--mode: unknown mode '" + mode + "' (modes: exact bound)");
  }
  spec.mode = mode == "exact" ? CheckMode::kExact : CheckMode::kBound;
  if (spec.mode == CheckMode::kExact) {
    reject_options(a, {"acc-bits", "block-k"}, "applies to --mode bound only");
  }
  if (const std::optional<std::string> text = a.get("accumulator")) {
    reject_options(a, {"acc-bits", "block-k"},
                   "and --accumulator both choose the accumulator model: give one");
    spec.accumulator = accumulator_spec("accumulator", *text);
  } else {
    spec.acc_bits = static_cast<int>(a.integer("acc-bits", 24, 8, 24));
    spec.block_k = static_cast<std::size_t>(a.integer("block-k", 128, 0, 1LL << 40));
  }
  if (const std::optional<std::string> heatmap = a.get("heatmap")) {
    if (!ends_with(*heatmap, ".svg") && !ends_with(*heatmap, ".png")) {
      throw UsageError("--heatmap: '" + *heatmap + "' must end in .svg or .png");
    }
    check_output_path("heatmap", *heatmap);
    spec.heatmap = heatmap;
  }
  a.require("c");
  spec.grouped = grouped_check_spec(a);
  if (spec.grouped && spec.heatmap) {
    throw UsageError("--heatmap: not supported for grouped dumps (--offsets, --masked-counts)");
  }
  spec.gemm = gemm_spec(a);
  if (a.get("dtype")) {
    output_dtype(a);  // a bad name fails here, a mismatch with C once C is read
    spec.dtype = a.get("dtype");
  }
  return spec;
}

CheckGemmResult check_gemm(const CheckGemmSpec& spec, const ArrayReader& read) {
  if (spec.grouped) return check_grouped_gemm(spec, read);
  const LoadedGemm loaded = load_gemm(spec.gemm, read);
  const GemmProblem& problem = loaded.problem;
  const NpyArray cn = read("c");
  if (cn.dtype != NpyDtype::kFloat32 && cn.dtype != NpyDtype::kUint16) {
    throw UsageError("--c: expected float32 or uint16 (bf16 bits) (M=" + std::to_string(problem.m) +
                     ", N=" + std::to_string(problem.n) + "), got " +
                     std::string(npy_dtype_name(cn.dtype)) + " " + npy_shape_string(cn.shape));
  }
  expect(cn, "--c", cn.dtype, {NpyDim("M", problem.m), NpyDim("N", problem.n)});
  const OutputFormat format =
      cn.dtype == NpyDtype::kFloat32 ? OutputFormat::kFp32 : OutputFormat::kBf16;
  if (spec.dtype && (*spec.dtype == "float32") != (format == OutputFormat::kFp32)) {
    throw UsageError("--dtype " + *spec.dtype + " does not match --c, which is " +
                     std::string(npy_dtype_name(cn.dtype)) +
                     " (the dtype is taken from C: float32, or uint16 for bf16 bits)");
  }
  CheckGemmResult r;
  r.mode = spec.mode;
  r.output = format;
  r.rows = problem.m;
  r.cols = problem.n;
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
  std::string header, summary, exactness;
  report::HeatmapGrid grid;
  if (spec.mode == CheckMode::kExact) {
    const GemmOutput expected = exact_gemm(problem, format);
    const BitExactVerdict v = format == OutputFormat::kFp32
                                  ? compare_fp32(problem.m, problem.n, expected.fp32, actual.fp32)
                                  : compare_bf16(problem.m, problem.n, expected.bf16, actual.bf16);
    r.mismatches = v.mismatches;
    if (v.first) r.first = located_bits(*v.first, format);
    if (v.worst) r.worst = located_bits(*v.worst, format);
    summary = v.summary();
    header = "check-gemm " + loaded.what + ", " + format_name +
             " output, exact mode (correctly rounded)";
    if (spec.accumulator) exactness = exactness_line(problem, *spec.accumulator);
    if (spec.heatmap) {
      grid = format == OutputFormat::kFp32
                 ? report::heatmap_from_fp32(problem.m, problem.n, expected.fp32, actual.fp32)
                 : report::heatmap_from_bf16(problem.m, problem.n, expected.bf16, actual.bf16);
    }
  } else {
    // The manual form is a float model of --acc-bits bits: 2^-126 * u near underflow, half the
    // fp32 subnormal spacing for u = 2^-24 (RN), the whole spacing for u = 2^-23 (directed).
    const AccumulatorModel model = spec.accumulator
                                       ? *spec.accumulator
                                       : manual_float_accumulator(spec.acc_bits, spec.block_k);
    BoundVerdict v;
    try {
      v = check_bound(compute_bounds(problem, model, format), actual);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());  // e.g. a chunk of the model crossing the operands' scale blocks
    }
    r.mismatches = v.outside;
    if (!v.ok()) {
      const GemmOutput rounded = exact_gemm(problem, format);
      r.first = located_bound(v.violations.front(), rounded, actual);
      r.worst = located_bound(*v.worst, rounded, actual);
    }
    summary = v.summary();
    const std::string model_text = spec.accumulator
                                       ? "accumulator " + spec.accumulator->name
                                       : "acc-bits " + std::to_string(spec.acc_bits) +
                                             ", block-k " + std::to_string(spec.block_k);
    header = "check-gemm " + loaded.what + ", " + format_name + " output, bound mode (" +
             model_text + ")";
    if (spec.heatmap) grid = report::heatmap_from_bound(v);
  }
  r.text = header + "\n" + exactness + summary + "\n" + (r.ok() ? "PASS" : "FAIL") + "\n";
  if (spec.heatmap) {
    report::HeatmapOptions options;
    options.title = header;
    if (ends_with(*spec.heatmap, ".svg")) {
      report::write_heatmap_svg_file(grid, options, *spec.heatmap);
    } else {
      report::write_heatmap_png_file(grid, options, *spec.heatmap);
    }
  }
  return r;
}

}  // namespace mxgate::verbs
