#include "properties/crafted_gemm.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <tuple>

namespace mxgate::properties {
namespace {

using impl::Dtype;
using impl::Family;
using impl::Layout;

std::string where(const impl::Op& op) { return op.impl + "/" + op.name; }

// The scale grid of one operand: for each block of `block_rows` x `block_cols` (an MX block: 1 x
// 32) the crafted scale of its first element, which must hold for every element of the block.
struct Grid {
  std::vector<float> values;  // ceil(rows / block_rows) x ceil(k / block_cols), row-major
  std::optional<std::string> problem;
};

Grid scale_grid(const std::function<float(std::size_t, std::size_t)>& scale, std::size_t rows,
                std::size_t k, std::size_t block_rows, std::size_t block_cols, const char* operand,
                bool power_of_two) {
  Grid g;
  const std::size_t grid_rows = (rows + block_rows - 1) / block_rows;
  const std::size_t grid_cols = (k + block_cols - 1) / block_cols;
  g.values.reserve(grid_rows * grid_cols);
  for (std::size_t br = 0; br < grid_rows; ++br) {
    for (std::size_t bc = 0; bc < grid_cols; ++bc) {
      const float s = scale(br * block_rows, bc * block_cols);
      for (std::size_t r = br * block_rows; r < std::min(rows, (br + 1) * block_rows); ++r) {
        for (std::size_t kk = bc * block_cols; kk < std::min(k, (bc + 1) * block_cols); ++kk) {
          if (std::bit_cast<uint32_t>(scale(r, kk)) != std::bit_cast<uint32_t>(s)) {
            g.problem = std::string(operand) + "'s scales are not constant over its " +
                        std::to_string(block_rows) + "x" + std::to_string(block_cols) +
                        " scale blocks (row " + std::to_string(r) + ", k " + std::to_string(kk) +
                        ")";
            return g;
          }
        }
      }
      int e = 0;
      if (power_of_two && !(std::isnormal(s) && s > 0 && std::frexp(s, &e) == 0.5f)) {
        g.problem = std::string(operand) + " scale " + std::to_string(s) +
                    " is not a positive normal power of two (an e8m0 scale)";
        return g;
      }
      g.values.push_back(s);
    }
  }
  return g;
}

// The scale layout the call uses: row-major where the op takes it, else its first buildable one.
Layout scale_layout(const impl::Op& op) {
  const impl::LayoutMask m = op.contract.a_scale_layouts;
  if (m == 0 || (m & impl::layout_bit(Layout::kRowMajor))) return Layout::kRowMajor;
  for (Layout l : impl::layouts_in(m)) {
    if (l != Layout::kAiterShuffle16x16) return l;
  }
  return Layout::kRowMajor;
}

struct Prepared {
  Operands operands;
  std::optional<std::string> problem;
};

Prepared prepare(const impl::Op& op, const CraftedGemm& g) {
  Prepared p;
  const auto fail = [&p](std::string why) {
    p.problem = std::move(why);
    return p;
  };
  const impl::Contract& c = op.contract;
  const bool mx = op.family == Family::kGemmMx;
  if (!mx && op.family != Family::kGemmBlock) {
    return fail(where(op) + " is a " + std::string(impl::to_string(op.family)) +
                " op, not an FP8 GEMM (gemm_mx, gemm_block)");
  }
  if (mx ? c.scale_dtype != Dtype::kE8m0 : c.scale_dtype != Dtype::kF32) {
    return fail(where(op) + " takes " + std::string(impl::to_string(c.scale_dtype)) +
                " scales, not the " + (mx ? "e8m0" : "f32") + " scales of its family");
  }
  if ((c.out_dtypes & impl::dtype_bit(Dtype::kF32)) == 0) {
    return fail(where(op) + " writes no f32 output (out " + impl::describe_dtypes(c.out_dtypes) +
                ")");
  }
  for (const auto& [mask, type, operand] :
       {std::tuple{c.a_dtypes, g.types.a, "A"}, std::tuple{c.b_dtypes, g.types.b, "B"}}) {
    if ((mask & impl::dtype_bit(type)) == 0) {
      return fail(where(op) + ": " + operand + " element type " +
                  std::string(impl::to_string(type)) + " not in " + impl::describe_dtypes(mask));
    }
  }
  if (auto d = impl::check_dims(where(op), c, g.m, g.n, g.k)) return fail(*d);
  if (g.a.size() != g.m * g.k || g.b.size() != g.n * g.k || !g.a_scale || !g.b_scale) {
    throw std::invalid_argument("run_crafted_gemm: codes or scales do not match M, N, K");
  }
  const BlockSizes blocks = op_blocks(op, g.m, g.n, g.k);
  const Grid sa = scale_grid(g.a_scale, g.m, g.k, blocks.a_m, blocks.a_k, "A", mx);
  if (sa.problem) return fail(where(op) + ": " + *sa.problem);
  const Grid sb = scale_grid(g.b_scale, g.n, g.k, blocks.b_n, blocks.b_k, "B", mx);
  if (sb.problem) return fail(where(op) + ": " + *sb.problem);
  Operands& o = p.operands;
  o.m = g.m;
  o.n = g.n;
  o.k = g.k;
  o.types = g.types;
  o.a = g.a;
  o.b = g.b;
  if (mx) {
    const auto e8m0 = [](const std::vector<float>& v) {
      Bytes out;
      for (float s : v) out.push_back(static_cast<uint8_t>(std::bit_cast<uint32_t>(s) >> 23));
      return out;
    };
    o.a_e8m0 = e8m0(sa.values);
    o.b_e8m0 = e8m0(sb.values);
  } else {
    o.a_f32 = sa.values;
    o.b_f32 = sb.values;
  }
  return p;
}

}  // namespace

std::optional<std::string> crafted_gemm_problem(const impl::Op& op, const CraftedGemm& g) {
  return prepare(op, g).problem;
}

std::vector<float> run_crafted_gemm(gpu::Backend& under_test, const impl::Op& op,
                                    const CraftedGemm& g) {
  const Prepared p = prepare(op, g);
  if (p.problem) throw std::invalid_argument(*p.problem);
  OpLayout layout;
  layout.scales = scale_layout(op);
  return run_gemm_op({under_test}, op, p.operands, OutputFormat::kFp32, layout).fp32;
}

}  // namespace mxgate::properties
