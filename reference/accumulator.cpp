#include "reference/accumulator.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "reference/float_bits.h"

namespace mxgate {
namespace {

// A float accumulator of `bits` significant bits and fp32's exponent range: unit roundoff
// 2^-bits, absolute error near underflow 2^-126 * 2^-bits (half the fp32 subnormal spacing for
// bits = 24, round to nearest; the whole spacing for bits = 23, directed rounding), overflow at
// (2 - 2^-bits) * 2^127.
AccumModel float_model(int bits, std::size_t block_k) {
  AccumModel m;
  m.unit_roundoff = std::ldexp(1.0, -bits);
  m.underflow_eta = std::ldexp(1.0, -126 - bits);
  m.overflow_threshold = std::ldexp(2.0 - std::ldexp(1.0, -bits), 127);
  m.block_k = block_k;
  return m;
}

AccumulatorModel fp32_rn() {
  AccumulatorModel m;
  m.name = "fp32_rn";
  m.description =
      "fp32 round-to-nearest for every product, scaling and addition; partials of 128 k, any "
      "order";
  m.source = "IEEE 754 binary32; the bound of gemm_oracle.h AccumModel (docs/accumulators.md §2)";
  m.status = "reference (IEEE 754 arithmetic, no hardware)";
  m.kind = AccumulatorKind::kFloat;
  m.fp = float_model(24, 128);
  return m;
}

// The Hopper FP8 tensor-core row. Every number's source is in docs/accumulators.md §4: the H200
// measurements (docs/nvidia.md §4.1, docs/accumulators.md §4.4) confirmed chunk_k, precision_bits,
// rounding, group_size, normalize_group_sum and the fp32 RN sum across chunks.
AccumulatorModel sm90_fp8_mma() {
  AccumulatorModel m;
  m.name = "sm90_fp8_mma";
  m.description =
      "Hopper FP8 tensor core: 32 products at a time aligned to the largest term, 14 bits kept "
      "by truncation, each group's sum renormalised; partial promoted to fp32 RN every 128 k";
  m.source =
      "H200 cuBLASLt, measured (docs/nvidia.md §4.1: 14 bits, truncation per product, promotion "
      "every 128 k at multiples of 128, fp32 RN across chunks); DeepSeek-V3 arXiv:2412.19437 "
      "§3.3.2 (~14 bits, 128 k); github.com/huweim/emulation_sys (H100 wgmma FP8: 13-bit "
      "mantissa, RZ); PTX wgmma m64nNk32 (32 k per instruction); Fasi et al. PeerJ CS 7:e330 "
      "(alignment, truncation); H200 probe (cuBLASLt and Triton wgmma tiles: groups of 32, each "
      "group's sum renormalised; docs/accumulators.md §4.4) (docs/accumulators.md §4)";
  m.status = "measured on H200 (cuBLASLt; precision, rounding, chunk_k, group, normalisation)";
  m.kind = AccumulatorKind::kAlignedChunks;
  m.chunks.chunk_k = 128;
  m.chunks.group_size = 32;
  m.chunks.precision_bits = 14;
  m.chunks.rounding = AlignRounding::kTruncate;
  m.chunks.normalize_group_sum = true;  // measured on the H200 (docs/accumulators.md §4.4)
  m.chunks.partial_roundings = 2;
  return m;
}

// The same tensor core without the library's promotion (docs/accumulators.md §4.1).
AccumulatorModel sm90_fp8_mma_nopromo() {
  AccumulatorModel m = sm90_fp8_mma();
  m.name = "sm90_fp8_mma_nopromo";
  m.description =
      "Hopper FP8 tensor core as sm90_fp8_mma, never promoted: one partial over all of K "
      "(Triton's wgmma tiles)";
  m.source =
      "sm90_fp8_mma's adder; Triton's NVIDIA backend max_num_imprecise_acc_default = 2**30 (no "
      "promotion); H200, Triton 3.6 FP8 tl.dot with 64x64 / 128x128 tiles: 2^16 at k=0 and 4 at "
      "k=31, 100, 900 (K=1024) and 4000 (K=4096) give 65536 (mma.sync 16x16 tiles "
      "give 65540, another model); Khattak and Mikaitis arXiv:2512.07004 Table 3 (13 fraction "
      "bits, truncation, 32 products per group) (docs/accumulators.md §4.1)";
  m.status = "measured on H200 (Triton wgmma tiles: no promotion within K = 4096)";
  m.chunks.chunk_k = 0;
  return m;
}

// AMD CDNA3 (MI300) FP8 MFMA (docs/accumulators.md §4.2).
AccumulatorModel cdna3_fp8_mfma() {
  AccumulatorModel m;
  m.name = "cdna3_fp8_mfma";
  m.description =
      "AMD CDNA3 FP8 (FNUZ) MFMA: 16 products per step as odd/even halves of 8, each fused at 24 "
      "fraction bits; late C (product sum 31 fraction bits, C 24) rounded down; RNE to fp32";
  m.source =
      "Xie et al., MMA-Sim arXiv:2511.10909 and github.com/microsoft/MMA-Sim (CDNA3 fp8: "
      "group 16, odd/even halves, F=24, F2=31, RNE-FP32; earlier simulator/functions.py rounds "
      "the two-operand alignments down (floor), newer arithmetic/fdpa.py truncates: "
      "late_rounding=truncate); github.com/north-numerical-computing/MATLAB-tensor-core "
      "models/CDNA3.m (fma 16, odd_even_grouping, late_partial_sum, armode 'rd', frmode 'rne') "
      "(docs/accumulators.md §4.2)";
  m.status = "published, not measured here";
  m.kind = AccumulatorKind::kAlignedChunks;
  AlignedChunkParams& c = m.chunks;
  c.chunk_k = 0;
  c.group_size = 16;
  c.precision_bits = 25;  // 24 fraction bits and the leading one
  c.rounding = AlignRounding::kTruncate;
  c.halves = true;
  c.late_c_bits = 32;  // 31 fraction bits
  c.late_rounding = AlignRounding::kRoundDown;
  c.store = StoreRounding::kNearestEven;
  return m;
}

// NVIDIA Blackwell (sm_100) tcgen05 kind::f8f6f4 (docs/accumulators.md §4.3).
AccumulatorModel sm100_f8f6f4() {
  AccumulatorModel m;
  m.name = "sm100_f8f6f4";
  m.description =
      "Blackwell FP8/FP6/FP4 (kind::f8f6f4, MXFP8) tensor core: 32 products and C aligned at 25 "
      "fraction bits by truncation; the partial stored by truncation to fp32; no promotion";
  m.source =
      "MMA-Sim arXiv:2511.10909 (TCGen05MMASim: 25 fraction bits, output RZ to fp32); PTX "
      "tcgen05.mma kind::f8f6f4 (K = 32 per instruction); MATLAB-tensor-core models/B200TC.m "
      "(fp8: fma 32, neab 2, frmode 'rz', early C); Khattak and Mikaitis arXiv:2512.07004 "
      "(docs/accumulators.md §4.3)";
  m.status = "published, not measured here";
  m.kind = AccumulatorKind::kAlignedChunks;
  AlignedChunkParams& c = m.chunks;
  c.chunk_k = 0;
  c.group_size = 32;
  c.precision_bits = 26;  // 25 fraction bits and the leading one
  c.rounding = AlignRounding::kTruncate;
  c.store = StoreRounding::kTruncate;
  return m;
}

// NVIDIA Blackwell (sm_100) tcgen05 kind::mxf4nvf4 (docs/accumulators.md §4.3).
AccumulatorModel sm100_mxf4nvf4() {
  AccumulatorModel m = sm100_f8f6f4();
  m.name = "sm100_mxf4nvf4";
  m.description =
      "Blackwell MXFP4/NVFP4 (kind::mxf4nvf4) tensor core: exact sub-sums of 16 products, 64 k "
      "per step aligned with C at 35 fraction bits by truncation; stored by truncation to fp32";
  m.source =
      "MMA-Sim arXiv:2511.10909 (nv_fused_dot_add_with_block_scale: sums of 16 products, 35 "
      "fraction bits, RZ to fp32); PTX tcgen05.mma kind::mxf4nvf4 (K = 64 per instruction) "
      "(docs/accumulators.md §4.3)";
  m.chunks.group_size = 64;
  m.chunks.sub_sum = 16;
  m.chunks.precision_bits = 36;
  return m;
}

const std::vector<AccumulatorModel>& registry() {
  static const std::vector<AccumulatorModel> models = {
      fp32_rn(),        sm90_fp8_mma(), sm90_fp8_mma_nopromo(),
      cdna3_fp8_mfma(), sm100_f8f6f4(), sm100_mxf4nvf4()};
  return models;
}

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

long long parse_integer(std::string_view param, std::string_view text, long long lo, long long hi) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) {
    bad("accumulator parameter " + std::string(param) + ": '" + std::string(text) +
        "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

bool parse_bool(std::string_view param, std::string_view text) {
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false") return false;
  bad("accumulator parameter " + std::string(param) + ": '" + std::string(text) +
      "' is not a boolean (0, 1, true, false)");
}

constexpr int kMaxPrecision = 40;  // keeps every aligned sum exact in int64 units and in double
constexpr int kMaxLateBits = 48;

AlignRounding parse_align_rounding(std::string_view param, std::string_view text) {
  if (text == "truncate") return AlignRounding::kTruncate;
  if (text == "nearest_even") return AlignRounding::kNearestEven;
  if (text == "round_down") return AlignRounding::kRoundDown;
  bad("accumulator parameter " + std::string(param) + ": '" + std::string(text) +
      "' is not a rounding (truncate, nearest_even, round_down)");
}

std::string param_names(const AccumulatorModel& m) {
  std::string out;
  for (const AccumulatorParameter& p : accumulator_parameters(m)) {
    out += (out.empty() ? "" : " ") + p.name;
  }
  return out;
}

void set_parameter(AccumulatorModel& m, std::string_view name, std::string_view value) {
  constexpr long long kMaxK = 1LL << 40;
  if (m.kind == AccumulatorKind::kFloat) {
    if (name == "unit_roundoff_bits") {
      const int bits = static_cast<int>(parse_integer(name, value, 2, 24));
      const std::size_t block_k = m.fp.block_k;
      const int r = m.fp.product_roundings, s = m.fp.partial_roundings;
      m.fp = float_model(bits, block_k);
      m.fp.product_roundings = r;
      m.fp.partial_roundings = s;
      return;
    }
    if (name == "block_k") {
      m.fp.block_k = static_cast<std::size_t>(parse_integer(name, value, 0, kMaxK));
      return;
    }
    if (name == "product_roundings") {
      m.fp.product_roundings = static_cast<int>(parse_integer(name, value, 0, 3));
      return;
    }
    if (name == "partial_roundings") {
      m.fp.partial_roundings = static_cast<int>(parse_integer(name, value, 0, 3));
      return;
    }
  } else {
    AlignedChunkParams& c = m.chunks;
    if (name == "chunk_k") {
      c.chunk_k = static_cast<std::size_t>(parse_integer(name, value, 0, kMaxK));
      return;
    }
    if (name == "group_size") {
      c.group_size = static_cast<std::size_t>(parse_integer(name, value, 1, 1 << 20));
      return;
    }
    if (name == "precision_bits") {
      c.precision_bits = static_cast<int>(parse_integer(name, value, 2, kMaxPrecision));
      return;
    }
    if (name == "rounding" || name == "late_rounding") {
      (name == "rounding" ? c.rounding : c.late_rounding) = parse_align_rounding(name, value);
      return;
    }
    if (name == "store") {
      if (value == "exact") {
        c.store = StoreRounding::kExact;
      } else if (value == "nearest_even") {
        c.store = StoreRounding::kNearestEven;
      } else if (value == "truncate") {
        c.store = StoreRounding::kTruncate;
      } else {
        bad("accumulator parameter store: '" + std::string(value) +
            "' is not a store rounding (exact, nearest_even, truncate)");
      }
      return;
    }
    if (name == "sub_sum") {
      c.sub_sum = static_cast<std::size_t>(parse_integer(name, value, 1, 1 << 20));
      return;
    }
    if (name == "halves") {
      c.halves = parse_bool(name, value);
      return;
    }
    if (name == "late_c_bits") {
      c.late_c_bits = static_cast<int>(parse_integer(name, value, 0, kMaxLateBits));
      return;
    }
    if (name == "normalize_group_sum") {
      c.normalize_group_sum = parse_bool(name, value);
      return;
    }
    if (name == "partial_roundings") {
      c.partial_roundings = static_cast<int>(parse_integer(name, value, 1, 2));
      return;
    }
  }
  bad("accumulator " + m.name + ": unknown parameter '" + std::string(name) +
      "' (parameters: " + param_names(m) + ")");
}

std::string bits_of_roundoff(double u) {
  int e = 0;
  const double f = std::frexp(u, &e);  // u = f * 2^e, f = 0.5 for a power of two
  return f == 0.5 ? std::to_string(1 - e) : std::to_string(u);
}

}  // namespace

std::span<const AccumulatorModel> all_accumulators() { return registry(); }

const AccumulatorModel* find_accumulator(std::string_view name) {
  for (const AccumulatorModel& m : registry()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::string accumulator_names() {
  std::string out;
  for (const AccumulatorModel& m : registry()) {
    out += (out.empty() ? "" : " ") + m.name;
  }
  return out;
}

AccumulatorModel parse_accumulator_spec(std::string_view spec) {
  const std::size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  const AccumulatorModel* base = find_accumulator(name);
  if (base == nullptr) {
    bad("unknown accumulator '" + std::string(name) + "' (accumulators: " + accumulator_names() +
        ")");
  }
  AccumulatorModel m = *base;
  if (colon != std::string_view::npos) {
    std::string_view rest = spec.substr(colon + 1);
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      const std::size_t eq = item.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        bad("accumulator " + std::string(name) + ": '" + std::string(item) +
            "' is not param=value (parameters: " + param_names(m) + ")");
      }
      set_parameter(m, item.substr(0, eq), item.substr(eq + 1));
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
      if (rest.empty()) bad("accumulator " + std::string(name) + ": trailing ','");
    }
  }
  validate_accumulator(m);
  m.name = std::string(spec);
  return m;
}

AccumulatorModel manual_float_accumulator(int bits, std::size_t block_k) {
  AccumulatorModel m = fp32_rn();
  m.fp = float_model(bits, block_k);
  m.name = "acc-bits=" + std::to_string(bits) + ",block-k=" + std::to_string(block_k);
  m.description = "a float accumulator of " + std::to_string(bits) +
                  " significant bits, fp32's exponent range, partials of at most " +
                  std::to_string(block_k) + " k (0: all of K), any order";
  m.source = "check-gemm --acc-bits / --block-k (docs/accumulators.md §2)";
  return m;
}

std::vector<AccumulatorParameter> accumulator_parameters(const AccumulatorModel& m) {
  if (m.kind == AccumulatorKind::kFloat) {
    return {
        {"unit_roundoff_bits", bits_of_roundoff(m.fp.unit_roundoff),
         "unit roundoff 2^-bits of every rounding (24: fp32 round-to-nearest)"},
        {"block_k", std::to_string(m.fp.block_k),
         "partials of at most this many consecutive k, summed in any order (0: all of K)"},
        {"product_roundings", std::to_string(m.fp.product_roundings),
         "roundings of each product a*b (with its scales when they are applied per product)"},
        {"partial_roundings", std::to_string(m.fp.partial_roundings),
         "roundings applying the scales to each partial"},
    };
  }
  const AlignedChunkParams& c = m.chunks;
  return {
      {"chunk_k", std::to_string(c.chunk_k),
       "consecutive k accumulated in the tensor core before the partial is promoted to fp32 (0: "
       "all of K)"},
      {"group_size", std::to_string(c.group_size),
       "products added at once together with the running partial"},
      {"precision_bits", std::to_string(c.precision_bits),
       "significant bits kept relative to the largest term of a group"},
      {"rounding", std::string(to_string(c.rounding)),
       "what happens to the bits shifted below them (truncate: toward zero; round_down: toward "
       "-Inf)"},
      {"normalize_group_sum", c.normalize_group_sum ? "1" : "0",
       "1: each group sum is rounded to precision_bits again; 0: its carry bits are kept"},
      {"partial_roundings", std::to_string(c.partial_roundings),
       "fp32 RN roundings applying the scales to a promoted partial (2: (part*sa)*sb, 1: "
       "fma(part, sa*sb, acc))"},
      {"sub_sum", std::to_string(c.sub_sum),
       "products summed exactly in runs of this many consecutive k before the alignment (1: "
       "none)"},
      {"halves", c.halves ? "1" : "0",
       "1: products at even and odd k are fused apart, the two half sums then aligned at "
       "precision_bits"},
      {"late_c_bits", std::to_string(c.late_c_bits),
       "0: the partial is aligned with the products (early C); else late C: the product sum "
       "keeps late_c_bits, the partial precision_bits, relative to the larger"},
      {"late_rounding", std::string(to_string(c.late_rounding)),
       "the rounding of the halves' and the late C's alignment"},
      {"store", std::string(to_string(c.store)),
       "how a group step's result is stored in the fp32 partial (exact: it always fits)"},
  };
}

void validate_accumulator(const AccumulatorModel& m) {
  if (m.kind == AccumulatorKind::kFloat) {
    if (!(m.fp.unit_roundoff > 0 && m.fp.unit_roundoff < 1)) {
      bad("accumulator " + m.name + ": unit_roundoff must be in (0, 1)");
    }
    if (m.fp.product_roundings < 0 || m.fp.partial_roundings < 0) {
      bad("accumulator " + m.name + ": rounding counts must be >= 0");
    }
    return;
  }
  const AlignedChunkParams& c = m.chunks;
  if (c.group_size == 0) bad("accumulator " + m.name + ": group_size must be >= 1");
  const int max_p = c.store == StoreRounding::kExact ? 24 : kMaxPrecision;
  if (c.precision_bits < 2 || c.precision_bits > max_p) {
    bad("accumulator " + m.name + ": precision_bits must be in [2, " + std::to_string(max_p) + "]" +
        (max_p == 24 ? " with store=exact" : ""));
  }
  if (c.sub_sum == 0 || c.group_size % c.sub_sum != 0) {
    bad("accumulator " + m.name + ": sub_sum must divide group_size");
  }
  if (c.halves && (c.sub_sum != 1 || c.group_size % 2 != 0 || c.late_c_bits == 0)) {
    bad("accumulator " + m.name + ": halves needs an even group_size, sub_sum=1 and a late C");
  }
  if (c.late_c_bits != 0 && (c.late_c_bits < c.precision_bits || c.late_c_bits > kMaxLateBits)) {
    bad("accumulator " + m.name + ": late_c_bits must be 0 or in [precision_bits, " +
        std::to_string(kMaxLateBits) + "]");
  }
  const int terms = static_cast<int>(c.group_size / c.sub_sum) + 1;
  if (c.store == StoreRounding::kExact) {
    if (c.halves || c.late_c_bits != 0) {
      bad("accumulator " + m.name + ": halves and a late C need a store rounding to fp32");
    }
    // A group sum of group_size + 1 aligned terms, each below 2^(E+1) on the grid 2^(E-p+1), has
    // at most p + ceil(log2(group_size + 1)) bits: the model stores it in fp32 exactly.
    if (c.precision_bits + ceil_log2(static_cast<std::size_t>(terms)) > 24) {
      bad("accumulator " + m.name + ": precision_bits + ceil(log2(group_size + 1)) = " +
          std::to_string(c.precision_bits + ceil_log2(static_cast<std::size_t>(terms))) +
          " > 24: a group sum would not be an fp32 value (docs/accumulators.md §3)");
    }
  } else if (std::max(c.precision_bits, c.late_c_bits) +
                 ceil_log2(static_cast<std::size_t>(terms) + 1) + 1 >
             53) {
    bad("accumulator " + m.name +
        ": group_size too large for the precision: a group sum would "
        "not be exact in double");
  }
  if (c.partial_roundings < 1 || c.partial_roundings > 2) {
    bad("accumulator " + m.name + ": partial_roundings must be 1 or 2");
  }
}

std::string_view to_string(AccumulatorKind kind) {
  return kind == AccumulatorKind::kFloat ? "float" : "aligned_chunks";
}

std::string_view to_string(AlignRounding rounding) {
  switch (rounding) {
    case AlignRounding::kTruncate:
      return "truncate";
    case AlignRounding::kNearestEven:
      return "nearest_even";
    case AlignRounding::kRoundDown:
      return "round_down";
  }
  return "?";
}

std::string_view to_string(StoreRounding rounding) {
  switch (rounding) {
    case StoreRounding::kExact:
      return "exact";
    case StoreRounding::kNearestEven:
      return "nearest_even";
    case StoreRounding::kTruncate:
      return "truncate";
  }
  return "?";
}

int effective_precision(const AlignedChunkParams& c) {
  int p = c.precision_bits;
  if (c.late_c_bits != 0) p = std::min(p, c.late_c_bits);
  if (c.store != StoreRounding::kExact) p = std::min(p, 24);
  return p;
}

}  // namespace mxgate
