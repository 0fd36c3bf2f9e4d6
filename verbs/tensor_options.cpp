// The option parsing of the tensor verbs (tensor_options.h), and the two option checks the CLI
// also calls (--dtype, an output path).
#include "verbs/tensor_options.h"

#include <filesystem>
#include <system_error>

#include "reference/quant_conventions.h"

namespace mxgate::verbs {
namespace {

constexpr const char* kFp8FormatList = "e4m3fn e5m2 e4m3fnuz e5m2fnuz";
constexpr const char* kMxFormatList = "e4m3fn e5m2 e4m3fnuz e5m2fnuz e2m3 e3m2 e2m1 mxint8";

std::string conventions_with_nvfp4() {
  std::string out;
  for (const Convention& c : all_conventions()) {
    if (nvfp4_policy(c)) out += (out.empty() ? "" : ", ") + std::string(c.name);
  }
  return out;
}

}  // namespace

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

void require_defines(const Convention& c, Format f) {
  if (!defines(c, f)) {
    throw UsageError("--format: convention '" + std::string(c.name) + "' does not define " +
                     std::string(info(f).name) + " (see `mxgate conventions`)");
  }
}

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

std::optional<std::size_t> k_option(const Args& a) {
  if (!a.get("k")) return std::nullopt;
  return static_cast<std::size_t>(a.integer("k", 0, 1, 1LL << 40));
}

void reject_options(const Args& a, std::initializer_list<const char*> options, const char* why) {
  for (const char* o : options) {
    if (a.get(o)) throw UsageError("--" + std::string(o) + " " + why);
  }
}

std::string conventions_with_quantizer(bool mx, Format element) {
  std::string out;
  for (const Convention& c : all_conventions()) {
    const bool has = mx ? mx_policy(c, element).has_value()  // mx_policy checks defines()
                        : block_policy(c, Format::kE4M3FN, false).has_value();
    if (has) out += (out.empty() ? "" : ", ") + std::string(c.name);
  }
  return out;
}

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

}  // namespace mxgate::verbs
