// Covers reference/mx_quant_2d (one E8M0 scale per 32 x 32 tile, TransformerEngine's MXFP8 2D
// weight scaling, docs/layouts.md §9): the identity that makes 2D scaling useful (W and W^T give
// transposed codes and a transposed scale grid, checked at every coordinate over partial tiles,
// zero / NaN / Inf / subnormal tiles and every convention with an MX quantizer), the agreement of a
// one-row tensor with the 1x32 quantizer (a 1 x 32 tile is a 1x32 block), a hand-derived 64 x 64
// case that tells a 32 x 32 tile from a 1x32 row block and a 32x1 column block, TE's replicated
// rowwise / columnwise storage of the grid, and input validation.
// Expected bytes of the hand case are derived in its comments from docs/formats.md §3.4 (TE's
// RCEIL rule), never from the code under test.
// Also, end to end on the C test plugin tests/plugins/quant_2d.c: the correct 2D quantizer loads
// with its 32 x 32 block (contract::scale_blocks names it mx_2d_32x32) and passes
// quantize_2d.bit_exact and metamorphic.quantize_2d_transpose; its two planted faults (amax over
// 32x1, the grid transposed) fail both with a located element.
// Does not cover: the numpy adapter op (python/tests/test_quantize_2d.py), E5M2 or FP4 elements
// in 2D (TE's recipe uses E4M3 for weights), device plugins.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "contract/contract.h"
#include "gpu/host/host_backend.h"
#include "impl/registry.h"
#include "properties/property.h"
#include "reference/convention.h"
#include "reference/format.h"
#include "reference/mx_quant.h"
#include "reference/mx_quant_2d.h"
#include "reference/quant_conventions.h"

namespace mxgate {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

MxPolicy te() { return require_mx_policy(require_convention("transformer_engine")); }

// Values with every hazard of a tile: wide exponents, zeros, subnormals, NaN and Inf in a few
// tiles, from a printed seed.
std::vector<float> hazard_values(std::size_t rows, std::size_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> x(rows * cols);
  for (float& v : x) {
    const uint64_t k = rng() % 64;
    if (k == 0) {
      v = 0.0f;
    } else if (k == 1) {
      v = std::ldexp(1.0f, -140) * static_cast<float>(rng() % 100);  // fp32 subnormal
    } else if (k == 2 && rng() % 8 == 0) {
      v = rng() % 2 ? kNan : -kInf;
    } else {
      v = std::ldexp(static_cast<float>(static_cast<int64_t>(rng() % 2001) - 1000) / 997.0f,
                     static_cast<int>(rng() % 40) - 20);
    }
  }
  return x;
}

std::vector<float> transposed(const std::vector<float>& x, std::size_t rows, std::size_t cols) {
  std::vector<float> t(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
  }
  return t;
}

// Guards against a 2D quantizer whose tile is not square or whose grid is indexed (row, col) on
// one side and (col, row) on the other: W^T's codes are W's transposed and its scale grid is
// W's grid transposed, at every coordinate, for partial tiles and hazard values, under every
// convention with an MX quantizer (the identity does not depend on the scale rule).
TEST(MxQuant2d, TransposeGivesTransposedCodesAndScales) {
  const std::size_t shapes[][2] = {{1, 1},   {1, 33},  {31, 65},  {32, 32},
                                   {33, 97}, {64, 70}, {100, 45}, {2, 130}};
  int conventions = 0;
  for (const Convention& conv : all_conventions()) {
    const auto policy = mx_policy(conv);
    if (!policy || !defines(conv, Format::kE4M3FN)) continue;
    ++conventions;
    uint64_t seed = 7;
    for (const auto& s : shapes) {
      const std::size_t rows = s[0], cols = s[1];
      SCOPED_TRACE(std::string(conv.name) + " " + std::to_string(rows) + " x " +
                   std::to_string(cols) + " seed " + std::to_string(seed));
      const std::vector<float> x = hazard_values(rows, cols, seed++);
      const Mx2dQuantized a = quantize_mx_2d(x, rows, cols, Format::kE4M3FN, *policy);
      const Mx2dQuantized b =
          quantize_mx_2d(transposed(x, rows, cols), cols, rows, Format::kE4M3FN, *policy);
      ASSERT_EQ(a.scale_rows(), b.scale_cols());
      ASSERT_EQ(a.scale_cols(), b.scale_rows());
      for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) {
          ASSERT_EQ(a.data[r * cols + c], b.data[c * rows + r]) << "element " << r << "," << c;
        }
      }
      for (std::size_t i = 0; i < a.scale_rows(); ++i) {
        for (std::size_t j = 0; j < a.scale_cols(); ++j) {
          ASSERT_EQ(a.scales[i * a.scale_cols() + j], b.scales[j * b.scale_cols() + i])
              << "tile " << i << "," << j;
        }
      }
    }
  }
  EXPECT_GE(conventions, 4);  // transformer_engine, ocp_mx, torchao_floor, torchao_rceil, ...
}

