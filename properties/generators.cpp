// Shape and seed generators shared by the property families (props.h).
#include <rapidcheck.h>

#include <algorithm>
#include <string>

#include "properties/props.h"

namespace mxgate::properties {

rc::Gen<std::size_t> range(std::size_t lo, std::size_t hi_exclusive) {
  return rc::gen::resize(100, rc::gen::inRange<std::size_t>(lo, hi_exclusive));
}

rc::Gen<std::size_t> gen_m() {
  return pick<std::size_t>({1, 2, 3, 4, 5, 6, 7, 2, 3, 4, 15, 16, 17, 127, 128, 129});
}

rc::Gen<std::size_t> gen_n(std::size_t align) {
  std::vector<std::size_t> v;
  for (std::size_t j = 1; j <= 6; ++j) v.push_back(j * align);
  for (std::size_t n : {96, 112, 128, 144, 192, 272})
    v.push_back(std::max(align, n / align * align));
  return pick(std::move(v));
}

rc::Gen<std::size_t> gen_k(std::size_t align, int max_blocks) {
  // Residues of K mod 128, the first one the shrink target. The alignment filters them: a
  // kernel declaring K % 128 == 0 only sees 0; K % 32 == 0 sees the four MX residues; any K
  // also sees residues that are not multiples of 32.
  std::vector<std::size_t> residues;
  for (std::size_t r : {32, 64, 96, 0, 17, 100, 1}) {
    if (r % align == 0) residues.push_back(r);
  }
  return rc::gen::apply(
      [](std::size_t kb, std::size_t r) { return kb * 128 + r == 0 ? 128 : kb * 128 + r; },
      range(0, static_cast<std::size_t>(max_blocks) + 1), pick(std::move(residues)));
}

rc::Gen<uint64_t> gen_seed() {
  return rc::gen::resize(100, rc::gen::inRange<uint64_t>(0, 1u << 20));
}

void tag_shape(const Context& ctx, std::size_t m, std::size_t n, std::size_t k) {
  ctx.tag(m == 1 ? "m=1" : "m>1");
  if (k % 32 != 0) ctx.tag("k%32!=0");
  if (k % 32 == 0) ctx.tag("k%128=" + std::to_string(k % 128));
  if (n != 0 && n % 128 != 0) ctx.tag("tile:partial_n");
  if (m % 128 != 0 && m > 1) ctx.tag("tile:partial_m");
}

void tag_e8m0(const Context& ctx, std::span<const uint8_t> bytes) {
  if (ctx.coverage == nullptr) return;
  bool seen[4] = {false, false, false, false};
  for (uint8_t b : bytes) {
    if (b == 0x00) seen[0] = true;
    if (b == 0x01) seen[1] = true;
    if (b == 0xFE) seen[2] = true;
    if (b == 0xFF) seen[3] = true;
  }
  static const char* kNames[4] = {"e8m0:0x00", "e8m0:0x01", "e8m0:0xFE", "e8m0:0xFF"};
  for (int i = 0; i < 4; ++i) {
    if (seen[i]) ctx.tag(kNames[i]);
  }
}

}  // namespace mxgate::properties
