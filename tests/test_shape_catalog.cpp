// Covers the production shape catalog parser (properties/shape_catalog.h) and the shipped
// catalog corpus/shapes/production_shapes.tsv. Does not cover generators built on it.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "properties/shape_catalog.h"

namespace mxgate {
namespace {

const char* kHeader =
    "model\tlayer\tparallel\ttp\tn\tk\tquant\tmode\tn_parts\tbmm_batch\tflagged\tflags\n";

std::string catalog(const std::string& rows) { return std::string("# comment\n") + kHeader + rows; }

std::string error_of(const std::string& text) {
  try {
    parse_shape_catalog(text, "t.tsv");
  } catch (const CatalogError& e) {
    return e.what();
  }
  return "(no error)";
}

// Guards against the shipped catalog losing coverage: at least 10 models, TP 1-16, every
// parallel kind, MXFP8 and block-128 shapes (docs/architecture.md §2.8).
TEST(ShapeCatalog, ShippedCatalogCoversTheProductionSpace) {
  const auto all = load_shape_catalog(default_shape_catalog_path());
  ASSERT_EQ(all.size(), 602u);  // the rows scripts/make_shape_catalog.py wrote
  std::set<std::string> models, parallel;
  std::set<uint32_t> tps;
  bool mx = false, block = false, merged = false, bmm = false;
  for (const ShapeEntry& e : all) {
    models.insert(e.model);
    parallel.insert(e.parallel);
    tps.insert(e.tp);
    mx |= e.is_mx();
    block |= e.is_block128();
    merged |= !e.n_parts.empty();
    bmm |= e.bmm_batch.has_value();
  }
  EXPECT_GE(models.size(), 10u);
  EXPECT_EQ(tps, (std::set<uint32_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(parallel, (std::set<std::string>{"column", "replicated", "row"}));
  EXPECT_TRUE(mx && block && merged && bmm);
}

// Guards the shapes the project grew from (docs/architecture.md §1.1): DeepSeek-V4.1-Flash's
// shared-expert down_proj is row-parallel, K = 2304 / TP, unaligned at TP4 (576) and TP8 (288).
TEST(ShapeCatalog, OriginShapesArePresentAndFlagged) {
  const auto all = load_shape_catalog(default_shape_catalog_path());
  std::set<uint64_t> ks;
  for (const ShapeEntry& e : all) {
    if (e.model == "DeepSeek-V4.1-Flash" && e.layer == "shared_expert_down_proj") {
      EXPECT_EQ(e.n, 5120u);
      EXPECT_EQ(e.k, 2304u / e.tp);
      EXPECT_EQ(e.flagged, e.k % 128 != 0) << "tp " << e.tp;
      ks.insert(e.k);
    }
  }
  EXPECT_TRUE(ks.count(576) && ks.count(288) && ks.count(2304) && ks.count(1152));
}

// Guards the field parsing of one row, including merged parts and flags.
TEST(ShapeCatalog, ParsesOneRow) {
  const auto rows = parse_shape_catalog(
      catalog("M\tfused\treplicated\t2\t2112\t7168\tFP8-B128\tTP\t1536,576\t-\t1\tN%128!=0;X\n"),
      "t.tsv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].tp, 2u);
  EXPECT_EQ(rows[0].n_parts, (std::vector<uint64_t>{1536, 576}));
  EXPECT_EQ(rows[0].flags, (std::vector<std::string>{"N%128!=0", "X"}));
  EXPECT_FALSE(rows[0].bmm_batch.has_value());
  EXPECT_EQ(rows[0].line, 3u);
}

// Guards the error messages: each names the file, the line and the field.
TEST(ShapeCatalog, ErrorsNameFileLineAndField) {
  EXPECT_NE(error_of("model\tlayer\n").find("t.tsv:1: header must be"), std::string::npos);
  EXPECT_NE(error_of("# only a comment\n").find("no header line"), std::string::npos);
  EXPECT_NE(error_of(catalog("M\tL\tcolumn\t2\t64\n")).find("t.tsv:3: expected 12"),
            std::string::npos);
  EXPECT_NE(error_of(catalog("M\tL\tdiagonal\t2\t64\t64\tQ\tTP\t-\t-\t0\t-\n")).find("parallel"),
            std::string::npos);
  EXPECT_NE(error_of(catalog("M\tL\tcolumn\tx\t64\t64\tQ\tTP\t-\t-\t0\t-\n")).find("tp 'x'"),
            std::string::npos);
  EXPECT_NE(error_of(catalog("M\tL\tcolumn\t2\t0\t64\tQ\tTP\t-\t-\t0\t-\n")).find("n 0 is outside"),
            std::string::npos);
  EXPECT_NE(error_of(catalog("M\tL\tcolumn\t2\t64\t64\tQ\tTP\t32,16\t-\t0\t-\n"))
                .find("n_parts add up to 48, but n is 64"),
            std::string::npos);
  EXPECT_NE(error_of(catalog("M\tL\tcolumn\t2\t64\t64\tQ\tXP\t-\t-\t0\t-\n")).find("mode 'XP'"),
            std::string::npos);
  EXPECT_NE(error_of(catalog("M\tL\tcolumn\t2\t64\t64\tQ\tTP\t-\t-\t2\t-\n")).find("flagged"),
            std::string::npos);
  EXPECT_NE(
      error_of(catalog("M\tL\tcolumn\t2\t99999999999\t64\tQ\tTP\t-\t-\t0\t-\n")).find("outside"),
      std::string::npos);
}

// Guards against a crash on a missing file: it is a CatalogError naming the path.
TEST(ShapeCatalog, MissingFileIsAnError) {
  EXPECT_THROW(load_shape_catalog("/nonexistent/shapes.tsv"), CatalogError);
}

}  // namespace
}  // namespace mxgate