// Guards against a 2D quantizer that pads a partial tile differently from the 1x32 one: a
// one-row tensor has 1 x 32 tiles, which are the 1x32 blocks, so both quantizers agree on every
// byte (codes and scales), for each convention with an MX quantizer.
TEST(MxQuant2d, OneRowEqualsTheOneByThirtyTwoQuantizer) {
  int conventions = 0;
  for (const Convention& conv : all_conventions()) {
    const auto policy = mx_policy(conv);
    if (!policy || !defines(conv, Format::kE4M3FN)) continue;
    ++conventions;
    SCOPED_TRACE(std::string(conv.name));
    const std::vector<float> x = hazard_values(1, 161, 3);
    const Mx2dQuantized a = quantize_mx_2d(x, 1, 161, Format::kE4M3FN, *policy);
    const MxQuantized b = quantize_mx(x, 1, 161, Format::kE4M3FN, *policy);
    EXPECT_EQ(a.scales, b.scales);
    EXPECT_EQ(a.data, b.data);
  }
  EXPECT_GE(conventions, 4);
}

// Guards against an amax over 1x32 (a row's block) or 32x1 (a column's block) instead of the
// 32 x 32 tile, and against a grid indexed with the wrong stride. 64 x 64 ones, one element
// 1792 = 448 * 4 at (40, 5), in tile (1, 0). TE's RCEIL (docs/formats.md §3.4): a tile of ones
// has fl32(1 * fl32(1/448)) in (2^-9, 2^-8], ceil 2^-8, byte 127 - 8 = 119, and each 1 scales to
// 2^8 = 256, E4M3FN 0x78 (exponent 8 + 7 = 15, mantissa 0); tile (1, 0) has 1792 / 448 = 4 =
// 2^2 exactly, byte 129, so its ones become 0.25 (0x28: exponent -2 + 7 = 5) and 1792 becomes 448
// (0x7E).
TEST(MxQuant2d, HandCaseTellsTheTileFromRowAndColumnBlocks) {
  std::vector<float> x(64 * 64, 1.0f);
  x[40 * 64 + 5] = 1792.0f;
  const Mx2dQuantized q = quantize_mx_2d(x, 64, 64, Format::kE4M3FN, te());
  ASSERT_EQ(q.scale_rows(), 2u);
  ASSERT_EQ(q.scale_cols(), 2u);
  EXPECT_EQ(q.scales, (std::vector<uint8_t>{119, 119, 129, 119}));
  EXPECT_EQ(q.data[40 * 64 + 5], 0x7E);
  EXPECT_EQ(q.data[63 * 64 + 31], 0x28);  // same tile, another row and column
  EXPECT_EQ(q.data[32 * 64 + 0], 0x28);   // the tile's first element
  EXPECT_EQ(q.data[40 * 64 + 40], 0x78);  // same row, next tile: a 1xK block would scale it
  EXPECT_EQ(q.data[10 * 64 + 5], 0x78);   // same column, tile above: a 32x1 block would too
  EXPECT_EQ(q.data[31 * 64 + 31], 0x78);
  EXPECT_EQ(q.data[63 * 64 + 63], 0x78);
}

// Guards against TE's replicated storage drifting from the grid: the rowwise 1x32 form repeats
// tile (i, j) on rows 32 i .. 32 i + 31 of scale column j, the columnwise 32x1 form on columns
// 32 j .. 32 j + 31 of scale row i (a partial last tile only as far as the tensor goes).
TEST(MxQuant2d, ReplicatedRowwiseAndColumnwiseScales) {
  std::vector<float> x(40 * 70, 1.0f);
  x[35 * 70 + 65] = 1792.0f;  // tile (1, 2): byte 129; every other tile 119
  const Mx2dQuantized q = quantize_mx_2d(x, 40, 70, Format::kE4M3FN, te());
  const std::vector<uint8_t> row = rowwise_scales_of_2d(q);
  const std::vector<uint8_t> col = colwise_scales_of_2d(q);
  ASSERT_EQ(row.size(), 40u * 3u);
  ASSERT_EQ(col.size(), 2u * 70u);
  for (std::size_t r = 0; r < 40; ++r) {
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_EQ(row[r * 3 + j], (r >= 32 && j == 2) ? 129 : 119) << r << "," << j;
    }
  }
  for (std::size_t i = 0; i < 2; ++i) {
    for (std::size_t c = 0; c < 70; ++c) {
      EXPECT_EQ(col[i * 70 + c], (i == 1 && c >= 64) ? 129 : 119) << i << "," << c;
    }
  }
}

