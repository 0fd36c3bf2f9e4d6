// Covers the FP4 scale and weight layouts against independent formulations: every closed form
// (scale_layout.h's nv_swizzle_128x4 for NVFP4 / MXFP4 scale factors, aiter_shuffle for the gfx950
// e8m0 shuffle, aiter_fp4_layout.h's a16w4 scale and weight shuffles, the FP4 weight preshuffle of
// quant_mxfp4.cu) is compared slot by slot with the composed view / permute of the Python source it
// comes from (torchao to_blocked, aiter/ops/shuffle.py), emulated here on index arrays; each is a
// bijection. Does NOT cover: the FP8 layouts (test_scale_layout.cpp, test_weight_shuffle.cpp).
#include <gtest/gtest.h>

#include <cstddef>
#include <numeric>
#include <vector>

#include "reference/aiter_fp4_layout.h"
#include "reference/scale_layout.h"
#include "reference/weight_shuffle.h"

namespace mxgate {
namespace {

using Index = std::vector<std::size_t>;

// x.view(shape).permute(perm).contiguous() on an array of source indices: out[j] = in[i] where j
// walks the permuted shape in row-major order.
Index view_permute(const Index& in, const Index& shape, const Index& perm) {
  const std::size_t n = shape.size();
  Index stride(n, 1);
  for (std::size_t d = n - 1; d > 0; --d) stride[d - 1] = stride[d] * shape[d];
  Index out(in.size()), j(n, 0);
  for (std::size_t pos = 0; pos < in.size(); ++pos) {
    std::size_t src = 0;
    for (std::size_t d = 0; d < n; ++d) src += j[d] * stride[perm[d]];
    out[pos] = in[src];
    for (std::size_t d = n; d-- > 0;) {  // next j in the permuted shape
      if (++j[d] < shape[perm[d]]) break;
      j[d] = 0;
    }
  }
  return out;
}

Index iota(std::size_t n) {
  Index v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Where each source element lands: inverse of the out -> in map.
Index landing(const Index& out_to_in) {
  Index at(out_to_in.size());
  for (std::size_t pos = 0; pos < out_to_in.size(); ++pos) at[out_to_in[pos]] = pos;
  return at;
}

// Guards against the NVFP4 / MXFP4 scale-factor swizzle differing from torchao's to_blocked
// (view(nrb,128,ncb,4).permute(0,2,1,3).reshape(-1,4,32,4).transpose(1,2)); FlashInfer's
// get_sf_out_offset_128x4 is the same closed form (docs/fp4.md §7.1). Shapes: NVFP4 K = 144 (9
// scale columns) and MXFP4 K = 224 (7), rows 130 and 256.
TEST(Fp4ScaleLayouts, NvSwizzleEqualsTorchaoToBlocked) {
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{130, 9}, {256, 7}, {1, 1}}) {
    const std::size_t rp = (rows + 127) / 128 * 128, cp = (cols + 3) / 4 * 4;
    const Index step1 = view_permute(iota(rp * cp), {rp / 128, 128, cp / 4, 4}, {0, 2, 1, 3});
    const Index step2 = view_permute(step1, {rp * cp / 512, 4, 32, 4}, {0, 2, 1, 3});
    const Index at = landing(step2);
    ASSERT_EQ(scale_storage_size(ScaleLayout::kNvSwizzle128x4, rows, cols), rp * cp);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) {
        ASSERT_EQ(scale_offset(ScaleLayout::kNvSwizzle128x4, rows, cols, r, c), at[r * cp + c])
            << rows << "x" << cols << " at (" << r << ", " << c << ")";
      }
    }
  }
}

// Guards against the gfx950 e8m0 scale shuffle (quant_mxfp4.cu fp4_scale_shuffle_id, the
// closed form of aiter_shuffle) differing from aiter/ops/shuffle.py shuffle_scale's
// view(sm//32, 2, 16, sn//8, 2, 4).permute(0, 3, 5, 2, 4, 1).
TEST(Fp4ScaleLayouts, AiterShuffleEqualsShuffleScale) {
  const std::size_t rows = 300, cols = 13, sm = 512, sn = 16;
  const Index at =
      landing(view_permute(iota(sm * sn), {sm / 32, 2, 16, sn / 8, 2, 4}, {0, 3, 5, 2, 4, 1}));
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      ASSERT_EQ(scale_offset(ScaleLayout::kAiterShuffle, rows, cols, r, c), at[r * sn + c])
          << "(" << r << ", " << c << ")";
    }
  }
}

