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
#include <tuple>
#include <utility>
#include <vector>

#include "reference/block_quant.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/fp4_pack.h"
#include "reference/gemm_oracle.h"
#include "reference/mx_quant.h"
#include "reference/npy.h"
#include "reference/nvfp4_quant.h"
#include "reference/quant_conventions.h"
#include "reference/scale_layout.h"
#include "reference/verdict.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/verbs.h"

namespace mxgate::cli {
namespace {

constexpr const char* kFp8FormatList = "e4m3fn e5m2 e4m3fnuz e5m2fnuz";
constexpr const char* kMxFormatList = "e4m3fn e5m2 e4m3fnuz e5m2fnuz e2m3 e3m2 e2m1";

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

// E2M1 codes travel packed, two per byte, element 2i in the low nibble (fp4_pack.h): an (R, C)
// array holds rows of up to 2C codes; `k` says how many (an odd K leaves a padding nibble).
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

// K of an operand array: its columns, or for packed E2M1 --k (default twice the columns).
std::size_t operand_k(const Args& a, const NpyArray& array, Format f) {
  if (f != Format::kE2M1) return array.shape[1];
  const std::size_t k = static_cast<std::size_t>(
      a.integer("k", static_cast<long long>(2 * array.shape[1]), 1, 1LL << 40));
  if (packed_fp4_cols(k) != array.shape[1]) {
    throw UsageError("--k " + std::to_string(k) + " needs " + std::to_string(packed_fp4_cols(k)) +
                     " packed e2m1 columns, the array has " + std::to_string(array.shape[1]));
  }
  return k;
}

float scalar_input(const Args& a, const std::string& option) {
  const NpyArray g = read_input(a, option);
  expect(g, "--" + option, NpyDtype::kFloat32, {NpyDim(1)});
  return g.values<float>()[0];
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
std::string conventions_with_quantizer(bool mx, Format element = Format::kE4M3FN) {
  std::string out;
  for (const Convention& c : all_conventions()) {
    const bool has = mx ? (defines(c, element) && mx_policy(c, element).has_value())
                        : block_policy(c, Format::kE4M3FN, false).has_value();
    if (has) out += (out.empty() ? "" : ", ") + std::string(c.name);
  }
  return out;
}

enum class QuantScheme { kMx, kAct1x128, kW128x128, kNvfp4 };

// mxfp4 is mx with e2m1 elements, mxfp6 mx with e2m3 / e3m2; nvfp4 has its own recipes.
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
  const Args a(
      argv, {"scheme", "format", "convention", "in", "out", "scale-layout", "global-amax", "tile"},
      {"ue8m0", "pow2-scales"});
  no_positionals(a);
  std::optional<Format> implied;
  const QuantScheme scheme = quant_scheme(a, &implied);
  const Format f = scheme_format(a, scheme, implied);
  const Convention& c = convention(a, nullptr);
  require_defines(c, f);
  const std::optional<ScaleLayout> layout = scale_layout_option(a);
  const bool ue8m0 = a.flag("ue8m0");
  if (ue8m0 && (scheme == QuantScheme::kMx || scheme == QuantScheme::kNvfp4)) {
    throw UsageError("--ue8m0 applies to --scheme act1x128 and w128x128 only (MX scales are e8m0)");
  }
  if (scheme != QuantScheme::kNvfp4) {
    reject_options(a, {"global-amax", "tile"}, "applies to --scheme nvfp4 only");
    if (a.flag("pow2-scales")) throw UsageError("--pow2-scales applies to --scheme nvfp4 only");
  }
  std::optional<MxPolicy> mx;
  std::optional<BlockPolicy> block;
  std::optional<NvFp4Policy> nv;
  if (scheme == QuantScheme::kMx) {
    mx = mx_policy(c, f);
    if (!mx) {
      const std::string which = info(f).bits == 8 ? "" : " for " + std::string(info(f).name);
      throw UsageError("--convention: '" + std::string(c.name) + "' has no MX quantizer" + which +
                       " (conventions with one: " + conventions_with_quantizer(true, f) + ")");
    }
  } else if (scheme == QuantScheme::kNvfp4) {
    nv = nvfp4_recipe(a, c);
  } else {
    block = block_policy(c, f, ue8m0);
    if (!block) {
      throw UsageError("--convention: '" + std::string(c.name) +
                       "' has no block FP8 quantizer (conventions with one: " +
                       conventions_with_quantizer(false) + ")");
    }
  }
  std::optional<float> global_amax;
  if (const auto g = a.get("global-amax")) global_amax = parse_value(*g);
  const std::string prefix = a.require("out");
  const std::string data_path = prefix + ".data.npy";
  const std::string scales_path = prefix + ".scales.npy";
  const std::string global_path = prefix + ".global.npy";
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
  // E2M1 codes are written packed (two per byte, low nibble first); the others one per byte.
  const auto codes_array = [&](const std::vector<uint8_t>& codes) {
    if (f != Format::kE2M1) return NpyArray({m, k}, codes);
    return NpyArray({m, packed_fp4_cols(k)}, pack_fp4(codes, m, k, NibbleOrder::kLowFirst));
  };

  NpyArray data, scales, global;
  try {
    if (mx) {
      const MxQuantized q = quantize_mx(x, m, k, f, *mx);
      data = codes_array(q.data);
      scales = scales_array(layout, m, q.scale_cols(), q.scales);
    } else if (nv) {
      const NvFp4Quantized q = quantize_nvfp4(x, m, k, *nv, global_amax);
      data = codes_array(q.data);
      scales = scales_array(layout, m, q.scale_cols(), q.scales);
      global = NpyArray({1}, std::vector<float>{q.global_decode});
    } else {
      const std::size_t block_rows = scheme == QuantScheme::kW128x128 ? kBlockK : 1;
      const BlockQuantized q = quantize_block(x, m, k, block_rows, kBlockK, f, *block);
      data = NpyArray({m, k}, q.data);
      scales = scales_array(layout, q.scale_rows(), q.scale_cols(), q.scales);
    }
  } catch (const UndefinedEncoding& e) {
    throw UsageError(std::string("--in: ") + e.what() + " under convention '" +
                     std::string(c.name) + "'");
  }
  write_output("out", data_path, data);
  try {
    write_output("out", scales_path, scales);
    if (nv) write_output("out", global_path, global);
  } catch (const UsageError&) {
    std::error_code ignored;  // no data file without its scales
    std::filesystem::remove(data_path, ignored);
    std::filesystem::remove(scales_path, ignored);
    throw;
  }
  return 0;
}

int cmd_dequantize(const Argv& argv) {
  const Args a(argv,
               {"scheme", "format", "convention", "data", "scales", "out", "dtype", "k", "global"},
               {"pow2-scales"});
  no_positionals(a);
  std::optional<Format> implied;
  const QuantScheme scheme = quant_scheme(a, &implied);
  const Format f = scheme_format(a, scheme, implied);
  const Convention& c = convention(a, nullptr);
  require_defines(c, f);
  const OutputFormat dtype = output_dtype(a);
  const std::string out = a.require("out");
  a.require("data");
  a.require("scales");
  if (scheme != QuantScheme::kNvfp4) {
    reject_options(a, {"global"}, "applies to --scheme nvfp4 only");
    if (a.flag("pow2-scales")) throw UsageError("--pow2-scales applies to --scheme nvfp4 only");
  } else {
    a.require("global");
  }
  if (f != Format::kE2M1) reject_options(a, {"k"}, "applies to packed e2m1 data only");
  check_output_path("out", out);

  const NpyArray data = read_input(a, "data");
  if (data.rank() != 2) {
    throw UsageError("--data: expected a 2-D uint8 array, got " + npy_shape_string(data.shape));
  }
  require_nonempty(data, "--data", "M and K");
  const std::size_t m = data.shape[0], k = operand_k(a, data, f);
  const std::vector<uint8_t> codes = read_codes(data, "--data", f, m, k);
  const NpyArray scales = read_input(a, "scales");
  std::vector<float> fp32;
  std::vector<uint16_t> bf16;
  if (scheme == QuantScheme::kNvfp4) {
    expect(scales, "--scales", NpyDtype::kUint8,
           {NpyDim("M", m), NpyDim("ceil(K/16)", ceil_div(k, kNvfp4Block))});
    NvFp4Quantized q;
    q.rows = m;
    q.cols = k;
    q.pow2_scales = a.flag("pow2-scales");
    q.data = codes;
    q.scales = scales.values<uint8_t>();
    q.global_decode = scalar_input(a, "global");
    if (dtype == OutputFormat::kFp32) {
      fp32 = dequantize_nvfp4(q);
    } else {
      bf16 = dequantize_nvfp4_bf16(q);
    }
  } else if (scheme == QuantScheme::kMx) {
    expect(scales, "--scales", NpyDtype::kUint8,
           {NpyDim("M", m), NpyDim("ceil(K/32)", ceil_div(k, kMxBlock))});
    MxQuantized q;
    q.rows = m;
    q.cols = k;
    q.element = f;
    q.data = codes;
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
    q.data = codes;
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

const std::set<std::string> kGemmOptions = {
    "scheme", "a",        "a-scales", "b",          "b-scales", "out",      "dtype",
    "format", "a-format", "b-format", "convention", "k",        "a-global", "b-global"};

// The MX element formats of A and B: --a-format / --b-format, else --format, else the scheme's.
std::pair<Format, Format> operand_formats(const Args& a, const std::string& scheme) {
  std::optional<Format> fallback = Format::kE4M3FN;
  if (scheme == "mxfp4" || scheme == "nvfp4") fallback = Format::kE2M1;
  if (scheme == "mxfp6") fallback = std::nullopt;
  if (scheme == "nvfp4") {
    reject_options(a, {"format", "a-format", "b-format"}, "is not used by --scheme nvfp4 (e2m1)");
    return {Format::kE2M1, Format::kE2M1};
  }
  const Format both = mx_format(a, "format", fallback ? fallback : std::optional<Format>());
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

// The decoded problem of `gemm` and `check-gemm`, from --scheme, --a, --a-scales, --b, --b-scales,
// the format options and --convention; every dtype and shape checked against A's (M, K).
GemmProblem load_gemm_problem(const Args& a, std::string* what) {
  const std::string scheme = a.require("scheme");
  const bool mx_family = scheme == "mx" || scheme == "mxfp4" || scheme == "mxfp6";
  if (!mx_family && scheme != "nvfp4" && scheme != "block" && scheme != "bf16") {
    throw UsageError("--scheme: unknown scheme '" + scheme +
                     "' (schemes: mx mxfp4 mxfp6 nvfp4 block bf16)");
  }
  const bool bf16 = scheme == "bf16";
  if (scheme != "nvfp4") {
    reject_options(a, {"a-global", "b-global"}, "applies to --scheme nvfp4 only");
  }
  if (!mx_family) reject_options(a, {"a-format", "b-format"}, "applies to the MX schemes only");
  Format fa = Format::kE4M3FN, fb = Format::kE4M3FN;
  const Convention* c = nullptr;
  if (bf16) {
    reject_options(a, {"a-scales", "b-scales", "format", "convention", "k"},
                   "is not used by --scheme bf16 (bf16 operands carry no scales)");
  } else {
    a.require("a-scales");
    a.require("b-scales");
    if (mx_family || scheme == "nvfp4") {
      std::tie(fa, fb) = operand_formats(a, scheme);
      c = &convention(a, scheme == "nvfp4" ? "te_nvfp4_ref" : "ocp_mx");
      require_defines(*c, fa);
      require_defines(*c, fb);
    } else {
      fa = fb = fp8_format(a, Format::kE4M3FN);
      reject_options(a, {"convention", "k"},
                     "is not used by --scheme block (its fp32 scales are used as stored)");
    }
    if (fa != Format::kE2M1 && fb != Format::kE2M1) {
      reject_options(a, {"k"}, "applies to packed e2m1 operands only");
    }
  }
  if (scheme == "nvfp4") {
    a.require("a-global");
    a.require("b-global");
  }
  a.require("a");
  a.require("b");

  const NpyDtype value_dtype = bf16 ? NpyDtype::kUint16 : NpyDtype::kUint8;
  const NpyArray an = read_input(a, "a");
  expect(an, "--a", value_dtype, {"M", "K"});
  require_nonempty(an, "--a", "M and K");
  const NpyArray bn = read_input(a, "b");
  expect(bn, "--b", value_dtype, {"N", "K"});
  require_nonempty(bn, "--b", "N and K");
  const std::size_t m = an.shape[0], n = bn.shape[0];
  // K from the first operand that is not packed E2M1, else from --k / twice the packed columns.
  const std::size_t k = fa != Format::kE2M1 ? an.shape[1]
                                            : operand_k(a, fb != Format::kE2M1 ? bn : an,
                                                        fb != Format::kE2M1 ? fb : fa);
  if (bf16 || (fa != Format::kE2M1 && fb != Format::kE2M1)) {
    if (bn.shape[1] != k) {
      throw UsageError("--b: K mismatch: B is (N, K) = " + npy_shape_string(bn.shape) +
                       " but --a has K=" + std::to_string(k) + " (C = A * B^T needs the same K)");
    }
  }
  if (what) {
    *what =
        scheme + " M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k);
  }

  if (bf16) {
    return bf16_gemm_problem(an.values<uint16_t>(), bn.values<uint16_t>(), m, n, k);
  }
  const std::vector<uint8_t> ca = read_codes(an, "--a", fa, m, k);
  const std::vector<uint8_t> cb = read_codes(bn, "--b", fb, n, k);
  const NpyArray as = read_input(a, "a-scales");
  const NpyArray bs = read_input(a, "b-scales");
  if (scheme == "nvfp4") {
    const std::size_t kb = ceil_div(k, kNvfp4Block);
    expect(as, "--a-scales", NpyDtype::kUint8, {NpyDim("M", m), NpyDim("ceil(K/16)", kb)});
    expect(bs, "--b-scales", NpyDtype::kUint8, {NpyDim("N", n), NpyDim("ceil(K/16)", kb)});
    GemmProblem p;
    p.m = m;
    p.n = n;
    p.k = k;
    p.blocks = {1, kNvfp4Block, 1, kNvfp4Block};
    for (uint8_t v : ca) p.a.push_back(decode(Format::kE2M1, v));
    for (uint8_t v : cb) p.b.push_back(decode(Format::kE2M1, v));
    for (uint8_t v : as.values<uint8_t>()) p.a_scale.push_back(nvfp4_scale_value(v, false));
    for (uint8_t v : bs.values<uint8_t>()) p.b_scale.push_back(nvfp4_scale_value(v, false));
    // The kernels' alpha: the product of both global decode scales, rounded to fp32.
    p.alpha = scalar_input(a, "a-global") * scalar_input(a, "b-global");
    validate_gemm_problem(p);
    return p;
  }
  if (mx_family) {
    const std::size_t kb = ceil_div(k, kMxBlock);
    expect(as, "--a-scales", NpyDtype::kUint8, {NpyDim("M", m), NpyDim("ceil(K/32)", kb)});
    expect(bs, "--b-scales", NpyDtype::kUint8, {NpyDim("N", n), NpyDim("ceil(K/32)", kb)});
    MxQuantized qa, qb;
    qa.rows = m;
    qb.rows = n;
    qa.cols = qb.cols = k;
    qa.element = fa;
    qb.element = fb;
    qa.data = ca;
    qb.data = cb;
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
  qa.element = qb.element = fa;
  qa.data = ca;
  qb.data = cb;
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
  options.insert({"c", "mode", "acc-bits", "block-k"});
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
  } else {
    AccumModel model;
    model.unit_roundoff = std::ldexp(1.0, -acc_bits);
    // Error near underflow, 2^-126 * u: half the fp32 subnormal spacing for u = 2^-24 (RN), the
    // whole spacing for u = 2^-23 (directed); the accumulator has fp32's exponent range.
    model.underflow_eta = std::ldexp(1.0, -126 - acc_bits);
    model.overflow_threshold = std::ldexp(2.0 - std::ldexp(1.0, -acc_bits), 127);
    model.block_k = block_k;
    model.output = format;
    const BoundVerdict v = check_bound(compute_bounds(problem, model), actual);
    ok = v.ok();
    summary = v.summary();
    std::printf("check-gemm %s, %s output, bound mode (acc-bits %d, block-k %zu)\n", what.c_str(),
                format_name, acc_bits, block_k);
  }
  std::printf("%s\n%s\n", summary.c_str(), ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

}  // namespace mxgate::cli
