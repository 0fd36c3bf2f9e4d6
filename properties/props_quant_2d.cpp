// 2D MX quantization properties over the quantize_mx ops whose contract declares the
// mx_2d_32x32 scale block (contract::scale_blocks: one E8M0 scale per 32 x 32 tile,
// TransformerEngine's MXFP8 2D weight scaling, docs/layouts.md §9):
//   quantize_2d.bit_exact                codes and the ceil(M/32) x ceil(K/32) scale grid
//                                        byte-for-byte against reference/mx_quant_2d.h under
//                                        the claimed convention
//   metamorphic.quantize_2d_transpose    the op on W and on W^T (after W is checked against the
//                                        reference): transposed codes, transposed scale grid
// Expected bytes come from the reference (reference/mx_quant_2d.h), never from the op. Not
// covered here: the 1x32 quantizers (props_quant.cpp), TE's replicated 1D storage of the grid
// (an op declares the logical grid; reference/mx_quant_2d.h expands it for tests).
#include <rapidcheck.h>

#include <string>
#include <vector>

#include "contract/contract.h"
#include "impl/calls.h"
#include "impl/harness.h"
#include "properties/cast_values.h"
#include "properties/gemm_operands.h"
#include "properties/props.h"
#include "properties/scale_io.h"
#include "properties/values.h"
#include "reference/convention.h"
#include "reference/format.h"
#include "reference/fp_encode.h"
#include "reference/mx_quant_2d.h"
#include "reference/quant_conventions.h"

namespace mxgate::properties {

namespace {

constexpr impl::DtypeMask kFloatIn = impl::dtype_bit(Dtype::kF32) | impl::dtype_bit(Dtype::kBf16);

bool has_mx_policy(const std::string& name) {
  const Convention* c = find_convention(name);
  return c != nullptr && mx_policy(*c).has_value();
}

// A quantize_mx op of the 32 x 32 block with e8m0 scales, fp32 or bf16 in, an FP8 element out,
// and only conventions the reference has an MX quantizer for.
bool accepts_2d(const Op& op) {
  const impl::Contract& c = op.contract;
  const contract::ScaleBlock* b =
      contract::find_scale_block(Family::kQuantizeMx, c.a_block_rows, c.a_block_cols);
  if (b == nullptr || b->name != "mx_2d_32x32" || c.scale_dtype != Dtype::kE8m0) return false;
  if ((c.a_dtypes & kFloatIn) == 0 || !first_fp8(c.out_dtypes)) return false;
  if (c.conventions.empty()) return false;
  for (const std::string& n : c.conventions) {
    if (!has_mx_policy(n)) return false;
  }
  return true;
}

// Row counts around the tile edge (one row, a partial tile, one and two whole tiles, one past).
rc::Gen<std::size_t> gen_rows() { return pick<std::size_t>({1, 33, 2, 31, 32, 40, 64, 65, 97}); }

rc::Gen<ValueClass> gen_values() {
  using V = ValueClass;
  return pick<V>({V::kInts, V::kNormal, V::kWide, V::kNarrow, V::kSubnormal, V::kTies,
                  V::kSaturation, V::kZero, V::kNanInf, V::kLog2Hazard, V::kBf16Carry, V::kTiny,
                  V::kPow2Ratio});
}

rc::Gen<std::string> gen_input(const Op& op) {
  const bool f32 = (op.contract.a_dtypes & impl::dtype_bit(Dtype::kF32)) != 0;
  const bool bf16 = (op.contract.a_dtypes & impl::dtype_bit(Dtype::kBf16)) != 0;
  if (f32 && bf16) return pick<std::string>({"fp32", "fp32", "bf16"});
  return rc::gen::just<std::string>(f32 ? "fp32" : "bf16");
}

// The case generator of both properties (the transpose one fits each dimension to both the M and
// the K clause, since W^T swaps them).
rc::Gen<Case> gen_2d(const Ops& ops, const char* property, bool both_ways) {
  return gen_over_ops(ops, [property, both_ways](const Op* op) {
    const impl::Contract& ct = op->contract;
    return rc::gen::apply(
        [op, property, both_ways](const std::string& conv, const std::string& input,
                                  std::size_t rows, std::size_t cols, ValueClass vc,
                                  const std::string& max_at, uint64_t seed) {
          const impl::Contract& ct = op->contract;
          rows = fit_dim(rows, ct.m);
          cols = fit_dim(cols, ct.k);
          if (both_ways) {
            rows = fit_dim(rows, ct.k);
            cols = fit_dim(cols, ct.m);
          }
          Case c(property);
          c.set("op", op->name).set("conv", conv).set("input", input);
          c.set("rows", rows).set("cols", cols);
          c.set("values", to_string(vc)).set("max_at", max_at).set("seed", seed);
          return c;
        },
        pick(ct.conventions), gen_input(*op), gen_rows(), gen_k(ct.k, 1), gen_values(),
        pick<std::string>({"first", "last", "middle"}), gen_seed());
  });
}

struct Input2d {
  std::vector<float> x;        // what the reference quantizes (bf16-rounded for bf16 input)
  std::vector<uint16_t> bf16;  // the bits uploaded for bf16 input
};

Input2d make_input(const Case& c, std::size_t rows, std::size_t cols, bool bf16) {
  Input2d in;
  in.x = make_values(enum_field<ValueClass>(c, "values", parse_value_class), rows, cols,
                     c.num("seed"), enum_field<MaxAt>(c, "max_at", parse_max_at), kMx2dTile);
  if (bf16) {
    for (float& v : in.x) {
      in.bf16.push_back(static_cast<uint16_t>(encode(Format::kBF16, v, kIeeeDefault)));
      v = float_of(static_cast<uint32_t>(in.bf16.back()) << 16);
    }
  }
  return in;
}

// x^T of a rows x cols input (both the fp32 values and the bf16 bits).
Input2d transposed(const Input2d& in, std::size_t rows, std::size_t cols) {
  Input2d t = in;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t col = 0; col < cols; ++col) {
      t.x[col * rows + r] = in.x[r * cols + col];
      if (!in.bf16.empty()) t.bf16[col * rows + r] = in.bf16[r * cols + col];
    }
  }
  return t;
}

