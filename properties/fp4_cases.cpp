// The case pieces the FP4 properties (props_fp4.cpp) share (fp4_cases.h).
#include "properties/fp4_cases.h"

#include <algorithm>

#include "properties/props.h"
#include "reference/format.h"
#include "reference/mx_quant.h"
#include "reference/nvfp4_quant.h"
#include "reference/quant_conventions.h"

namespace mxgate::properties {

bool nvfp4_op(const Op& op) { return impl::is_nvfp4(op.family); }
std::size_t block_of(const Op& op) { return nvfp4_op(op) ? kNvfp4Block : kMxBlock; }

bool claims_all(const Op& op, bool (*has)(const Convention&)) {
  if (op.contract.conventions.empty()) return false;
  for (const std::string& n : op.contract.conventions) {
    const Convention* c = find_convention(n);
    if (c == nullptr || !has(*c)) return false;
  }
  return true;
}
bool has_mxfp4(const Convention& c) { return mx_policy(c, Format::kE2M1).has_value(); }
bool has_nvfp4(const Convention& c) { return nvfp4_policy(c).has_value(); }

// K = 128 kb + r, r around the NVFP4 (16) and MX (32) blocks and odd, where the contract's
// alignment allows; shrinks toward one 16-block.
rc::Gen<std::size_t> gen_k_fp4(const impl::Dim& d, int max_blocks) {
  const std::size_t align = std::max<std::size_t>(1, d.align);
  std::vector<std::size_t> res;
  for (std::size_t r :
       {16, 1, 32, 17, 15, 48, 31, 33, 3, 64, 80, 96, 112, 0, 47, 49, 63, 65, 127}) {
    if (r % align == 0) res.push_back(r);
  }
  if (res.empty()) res = k_residues(align);
  return rc::gen::apply(
      [d](std::size_t kb, std::size_t r) {
        return fit_dim(kb * 128 + r == 0 ? 128 : kb * 128 + r, d);
      },
      range(0, static_cast<std::size_t>(max_blocks) + 1), pick(res));
}

// The dtypes a case picks its NVFP4 global scales in: f32 three times as often as bf16.
rc::Gen<std::string> gen_global_dtype(const Op& op) {
  if (!nvfp4_op(op)) return rc::gen::just<std::string>("");
  const bool f32 = (op.contract.global_dtypes & dtype_bit(Dtype::kF32)) != 0;
  const bool bf16 = (op.contract.global_dtypes & dtype_bit(Dtype::kBf16)) != 0;
  if (f32 && bf16) return pick<std::string>({"f32", "f32", "f32", "bf16"});
  return rc::gen::just<std::string>(f32 ? "f32" : "bf16");
}

Dtype global_dtype_field(const Case& c) {
  const std::string& g = c.text("gdtype");
  if (g != "f32" && g != "bf16") throw CaseError("case field 'gdtype' must be f32 or bf16");
  return g == "bf16" ? Dtype::kBf16 : Dtype::kF32;
}

std::string layout_name(const Op& op, std::size_t pick_index) {
  std::vector<Layout> ls;
  for (Layout l : impl::layouts_in(op.contract.a_scale_layouts)) {
    if (l != Layout::kAiterShuffle16x16) ls.push_back(l);
  }
  if (ls.empty()) ls = {Layout::kRowMajor};
  return std::string(impl::to_string(ls[pick_index % ls.size()]));
}

Layout layout_field(const Case& c) {
  const auto l = impl::parse_layout(c.text("layout"));
  if (!l || *l == Layout::kAiterShuffle16x16) {
    throw CaseError("case field 'layout' has unknown value '" + c.text("layout") + "'");
  }
  return *l;
}

bool bf16_field(const Case& c, std::string_view key) {
  const std::string& v = c.text(key);
  if (v != "fp32" && v != "bf16") {
    throw CaseError("case field '" + std::string(key) + "' must be fp32 or bf16");
  }
  return v == "bf16";
}

rc::Gen<std::string> gen_float_dtype(impl::DtypeMask mask) {
  const bool f32 = (mask & dtype_bit(Dtype::kF32)) != 0;
  const bool bf16 = (mask & dtype_bit(Dtype::kBf16)) != 0;
  if (f32 && bf16) return pick<std::string>({"fp32", "fp32", "fp32", "bf16"});
  return rc::gen::just<std::string>(f32 ? "fp32" : "bf16");
}

void tag_k(const Context& ctx, std::size_t k) {
  if (k % 2 != 0) ctx.tag("fp4:k_odd");
  if (k % 16 != 0) ctx.tag("fp4:k%16!=0");
  if (k % 32 == 16) ctx.tag("fp4:k%32=16");
}

void tag_e4m3_scales(const Context& ctx, std::span<const uint8_t> bytes, std::string_view family) {
  if (ctx.coverage == nullptr) return;
  bool sub = false, zero = false, max = false, min_sub = false;
  for (uint8_t b : bytes) {
    sub = sub || ((b & 0x78) == 0 && (b & 7) != 0);
    zero = zero || b == 0x00;
    max = max || b == 0x7E;
    min_sub = min_sub || b == 0x01;
  }
  if (sub) ctx.tag("e4m3_scale:subnormal");
  if (zero) ctx.tag("e4m3_scale:0x00");
  if (max) ctx.tag("e4m3_scale:0x7E");
  // Per consuming family, the UE4M3 extremes: zero, the smallest subnormal 2^-9, the largest 448.
  if (family.empty()) return;
  const std::string f(family);
  if (zero) ctx.tag(f + ":ue4m3:0x00");
  if (min_sub) ctx.tag(f + ":ue4m3:0x01");
  if (max) ctx.tag(f + ":ue4m3:0x7E");
}

}  // namespace mxgate::properties
