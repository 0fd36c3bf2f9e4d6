#include "properties/shape_catalog.h"

#include <array>

namespace mxgate {
namespace {

constexpr std::array<std::string_view, 12> kColumns = {"model",   "layer",     "parallel", "tp",
                                                       "n",       "k",         "quant",    "mode",
                                                       "n_parts", "bmm_batch", "flagged",  "flags"};

using tsv::split;
using tsv::Where;

uint64_t parse_uint(std::string_view text, std::string_view field, uint64_t max, const Where& w) {
  return tsv::parse_uint(text, field, 1, max, w);
}

}  // namespace

std::vector<ShapeEntry> parse_shape_catalog(std::string_view text, std::string_view source) {
  std::vector<ShapeEntry> out;
  tsv::for_each_row(
      text, source, kColumns, [&](const std::vector<std::string_view>& f, const Where& w) {
        ShapeEntry e;
        e.line = w.line;
        e.model = f[0];
        e.layer = f[1];
        if (e.model.empty() || e.layer.empty()) w.fail("model and layer must not be empty");
        e.parallel = f[2];
        if (e.parallel != "column" && e.parallel != "row" && e.parallel != "replicated") {
          w.fail("parallel '" + e.parallel + "' is not column, row or replicated");
        }
        e.tp = static_cast<uint32_t>(parse_uint(f[3], "tp", 1024, w));
        e.n = parse_uint(f[4], "n", 1ull << 31, w);
        e.k = parse_uint(f[5], "k", 1ull << 31, w);
        e.quant = f[6];
        if (e.quant.empty()) w.fail("quant must not be empty");
        e.mode = f[7];
        if (e.mode != "TP" && e.mode != "EP") w.fail("mode '" + e.mode + "' is not TP or EP");
        if (f[8] != "-") {
          uint64_t sum = 0;
          for (std::string_view p : split(f[8], ',')) {
            e.n_parts.push_back(parse_uint(p, "n_parts entry", 1ull << 31, w));
            sum += e.n_parts.back();
          }
          if (sum != e.n) {
            w.fail("n_parts add up to " + std::to_string(sum) + ", but n is " +
                   std::to_string(e.n));
          }
        }
        if (f[9] != "-")
          e.bmm_batch = static_cast<uint32_t>(parse_uint(f[9], "bmm_batch", 4096, w));
        if (f[10] != "0" && f[10] != "1") w.fail("flagged must be 0 or 1");
        e.flagged = f[10] == "1";
        if (f[11] != "-") {
          for (std::string_view flag : split(f[11], ';')) {
            if (flag.empty()) w.fail("empty flag in '" + std::string(f[11]) + "'");
            e.flags.emplace_back(flag);
          }
        }
        out.push_back(std::move(e));
      });
  return out;
}

std::vector<ShapeEntry> load_shape_catalog(const std::string& path) {
  return parse_shape_catalog(tsv::read_file(path, "shape catalog"), path);
}

std::string default_shape_catalog_path() {
  return std::string(MXGATE_SOURCE_DIR) + "/corpus/shapes/production_shapes.tsv";
}

}  // namespace mxgate