// One call of `op`: the codes and the logical scale grid, ceil(rows/32) x ceil(cols/32).
Mx2dQuantized run_2d(const Context& ctx, const Op& op, const std::string& conv, Dtype element,
                     const Input2d& in, std::size_t rows, std::size_t cols) {
  impl::Invocation inv(op, ctx.run());
  Mx2dQuantized got{rows, cols, *fp8_format(element), {}, {}};
  const std::size_t srows = got.scale_rows(), scols = got.scale_cols();
  const Layout sl = first_scale_layout(op.contract.a_scale_layouts);
  const uint32_t ld_align = op.contract.a_scale_ld_align;
  uint64_t ld = 0;
  const std::size_t stored = stored_size(sl, srows, scols, ld_align, &ld);
  if (!in.bf16.empty()) {
    inv.input(&impl::Call::a, bytes_of(in.bf16), rows, cols, cols, Dtype::kBf16, Layout::kRowMajor);
  } else {
    inv.input(&impl::Call::a, bytes_of(in.x), rows, cols, cols, Dtype::kF32, Layout::kRowMajor);
  }
  inv.output(&impl::Call::out, impl::tensor_bytes(element, rows, cols), rows, cols, cols, element,
             Layout::kRowMajor);
  inv.output(&impl::Call::out_scale, stored, srows, scols, ld, Dtype::kE8m0, sl);
  impl::Call call;
  call.m = rows;
  call.k = cols;
  call.convention = conv;
  got.data = inv.run_and_read(call, &impl::Call::out);
  got.scales = load_scales<uint8_t>(sl, srows, scols, inv.read(&impl::Call::out_scale), ld_align);
  return got;
}

struct Setup {
  const Op* op;
  std::string conv;
  Dtype element;
  std::size_t rows, cols;
  Input2d in;
  Mx2dQuantized want;
};

Setup setup(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const std::string& conv = c.text("conv");
  if (!has_mx_policy(conv)) {
    throw CaseError("case field 'conv': " + conv + " has no MX quantizer in the reference");
  }
  const std::string& input = c.text("input");
  if (input != "fp32" && input != "bf16") {
    throw CaseError("case field 'input' must be fp32 or bf16");
  }
  const Dtype element = *first_fp8(op.contract.out_dtypes);
  const std::size_t rows = c.num("rows"), cols = c.num("cols");
  Input2d in = make_input(c, rows, cols, input == "bf16");
  const MxPolicy policy = *mx_policy(*find_convention(conv), *fp8_format(element));
  Mx2dQuantized want = quantize_mx_2d(in.x, rows, cols, *fp8_format(element), policy);
  ctx.tag("op:" + op.name);
  ctx.tag("values:" + c.text("values"));
  ctx.tag("max_at:" + c.text("max_at"));
  tag_shape(ctx, rows, 0, cols);
  if (rows % kMx2dTile != 0) ctx.tag("tile:partial_rows");
  if (rows > kMx2dTile) ctx.tag("tile:rows>32");
  tag_e8m0(ctx, want.scales);
  return {&op, conv, element, rows, cols, std::move(in), std::move(want)};
}

