#include "verbs/tensor_ops.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <span>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "common/blocks.h"
#include "reference/accumulator_bounds.h"
#include "reference/accumulator_exact.h"
#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/fp4_pack.h"
#include "reference/fp_encode.h"
#include "reference/quant_conventions.h"
#include "report/heatmap.h"
#include "verbs/accumulator_ops.h"

namespace mxgate::verbs {
namespace {

constexpr const char* kFp8FormatList = "e4m3fn e5m2 e4m3fnuz e5m2fnuz";
constexpr const char* kMxFormatList = "e4m3fn e5m2 e4m3fnuz e5m2fnuz e2m3 e3m2 e2m1";

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

// An MX element format (FP8, FP6 or FP4) from `option`, or `fallback`.
Format mx_format(const Args& a, const char* option, std::optional<Format> fallback) {
  const std::optional<std::string> text = a.get(option);
  if (!text) {
    if (fallback) return *fallback;
    throw UsageError("missing required option --" + std::string(option));
  }
  const std::optional<Format> f = parse_format(*text);
  if (!f || *f == Format::kE8M0 || (info(*f).bits != 8 && !has_no_specials(*f))) {
    throw UsageError("--" + std::string(option) + ": '" + *text +
                     "' is not an FP8 element format, nor FP6 / FP4 (formats: " + kMxFormatList +
                     ")");
  }
  return *f;
}

// --k: the codes per row of packed E2M1 operands (range-checked here, matched to the arrays when
// they are read).
std::optional<std::size_t> k_option(const Args& a) {
  if (!a.get("k")) return std::nullopt;
  return static_cast<std::size_t>(a.integer("k", 0, 1, 1LL << 40));
}

// K of an operand array: its columns, or for packed E2M1 `k` (default twice the columns).
std::size_t operand_k(std::optional<std::size_t> k_given, const NpyArray& array, Format f) {
  if (f != Format::kE2M1) return array.shape[1];
  const std::size_t k = k_given.value_or(2 * array.shape[1]);
  if (packed_fp4_cols(k) != array.shape[1]) {
    throw UsageError("--k " + std::to_string(k) + " needs " + std::to_string(packed_fp4_cols(k)) +
                     " packed e2m1 columns, the array has " + std::to_string(array.shape[1]));
  }
  return k;
}

// The codes of an operand, one per byte: E2M1 arrays are (rows, ceil(K/2)) packed, element 2i in
// the low nibble (an odd K leaves a padding nibble); the others (rows, K).
std::vector<uint8_t> read_codes(const NpyArray& array, const std::string& role, Format f,
                                std::size_t rows, std::size_t k) {
  if (f != Format::kE2M1) {
    expect(array, role, NpyDtype::kUint8, {NpyDim("rows", rows), NpyDim("K", k)});
    return array.values<uint8_t>();
  }
  expect(array, role, NpyDtype::kUint8,
         {NpyDim("rows", rows), NpyDim("ceil(K/2) (packed e2m1)", packed_fp4_cols(k))});
  return unpack_fp4(array.values<uint8_t>(), rows, k, NibbleOrder::kLowFirst);
}

// The codes as returned: E2M1 packed, two per byte, low nibble first; the others one per byte.
NpyArray codes_array(Format f, std::size_t m, std::size_t k, const std::vector<uint8_t>& codes) {
  if (f != Format::kE2M1) return NpyArray({m, k}, codes);
  return NpyArray({m, packed_fp4_cols(k)}, pack_fp4(codes, m, k, NibbleOrder::kLowFirst));
}

// A float32 (1,) input: a global scale of NVFP4.
float scalar_input(const ArrayReader& read, const std::string& option) {
  const NpyArray g = read(option);
  expect(g, "--" + option, NpyDtype::kFloat32, {NpyDim(1)});
  return g.values<float>()[0];
}

// Options that one scheme does not use are rejected rather than silently ignored.
void reject_options(const Args& a, std::initializer_list<const char*> options, const char* why) {
  for (const char* o : options) {
    if (a.get(o)) throw UsageError("--" + std::string(o) + " " + why);
  }
}

// "a, b, c": the conventions that have an MX quantizer for `element` (or a block quantizer).
std::string conventions_with_quantizer(bool mx, Format element = Format::kE4M3FN) {
  std::string out;
  for (const Convention& c : all_conventions()) {
    const bool has = mx ? (defines(c, element) && mx_policy(c, element).has_value())
                        : block_policy(c, Format::kE4M3FN, false).has_value();
    if (has) out += (out.empty() ? "" : ", ") + std::string(c.name);
  }
  return out;
}

// mxfp4 and nvfp4 imply e2m1 elements (`implied`); mxfp6 leaves e2m3 / e3m2 to --format.
QuantScheme quant_scheme(const Args& a, std::optional<Format>* implied) {
  const std::string s = a.require("scheme");
  if (s == "mx") return QuantScheme::kMx;
  if (s == "mxfp4") {
    *implied = Format::kE2M1;
    return QuantScheme::kMx;
  }
  if (s == "mxfp6") return QuantScheme::kMx;
  if (s == "nvfp4") {
    *implied = Format::kE2M1;
    return QuantScheme::kNvfp4;
  }
  if (s == "act1x128") return QuantScheme::kAct1x128;
  if (s == "w128x128") return QuantScheme::kW128x128;
  throw UsageError("--scheme: unknown scheme '" + s +
                   "' (schemes: mx mxfp4 mxfp6 nvfp4 act1x128 w128x128)");
}

// The element format of a quantize / dequantize scheme, checked against the scheme.
Format scheme_format(const Args& a, QuantScheme scheme, std::optional<Format> implied) {
  const std::string s = a.require("scheme");
  if (scheme == QuantScheme::kAct1x128 || scheme == QuantScheme::kW128x128) {
    return fp8_format(a, std::nullopt);
  }
  const Format f = mx_format(a, "format", implied);
  if (implied && f != *implied) {
    throw UsageError("--format " + std::string(info(f).name) + " does not fit --scheme " + s +
                     " (its elements are " + std::string(info(*implied).name) + ")");
  }
  if (s == "mxfp6" && f != Format::kE2M3 && f != Format::kE3M2) {
    throw UsageError("--scheme mxfp6 needs --format e2m3 or e3m2");
  }
  return f;
}

std::string conventions_with_nvfp4() {
  std::string out;
  for (const Convention& c : all_conventions()) {
    if (nvfp4_policy(c)) out += (out.empty() ? "" : ", ") + std::string(c.name);
  }
  return out;
}

// The NVFP4 recipe of the convention with --tile and --pow2-scales applied.
NvFp4Policy nvfp4_recipe(const Args& a, const Convention& c) {
  std::optional<NvFp4Policy> p = nvfp4_policy(c);
  if (!p) {
    throw UsageError("--convention: '" + std::string(c.name) +
                     "' has no NVFP4 quantizer (conventions with one: " + conventions_with_nvfp4() +
                     ")");
  }
  const std::string tile = a.get("tile").value_or("1x16");
  if (tile != "1x16" && tile != "16x16") {
    throw UsageError("--tile: '" + tile + "' is not an NVFP4 tile (1x16 or 16x16)");
  }
  p->tile_16x16 = tile == "16x16";
  p->pow2_scales = a.flag("pow2-scales");
  return *p;
}

// The MX element formats of A and B: --a-format / --b-format, else --format, else the scheme's.
std::pair<Format, Format> operand_formats(const Args& a, const std::string& scheme) {
  std::optional<Format> fallback = Format::kE4M3FN;
  if (scheme == "mxfp4" || scheme == "nvfp4") fallback = Format::kE2M1;
  if (scheme == "mxfp6") fallback = std::nullopt;
  if (scheme == "nvfp4") {
    reject_options(a, {"format", "a-format", "b-format"}, "is not used by --scheme nvfp4 (e2m1)");
    return {Format::kE2M1, Format::kE2M1};
  }
  // --format is the default of both operands: not needed when each has its own (mxfp6 has none).
  std::optional<Format> both = fallback;
  if (a.get("format") || !a.get("a-format") || !a.get("b-format")) {
    both = mx_format(a, "format", fallback);
  }
  const Format fa = mx_format(a, "a-format", both);
  const Format fb = mx_format(a, "b-format", both);
  if (scheme == "mxfp4" && (fa != Format::kE2M1 || fb != Format::kE2M1)) {
    throw UsageError("--scheme mxfp4 takes e2m1 operands (use --scheme mx for mixed formats)");
  }
  if (scheme == "mxfp6") {
    for (Format f : {fa, fb}) {
      if (f != Format::kE2M3 && f != Format::kE3M2) {
        throw UsageError("--scheme mxfp6 takes e2m3 / e3m2 operands (use --scheme mx for mixed)");
      }
    }
  }
  return {fa, fb};
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

// The scales as returned: logical row-major (rows, cols), or the physical layout as 1-D storage
// with zero padding.
template <class T>
NpyArray scales_array(std::optional<ScaleLayout> layout, std::size_t rows, std::size_t cols,
                      const std::vector<T>& logical) {
  if (!layout) return NpyArray({rows, cols}, logical);
  std::vector<T> stored = pack_scales(*layout, rows, cols, std::span<const T>(logical), T(0));
  const std::size_t n = stored.size();
  return NpyArray({n}, stored);
}

double value_of(uint32_t bits, OutputFormat format) {
  return format == OutputFormat::kFp32 ? float_of(bits)
                                       : float_of_bf16(static_cast<uint16_t>(bits));
}

uint32_t output_bits(const GemmOutput& c, std::size_t i) {
  return c.format == OutputFormat::kFp32 ? bits_of(c.fp32[i]) : c.bf16[i];
}

LocatedElement located_bits(const BitMismatch& m, OutputFormat format) {
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  return {m.row,
          m.col,
          m.expected_bits,
          m.actual_bits,
          m.ulp_distance,
          value_of(m.expected_bits, format),
          value_of(m.actual_bits, format),
          kNan,
          kNan,
          kNan};
}

// A bound violation with the bits of the correctly rounded result beside it.
LocatedElement located_bound(const BoundViolation& v, const GemmOutput& rounded,
                             const GemmOutput& actual) {
  const std::size_t i = v.row * actual.cols + v.col;
  const uint32_t e = output_bits(rounded, i), a = output_bits(actual, i);
  const uint64_t ulp = actual.format == OutputFormat::kFp32
                           ? ulp_distance_fp32(e, a)
                           : ulp_distance_bf16(static_cast<uint16_t>(e), static_cast<uint16_t>(a));
  return {v.row,   v.col,   e,       a, ulp, value_of(e, actual.format), value_of(a, actual.format),
          v.exact, v.bound, v.excess};
}

// Exact mode with --accumulator: whether a correct kernel with that accumulator is bound to equal
// the correctly rounded result on these operands (docs/accumulators.md §6). The verdict itself
// stays the bit comparison; this line says whether a mismatch can be the accumulator's doing.
std::string exactness_line(const GemmProblem& problem, const AccumulatorModel& model) {
  // The condition is checked term by term on one core: O(M N K).
  constexpr double kMaxTerms = 0x1p28;
  const double terms = static_cast<double>(problem.m) * static_cast<double>(problem.n) *
                       static_cast<double>(problem.k);
  std::string answer, why;
  if (terms > kMaxTerms) {
    answer = "not checked (M*N*K above 2^28 terms)";
  } else {
    try {
      answer = is_exact_mode(problem, model, &why)
                   ? "yes (every summation order it allows is exact)"
                   : "no (" + why +
                         "): a correct kernel may differ from the correctly rounded result; use "
                         "--mode bound";
    } catch (const std::invalid_argument& e) {
      answer = std::string("not modelled (") + e.what() + ")";
    }
  }
  return "operands exact in accumulator " + model.name + ": " + answer + "\n";
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

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

OutputFormat output_dtype(const Args& a) {
  const std::string d = a.get("dtype").value_or("float32");
  if (d == "float32") return OutputFormat::kFp32;
  if (d == "bf16") return OutputFormat::kBf16;
  throw UsageError("--dtype: '" + d + "' is not an output dtype (float32 or bf16)");
}

// ---- quantize -----------------------------------------------------------------------------------

const std::set<std::string>& quantize_options() {
  static const std::set<std::string> options = {"scheme",       "format",      "convention", "in",
                                                "scale-layout", "global-amax", "tile"};
  return options;
}

const std::set<std::string>& quantize_flags() {
  static const std::set<std::string> flags = {"ue8m0", "pow2-scales"};
  return flags;
}

QuantizeSpec quantize_spec(const Args& a) {
  QuantizeSpec spec;
  std::optional<Format> implied;
  spec.scheme = quant_scheme(a, &implied);
  spec.format = scheme_format(a, spec.scheme, implied);
  spec.convention = &convention(a, nullptr);
  require_defines(*spec.convention, spec.format);
  spec.layout = scale_layout_option(a);
  const bool ue8m0 = a.flag("ue8m0");
  if (ue8m0 && (spec.scheme == QuantScheme::kMx || spec.scheme == QuantScheme::kNvfp4)) {
    throw UsageError("--ue8m0 applies to --scheme act1x128 and w128x128 only (MX scales are e8m0)");
  }
  if (spec.scheme != QuantScheme::kNvfp4) {
    reject_options(a, {"global-amax", "tile"}, "applies to --scheme nvfp4 only");
    if (a.flag("pow2-scales")) throw UsageError("--pow2-scales applies to --scheme nvfp4 only");
  }
  const Convention& c = *spec.convention;
  if (spec.scheme == QuantScheme::kMx) {
    spec.mx = mx_policy(c, spec.format);
    if (!spec.mx) {
      const Format f = spec.format;
      const std::string which = info(f).bits == 8 ? "" : " for " + std::string(info(f).name);
      throw UsageError("--convention: '" + std::string(c.name) + "' has no MX quantizer" + which +
                       " (conventions with one: " + conventions_with_quantizer(true, f) + ")");
    }
  } else if (spec.scheme == QuantScheme::kNvfp4) {
    spec.nvfp4 = nvfp4_recipe(a, c);
  } else {
    spec.block = block_policy(c, spec.format, ue8m0);
    if (!spec.block) {
      throw UsageError("--convention: '" + std::string(c.name) +
                       "' has no block FP8 quantizer (conventions with one: " +
                       conventions_with_quantizer(false) + ")");
    }
  }
  if (const std::optional<std::string> g = a.get("global-amax")) spec.global_amax = parse_value(*g);
  return spec;
}

QuantizeResult quantize(const QuantizeSpec& spec, const ArrayReader& read) {
  const NpyArray in = read("in");
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
  QuantizeResult r;
  try {
    if (spec.mx) {
      const MxQuantized q = quantize_mx(x, m, k, spec.format, *spec.mx);
      r.data = codes_array(spec.format, m, k, q.data);
      r.scales = scales_array(spec.layout, m, q.scale_cols(), q.scales);
    } else if (spec.nvfp4) {
      const NvFp4Quantized q = quantize_nvfp4(x, m, k, *spec.nvfp4, spec.global_amax);
      r.data = codes_array(spec.format, m, k, q.data);
      r.scales = scales_array(spec.layout, m, q.scale_cols(), q.scales);
      r.global = NpyArray({1}, std::vector<float>{q.global_decode});
    } else {
      const std::size_t block_rows = spec.scheme == QuantScheme::kW128x128 ? kBlockK : 1;
      const BlockQuantized q =
          quantize_block(x, m, k, block_rows, kBlockK, spec.format, *spec.block);
      r.data = NpyArray({m, k}, q.data);
      r.scales = scales_array(spec.layout, q.scale_rows(), q.scale_cols(), q.scales);
    }
  } catch (const UndefinedEncoding& e) {
    throw UsageError(std::string("--in: ") + e.what() + " under convention '" +
                     std::string(spec.convention->name) + "'");
  }
  return r;
}

// ---- dequantize ---------------------------------------------------------------------------------

const std::set<std::string>& dequantize_options() {
  static const std::set<std::string> options = {"scheme", "format", "convention", "data",
                                                "scales", "dtype",  "k",          "global"};
  return options;
}

const std::set<std::string>& dequantize_flags() {
  static const std::set<std::string> flags = {"pow2-scales"};
  return flags;
}

DequantizeSpec dequantize_spec(const Args& a) {
  DequantizeSpec spec;
  std::optional<Format> implied;
  spec.scheme = quant_scheme(a, &implied);
  spec.format = scheme_format(a, spec.scheme, implied);
  spec.convention = &convention(a, nullptr);
  require_defines(*spec.convention, spec.format);
  spec.dtype = output_dtype(a);
  a.require("data");
  a.require("scales");
  if (spec.scheme != QuantScheme::kNvfp4) {
    reject_options(a, {"global"}, "applies to --scheme nvfp4 only");
    if (a.flag("pow2-scales")) throw UsageError("--pow2-scales applies to --scheme nvfp4 only");
  } else {
    a.require("global");
  }
  if (spec.format != Format::kE2M1) reject_options(a, {"k"}, "applies to packed e2m1 data only");
  spec.k = k_option(a);
  spec.pow2_scales = a.flag("pow2-scales");
  return spec;
}

NpyArray dequantize(const DequantizeSpec& spec, const ArrayReader& read) {
  const NpyArray data = read("data");
  if (data.rank() != 2) {
    throw UsageError("--data: expected a 2-D uint8 array, got " + npy_shape_string(data.shape));
  }
  require_nonempty(data, "--data", "M and K");
  const std::size_t m = data.shape[0], k = operand_k(spec.k, data, spec.format);
  const std::vector<uint8_t> codes = read_codes(data, "--data", spec.format, m, k);
  const NpyArray scales = read("scales");
  const bool fp32 = spec.dtype == OutputFormat::kFp32;
  if (spec.scheme == QuantScheme::kNvfp4) {
    expect(scales, "--scales", NpyDtype::kUint8,
           {NpyDim("M", m), NpyDim("ceil(K/16)", ceil_div(k, kNvfp4Block))});
    const NvFp4Quantized q{.rows = m,
                           .cols = k,
                           .pow2_scales = spec.pow2_scales,
                           .data = codes,
                           .scales = scales.values<uint8_t>(),
                           .global_decode = scalar_input(read, "global")};
    return fp32 ? NpyArray({m, k}, dequantize_nvfp4(q))
                : NpyArray({m, k}, dequantize_nvfp4_bf16(q));
  }
  if (spec.scheme == QuantScheme::kMx) {
    expect(scales, "--scales", NpyDtype::kUint8,
           {NpyDim("M", m), NpyDim("ceil(K/32)", ceil_div(k, kMxBlock))});
    const MxQuantized q{m, k, spec.format, codes, scales.values<uint8_t>()};
    const E8m0Decode decode = spec.convention->e8m0_decode;
    return fp32 ? NpyArray({m, k}, dequantize_mx(q, decode))
                : NpyArray({m, k}, dequantize_mx_bf16(q, decode));
  }
  const std::size_t block_rows = spec.scheme == QuantScheme::kW128x128 ? kBlockK : 1;
  if (block_rows == 1) {
    expect(scales, "--scales", NpyDtype::kFloat32,
           {NpyDim("M", m), NpyDim("ceil(K/128)", ceil_div(k, kBlockK))});
  } else {
    expect(
        scales, "--scales", NpyDtype::kFloat32,
        {NpyDim("ceil(M/128)", ceil_div(m, kBlockK)), NpyDim("ceil(K/128)", ceil_div(k, kBlockK))});
  }
  const BlockQuantized q{m, k, block_rows, kBlockK, spec.format, codes, scales.values<float>()};
  return fp32 ? NpyArray({m, k}, dequantize_block(q)) : NpyArray({m, k}, dequantize_block_bf16(q));
}

// ---- gemm ---------------------------------------------------------------------------------------

const std::set<std::string>& gemm_options() {
  static const std::set<std::string> options = {
      "scheme",   "a",        "a-scales",   "b", "b-scales", "dtype",   "format",
      "a-format", "b-format", "convention", "k", "a-global", "b-global"};
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
  const std::size_t kb = ceil_div(k, kBlockK);
  expect(as, "--a-scales", NpyDtype::kFloat32, {NpyDim("M", m), NpyDim("ceil(K/128)", kb)});
  expect(bs, "--b-scales", NpyDtype::kFloat32,
         {NpyDim("ceil(N/128)", ceil_div(n, kBlockK)), NpyDim("ceil(K/128)", kb)});
  const BlockQuantized qa{m, k, 1, kBlockK, fa, ca, as.values<float>()};
  const BlockQuantized qb{n, k, kBlockK, kBlockK, fa, cb, bs.values<float>()};
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
    o.insert({"c", "mode", "acc-bits", "block-k", "accumulator", "heatmap"});
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
  spec.gemm = gemm_spec(a);
  if (a.get("dtype")) {
    output_dtype(a);  // a bad name fails here, a mismatch with C once C is read
    spec.dtype = a.get("dtype");
  }
  return spec;
}

CheckGemmResult check_gemm(const CheckGemmSpec& spec, const ArrayReader& read) {
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
