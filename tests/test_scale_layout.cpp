// Covers reference/scale_layout: the five scale layouts checked against an independent
// "pad + view + permute + contiguous" formulation written the way the source libraries write
// it (docs/layouts.md §1.4, §3.1, §4), bijection/inverse/padding properties, pack/unpack round
// trips, CLI names, and the row/column-major and TMA-alignment coincidences (docs/layouts.md §2.2,
// §2.3). Does not cover: the e8m0/fp32 values themselves, GEMM consumers, or DeepGEMM's
// packed-int32 UE8M0 layout (not a layout of this module).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "reference/scale_layout.h"
#include "tests/tensor_view.h"

namespace mxgate {
namespace {

using Labels = std::vector<std::int64_t>;
constexpr std::int64_t kPadLabel = -1;

// torch semantics: view contiguous `src` as `shape`, then `.permute(perm)`, then `.contiguous()`.
Labels permute_contiguous(const Labels& src, const std::vector<std::size_t>& shape,
                          const std::vector<std::size_t>& perm) {
  const std::vector<std::size_t> src_of = test_support::permute_source_index(shape, perm);
  EXPECT_EQ(src_of.size(), src.size()) << "view shape does not match the data";
  Labels out;
  out.reserve(src_of.size());
  for (std::size_t i : src_of) {
    out.push_back(i < src.size() ? src[i] : kPadLabel);
  }
  return out;
}

// torch.nn.functional.pad of a row-major R x C matrix to Rp x Cp (bottom/right).
Labels pad2d(const Labels& src, std::size_t r, std::size_t c, std::size_t rp, std::size_t cp) {
  Labels out(rp * cp, kPadLabel);
  for (std::size_t i = 0; i < r; ++i) {
    for (std::size_t j = 0; j < c; ++j) {
      out[i * cp + j] = src[i * c + j];
    }
  }
  return out;
}

std::size_t up(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }

// Label of logical scale (r, c) is r*C + c: every slot of a layout is identifiable.
Labels iota_labels(std::size_t r, std::size_t c) {
  Labels out(r * c);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<std::int64_t>(i);
  }
  return out;
}

// The layouts as the source code builds them.
Labels composed_col_major(std::size_t r, std::size_t c) {
  return permute_contiguous(iota_labels(r, c), {r, c}, {1, 0});  // .t().contiguous()
}

Labels composed_tma_col_major(std::size_t r, std::size_t c) {
  // empty_strided((M, G), (1, align(M, 4))): a column-major buffer with align4(M) rows
  // (docs/layouts.md §3.1).
  const std::size_t rp = up(r, 4);
  return permute_contiguous(pad2d(iota_labels(r, c), r, c, rp, c), {rp, c}, {1, 0});
}

Labels composed_torchao_to_blocked(std::size_t r, std::size_t c) {
  // view(nrb,128,ncb,4).permute(0,2,1,3).reshape(-1,4,32,4).transpose(1,2) (docs/layouts.md §4).
  const std::size_t rp = up(r, 128), cp = up(c, 4);
  Labels x = pad2d(iota_labels(r, c), r, c, rp, cp);
  x = permute_contiguous(x, {rp / 128, 128, cp / 4, 4}, {0, 2, 1, 3});
  return permute_contiguous(x, {rp / 128 * cp / 4, 4, 32, 4}, {0, 2, 1, 3});
}

Labels composed_vllm_swizzle_mxfp8(std::size_t r, std::size_t c) {
  // view(nmt,4,32,nkt,4).transpose(1,3) (docs/layouts.md §4).
  const std::size_t rp = up(r, 128), cp = up(c, 4);
  return permute_contiguous(pad2d(iota_labels(r, c), r, c, rp, cp), {rp / 128, 4, 32, cp / 4, 4},
                            {0, 3, 2, 1, 4});
}

Labels composed_aiter_shuffle_scale(std::size_t r, std::size_t c) {
  // view(sm//32, 2, 16, sn//8, 2, 4).permute(0,3,5,2,4,1) after padding to (256, 8)
  // (docs/layouts.md §1.4).
  const std::size_t sm = up(r, 256), sn = up(c, 8);
  return permute_contiguous(pad2d(iota_labels(r, c), r, c, sm, sn), {sm / 32, 2, 16, sn / 8, 2, 4},
                            {0, 3, 5, 2, 4, 1});
}

Labels packed_labels(ScaleLayout layout, std::size_t r, std::size_t c) {
  const Labels logical = iota_labels(r, c);
  return pack_scales<std::int64_t>(layout, r, c, logical, kPadLabel);
}

// Shapes that are multiples of no tile, of every tile, and the degenerate R=1 / C=1 cases.
const std::vector<std::size_t> kRows = {1,   2,   3,   4,   5,   7,   31,  32, 33,
                                        127, 128, 129, 255, 256, 257, 300, 513};
const std::vector<std::size_t> kCols = {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 33};

// Guards against a CLI name that does not parse back to its layout, or a typo being accepted.
TEST(ScaleLayout, CliNamesRoundTripAndRejectUnknown) {
  for (ScaleLayout layout : all_scale_layouts()) {
    EXPECT_EQ(parse_scale_layout(to_string(layout)), layout);
  }
  EXPECT_EQ(all_scale_layouts().size(), 5u);
  EXPECT_EQ(parse_scale_layout("nv_swizzle_128x4"), ScaleLayout::kNvSwizzle128x4);
  EXPECT_EQ(parse_scale_layout(""), std::nullopt);
  EXPECT_EQ(parse_scale_layout("ROW_MAJOR"), std::nullopt);
  EXPECT_EQ(parse_scale_layout("nv_swizzle"), std::nullopt);
}

// Guards against wrong padding granularity (e.g. padding AITER rows to 32 instead of 256).
TEST(ScaleLayout, StorageSizesIncludeTilePadding) {
  EXPECT_EQ(scale_storage_size(ScaleLayout::kRowMajor, 300, 13), 3900u);
  EXPECT_EQ(scale_storage_size(ScaleLayout::kColMajor, 301, 13), 3913u);
  EXPECT_EQ(scale_storage_size(ScaleLayout::kTmaColMajor, 300, 13), 3900u);
  EXPECT_EQ(scale_storage_size(ScaleLayout::kTmaColMajor, 301, 13), 304u * 13);
  EXPECT_EQ(scale_storage_size(ScaleLayout::kNvSwizzle128x4, 300, 13), 384u * 16);
  EXPECT_EQ(scale_storage_size(ScaleLayout::kAiterShuffle, 300, 13), 512u * 16);
  EXPECT_EQ(scale_storage_size(ScaleLayout::kAiterShuffle, 1, 1), 256u * 8);
  EXPECT_EQ(scale_storage_size(ScaleLayout::kNvSwizzle128x4, 0, 13), 0u);
}

// Guards against swapped digits in the closed forms; values worked by hand from docs/layouts.md §4
// (NV: (r%32)*16 + ((r%128)/32)*4 + c%4, 512 per tile) and §1.4 (AITER e8m0 shuffle).
TEST(ScaleLayout, HandWorkedOffsets) {
  struct Case {
    ScaleLayout layout;
    std::size_t rows, cols, r, c;
    std::size_t want;
  };
  constexpr ScaleLayout kNv = ScaleLayout::kNvSwizzle128x4, kAi = ScaleLayout::kAiterShuffle;
  const Case cases[] = {
      {kNv, 300, 13, 0, 1, 1},
      {kNv, 300, 13, 1, 0, 16},
      {kNv, 300, 13, 32, 0, 4},
      {kNv, 300, 13, 0, 4, 512},
      {kNv, 300, 13, 128, 0, 4u * 512},  // Cp/4 = 4 column tiles per 128-row band
      {kNv, 300, 13, 299, 12, (2u * 4 + 3) * 512 + 11 * 16 + 1 * 4 + 0},
      {kAi, 300, 13, 16, 0, 1},
      {kAi, 300, 13, 0, 4, 2},
      {kAi, 300, 13, 1, 0, 4},
      {kAi, 300, 13, 0, 1, 64},
      {kAi, 300, 13, 0, 8, 256},
      {kAi, 300, 13, 32, 0, 16u * 32},  // sn = 16 padded columns per 32-row band
      {ScaleLayout::kTmaColMajor, 5, 3, 1, 2, 2u * 8 + 1},
      {ScaleLayout::kColMajor, 5, 3, 1, 2, 2u * 5 + 1},
      {ScaleLayout::kRowMajor, 5, 3, 1, 2, 1u * 3 + 2},
  };
  for (const Case& t : cases) {
    EXPECT_EQ(scale_offset(t.layout, t.rows, t.cols, t.r, t.c), t.want)
        << static_cast<int>(t.layout) << " " << t.rows << "x" << t.cols << " at (" << t.r << ", "
        << t.c << ")";
  }
}

// Guards against a closed form that drifts from the library code it models: every layout must
// equal the source's own pad/view/permute composition, padding slots included.
TEST(ScaleLayout, MatchesViewPermuteCompositions) {
  for (std::size_t r : kRows) {
    for (std::size_t c : kCols) {
      SCOPED_TRACE(testing::Message() << "R=" << r << " C=" << c);
      EXPECT_EQ(packed_labels(ScaleLayout::kRowMajor, r, c), iota_labels(r, c));
      EXPECT_EQ(packed_labels(ScaleLayout::kColMajor, r, c), composed_col_major(r, c));
      EXPECT_EQ(packed_labels(ScaleLayout::kTmaColMajor, r, c), composed_tma_col_major(r, c));
      const Labels nv = packed_labels(ScaleLayout::kNvSwizzle128x4, r, c);
      EXPECT_EQ(nv, composed_torchao_to_blocked(r, c));
      EXPECT_EQ(nv, composed_vllm_swizzle_mxfp8(r, c));
      EXPECT_EQ(packed_labels(ScaleLayout::kAiterShuffle, r, c),
                composed_aiter_shuffle_scale(r, c));
    }
  }
}

// Guards against collisions (two scales in one slot), out-of-range offsets, and an inverse that
// misreports a data slot as padding or vice versa.
TEST(ScaleLayout, OffsetIsABijectionOntoNonPaddingSlots) {
  for (ScaleLayout layout : all_scale_layouts()) {
    for (std::size_t r : kRows) {
      for (std::size_t c : kCols) {
        SCOPED_TRACE(testing::Message() << to_string(layout) << " R=" << r << " C=" << c);
        const std::size_t storage = scale_storage_size(layout, r, c);
        std::vector<bool> used(storage, false);
        for (std::size_t i = 0; i < r; ++i) {
          for (std::size_t j = 0; j < c; ++j) {
            const std::size_t off = scale_offset(layout, r, c, i, j);
            ASSERT_LT(off, storage);
            ASSERT_FALSE(used[off]) << "collision at (" << i << ", " << j << ")";
            used[off] = true;
            ASSERT_EQ(scale_inverse(layout, r, c, off), std::pair(i, j));
          }
        }
        for (std::size_t off = 0; off < storage; ++off) {
          ASSERT_EQ(scale_inverse(layout, r, c, off).has_value(), used[off]) << "offset " << off;
        }
      }
    }
  }
}

// Guards against pack/unpack disagreeing, padding left uninitialised or filled with the wrong
// value, for both element types the gate stores (e8m0 bytes and fp32 scales).
TEST(ScaleLayout, PackUnpackRoundTripsAndFillsPadding) {
  for (ScaleLayout layout : all_scale_layouts()) {
    for (auto [r, c] : {std::pair<std::size_t, std::size_t>{300, 13}, {1, 1}, {33, 5}}) {
      SCOPED_TRACE(testing::Message() << to_string(layout) << " R=" << r << " C=" << c);
      std::vector<std::uint8_t> bytes(r * c);
      std::vector<float> floats(r * c);
      for (std::size_t i = 0; i < r * c; ++i) {
        bytes[i] = static_cast<std::uint8_t>(i % 255);  // never 0xFF, the pad byte
        floats[i] = static_cast<float>(i) + 0.5f;
      }
      const auto packed = pack_scales<std::uint8_t>(layout, r, c, bytes, 0xFF);
      ASSERT_EQ(packed.size(), scale_storage_size(layout, r, c));
      EXPECT_EQ(unpack_scales<std::uint8_t>(layout, r, c, packed), bytes);
      const auto packed_f = pack_scales<float>(layout, r, c, floats, -1.0f);
      EXPECT_EQ(unpack_scales<float>(layout, r, c, packed_f), floats);
      for (std::size_t off = 0; off < packed.size(); ++off) {
        if (!scale_inverse(layout, r, c, off)) {
          ASSERT_EQ(packed[off], 0xFF) << "padding offset " << off;
          ASSERT_EQ(packed_f[off], -1.0f) << "padding offset " << off;
        }
      }
    }
  }
}

// Guards the premise of bug class Z2 (docs/layouts.md §2.2): row- and column-major scales must
// differ whenever R > 1 and C > 1, or the gate could not tell them apart.
TEST(ScaleLayout, RowAndColumnMajorDifferForRowsAndColsAboveOne) {
  for (std::size_t r : kRows) {
    for (std::size_t c : kCols) {
      if (r == 1 || c == 1) {
        continue;
      }
      EXPECT_NE(packed_labels(ScaleLayout::kRowMajor, r, c),
                packed_labels(ScaleLayout::kColMajor, r, c))
          << "R=" << r << " C=" << c;
    }
  }
}

// Guards the other half of docs/layouts.md §2.2: "only M=1 makes row- and column-major
// byte-identical" (likewise C=1), which is why such shapes cannot detect a layout mix-up.
TEST(ScaleLayout, RowAndColumnMajorAreIdenticalForOneRowOrOneColumn) {
  for (std::size_t n : kRows) {
    EXPECT_EQ(packed_labels(ScaleLayout::kRowMajor, 1, n),
              packed_labels(ScaleLayout::kColMajor, 1, n));
    EXPECT_EQ(packed_labels(ScaleLayout::kRowMajor, n, 1),
              packed_labels(ScaleLayout::kColMajor, n, 1));
  }
}

// Guards the TMA-aligned trap (docs/layouts.md §2.3): a consumer assuming ld = M reads a
// (1, align4(M)) buffer correctly only when M % 4 == 0.
TEST(ScaleLayout, TmaColumnMajorEqualsColumnMajorExactlyWhenRowsDivisibleByFour) {
  for (std::size_t r : kRows) {
    for (std::size_t c : kCols) {
      const Labels tma = packed_labels(ScaleLayout::kTmaColMajor, r, c);
      const Labels col = packed_labels(ScaleLayout::kColMajor, r, c);
      if (r % 4 == 0) {
        EXPECT_EQ(tma, col) << "R=" << r << " C=" << c;
        continue;
      }
      EXPECT_NE(tma, col) << "R=" << r << " C=" << c;
      if (c > 1) {  // the first R*C slots (what an ld = M reader touches) differ as well
        const Labels prefix(tma.begin(), tma.begin() + static_cast<std::ptrdiff_t>(col.size()));
        EXPECT_NE(prefix, col) << "R=" << r << " C=" << c;
      }
    }
  }
}

// Guards against out-of-range coordinates, wrong buffer sizes and overflowing shapes being
// turned into silent out-of-bounds accesses instead of errors.
TEST(ScaleLayout, RejectsBadInput) {
  const ScaleLayout nv = ScaleLayout::kNvSwizzle128x4;
  constexpr std::size_t kNvStorage = 6144;  // padded 384 x 16 for R=300, C=13
  EXPECT_THROW(scale_offset(nv, 300, 13, 300, 0), std::invalid_argument);
  EXPECT_THROW(scale_offset(nv, 300, 13, 0, 13), std::invalid_argument);
  EXPECT_THROW(scale_inverse(nv, 300, 13, kNvStorage), std::invalid_argument);
  EXPECT_NO_THROW(scale_inverse(nv, 300, 13, kNvStorage - 1));
  const std::vector<std::uint8_t> short_buf(10);
  EXPECT_THROW(pack_scales<std::uint8_t>(nv, 4, 4, short_buf, 0), std::invalid_argument);
  EXPECT_THROW(unpack_scales<std::uint8_t>(nv, 4, 4, short_buf), std::invalid_argument);
  const std::size_t huge = std::numeric_limits<std::size_t>::max();
  for (ScaleLayout layout : all_scale_layouts()) {
    EXPECT_THROW(scale_storage_size(layout, huge, 2), std::invalid_argument) << to_string(layout);
    EXPECT_THROW(scale_storage_size(layout, 2, huge), std::invalid_argument) << to_string(layout);
  }
}

}  // namespace
}  // namespace mxgate