std::optional<Failure> compare_2d(const std::string& what, const Mx2dQuantized& want,
                                  const Mx2dQuantized& got, Format element) {
  if (auto f = compare_codes(what + "e8m0 32x32 scale grid", Format::kE8M0, want.scale_rows(),
                             want.scale_cols(), want.scales, got.scales)) {
    return f;
  }
  return compare_codes(what + std::string(info(element).name) + " codes", element, want.rows,
                       want.cols, want.data, got.data);
}

// ---- quantize_2d.bit_exact -------------------------------------------------------------------

rc::Gen<Case> gen_bit_exact(const Context&, const Ops& ops) {
  return gen_2d(ops, "quantize_2d.bit_exact", false);
}

std::optional<Failure> check_bit_exact(const Context& ctx, const Case& c) {
  const Setup s = setup(ctx, c);
  const Mx2dQuantized got = run_2d(ctx, *s.op, s.conv, s.element, s.in, s.rows, s.cols);
  return compare_2d("", s.want, got, *fp8_format(s.element));
}

// ---- metamorphic.quantize_2d_transpose -------------------------------------------------------

rc::Gen<Case> gen_transpose(const Context&, const Ops& ops) {
  return gen_2d(ops, "metamorphic.quantize_2d_transpose", true);
}

// W first against the reference (two runs that agree with each other prove nothing alone), then
// W^T: its codes must be W's transposed and its grid W's grid transposed, at every coordinate.
std::optional<Failure> check_transpose(const Context& ctx, const Case& c) {
  const Setup s = setup(ctx, c);
  const impl::Contract& ct = s.op->contract;
  if (!ct.m.admits(s.cols) || !ct.k.admits(s.rows)) {
    throw impl::Unsupported(s.op->name + ": the transpose " + std::to_string(s.cols) + " x " +
                            std::to_string(s.rows) + " is outside the contract's M / K clauses");
  }
  const Format element = *fp8_format(s.element);
  const Mx2dQuantized w = run_2d(ctx, *s.op, s.conv, s.element, s.in, s.rows, s.cols);
  if (auto f = compare_2d("W vs reference: ", s.want, w, element)) return f;
  const Mx2dQuantized wt =
      run_2d(ctx, *s.op, s.conv, s.element, transposed(s.in, s.rows, s.cols), s.cols, s.rows);
  ctx.tag("meta:quantize_2d_transpose");
  Mx2dQuantized want_t{s.cols, s.rows, element, std::vector<uint8_t>(w.data.size()),
                       std::vector<uint8_t>(w.scales.size())};
  for (std::size_t r = 0; r < s.rows; ++r) {
    for (std::size_t col = 0; col < s.cols; ++col) {
      want_t.data[col * s.rows + r] = w.data[r * s.cols + col];
    }
  }
  for (std::size_t i = 0; i < w.scale_rows(); ++i) {
    for (std::size_t j = 0; j < w.scale_cols(); ++j) {
      want_t.scales[j * w.scale_rows() + i] = w.scales[i * w.scale_cols() + j];
    }
  }
  return compare_2d("W^T vs W transposed: ", want_t, wt, element);
}

}  // namespace

void add_quant_2d_properties(std::vector<Property>& out) {
  out.push_back({"quantize_2d.bit_exact",
                 "a 2D (32 x 32 tile) quantizer whose amax covers a 1x32 row or a 32x1 column "
                 "instead of the tile, whose scale grid is transposed or mis-strided, or whose "
                 "scale rule or element cast differs from its convention",
                 family_bit(Family::kQuantizeMx), accepts_2d, gen_bit_exact, check_bit_exact});
  out.push_back({"metamorphic.quantize_2d_transpose",
                 "a 2D quantizer whose copy of W^T is not W's transposed (a non-square tile, a "
                 "grid indexed differently per direction): the rowwise and columnwise copies of "
                 "a weight would disagree",
                 family_bit(Family::kQuantizeMx), accepts_2d, gen_transpose, check_transpose});
}

}  // namespace mxgate::properties
