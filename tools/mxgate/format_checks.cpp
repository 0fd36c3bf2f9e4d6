// Format checks of `mxgate gate`: the conventions against the measured device bytes, every code
// of every 8-bit format, every bf16/fp16 value through every encoder against the oracle, and the
// measured log2-ceil hazard count.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "reference/convention.h"
#include "reference/e8m0.h"
#include "reference/encode_oracle.h"
#include "reference/fp_encode.h"
#include "reference/measured_bytes.h"
#include "tools/mxgate/checks.h"

namespace mxgate::cli {
namespace {

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%02x", v);
  return b;
}

std::string hexfloat(float v) {
  char b[48];
  std::snprintf(b, sizeof b, "%a", static_cast<double>(v));
  return b;
}

void fail(CheckResult& r, const std::string& detail, const std::string& repro) {
  if (r.passed) {
    r.passed = false;
    r.detail = detail;
    r.repro = repro;
  }
}

CheckResult measured_bytes(const GateOptions&) {
  CheckResult r;
  for (const MeasuredEncode& m : measured_encodes()) {
    const Convention& c = require_convention(m.convention);
    for (size_t i = 0; i < m.inputs.size(); ++i) {
      ++r.cases;
      const uint32_t got = encode_with(c, m.format, m.inputs[i]);
      if (got != m.bytes[i]) {
        fail(r,
             std::string(m.source) + ": " + hexfloat(m.inputs[i]) + " measured " + hex(m.bytes[i]) +
                 ", convention " + std::string(m.convention) + " gives " + hex(got),
             "mxgate encode --format " + std::string(info(m.format).name) + " --convention " +
                 std::string(m.convention) + " " + hexfloat(m.inputs[i]));
      }
    }
  }
  for (const MeasuredE8m0& m : measured_e8m0_encodes()) {
    for (size_t i = 0; i < m.inputs.size(); ++i) {
      ++r.cases;
      const uint8_t got = encode_e8m0(m.inputs[i], m.rule);
      if (got != m.bytes[i]) {
        fail(r,
             std::string(m.source) + ": " + hexfloat(m.inputs[i]) + " measured " + hex(m.bytes[i]) +
                 ", rule " + std::string(name(m.rule)) + " gives " + hex(got),
             "");
      }
    }
  }
  for (const MeasuredE8m0Decode& m : measured_e8m0_decodes()) {
    const Convention& c = require_convention(m.convention);
    for (size_t i = 0; i < m.bytes.size(); ++i) {
      ++r.cases;
      const float got = decode_with(c, Format::kE8M0, m.bytes[i]);
      const float want = float_of(m.fp32_bits[i]);
      const bool ok = std::isnan(want) ? std::isnan(got) : bits_of(got) == m.fp32_bits[i];
      if (!ok) {
        fail(r,
             std::string(m.source) + ": byte " + hex(m.bytes[i]) + " measured " + hexfloat(want) +
                 ", convention " + std::string(m.convention) + " gives " + hexfloat(got),
             "mxgate decode --format e8m0 --convention " + std::string(m.convention) + " " +
                 hex(m.bytes[i]));
      }
    }
  }
  return r;
}

// Every code of every 8-bit element format: encode(decode(code)) is the code itself for finite
// codes, and the oracle's answer for specials, under every convention that defines the format.
CheckResult all_codes(const GateOptions&) {
  CheckResult r;
  for (const FormatInfo& fi : all_formats()) {
    if (fi.bits != 8 || fi.format == Format::kE8M0) continue;
    for (const Convention& c : all_conventions()) {
      if (!defines(c, fi.format)) continue;
      const EncodeOracle oracle(fi.format, c.element);
      for (uint32_t code = 0; code < 256; ++code) {
        ++r.cases;
        const float v = decode(fi.format, code);
        const uint32_t got = encode_with(c, fi.format, v);
        // Finite codes round-trip unless the convention clamps first; the oracle decides the rest.
        const uint32_t want = (std::isfinite(v) && !c.clamp_before_cast)
                                  ? code
                                  : oracle.expected(pre_cast(c, fi.format, v));
        if (got != want) {
          fail(r,
               std::string(fi.name) + " code " + hex(code) + " (" + hexfloat(v) + ") under " +
                   std::string(c.name) + ": re-encodes to " + hex(got) + ", expected " + hex(want),
               "mxgate encode --format " + std::string(fi.name) + " --convention " +
                   std::string(c.name) + " " + hexfloat(v));
        }
      }
    }
  }
  return r;
}

// All 65536 bf16 and fp16 values (exact in fp32) through every element encoder and every e8m0
// rule, against the value-search oracle.
CheckResult sixteen_bit_inputs(const GateOptions&) {
  CheckResult r;
  std::vector<float> inputs;
  for (uint32_t b = 0; b < 65536; ++b) {
    inputs.push_back(float_of(b << 16));         // bf16
    inputs.push_back(decode(Format::kFP16, b));  // fp16
  }
  for (const Convention& c : all_conventions()) {
    for (const FormatInfo& fi : all_formats()) {
      if (fi.format == Format::kE8M0 || fi.format == Format::kFP32 || !defines(c, fi.format)) {
        continue;
      }
      // The policy encode_with applies: IEEE for bf16 / fp16, the convention's own for FP8, its
      // FP4 / FP6 element policy for the formats without Inf and NaN (docs/fp4.md §2).
      const EncodePolicy p = fi.bits == 16 ? kIeeeDefault : element_policy(c, fi.format);
      const EncodeOracle oracle(fi.format, p);
      for (float x : inputs) {
        ++r.cases;
        // An input the convention leaves undefined for the format (NaN or Inf into FP4 / FP6,
        // docs/fp4.md §2.2) is refused by the encoder and the oracle alike; either refusing
        // alone is a disagreement.
        std::optional<uint32_t> got, want;
        std::string refused;
        try {
          got = encode_with(c, fi.format, x);
        } catch (const UndefinedEncoding& e) {
          refused = e.what();
        }
        try {
          want = oracle.expected(fi.bits == 16 ? x : pre_cast(c, fi.format, x));
        } catch (const UndefinedEncoding& e) {
          refused = e.what();
        }
        if (!got && !want) continue;
        if (!got || !want) {
          fail(r,
               std::string(fi.name) + " under " + std::string(c.name) + ": " + hexfloat(x) +
                   (got ? " encodes to " + hex(*got) : std::string(" is refused by the encoder")) +
                   (want ? ", oracle says " + hex(*want) : ", the oracle refuses it") + " (" +
                   refused + ")",
               "mxgate encode --format " + std::string(fi.name) + " --convention " +
                   std::string(c.name) + " " + hexfloat(x));
          continue;
        }
        if (*got != *want) {
          fail(r,
               std::string(fi.name) + " under " + std::string(c.name) + ": " + hexfloat(x) +
                   " encodes to " + hex(*got) + ", oracle says " + hex(*want),
               "mxgate encode --format " + std::string(fi.name) + " --convention " +
                   std::string(c.name) + " " + hexfloat(x));
        }
      }
    }
  }
  for (E8m0Encode rule : all_e8m0_encodes()) {
    for (float x : inputs) {
      ++r.cases;
      const uint8_t got = encode_e8m0(x, rule);
      const uint8_t want = e8m0_oracle(x, rule);
      if (got != want) {
        fail(r,
             std::string("e8m0 rule ") + std::string(name(rule)) + ": " + hexfloat(x) +
                 " encodes to " + hex(got) + ", oracle says " + hex(want),
             "");
      }
    }
  }
  return r;
}

// The log2-based ceil hazard, counted over the range the device measured with torch.log2.
CheckResult log2_hazard(const GateOptions&) {
  CheckResult r;
  uint64_t hits = 0;
  for (uint32_t b = 0x32000000u; b < 0x46800000u; ++b) {  // [2^-27, 2^14)
    ++r.cases;
    if (log2f_rounds_to_floor(float_of(b))) ++hits;
  }
  if (hits != kLog2CeilMismatchesTorchRange) {
    fail(r,
         "exp2(ceil(log2 y)) != bitceil(y) for " + std::to_string(hits) +
             " y in [2^-27, 2^14); the device measured " +
             std::to_string(kLog2CeilMismatchesTorchRange),
         "");
  }
  return r;
}

}  // namespace

void add_format_checks(std::vector<Check>& checks) {
  checks.push_back({"formats.measured_bytes", "host", measured_bytes});
  checks.push_back({"formats.all_codes", "host", all_codes});
  checks.push_back({"formats.bf16_fp16_inputs", "host", sixteen_bit_inputs});
  checks.push_back({"formats.log2_ceil_hazard", "host", log2_hazard});
}

}  // namespace mxgate::cli
