// The extreme-scale regime of gemm.exact (extreme_scales.h).
#include "properties/extreme_scales.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "common/blocks.h"
#include "reference/accumulator_exact.h"

namespace mxgate::properties {

namespace {

// One planted scale: its value and its name as a coverage tag.
struct Code {
  float value;
  uint8_t e8m0;          // the E8M0 byte of `value` (MX operands)
  const char* mx_name;   // e8m0 byte
  const char* f32_name;  // fp32 class
};

// 2^-127 is an fp32 subnormal (E8M0 0x00); 2^-126 the smallest normal (0x01); 2^127 the largest
// power of two (0xFE); NaN (0xFF).
const Code kTiny{0x1p-127f, 0x00, "0x00", "subnormal"};
const Code kMinNormal{0x1p-126f, 0x01, "0x01", "min_normal"};
const Code kHuge{0x1p127f, 0xFE, "0xFE", "2^127"};
const Code kNan{std::numeric_limits<float>::quiet_NaN(), 0xFF, "0xFF", "nan"};

class Planter {
 public:
  Planter(const impl::Op& op, Operands& o) : op_(op), o_(o), p_(o.problem) {}

  std::size_t k_blocks() const { return p_.a_scale_cols(); }
  bool plantable() const {
    return !p_.a_scale.empty() && !p_.b_scale.empty() && p_.blocks.a_k == p_.blocks.b_k;
  }

  // Scale column `kb` of A row r gets a[r % 2], of B row r gets b[r % 2] (the two codes of an
  // operand alternate over its rows, so each output element sees one pair); A's elements are 0
  // but one +-1 at k = `at` in every row (so the planted term is the only one: an extreme scale
  // times the partial of any wider range could leave fp32), B's 0 but +-1 at `at` in its block
  // (signs from `sign_bits`).
  void pair(std::size_t kb, const Code* const a[2], const Code* const b[2], std::size_t at,
            uint64_t sign_bits) {
    for (std::size_t r = 0; r < p_.a_scale_rows(); ++r) set_a_scale(r, kb, *a[r % 2]);
    for (std::size_t r = 0; r < p_.b_scale_rows(); ++r) set_scale(false, r, kb, *b[r % 2]);
    const std::size_t k0 = kb * p_.blocks.a_k, k1 = std::min(p_.k, k0 + p_.blocks.a_k);
    for (std::size_t i = 0; i < p_.m; ++i) {
      for (std::size_t kk = 0; kk < p_.k; ++kk) set_element(true, i, kk, 0.0f);
      set_element(true, i, at, ((sign_bits >> (i % 61)) & 1) != 0 ? -1.0f : 1.0f);
    }
    for (std::size_t j = 0; j < p_.n; ++j) {
      for (std::size_t kk = k0; kk < k1; ++kk) set_element(false, j, kk, 0.0f);
      set_element(false, j, at, ((sign_bits >> (j % 59 + 3)) & 1) != 0 ? -1.0f : 1.0f);
    }
  }
  void set_a_scale(std::size_t row, std::size_t kb, const Code& c) { set_scale(true, row, kb, c); }

 private:
  void set_scale(bool a, std::size_t row, std::size_t kb, const Code& c) {
    const std::size_t cols = a ? p_.a_scale_cols() : p_.b_scale_cols();
    (a ? p_.a_scale : p_.b_scale)[row * cols + kb] = c.value;
    if (op_.family == impl::Family::kGemmMx) {
      (a ? o_.a_e8m0 : o_.b_e8m0)[row * cols + kb] = c.e8m0;
    } else {
      (a ? o_.a_f32 : o_.b_f32)[row * cols + kb] = c.value;
    }
  }
  void set_element(bool a, std::size_t row, std::size_t kk, float v) {
    (a ? p_.a : p_.b)[row * p_.k + kk] = v;
    const Format f = gemm_element_format(a ? o_.types.a : o_.types.b);
    (a ? o_.a : o_.b)[row * p_.k + kk] = fp8_code(f, v);
  }

