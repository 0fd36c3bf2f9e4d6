// fuzz_codecs: differential test of the codecs against the slow value-search oracles.
// Input: byte 0 selects the convention, byte 1 an e8m0 encode rule, byte 2 an element format;
// the rest is read as little-endian fp32 bit patterns (also used, truncated, as codes). For each
// pattern x:
//   - encode_with(convention, f, x) == EncodeOracle(f, policy).expected(pre_cast(x)) for every
//     format f the convention defines (its element policy) and for bf16 / fp16 (kIeeeDefault);
//   - encode_e8m0(x, rule) == e8m0_oracle(x, rule) for the selected rule and the convention's;
//   - decode of the low bits as a code of the selected format: a non-NaN code round-trips
//     through encode (RNE), decode_with agrees with decode, and e8m0 decodes match the rules'
//     definitions (docs/formats.md §2) written out here.
// Any disagreement prints the case and traps.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>

#include "reference/convention.h"
#include "reference/e8m0.h"
#include "reference/encode_oracle.h"
#include "reference/format.h"
#include "reference/fp_encode.h"

using namespace mxgate;

namespace {

const EncodeOracle& oracle(Format f, const EncodePolicy& p) {
  using Key = std::tuple<Format, Rounding, Overflow, NanPolicy>;
  static std::map<Key, std::unique_ptr<EncodeOracle>> cache;
  auto& slot = cache[Key{f, p.rounding, p.overflow, p.nan}];
  if (!slot) slot = std::make_unique<EncodeOracle>(f, p);
  return *slot;
}

[[noreturn]] void fail(const char* what, std::string_view who, std::string_view fmt, uint32_t in,
                       uint32_t want, uint32_t got) {
  std::fprintf(stderr, "fuzz_codecs: %s: %.*s %.*s input 0x%08x expected 0x%x got 0x%x\n", what,
               static_cast<int>(who.size()), who.data(), static_cast<int>(fmt.size()), fmt.data(),
               in, want, got);
  __builtin_trap();
}

constexpr Format kElementFormats[] = {Format::kE4M3FN, Format::kE5M2, Format::kE4M3FNUZ,
                                      Format::kE5M2FNUZ};
constexpr Format kCodeFormats[] = {Format::kE4M3FN,   Format::kE5M2, Format::kE4M3FNUZ,
                                   Format::kE5M2FNUZ, Format::kE8M0, Format::kBF16,
                                   Format::kFP16};

// The e8m0 decode rules as e8m0.h defines them, independently of e8m0.cpp.
uint32_t expected_e8m0_decode(uint8_t e, E8m0Decode rule) {
  if (e != 0 && e != 0xFF) return static_cast<uint32_t>(e) << 23;  // 2^(e-127), a normal
  switch (rule) {
    case E8m0Decode::kOcp:
      return e == 0 ? 0x00400000u : 0x7FC00000u;  // 2^-127 (subnormal), NaN
    case E8m0Decode::kShift:
      return e == 0 ? 0u : 0x7F800000u;
    case E8m0Decode::kExp2Cuda:
      return e == 0 ? 0x003FFFFFu : 0x7F800000u;
    case E8m0Decode::kShiftMaskNan:
      return e == 0 ? 0u : 0x7FC00000u;
  }
  return 0;
}

bool same_value(uint32_t want, float got) {
  if (std::isnan(float_of(want))) return std::isnan(got);
  return bits_of(got) == want;
}

void check_code(Format f, const Convention& c, uint32_t raw) {
  const FormatInfo& fi = info(f);
  const uint32_t code = raw & ((1u << fi.bits) - 1u);
  const float v = decode(f, code);
  // decode_with refuses (invalid_argument) an element format the convention does not define.
  const bool defined =
      f == Format::kE8M0 || f == Format::kBF16 || f == Format::kFP16 || defines(c, f);
  const float vc = defined ? decode_with(c, f, code) : v;
  if (f == Format::kE8M0) {
    const auto e = static_cast<uint8_t>(code);
    for (E8m0Decode rule : all_e8m0_decodes()) {
      const uint32_t want = expected_e8m0_decode(e, rule);
      const float got = decode_e8m0(e, rule);
      if (!same_value(want, got))
        fail("decode_e8m0", name(rule), fi.name, code, want, bits_of(got));
    }
    const uint32_t want = expected_e8m0_decode(e, c.e8m0_decode);
    if (!same_value(want, vc)) fail("decode_with", c.name, fi.name, code, want, bits_of(vc));
    return;
  }
  if (std::isnan(v) != is_nan_code(f, code)) fail("is_nan_code", c.name, fi.name, code, 0, 0);
  if (!(bits_of(v) == bits_of(vc) || (std::isnan(v) && std::isnan(vc)))) {
    fail("decode_with vs decode", c.name, fi.name, code, bits_of(v), bits_of(vc));
  }
  if (!std::isnan(v)) {
    const EncodePolicy rne{Rounding::kNearestEven, Overflow::kToInf, NanPolicy::kCanonical};
    const uint32_t back = encode(f, v, rne);
    if (back != code) fail("encode(decode(code))", "rne", fi.name, code, code, back);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const auto conventions = all_conventions();
  const Convention& c = conventions[data[0] % conventions.size()];
  const auto rules = all_e8m0_encodes();
  const E8m0Encode rule = rules[data[1] % rules.size()];
  const Format code_format = kCodeFormats[data[2] % std::size(kCodeFormats)];
  for (size_t off = 3; off + 4 <= size && off < 3 + 4 * 64; off += 4) {
    uint32_t in = 0;
    std::memcpy(&in, data + off, 4);  // host order: the fuzzer does not care
    const float x = float_of(in);
    for (Format f : kElementFormats) {
      if (!defines(c, f)) continue;
      const uint32_t want = oracle(f, c.element).expected(pre_cast(c, f, x));
      const uint32_t got = encode_with(c, f, x);
      if (want != got) fail("encode_with", c.name, info(f).name, in, want, got);
    }
    for (Format f : {Format::kBF16, Format::kFP16}) {
      const uint32_t want = oracle(f, kIeeeDefault).expected(x);
      const uint32_t got = encode_with(c, f, x);
      if (want != got) fail("encode_with", c.name, info(f).name, in, want, got);
    }
    const uint8_t want_e = e8m0_oracle(x, rule);
    const uint8_t got_e = encode_e8m0(x, rule);
    if (want_e != got_e) fail("encode_e8m0", name(rule), "e8m0", in, want_e, got_e);
    if (c.e8m0) {
      const uint32_t want = e8m0_oracle(x, *c.e8m0);
      const uint32_t got = encode_with(c, Format::kE8M0, x);
      if (want != got) fail("encode_with", c.name, "e8m0", in, want, got);
    }
    check_code(code_format, c, in);
  }
  return 0;
}
