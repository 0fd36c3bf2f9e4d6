#include "properties/fp4_operands.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

#include "common/blocks.h"
#include "impl/calls.h"
#include "impl/harness.h"
#include "properties/gemm_operands.h"
#include "properties/scale_io.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/fp4_pack.h"
#include "reference/fp_encode.h"
#include "reference/nvfp4_quant.h"
#include "reference/scale_layout.h"

namespace mxgate::properties {

using impl::Dtype;
using impl::Op;

bool is_fp4_gemm(const Op& op) {
  const impl::Contract& c = op.contract;
  const impl::DtypeMask e2m1 = impl::dtype_bit(Dtype::kE2m1);
  const impl::DtypeMask out = impl::dtype_bit(Dtype::kF32) | impl::dtype_bit(Dtype::kBf16);
  if ((c.out_dtypes & out) == 0 || (c.b_layouts & impl::layout_bit(impl::Layout::kRowMajor)) == 0) {
    return false;
  }
  if (op.family == impl::Family::kGemmMx) {
    return (c.b_dtypes & e2m1) != 0 &&
           (c.a_dtypes & (e2m1 | impl::dtype_bit(Dtype::kE4m3fn))) != 0 &&
           c.scale_dtype == Dtype::kE8m0 && c.a_block_cols == 32 && c.b_block_cols == 32 &&
           c.a_block_rows <= 1 && c.b_block_rows <= 1;
  }
  if (op.family == impl::Family::kGemmNvfp4) {
    return (c.a_dtypes & e2m1) != 0 && (c.b_dtypes & e2m1) != 0 &&
           c.scale_dtype == Dtype::kE4m3fn && c.a_block_cols == 16 && c.b_block_cols == 16 &&
           c.a_block_rows <= 1 && c.b_block_rows <= 1 && c.global_dtypes != 0;
  }
  return false;
}

std::vector<std::string> fp4_global_modes() { return {"one", "pow2", "random", "max", "tiny"}; }

void pick_globals(const std::string& mode, uint64_t seed, float& a, float& b) {
  std::mt19937_64 rng(seed ^ 0x6A09E667F3BCC909ull);
  const auto mant = [&rng] { return float_of(0x3F800000u | (rng() & 0x7FFFFFu)); };
  const auto exp = [&rng](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  if (mode == "one") {
    a = b = 1.0f;
  } else if (mode == "pow2") {
    a = std::ldexp(1.0f, exp(-30, 30));
    b = std::ldexp(1.0f, exp(-30, 30));
  } else if (mode == "random") {  // amax / 2688 of tensors with amax around 2^-4 .. 2^12
    a = std::ldexp(mant(), exp(-16, 0));
    b = std::ldexp(mant(), exp(-16, 0));
  } else if (mode == "max") {
    a = std::numeric_limits<float>::max();
    b = std::ldexp(mant(), -1);
  } else if (mode == "tiny") {
    a = std::numeric_limits<float>::denorm_min();
    b = std::ldexp(mant(), exp(0, 20));
  } else {
    throw std::invalid_argument("unknown global mode '" + mode + "'");
  }
}

namespace {

std::size_t block_of(const Fp4Operands& o) { return o.nvfp4 ? kNvfp4Block : kMxBlock; }

float decode_scale(const Fp4Operands& o, uint8_t b) {
  return o.nvfp4 ? nvfp4_scale_value(b, false) : decode_e8m0(b, E8m0Decode::kOcp);
}

// The decoded problem of logical operands.
void build_problem(Fp4Operands& o) {
  GemmProblem& p = o.problem;
  p.m = o.m;
  p.n = o.n;
  p.k = o.k;
  const std::size_t bk = block_of(o);
  p.blocks = {1, bk, 1, bk};
  const Format fa = o.a_dtype == Dtype::kE4m3fn ? Format::kE4M3FN : Format::kE2M1;
  p.a.clear();
  p.b.clear();
  p.a_scale.clear();
  p.b_scale.clear();
  for (uint8_t c : o.a) p.a.push_back(decode(fa, c));
  for (uint8_t c : o.b) p.b.push_back(decode(Format::kE2M1, c));
  for (uint8_t s : o.a_scales) p.a_scale.push_back(decode_scale(o, s));
  for (uint8_t s : o.b_scales) p.b_scale.push_back(decode_scale(o, s));
  p.alpha = o.nvfp4 ? o.a_global * o.b_global : 1.0f;  // fl32, the kernels' alpha
}

Fp4Operands shape(const Op& op, Dtype a_dtype, std::size_t m, std::size_t n, std::size_t k) {
  Fp4Operands o;
  o.nvfp4 = op.family == impl::Family::kGemmNvfp4;
  o.a_dtype = o.nvfp4 ? Dtype::kE2m1 : a_dtype;
  o.m = m;
  o.n = n;
  o.k = k;
  return o;
}

void set_globals(Fp4Operands& o, const std::string& mode, uint64_t seed, Dtype global_dtype) {
  if (!o.nvfp4) return;
  pick_globals(mode, seed, o.a_global, o.b_global);
  if (global_dtype == Dtype::kBf16) {
    o.a_global = float_of_bf16(bf16_of(o.a_global));
    o.b_global = float_of_bf16(bf16_of(o.b_global));
  }
}

// E4M3 code of 2^e, e in [-9, 8] (0x01, 0x02, 0x04 are the subnormal powers of two).
uint8_t e4m3_pow2(int e) {
  if (e >= -6) return static_cast<uint8_t>((e + 7) << 3);
  return static_cast<uint8_t>(1u << (e + 9));
}

}  // namespace

Fp4Operands fp4_exact_operands(const Op& op, Dtype a_dtype, std::size_t m, std::size_t n,
                               std::size_t k, uint64_t seed, const std::string& global_mode,
                               Dtype global_dtype) {
  Fp4Operands o = shape(op, a_dtype, m, n, k);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < m * k; ++i) {
    if (o.a_dtype == Dtype::kE4m3fn) {
      const float v = 0.5f * static_cast<float>(static_cast<int>(rng() % 33) - 16);
      o.a.push_back(static_cast<uint8_t>(encode(Format::kE4M3FN, v, EncodePolicy{})));
    } else {
      o.a.push_back(static_cast<uint8_t>(rng() & 0xF));
    }
  }
  for (std::size_t i = 0; i < n * k; ++i) o.b.push_back(static_cast<uint8_t>(rng() & 0xF));
  // Terms are multiples of 0.25 of magnitude <= 48: K * 192 * 2^(2 span) <= 2^24 keeps every
  // partial sum of any order an fp32 (is_exact_mode below checks it).
  int log2k = 0;
  while ((std::size_t{1} << log2k) < k) ++log2k;
  const int span = std::clamp((24 - 8 - log2k) / 2, 0, 7);
  const std::size_t bk = block_of(o), kb = ceil_div(k, bk);
  const auto fill = [&](std::vector<uint8_t>& scales, std::size_t rows, int salt) {
    // NVFP4: the window inside the E4M3 powers of two [-9, 8]; MXFP4: anywhere in [-40, 40].
    const int lo = o.nvfp4 ? -9 + static_cast<int>(rng() % static_cast<uint64_t>(18 - span))
                           : -40 + static_cast<int>(rng() % 81);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < kb; ++c) {
        const int e = lo + static_cast<int>((r * 5 + c * 3 + static_cast<std::size_t>(salt)) %
                                            static_cast<std::size_t>(span + 1));
        scales.push_back(o.nvfp4 ? e4m3_pow2(e) : static_cast<uint8_t>(127 + e));
      }
    }
  };
  fill(o.a_scales, m, 0);
  fill(o.b_scales, n, 1);
  set_globals(o, global_mode, seed, global_dtype);
  build_problem(o);
  std::string why;
  if (m * n * k <= (std::size_t{1} << 20) && !is_exact_mode(o.problem, &why)) {
    throw std::logic_error("FP4 exact-mode operands are not exact-mode: " + why);
  }
  return o;
}