  const impl::Op& op_;
  Operands& o_;
  GemmProblem& p_;
};

}  // namespace

std::vector<std::string> plant_extreme_nvfp4_scales(Fp4Operands& o, uint64_t seed) {
  if (!o.nvfp4 || o.k == 0) return {};
  const std::size_t blocks = (o.k + kNvfp4Block - 1) / kNvfp4Block;
  const std::size_t kb = (seed >> 2) % blocks;
  const std::size_t k0 = kb * kNvfp4Block, k1 = std::min(o.k, k0 + kNvfp4Block);
  const std::size_t at = k0 + (seed >> 17) % (k1 - k0);
  const bool tiny_on_b = ((seed >> 1) & 1) != 0;
  // E2M1 +-1: code 0x2, its negative 0xA.
  const auto one = [seed](std::size_t r, unsigned salt) {
    return static_cast<uint8_t>(((seed >> (7 + (r + salt) % 53)) & 1) != 0 ? 0xA : 0x2);
  };
  for (std::size_t i = 0; i < o.m; ++i) {
    for (std::size_t kk = 0; kk < o.k; ++kk) o.a[i * o.k + kk] = 0;
    o.a[i * o.k + at] = one(i, 0);
    o.a_scales[i * blocks + kb] = tiny_on_b ? 0x7E : (i % 2 == 0 ? 0x01 : 0x00);
  }
  for (std::size_t j = 0; j < o.n; ++j) {
    for (std::size_t kk = k0; kk < k1; ++kk) o.b[j * o.k + kk] = 0;
    o.b[j * o.k + at] = one(j, 3);
    o.b_scales[j * blocks + kb] = tiny_on_b ? (j % 2 == 0 ? 0x01 : 0x00) : 0x7E;
  }
  std::vector<std::string> planted = {"ue4m3:0x01", "ue4m3:0x7E"};
  if ((tiny_on_b ? o.n : o.m) > 1) planted.push_back("ue4m3:0x00");
  if (seed % 2 == 0) {
    o.a_global = 0x1p-127f;
    o.b_global = 0x1p127f;
    planted.push_back("global:subnormal");
    planted.push_back("global:2^127");
  }
  // The self-check (is_exact_mode takes power-of-two scales only) runs on the twin with 256
  // (0x78) for 448: the same single nonzero term per output, 2^-9 x 256 = 0.5 there and
  // 2^-9 x 448 = 0.875 here, both exact in fp32, so every order is exact in both.
  const auto set_huge = [&](uint8_t code) {
    for (std::size_t i = 0; i < o.m && tiny_on_b; ++i) o.a_scales[i * blocks + kb] = code;
    for (std::size_t j = 0; j < o.n && !tiny_on_b; ++j) o.b_scales[j * blocks + kb] = code;
  };
  set_huge(0x78);
  rebuild_fp4_problem(o);
  std::string why;
  if (o.m * o.n * o.k <= (std::size_t{1} << 20) && !is_exact_mode(o.problem, &why)) {
    throw std::logic_error("extreme NVFP4 operands are not exact-mode: " + why);
  }
  set_huge(0x7E);
  rebuild_fp4_problem(o);
  return planted;
}

std::vector<std::string> plant_extreme_scales(const impl::Op& op, Operands& o, uint64_t seed,
                                              const AccumulatorModel& model) {
  Planter planter(op, o);
  if (gemm_kind(op.family) == GemmKind::kBf16 || !planter.plantable()) return {};
  const bool mx = op.family == impl::Family::kGemmMx;
  const auto name = [mx](const Code& c) { return std::string(mx ? c.mx_name : c.f32_name); };
  std::vector<std::string> planted;
  const std::size_t blocks = planter.k_blocks();
  const std::size_t block_k = o.problem.blocks.a_k;
  const std::size_t kb = (seed >> 2) % blocks;
  const std::size_t k0 = kb * block_k, at = k0 + (seed >> 17) % (std::min(o.k, k0 + block_k) - k0);
  // The tiny codes alternate over the rows of one operand, 0x00 first (a one-row case holds the
  // bottom of the range: its decode is the recurring public bug, extreme_scales.h); the other
  // operand holds 2^127. Products 2^-127 * 2^127 = 1 and 2^-126 * 2^127 = 2.
  const Code* const tiny[2] = {&kTiny, &kMinNormal};
  const Code* const huge[2] = {&kHuge, &kHuge};
  const uint64_t setting = seed % 4;
  if (setting == 2) {
    planter.pair(kb, huge, tiny, at, seed >> 7);  // B's rows (MX: columns of C) alternate
  } else {
    planter.pair(kb, tiny, huge, at, seed >> 7);  // A's rows alternate
  }
  planted = {name(kTiny), name(kHuge)};
  if ((setting == 2 ? o.problem.b_scale_rows() : o.problem.a_scale_rows()) > 1) {
    planted.push_back(name(kMinNormal));
  }
  // The self-check of the construction (the fingerprint's, gemm_operands.cpp) before the NaN,
  // which no exact-mode problem holds: every order a correct kernel may take is exact.
  std::string why;
  if (o.m * o.n * o.k <= (std::size_t{1} << 20) && !is_exact_mode(o.problem, model, &why)) {
    throw std::logic_error("extreme-scale operands are not exact-mode in " + model.name + ": " +
                           why);
  }
  if (setting == 3) {  // one row of A under a NaN scale: that output row is NaN (the last row,
                       // so a one-row case keeps no other)
    planter.set_a_scale(o.problem.a_scale_rows() - 1, kb, kNan);
    planted.push_back(name(kNan));
  }
  return planted;
}

}  // namespace mxgate::properties
