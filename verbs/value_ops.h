// The value verbs of the reference (encode, decode) with the CLI's option checks and error texts:
// tools/mxgate/formats_cli.cpp parses values from the command line, capi/ passes arrays.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "reference/convention.h"
#include "reference/format.h"
#include "reference/npy.h"
#include "verbs/args.h"

namespace mxgate::verbs {

// The formats encode and decode accept (every format but fp32), in the reference's order, and
// their names as one space-separated list.
std::vector<Format> codec_formats();
std::string codec_format_list();

// Options: format convention.
const std::set<std::string>& codec_options();

struct CodecSpec {
  Format format = Format::kE4M3FN;
  const Convention* convention = nullptr;
};
CodecSpec codec_spec(const Args& a);

// Any shape, element by element, through encode_with / decode_with (reference/convention.h).
// encode: float32 (or float64, rounded once to fp32) -> uint8 codes (e2m1, e2m3, e3m2: one code
// per byte, unpacked), uint16 for bf16 and fp16. decode: uint8 or uint16 codes -> float32 values.
// Both check the format against the convention first, so an empty array fails where a
// one-element array would; a NaN a convention leaves undefined for FP4 fails the whole array.
NpyArray encode_array(const CodecSpec& spec, const NpyArray& values);
NpyArray decode_array(const CodecSpec& spec, const NpyArray& codes);

}  // namespace mxgate::verbs