Fp4Operands fp4_general_operands(const Op& op, Dtype a_dtype, std::size_t m, std::size_t n,
                                 std::size_t k, uint64_t seed, const std::string& global_mode,
                                 Dtype global_dtype) {
  Fp4Operands o = shape(op, a_dtype, m, n, k);
  std::mt19937_64 rng(seed);
  if (o.a_dtype == Dtype::kE4m3fn) {
    o.a = random_codes(m * k, rng);
  } else {
    for (std::size_t i = 0; i < m * k; ++i) o.a.push_back(static_cast<uint8_t>(rng() & 0xF));
  }
  for (std::size_t i = 0; i < n * k; ++i) o.b.push_back(static_cast<uint8_t>(rng() & 0xF));
  const std::size_t kb = ceil_div(k, block_of(o));
  const auto scale = [&] {
    return o.nvfp4 ? static_cast<uint8_t>(rng() % 127) : static_cast<uint8_t>(96 + rng() % 63);
  };
  for (std::size_t i = 0; i < m * kb; ++i) o.a_scales.push_back(scale());
  for (std::size_t i = 0; i < n * kb; ++i) o.b_scales.push_back(scale());
  set_globals(o, global_mode, seed, global_dtype);
  build_problem(o);
  return o;
}

void rebuild_fp4_problem(Fp4Operands& o) { build_problem(o); }

std::vector<uint8_t> global_bytes(float v, Dtype dtype) {
  if (dtype == Dtype::kBf16) {
    const uint16_t h = bf16_of(v);
    return {static_cast<uint8_t>(h & 0xFF), static_cast<uint8_t>(h >> 8)};
  }
  std::vector<uint8_t> out(4);
  std::memcpy(out.data(), &v, 4);
  return out;
}

