// Test helpers shared by the dispatch tests on the host backend (test_dispatch.cpp) and on the
// device backend (test_gpu_dispatch_device.cpp): layer configs, the reference result of apply
// through oracles that never touch a kernel's layout, and bit equality of outputs.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "properties/dispatch_reference.h"
#include "reference/convention.h"
#include "reference/dequant.h"
#include "reference/format.h"
#include "reference/gemm_oracle.h"
#include "reference/quant_conventions.h"

namespace mxgate::dispatch::test_support {

// Bit equality of two fp32 outputs; the message names the first differing element.
inline ::testing::AssertionResult same(const GemmOutput& want, const GemmOutput& got) {
  if (want.fp32.size() != got.fp32.size()) {
    return ::testing::AssertionFailure()
           << "sizes " << want.fp32.size() << " vs " << got.fp32.size();
  }
  for (std::size_t i = 0; i < want.fp32.size(); ++i) {
    if (bits_of(want.fp32[i]) != bits_of(got.fp32[i])) {
      return ::testing::AssertionFailure()
             << "C[" << i / want.cols << "," << i % want.cols << "]: expected " << want.fp32[i]
             << " got " << got.fp32[i];
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace mxgate::dispatch::test_support
