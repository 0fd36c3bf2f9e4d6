#include "verbs/value_ops.h"

#include <cstdio>

namespace mxgate::verbs {
namespace {

std::string describe(const NpyArray& a) {
  return std::string(npy_dtype_name(a.dtype)) + " " + npy_shape_string(a.shape);
}

}  // namespace

std::vector<Format> codec_formats() {
  std::vector<Format> out;
  for (const FormatInfo& fi : all_formats()) {
    if (fi.format != Format::kFP32) out.push_back(fi.format);
  }
  return out;
}

std::string codec_format_list() {
  std::string out;
  for (Format f : codec_formats()) out += (out.empty() ? "" : " ") + std::string(info(f).name);
  return out;
}

const std::set<std::string>& codec_options() {
  static const std::set<std::string> options = {"format", "convention"};
  return options;
}

CodecSpec codec_spec(const Args& a) {
  CodecSpec spec;
  const std::string format_name = a.require("format");
  const std::optional<Format> f = parse_format(format_name);
  if (!f || *f == Format::kFP32) {
    throw UsageError("unknown format '" + format_name + "' (formats: " + codec_format_list() + ")");
  }
  spec.format = *f;
  const std::string convention_name = a.require("convention");
  spec.convention = find_convention(convention_name);
  if (!spec.convention) {
    throw UsageError("unknown convention '" + convention_name +
                     "' (conventions: " + convention_names() + ")");
  }
  return spec;
}

NpyArray encode_array(const CodecSpec& spec, const NpyArray& values) {
  std::vector<float> x;
  if (values.dtype == NpyDtype::kFloat32) {
    x = values.values<float>();
  } else if (values.dtype == NpyDtype::kFloat64) {
    // float64 -> fp32: one round-to-nearest-even conversion, as decimal text is rounded once.
    for (double v : values.values<double>()) x.push_back(static_cast<float>(v));
  } else {
    throw UsageError("--values: expected float32 or float64, got " + describe(values));
  }
  (void)encode_with(*spec.convention, spec.format,
                    0.0f);            // an undefined format fails when empty too
  if (info(spec.format).bits <= 8) {  // FP8, e8m0, and the FP6 / FP4 codes (one per byte)
    std::vector<uint8_t> codes(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      codes[i] = static_cast<uint8_t>(encode_with(*spec.convention, spec.format, x[i]));
    }
    return NpyArray(values.shape, codes);
  }
  std::vector<uint16_t> codes(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    codes[i] = static_cast<uint16_t>(encode_with(*spec.convention, spec.format, x[i]));
  }
  return NpyArray(values.shape, codes);
}

NpyArray decode_array(const CodecSpec& spec, const NpyArray& codes) {
  std::vector<uint32_t> c;
  if (codes.dtype == NpyDtype::kUint8) {
    for (uint8_t v : codes.values<uint8_t>()) c.push_back(v);
  } else if (codes.dtype == NpyDtype::kUint16) {
    for (uint16_t v : codes.values<uint16_t>()) c.push_back(v);
  } else {
    throw UsageError("--codes: expected uint8 or uint16, got " + describe(codes));
  }
  const int bits = info(spec.format).bits;
  for (uint32_t code : c) {
    if ((code >> bits) == 0) continue;  // bits is 4, 6, 8 or 16 here
    char shown[16];
    std::snprintf(shown, sizeof shown, "0x%x", code);
    check_code_fits(code, bits, shown);
  }
  (void)decode_with(*spec.convention, spec.format, 0);  // an undefined format fails when empty too
  std::vector<float> out(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) {
    out[i] = decode_with(*spec.convention, spec.format, c[i]);
  }
  return NpyArray(codes.shape, out);
}

}  // namespace mxgate::verbs
