// fuzz_npy: parse_npy on arbitrary bytes. NpyError is the only allowed failure; a parsed array
// must survive serialize_npy -> parse_npy unchanged, and serialize_npy must be a fixed point.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

#include "reference/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mxgate::NpyArray a;
  try {
    a = mxgate::parse_npy(std::span<const uint8_t>(data, size));
  } catch (const mxgate::NpyError&) {
    return 0;
  }
  a.validate();  // the parser must establish the invariant
  const std::vector<uint8_t> bytes = mxgate::serialize_npy(a);
  const mxgate::NpyArray b = mxgate::parse_npy(bytes);
  if (!(a == b)) {
    std::fprintf(stderr, "fuzz_npy: parse(serialize(a)) != a\n");
    __builtin_trap();
  }
  if (mxgate::serialize_npy(b) != bytes) {
    std::fprintf(stderr, "fuzz_npy: serialize is not a fixed point\n");
    __builtin_trap();
  }
  return 0;
}