// Guards against a NaN or Inf in one tile leaking into its neighbours, and pins TE's edges
// (docs/formats.md §3.4): fmaxf skips the NaN (the tile keeps the others' scale, the NaN element
// is the canonical NaN 0x7F), an Inf makes amax Inf and the saturating encode gives 0xFE.
TEST(MxQuant2d, NanAndInfStayInTheirTile) {
  std::vector<float> x(32 * 64, 1.0f);
  x[3 * 64 + 4] = kNan;    // tile (0, 0)
  x[30 * 64 + 40] = kInf;  // tile (0, 1)
  const Mx2dQuantized q = quantize_mx_2d(x, 32, 64, Format::kE4M3FN, te());
  EXPECT_EQ(q.scales, (std::vector<uint8_t>{119, 0xFE}));
  EXPECT_EQ(q.data[3 * 64 + 4], 0x7F);
  EXPECT_EQ(q.data[0], 0x78);
  EXPECT_EQ(q.data[30 * 64 + 40], 0x7E);  // Inf * 2^-127 = Inf, saturated
}

// Guards against bad input crashing instead of being refused: a size that does not match the
// shape, and a non-MX element format (bf16, e8m0).
TEST(MxQuant2d, RefusesBadInput) {
  const std::vector<float> x(10, 1.0f);
  EXPECT_THROW(quantize_mx_2d(x, 3, 4, Format::kE4M3FN, te()), std::invalid_argument);
  EXPECT_THROW(quantize_mx_2d(x, 2, 5, Format::kBF16, te()), std::invalid_argument);
  EXPECT_THROW(quantize_mx_2d(x, 2, 5, Format::kE8M0, te()), std::invalid_argument);
}

std::string quant_2d_plugin(const std::string& impl) {
  return std::string(MXGATE_TEST_PLUGIN_DIR) + "/libquant_2d.so:" + impl;
}

properties::RunResult run_on_plugin(const std::string& property, const std::string& impl,
                                    properties::Coverage* cov = nullptr) {
  gpu::HostBackend be;
  const impl::Implementation& im = *impl::resolve(quant_2d_plugin(impl)).front();
  properties::RunOptions opts;
  opts.cases = 100;
  return properties::run_property(*properties::find_property(property),
                                  properties::Context{&be, {}, cov, &im}, opts);
}

// Guards against the 32 x 32 block being lost between a plugin's contract and the table that
// names it (the properties would then never pick a 2D op).
TEST(MxQuant2dPlugin, LoadsWithTheNamedBlock) {
  const impl::Op* op =
      impl::resolve(quant_2d_plugin("quant_2d")).front()->find_op("quantize_mx_2d");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->family, impl::Family::kQuantizeMx);
  const contract::ScaleBlock* b =
      contract::find_scale_block(op->family, op->contract.a_block_rows, op->contract.a_block_cols);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->name, "mx_2d_32x32");
  EXPECT_EQ(contract::find_scale_block(impl::Family::kQuantizeMx, 1, 32)->name, "mx_1x32");
  EXPECT_EQ(contract::find_scale_block(impl::Family::kQuantizeMx, 32, 1), nullptr);
}

// Guards against the 2D properties not reaching a plugin's op, or failing a correct one: the
// correct C quantizer passes both over 100 cases, none unsupported, with grids of several tile
// rows and partial tiles among them.
TEST(MxQuant2dPlugin, CorrectQuantizerPassesBoth) {
  for (const char* property : {"quantize_2d.bit_exact", "metamorphic.quantize_2d_transpose"}) {
    properties::Coverage cov;
    const properties::RunResult r = run_on_plugin(property, "quant_2d", &cov);
    EXPECT_TRUE(r.passed) << property << ": " << (r.failure ? r.failure->what : r.message)
                          << (r.counterexample ? "\n" + r.counterexample->describe() : "");
    EXPECT_EQ(r.cases, 100) << property;
    EXPECT_EQ(r.unsupported, 0) << property;
    EXPECT_GT(cov.count("op:quantize_mx_2d"), 0u) << property;
    EXPECT_GT(cov.count("tile:rows>32"), 0u) << property;
    EXPECT_GT(cov.count("tile:partial_rows"), 0u) << property;
  }
}

// Guards against the properties missing the two 2D bugs (an amax over a column, not the tile; a
// transposed grid): each fails both properties, shrinks, and names the first wrong byte.
TEST(MxQuant2dPlugin, PlantedFaultsAreFoundAndLocated) {
  for (const char* impl : {"quant_2d_faulty_column_amax", "quant_2d_faulty_grid_transposed"}) {
    for (const char* property : {"quantize_2d.bit_exact", "metamorphic.quantize_2d_transpose"}) {
      SCOPED_TRACE(std::string(impl) + " under " + property);
      const properties::RunResult r = run_on_plugin(property, impl);
      ASSERT_FALSE(r.passed);
      ASSERT_TRUE(r.counterexample.has_value());
      ASSERT_TRUE(r.failure.has_value() && r.failure->where.has_value()) << r.failure->what;
      EXPECT_LE(r.counterexample->num("rows"), 64u) << r.counterexample->describe();
    }
  }
}

}  // namespace
}  // namespace mxgate