GemmOutput run_fp4_gemm_kernel(gpu::Backend& be, gpu::Kernel kernel, const Fp4Operands& o,
                               OutputFormat format, bool swizzled, uint64_t faults, uint8_t pad) {
  const std::size_t kb = ceil_div(o.k, block_of(o));
  const auto scales = [&](const std::vector<uint8_t>& grid, std::size_t rows) {
    return swizzled ? pack_scales<uint8_t>(ScaleLayout::kNvSwizzle128x4, rows, kb,
                                           std::span<const uint8_t>(grid), pad)
                    : grid;
  };
  gpu::ScopedBuffers buffers(be);
  gpu::Fp4GemmArgs g;
  g.p.m = o.m;
  g.p.n = o.n;
  g.p.k = o.k;
  g.p.a_format = o.a_dtype == Dtype::kE4m3fn ? gpu::Fp4Operand::kE4m3fn : gpu::Fp4Operand::kE2m1;
  g.p.out = format == OutputFormat::kBf16 ? gpu::OutDtype::kBf16 : gpu::OutDtype::kFp32;
  g.p.swizzled_scales = swizzled;
  g.p.faults = faults;
  g.a = buffers.make(
      o.a_dtype == Dtype::kE2m1 ? pack_fp4(o.a, o.m, o.k, NibbleOrder::kLowFirst, 0xF) : o.a, "A");
  g.b = buffers.make(pack_fp4(o.b, o.n, o.k, NibbleOrder::kLowFirst, 0xF), "B");
  g.a_scale = buffers.make(scales(o.a_scales, o.m), "As");
  g.b_scale = buffers.make(scales(o.b_scales, o.n), "Bs");
  g.a_global = buffers.make(std::vector<float>{o.a_global}, "global_a");
  g.b_global = buffers.make(std::vector<float>{o.b_global}, "global_b");
  const bool bf16_out = format == OutputFormat::kBf16;
  g.out = buffers.allocate(o.m * o.n * (bf16_out ? 2 : 4), "C");
  be.run({kernel, g});
  GemmOutput out;
  out.rows = o.m;
  out.cols = o.n;
  out.format = format;
  if (bf16_out) {
    out.bf16 = be.download_as<uint16_t>(g.out);
  } else {
    out.fp32 = be.download_as<float>(g.out);
  }
  return out;
}

GemmOutput run_fp4_gemm_op(const impl::RunContext& run, const Op& op, const Fp4Operands& o,
                           OutputFormat format, impl::Layout scales, Dtype global_dtype,
                           uint8_t pad, std::size_t ld_extra) {
  using impl::Call;
  using impl::Layout;
  const impl::Contract& c = op.contract;
  impl::Invocation inv(op, run);
  // Inputs' padding nibbles hold 0xF (-6): a kernel that reads past K sees it (plugin.h).
  if (o.a_dtype == Dtype::kE2m1) {
    inv.input(&Call::a, pack_fp4(o.a, o.m, o.k, NibbleOrder::kLowFirst, 0xF), o.m, o.k, o.k,
              Dtype::kE2m1, Layout::kRowMajor);
  } else {
    inv.input(&Call::a, o.a, o.m, o.k, o.k, o.a_dtype, Layout::kRowMajor);
  }
  inv.input(&Call::b, pack_fp4(o.b, o.n, o.k, NibbleOrder::kLowFirst, 0xF), o.n, o.k, o.k,
            Dtype::kE2m1, Layout::kRowMajor);
  const std::size_t kb = ceil_div(o.k, block_of(o));
  const Layout bl = b_scale_layout(op, scales);
  const auto sa =
      store_scales<uint8_t>(scales, o.m, kb, o.a_scales, c.a_scale_ld_align, pad, ld_extra);
  const auto sb = store_scales<uint8_t>(bl, o.n, kb, o.b_scales, c.b_scale_ld_align, pad, ld_extra);
  inv.input(&Call::a_scale, sa.values, o.m, kb, sa.ld, c.scale_dtype, scales);
  inv.input(&Call::b_scale, sb.values, o.n, kb, sb.ld, c.scale_dtype, bl);
  if (o.nvfp4) {
    inv.input(&Call::a_global, global_bytes(o.a_global, global_dtype), 1, 1, 1, global_dtype,
              Layout::kRowMajor);
    inv.input(&Call::b_global, global_bytes(o.b_global, global_dtype), 1, 1, 1, global_dtype,
              Layout::kRowMajor);
  }
  const Call call = impl::gemm_call(inv, o.m, o.n, o.k, out_dtype(format));
  return gemm_output_of(inv.run_and_read(call, &Call::out), o.m, o.n, format);
}

}  // namespace mxgate::properties
