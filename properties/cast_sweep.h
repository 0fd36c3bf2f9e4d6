// The exhaustive check of a host cast op: every fp32 bit pattern of a range (all 2^32 by
// default) cast by the op and by its claimed convention's encoder (reference/convention.h
// encode_with), compared code by code. A separate, explicitly requested check (`mxgate
// sweep-cast`, `mxgate gate --exhaustive`): at tens of seconds per format it is not part of the
// default gate, which runs cast.bit_exact on the edges instead.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpu/backend.h"
#include "impl/op.h"

namespace mxgate::properties {

struct SweepResult {
  uint64_t inputs = 0;      // bit patterns checked
  uint64_t mismatches = 0;  // codes that differ
  // The first differing input (the smallest bit pattern) with both codes.
  std::optional<uint32_t> first_input;
  uint32_t expected = 0;
  uint32_t actual = 0;
  std::optional<uint32_t> last_input;  // the last differing input (the largest bit pattern)
  double seconds = 0;
  bool stopped = false;          // `progress` asked to stop: the inputs before the stop only
  std::string describe() const;  // "0x3f880000 (0x1.1p+0): expected 0x39, actual 0x3a" or ""
};

// Casts the bit patterns [begin, end) (end <= 2^32) to `target` with `op` (a cast op; host
// memory or the backend's) in chunks of `chunk` values. Throws impl::Unsupported for an op or
// target the sweep cannot check, impl::InvocationError as the harness does. `progress` (may be
// empty) hears the inputs done so far after every chunk; returning false stops the sweep there.
// The (op, target) pairs of `impl` the sweep checks: host-memory cast ops, each target its
// claimed convention defines.
std::vector<std::pair<const impl::Op*, impl::Dtype>> sweep_targets(
    const impl::Implementation& impl);

SweepResult sweep_cast(gpu::Backend& be, const impl::Op& op, impl::Dtype target, uint64_t begin,
                       uint64_t end, uint64_t chunk = uint64_t{1} << 22,
                       const std::function<bool(uint64_t done)>& progress = {});

}  // namespace mxgate::properties
