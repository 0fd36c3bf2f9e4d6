// The extreme-scale regime of gemm.exact (extreme_scales.h).
#include "properties/extreme_scales.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/blocks.h"
#include "reference/accumulator_exact.h"
#include "reference/format.h"
#include "reference/fp_encode.h"
#include "reference/gemm_oracle.h"

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
    zero_elements(true, 0, p_.m * p_.k);
    for (std::size_t i = 0; i < p_.m; ++i) {
      set_element(true, i, at, ((sign_bits >> (i % 61)) & 1) != 0 ? -1.0f : 1.0f);
    }
    for (std::size_t j = 0; j < p_.n; ++j) {
      zero_elements(false, j * p_.k + k0, j * p_.k + k1);
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
  // Elements [begin, end) of A's (or B's) row-major values set to +0, and their codes.
  void zero_elements(bool a, std::size_t begin, std::size_t end) {
    std::vector<float>& values = a ? p_.a : p_.b;
    Bytes& codes = a ? o_.a : o_.b;
    const uint8_t zero = fp8_code(gemm_element_format(a ? o_.types.a : o_.types.b), 0.0f);
    std::fill(values.begin() + static_cast<std::ptrdiff_t>(begin),
              values.begin() + static_cast<std::ptrdiff_t>(end), 0.0f);
    std::fill(codes.begin() + static_cast<std::ptrdiff_t>(begin),
              codes.begin() + static_cast<std::ptrdiff_t>(end), zero);
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
  // The self-check of the construction (the fingerprint's, gemm_operands.cpp, which the caller
  // leaves to this function), on the operands as they leave it: before the NaN, which no
  // exact-mode problem holds, so every order a correct kernel may take is exact.
  const auto self_check = [&o, &model](const char* what) {
    std::string why;
    if (o.m * o.n * o.k <= (std::size_t{1} << 20) && !is_exact_mode(o.problem, model, &why)) {
      throw std::logic_error(std::string(what) + " operands are not exact-mode in " + model.name +
                             ": " + why);
    }
  };
  if (gemm_kind(op.family) == GemmKind::kBf16 || !planter.plantable()) {
    self_check("fingerprint");  // nothing planted
    return {};
  }
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
  self_check("extreme-scale");
  if (setting == 3) {  // one row of A under a NaN scale: that output row is NaN (the last row,
                       // so a one-row case keeps no other)
    planter.set_a_scale(o.problem.a_scale_rows() - 1, kb, kNan);
    planted.push_back(name(kNan));
  }
  return planted;
}

namespace {

std::vector<ElementCode> compute_extreme_element_codes(Format f, bool specials) {
  const FormatInfo& fi = info(f);
  const uint32_t sign = 1u << (fi.bits - 1);
  const uint32_t mant_mask = (1u << fi.man_bits) - 1;
  std::vector<ElementCode> out;
  uint32_t max_code = 0;
  for (uint32_t c = 1; c < sign; ++c) {
    if (!is_nan_code(f, c) && std::isfinite(decode(f, c)) && decode(f, c) == max_finite(f)) {
      max_code = c;
    }
  }
  const auto add = [&](uint32_t c, const char* name) {
    out.push_back({static_cast<uint8_t>(c), decode(f, c), name});
  };
  add(max_code, "max");
  add(max_code | sign, "max");
  add(1u << fi.man_bits, "min_normal");
  for (uint32_t m = 1; m <= mant_mask; ++m) add(m, "subnormal");
  add(0, "zero");
  if (!is_nan_code(f, sign)) add(sign, "neg_zero");  // FNUZ: the sign code alone is the NaN
  if (!specials) return out;
  // The first NaN and Inf codes of each sign (FNUZ: 0x80 alone; FP4 / FP6: none).
  for (uint32_t s : {0u, sign}) {
    bool nan = false, inf = false;
    for (uint32_t c = s; c < s + sign; ++c) {
      if (!nan && is_nan_code(f, c)) {
        add(c, "nan");
        nan = true;
      } else if (!inf && std::isinf(decode(f, c))) {
        add(c, "inf");
        inf = true;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<ElementCode> extreme_element_codes(Format f, bool specials) {
  if (info(f).bits > 8) throw std::invalid_argument("extreme_element_codes: not an element format");
  // Computed once per format (a loop over every code): the generators call it per case.
  static const auto table = [] {
    std::vector<std::vector<ElementCode>> t(2 * kFormatCount);
    for (std::size_t i = 0; i < kFormatCount; ++i) {
      const auto g = static_cast<Format>(i);
      if (info(g).bits > 8) continue;
      t[2 * i] = compute_extreme_element_codes(g, false);
      t[2 * i + 1] = compute_extreme_element_codes(g, true);
    }
    return t;
  }();
  return table[2 * static_cast<std::size_t>(f) + (specials ? 1 : 0)];
}

namespace {

// The exponent of |x|'s leading bit, from its bits (x finite, nonzero).
int leading_exponent(float x) {
  const uint32_t u = bits_of(x) & 0x7FFFFFFFu;
  const int biased = static_cast<int>(u >> 23);
  return biased != 0 ? biased - 127 : -149 + 31 - std::countl_zero(u & 0x7FFFFFu);
}

// The power of two of format f nearest 2^e (clamped to f's powers of two; FP4 / FP6 / FP8 values
// are fp32 normals, so a power of two is one with no mantissa bits).
float partner_power(Format f, int e) {
  float best = 0;
  for (uint32_t c = 1; c < (1u << (info(f).bits - 1)); ++c) {
    const float v = decode(f, c);
    if (!std::isfinite(v) || v <= 0 || (bits_of(v) & 0x7FFFFFu) != 0) continue;
    if (best == 0 || std::abs(leading_exponent(v) - e) < std::abs(leading_exponent(best) - e)) {
      best = v;
    }
  }
  return best;
}

// The codes of one operand and the values the reference sees, row-major rows x k.
struct ElementRows {
  std::vector<uint8_t>& codes;
  std::vector<float>& values;
  std::size_t rows;
  Format format;
};

// Zeroes every row of one operand (codes and values).
void zero_rows(ElementRows& e, std::size_t k) {
  const auto zero = static_cast<uint8_t>(encode(e.format, 0.0f, EncodePolicy{}));
  std::fill(e.values.begin(), e.values.begin() + static_cast<std::ptrdiff_t>(e.rows * k), 0.0f);
  std::fill(e.codes.begin(), e.codes.begin() + static_cast<std::ptrdiff_t>(e.rows * k), zero);
}

// Puts holder h's codes at k = start ... start + width - 1 of each of its rows (all of them where
// `whole`, else one per row, cycling) and the partner q's powers of two at the same k; adds the
// planted classes to `tags`.
void place_codes(ElementRows& h, ElementRows& q, std::size_t k, std::size_t start, bool whole,
                 uint64_t seed, std::vector<std::string>& tags) {
  const std::vector<ElementCode> codes = extreme_element_codes(h.format, false);
  const std::size_t width = whole ? codes.size() : 1;
  std::vector<bool> planted(codes.size(), false);
  for (std::size_t r = 0; r < h.rows; ++r) {
    for (std::size_t t = 0; t < width; ++t) {
      const std::size_t i = whole ? t : (r + (seed >> 17)) % codes.size();
      h.values[r * k + start + t] = codes[i].value;
      h.codes[r * k + start + t] = codes[i].code;
      planted[i] = true;
    }
  }
  // The partner's elements at those k: +-(the power of two of its format nearest 1 / |x|) for
  // the holder's code x there (1 for a zero code, and for the one-code rows), signs from the seed.
  for (std::size_t t = 0; t < width; ++t) {
    const float x = codes[t].value;
    const float y = whole && x != 0 ? partner_power(q.format, -leading_exponent(x)) : 1.0f;
    for (std::size_t r = 0; r < q.rows; ++r) {
      const float v = ((seed >> ((r + t) % 53 + 11)) & 1) != 0 ? -y : y;
      q.values[r * k + start + t] = v;
      q.codes[r * k + start + t] = static_cast<uint8_t>(encode(q.format, v, EncodePolicy{}));
    }
  }
  const std::string format(info(h.format).name);
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const std::string tag = format + ":" + codes[i].name;
    if (planted[i] && std::find(tags.begin(), tags.end(), tag) == tags.end()) tags.push_back(tag);
  }
}

// The planting of plant_extreme_elements on logical operands: the holder h's rows get every
// extreme code of its format in one scale block (`block` wide) of K, zero elsewhere, the
// partner's elements at those k a power of two near 1 / |x|. Where the block holds both code
// lists, q holds its own codes right after h's (h the partner there, both operands zero
// elsewhere), so one case reaches the extremes of both element formats. Returns the planted
// classes, prefixed by the format.
std::vector<std::string> plant_element_codes(ElementRows h, ElementRows q, std::size_t k,
                                             std::size_t block, uint64_t seed, int spread = 2) {
  const std::size_t nh = extreme_element_codes(h.format, false).size();
  const std::size_t nq = extreme_element_codes(q.format, false).size();
  // One scale block along K (seed-chosen; a whole one where K holds one), and a start in it.
  const std::size_t whole_blocks = k / block;
  const std::size_t kb = whole_blocks > 0 ? (seed >> 2) % whole_blocks : 0;
  const std::size_t k0 = kb * block, len = std::min(block, k - k0);
  // Every code in each row where the block holds them all; otherwise one code per row (a single
  // term per output element, exact whatever the pair), the rows cycling through the codes.
  // `spread` lowers this for a narrow accumulator: 1 the holder's list alone, 0 one code a row.
  const bool whole = spread >= 1 && len >= nh;
  const bool both = spread >= 2 && len >= nh + nq;
  const std::size_t width = (whole ? nh : 1) + (both ? nq : 0);
  const std::size_t start = k0 + (seed >> 9) % (len - width + 1);
  std::vector<std::string> tags;
  zero_rows(h, k);
  if (both) zero_rows(q, k);
  place_codes(h, q, k, start, whole, seed, tags);
  if (both) place_codes(q, h, k, start + nh, true, seed >> 1, tags);
  return tags;
}

}  // namespace

std::vector<std::string> plant_extreme_elements(const impl::Op& op, Operands& o, uint64_t seed,
                                                const AccumulatorModel& model) {
  if (gemm_kind(op.family) == GemmKind::kBf16) return {};
  GemmProblem& p = o.problem;
  const bool a_holds = seed % 4 != 2;
  ElementRows a{o.a, p.a, p.m, gemm_element_format(o.types.a)};
  ElementRows b{o.b, p.b, p.n, gemm_element_format(o.types.b)};
  // One scale block along K of both operands: the smaller block.
  const std::size_t block = std::min(p.blocks.a_k, p.blocks.b_k);
  const auto plant = [&](int spread) {
    return a_holds ? plant_element_codes(a, b, p.k, block, seed, spread)
                   : plant_element_codes(b, a, p.k, block, seed, spread);
  };
  // Both code lists in one chunk can span more bits than a narrow accumulator keeps (E5M2's
  // subnormals beside E4M3's powers under sm90_fp8_mma): then the holder's list alone, then one
  // code per row (a single term per output element, exact in every model). A case too large for
  // the self-check gets that last form at once: an unchecked plant must not make a correct
  // kernel fail.
  std::vector<std::string> tags;
  std::string why;
  const bool checked = o.m * o.n * o.k <= (std::size_t{1} << 20);
  for (int spread = checked ? 2 : 0; spread >= 0; --spread) {
    tags = plant(spread);
    why.clear();
    if (!checked || is_exact_mode(p, model, &why)) return tags;
  }
  throw std::logic_error("extreme-element operands are not exact-mode in " + model.name + ": " +
                         why);
}

std::vector<std::string> plant_extreme_fp4_elements(Fp4Operands& o, uint64_t seed) {
  if (o.k == 0) return {};
  const bool a_holds = seed % 4 != 2;
  const std::size_t block = o.nvfp4 ? kNvfp4Block : kMxBlock;
  // Values are rebuilt from the codes below; the planting writes them into scratch.
  std::vector<float> av(o.a.size()), bv(o.b.size());
  ElementRows a{o.a, av, o.m, o.a_dtype == impl::Dtype::kE4m3fn ? Format::kE4M3FN : Format::kE2M1};
  ElementRows b{o.b, bv, o.n, Format::kE2M1};
  const std::vector<std::string> tags = a_holds ? plant_element_codes(a, b, o.k, block, seed)
                                                : plant_element_codes(b, a, o.k, block, seed);
  rebuild_fp4_problem(o);
  std::string why;
  if (o.m * o.n * o.k <= (std::size_t{1} << 20) && !is_exact_mode(o.problem, &why)) {
    throw std::logic_error("extreme-element FP4 operands are not exact-mode: " + why);
  }
  return tags;
}

std::vector<uint8_t> every_element_code(Format f, std::size_t count, uint64_t seed) {
  const std::size_t n = std::size_t{1} << info(f).bits;
  std::vector<uint8_t> order;
  std::vector<bool> taken(n, false);
  for (const ElementCode& e : extreme_element_codes(f, true)) {
    order.push_back(e.code);
    taken[e.code] = true;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = (i + seed) % n;
    if (!taken[c]) order.push_back(static_cast<uint8_t>(c));
  }
  std::vector<uint8_t> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = order[i % order.size()];
  return out;
}

std::vector<std::string> element_classes_present(Format f, const std::vector<uint8_t>& codes) {
  std::vector<bool> seen(256, false);
  for (uint8_t c : codes) seen[c] = true;
  std::vector<std::string> tags;
  const std::string format(info(f).name);
  for (const ElementCode& e : extreme_element_codes(f, true)) {
    const std::string tag = format + ":" + e.name;
    if (seen[e.code] && std::find(tags.begin(), tags.end(), tag) == tags.end()) tags.push_back(tag);
  }
  return tags;
}

}  // namespace mxgate::properties