// Guards against the a16w4 scale shuffle (quant_mxfp4.cu a16w4_shuffle_scale_id) differing from
// shuffle_scale(is_guinterleave=True) for one expert: gate_up view(2, N1, 16, K1, 2, 4)
// .permute(1, 3, 5, 2, 4, 0), else view(N1, 2, 16, K1, 2, 4).permute(0, 3, 5, 2, 4, 1); and
// against its inverse not being one.
TEST(Fp4ScaleLayouts, AiterA16w4ScaleEqualsGuinterleave) {
  const std::size_t rows = 64, cols = 16;
  for (bool gate_up : {false, true}) {
    const Index shape =
        gate_up ? Index{2, rows / 32, 16, cols / 8, 2, 4} : Index{rows / 32, 2, 16, cols / 8, 2, 4};
    const Index perm = gate_up ? Index{1, 3, 5, 2, 4, 0} : Index{0, 3, 5, 2, 4, 1};
    const Index at = landing(view_permute(iota(rows * cols), shape, perm));
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) {
        const std::size_t off = aiter_a16w4_scale_offset(rows, cols, r, c, gate_up);
        ASSERT_EQ(off, at[r * cols + c]) << "gate_up=" << gate_up << " (" << r << ", " << c << ")";
        ASSERT_EQ(aiter_a16w4_scale_inverse(rows, cols, off, gate_up), std::make_pair(r, c));
      }
    }
  }
  // Without gate_up it is the e8m0 shuffle on an unpadded shape.
  EXPECT_EQ(aiter_a16w4_scale_offset(64, 16, 37, 11, false),
            scale_offset(ScaleLayout::kAiterShuffle, 64, 16, 37, 11));
  EXPECT_THROW(aiter_a16w4_scale_offset(48, 16, 0, 0, false), std::invalid_argument);
}

// Guards against the packed-E2M1 weight shuffles differing from their Python view / permute:
// a16w4 (shuffle_weight is_guinterleave, layout (16, 16)): view(N0, 16, K0, 4, 16)
// .permute(0, 2, 3, 1, 4), gate_up view(2, N0, 16, K0, 4, 16).permute(1, 0, 3, 4, 2, 5); and the
// e8m0_shuffle weight path of quant_mxfp4.cu ((x>>4)*16*K_pk + (x&15)*16 + (y>>1)*512 + (y&1)*256)
// being shuffle_weight(layout (16, 16)) on the packed bytes.
TEST(Fp4WeightLayouts, A16w4AndPreshuffle) {
  const std::size_t n = 32, kb = 128;
  for (bool gate_up : {false, true}) {
    const Index shape =
        gate_up ? Index{2, n / 32, 16, kb / 64, 4, 16} : Index{n / 16, 16, kb / 64, 4, 16};
    const Index perm = gate_up ? Index{1, 0, 3, 4, 2, 5} : Index{0, 2, 3, 1, 4};
    const Index at = landing(view_permute(iota(n * kb), shape, perm));
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t b = 0; b < kb; ++b) {
        ASSERT_EQ(aiter_a16w4_weight_offset(n, kb, r, b, gate_up), at[r * kb + b])
            << "gate_up=" << gate_up << " (" << r << ", " << b << ")";
      }
    }
  }
  for (std::size_t x = 0; x < n; ++x) {
    for (std::size_t b = 0; b < kb; ++b) {
      const std::size_t y = b / 16, i = b % 16;
      const std::size_t kernel =
          (x >> 4) * 16 * kb + (x & 15) * 16 + (y >> 1) * 512 + (y & 1) * 256 + i;
      ASSERT_EQ(shuffle_weight_offset(n, kb, 1, x, b), kernel) << "(" << x << ", " << b << ")";
    }
  }
}

}  // namespace
}  // namespace mxgate
