// fuzz_negotiation: activation-scale order negotiation (I3). Input: byte 0 = the producer's
// choice (order % 3), then one byte per consumer (declared order % 3; kNone = declares none).
// Every consumer must get the order it declared, or the fused path must be abandoned (kNone);
// when all consumers agree on a real order, the fused path must be offered.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "dispatch/negotiation.h"

using mxgate::dispatch::ActScaleOrder;

namespace {
[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_negotiation: I3 violated: %s\n", what);
  __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto producer = static_cast<ActScaleOrder>(data[0] % 3);
  std::vector<ActScaleOrder> consumers;
  for (size_t i = 1; i < size && consumers.size() < 64; ++i) {
    consumers.push_back(static_cast<ActScaleOrder>(data[i] % 3));
  }
  const ActScaleOrder got = mxgate::dispatch::negotiate_act_scale_order(consumers);
  bool agree = !consumers.empty();
  for (ActScaleOrder o : consumers) {
    agree = agree && o != ActScaleOrder::kNone && o == consumers.front();
  }
  if (got != ActScaleOrder::kNone) {
    for (ActScaleOrder o : consumers) {
      if (o != got) fail("a consumer gets an order it did not declare");
    }
    if (consumers.empty()) fail("fused order offered with no consumer");
  } else if (agree) {
    fail("all consumers agree, yet the fused path is abandoned");
  }
  // The producer may emit its choice fused only when it is the negotiated order.
  const bool fused = got != ActScaleOrder::kNone && producer == got;
  for (ActScaleOrder o : consumers) {
    if (fused && o != producer) fail("fused producer order differs from a consumer's");
  }
  return 0;
}
