// Verbs on single values: encode, decode, conventions. The options of encode and decode (and
// their error texts) are verbs/value_ops.h, shared with the C API.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "reference/convention.h"
#include "reference/format.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/verbs.h"
#include "verbs/value_ops.h"

namespace mxgate::cli {
namespace {

// Code width in hex digits: 4-bit E2M1 and 6-bit E2M3 / E3M2 print as one / two digits.
int hex_digits(Format f) { return (info(f).bits + 3) / 4; }

// encode and decode: every positional parsed, then every one converted, before anything is
// printed (no partial output on bad input), then one line each.
template <class Parse, class Convert, class Print>
int convert_positionals(const Argv& argv, const char* none_given, Parse parse, Convert convert,
                        Print print) {
  const Args a(argv, verbs::codec_options());
  const verbs::CodecSpec spec = verbs::codec_spec(a);
  if (a.positionals().empty()) throw UsageError(none_given);
  std::vector<decltype(parse(a.positionals().front(), spec.format))> in;
  in.reserve(a.positionals().size());
  for (const std::string& v : a.positionals()) in.push_back(parse(v, spec.format));
  std::vector<decltype(convert(*spec.convention, spec.format, in.front()))> out;
  out.reserve(in.size());
  for (const auto& x : in) out.push_back(convert(*spec.convention, spec.format, x));
  for (const auto& y : out) print(y, spec.format);
  return 0;
}

}  // namespace

int cmd_encode(const Argv& argv) {
  return convert_positionals(
      argv, "no VALUE given", [](const std::string& v, Format) { return parse_value(v); },
      [](const Convention& c, Format f, float v) { return encode_with(c, f, v); },
      [](uint32_t code, Format f) { std::printf("0x%0*x\n", hex_digits(f), code); });
}

int cmd_decode(const Argv& argv) {
  return convert_positionals(
      argv, "no code given",
      [](const std::string& v, Format f) { return parse_code(v, info(f).bits); },
      [](const Convention& c, Format f, uint32_t code) { return decode_with(c, f, code); },
      [](float v, Format) {
        std::printf("%a %.9g\n", static_cast<double>(v), static_cast<double>(v));
      });
}

namespace {

struct EdgeColumn {
  const char* label;
  float value;
};

// One table: rows = conventions, columns = edge inputs; a '*' marks columns where the
// conventions that define the format disagree.
void print_edge_table(const char* title, Format f, const std::vector<EdgeColumn>& cols) {
  std::printf("\n%s\n", title);
  std::vector<std::vector<std::string>> cells;
  std::vector<bool> disagree(cols.size(), false);
  std::vector<std::string> first(cols.size());
  for (const Convention& c : all_conventions()) {
    std::vector<std::string> row;
    for (size_t i = 0; i < cols.size(); ++i) {
      std::string cell = "--";
      try {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%02x", encode_with(c, f, cols[i].value));
        cell = buf;
      } catch (const std::invalid_argument&) {
      }
      if (cell != "--") {
        if (first[i].empty()) first[i] = cell;
        if (cell != first[i]) disagree[i] = true;
      }
      row.push_back(cell);
    }
    cells.push_back(row);
  }
  std::printf("  %-26s", "convention");
  for (size_t i = 0; i < cols.size(); ++i) {
    std::printf(" %*s%s", 9, cols[i].label, disagree[i] ? "*" : " ");
  }
  std::printf("\n");
  size_t r = 0;
  for (const Convention& c : all_conventions()) {
    std::printf("  %-26.*s", static_cast<int>(c.name.size()), c.name.data());
    for (const std::string& cell : cells[r]) std::printf(" %9s ", cell.c_str());
    std::printf("\n");
    ++r;
  }
}

}  // namespace

int cmd_conventions(const Argv& argv) {
  const Args a(argv, {});
  if (!a.positionals().empty()) throw UsageError("conventions takes no arguments");
  std::printf("Convention matrix (policies; sources: docs/conventions.md §2, docs/fp4.md §3)\n\n");
  std::printf("  %-26s %-13s %-27s %-15s %-18s %-15s %s\n", "convention", "rounding", "overflow",
              "nan", "e8m0 encode", "e8m0 decode", "fp8 formats");
  for (const Convention& c : all_conventions()) {
    std::string formats;
    for (const FormatInfo& fi : all_formats()) {
      if (fi.bits == 8 && fi.format != Format::kE8M0 && defines(c, fi.format)) {
        formats += (formats.empty() ? "" : ",") + std::string(fi.name);
      }
    }
    const std::string e8 = c.e8m0 ? std::string(name(*c.e8m0)) : std::string("(none)");
    std::printf("  %-26.*s %-13.*s %-27.*s %-15.*s %-18s %-15.*s %s\n",
                static_cast<int>(c.name.size()), c.name.data(),
                static_cast<int>(name(c.element.rounding).size()), name(c.element.rounding).data(),
                static_cast<int>(name(c.element.overflow).size()), name(c.element.overflow).data(),
                static_cast<int>(name(c.element.nan).size()), name(c.element.nan).data(),
                e8.c_str(), static_cast<int>(name(c.e8m0_decode).size()),
                name(c.e8m0_decode).data(), formats.c_str());
  }
  std::printf(
      "\nFP4 / FP6 element casts (docs/fp4.md §3): conventions that define e2m1 / e2m3 / e3m2\n");
  std::printf("  %-26s %-13s %-16s %-25s %-16s %s\n", "convention", "rounding", "overflow", "nan",
              "-0.0 input", "formats");
  for (const Convention& c : all_conventions()) {
    std::string formats;
    for (Format f : {Format::kE2M1, Format::kE2M3, Format::kE3M2}) {
      if (defines(c, f)) formats += (formats.empty() ? "" : ",") + std::string(info(f).name);
    }
    if (formats.empty()) continue;
    const EncodePolicy& p = c.sub_byte;
    std::printf("  %-26.*s %-13.*s %-16.*s %-25.*s %-16.*s %s%s\n", static_cast<int>(c.name.size()),
                c.name.data(), static_cast<int>(name(p.rounding).size()), name(p.rounding).data(),
                static_cast<int>(name(p.overflow).size()), name(p.overflow).data(),
                static_cast<int>(name(p.nan).size()), name(p.nan).data(),
                static_cast<int>(name(p.neg_zero).size()), name(p.neg_zero).data(), formats.c_str(),
                c.truncate_below_one_to_2m23 ? " (truncates |x| < 1 to 2^-23 first)" : "");
  }
  std::printf("\nSources:\n");
  for (const Convention& c : all_conventions()) {
    std::printf("  %-26.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                static_cast<int>(c.source.size()), c.source.data());
  }
  const float inf = INFINITY;
  const float nan = NAN;
  std::printf(
      "\nEdge inputs (docs/formats.md §6) -> code per convention; -- = not defined (or left "
      "undefined by the source), "
      "* = conventions disagree\n");
  print_edge_table("e4m3fn (§6 item 1: overflow, Inf, NaN)", Format::kE4M3FN,
                   {{"448", 448.0f},
                    {"464", 464.0f},
                    {"464+ulp", 0x1.d00002p+8f},
                    {"480", 480.0f},
                    {"1e6", 1e6f},
                    {"inf", inf},
                    {"-inf", -inf},
                    {"nan", nan},
                    {"-nan", -nan},
                    {"-0", -0.0f}});
  print_edge_table("e5m2 (§6 item 2)", Format::kE5M2,
                   {{"57344", 57344.0f},
                    {"61439", 61439.0f},
                    {"61440", 61440.0f},
                    {"inf", inf},
                    {"-inf", -inf},
                    {"nan", nan}});
  print_edge_table("e4m3fnuz (§6 items 4, 5)", Format::kE4M3FNUZ,
                   {{"240", 240.0f},
                    {"247", 247.0f},
                    {"248", 248.0f},
                    {"448", 448.0f},
                    {"inf", inf},
                    {"nan", nan},
                    {"-0", -0.0f}});
  print_edge_table("e8m0 encode (§6 items 6-9, 15)", Format::kE8M0,
                   {{"0", 0.0f},
                    {"-1", -1.0f},
                    {"1.5", 1.5f},
                    {"2.9", 2.9f},
                    {"3", 3.0f},
                    {"2^-128", 0x1p-128f},
                    {"1.2*2^-127", 0x1.333334p-127f},
                    {"log2haz", 0x1.000002p-8f},
                    {"1.5*2^127", 0x1.8p+127f},
                    {"inf", inf},
                    {"nan", nan}});
  print_edge_table("e2m1 (docs/fp4.md §3: ties, saturation, Inf, NaN, -0)", Format::kE2M1,
                   {{"0.25", 0.25f},
                    {"1.25", 1.25f},
                    {"5", 5.0f},
                    {"7", 7.0f},
                    {".25+ulp", 0x1.000002p-2f},
                    {"inf", inf},
                    {"-inf", -inf},
                    {"nan", nan},
                    {"-nan", -nan},
                    {"-0", -0.0f}});
  print_edge_table("e2m3 (docs/fp4.md §3)", Format::kE2M3,
                   {{"0.0625", 0.0625f},
                    {"1.0625", 1.0625f},
                    {"7.75", 7.75f},
                    {"inf", inf},
                    {"nan", nan},
                    {"-nan", -nan}});
  print_edge_table(
      "e3m2 (docs/fp4.md §3)", Format::kE3M2,
      {{"0.03125", 0.03125f}, {"30", 30.0f}, {"inf", inf}, {"nan", nan}, {"-nan", -nan}});
  std::printf("\ne8m0 decode (docs/formats.md §6 item 10): byte -> value per convention\n");
  std::printf("  %-26s %-16s %-16s %-16s\n", "convention", "0x00", "0x7f", "0xff");
  for (const Convention& c : all_conventions()) {
    std::printf("  %-26.*s", static_cast<int>(c.name.size()), c.name.data());
    for (uint32_t b : {0x00u, 0x7fu, 0xffu}) {
      std::printf(" %-16a", static_cast<double>(decode_with(c, Format::kE8M0, b)));
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace mxgate::cli
